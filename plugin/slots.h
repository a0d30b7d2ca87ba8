/*
 * slots.h - what lets a job run now: make's implicit slot, a jobserver
 * token, or a place under a plain limit where make runs no jobserver
 * (make -j1, or parse time in a make 4.3 that has not made one yet).
 *
 * The engine's I/O thread asks, for the job at the head of its queue:
 *  1. slots_implicit_job(): may a queued job take the implicit slot?
 *     (the rule is at that function);
 *  2. else, under a jobserver, slots_take_token(): 1 with a token, 0
 *     when none is free (poll slots_poll_fd() and ask again), -1 when
 *     the jobserver turned out unusable (the slots fall back to a limit
 *     of one job, warned once);
 *  3. else slots_take_limit();
 * and, when the job ends, slots_release() gives back what it took.
 * Make's thread calls slots_set() before each submission: the jobserver
 * in MAKEFLAGS (or the limit) may have appeared or changed.
 *
 * Not thread-safe: every call is made with the_engine.lock held.  Tokens are
 * recorded with reexec.c as they are taken, so a fatal signal's handler
 * or a re-executed make can give them back (reexec.h, fatal.h).
 */
#ifndef ASYNC_SLOTS_H
#define ASYNC_SLOTS_H

#include <stdint.h>
#include <sys/types.h>

#include "lib/buf.h"
#include "plugin/job.h"
#include "plugin/js.h"

struct slots {
	struct jobserver js;
	int js_active;          /* tokens come from js */
	int js_warned;
	int limit;              /* jobs at once without a jobserver */
	int limit_running;      /* SLOT_LIMIT jobs running */
	int implicit_busy;
	int reading;            /* make is still reading its makefiles */
	uint64_t wait_seq;      /* make's thread entered a wait this many times */
	uint64_t make_idle_seq; /* ... and in the wait_seq'th found make idle */
	int watch_children;     /* look at make's children again soon */
	int want_token;         /* poll the jobserver for a token */
};

#define SLOTS_INIT { .js = { .rfd = -1, .wfd = -1, .make_wfd = -1 }, \
		     .limit = 1, .reading = 1 }

/* Jobserver `a` (NULL: none, then at most `limit` jobs).  0, or -1 with
 * a warning in err (then one job at a time).  *changed: budget differs. */
int slots_set(struct slots *s, const struct js_auth *a, int limit, struct buf *err,
	      int *changed);
/* A new round of scheduling: forget what the last one was waiting on. */
void slots_round(struct slots *s);
/* The job of queue `q` (linked by next) that may run on the implicit slot
 * now, or NULL; `owns` tells the pool's processes from make's children. */
struct job *slots_implicit_job(struct slots *s, struct job *q,
			       int (*owns)(void *ctx, pid_t pid), void *ctx);
int slots_take_token(struct slots *s, unsigned char *tok);
/* A token that was taken but is not used after all. */
void slots_give_back(struct slots *s, unsigned char tok);
/* 1 if a job may run under the limit now (and is counted), else 0. */
int slots_take_limit(struct slots *s, int ahead);
/* What j took goes back; j->slot is SLOT_NONE afterwards. */
void slots_release(struct slots *s, struct job *j);
/* The descriptor to poll for a token, or -1. */
int slots_poll_fd(const struct slots *s);
/* Tokens are held and make's exit can be seen: look every so often. */
int slots_watch_drain(const struct slots *s);
/* make closed its jobserver write end (it is exiting): end our jobs. */
int slots_make_draining(const struct slots *s);
/* "jobserver-fifo", "jobserver-pipe" or "limit" */
const char *slots_mode(const struct slots *s);
/* At shutdown, every token already back. */
void slots_close(struct slots *s);

#endif
