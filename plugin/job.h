/*
 * job.h - one job of the plugin: a build step, a probe, or an async-shell
 * command, from the make function that queued it until make's thread
 * frees it after a wait.
 *
 * Ownership:
 *  1. A make function (funcs.c, shell.c, spec.c) allocates the job
 *     (request_job), fills the fields marked "make's thread" below and
 *     hands it to engine_submit().
 *  2. From then on the engine owns it: only the engine's I/O thread
 *     writes the fields marked "engine", always with the_engine.lock held.
 *  3. engine_wait() returns it DONE and out of the engine's table; make's
 *     thread owns it again, reads `res`, and frees it with job_free().
 *  A job given to engine_cancel() or engine_collect() is the engine's for
 *  good (a recipe wait's job is freed once its collector was sent it).
 */
#ifndef ASYNC_JOB_H
#define ASYNC_JOB_H

#include <stdint.h>

#include "lib/buf.h"
#include "lib/proto.h"

/*
 * JOB_SHELL and JOB_SPEC are async-shell's own (shell.c, spec.c): a
 * command make is waiting for, and one started ahead of need from the
 * last run's record.  They are "internal": never part of
 * $(async-wait)'s set, never warned about at exit.
 */
enum job_kind { JOB_COMPILE, JOB_TRY, JOB_SHELL, JOB_SPEC };
enum job_state { JOB_QUEUED, JOB_RUNNING, JOB_DONE };
/*
 * What lets a job run: the implicit slot (the one make's jobserver gives
 * every make for free), a jobserver token, or a place under the plain
 * limit used where no jobserver exists (slots.h).
 */
/* SLOT_LENT: the slot of the collector that waits for it (collect.h). */
enum job_slot { SLOT_NONE, SLOT_IMPLICIT, SLOT_TOKEN, SLOT_LIMIT, SLOT_LENT };

struct collect_wait;

struct job {
	/* make's thread, before engine_submit() */
	char *name;
	enum job_kind kind;
	char *command;          /* as the user wrote it (for messages) */
	/*
	 * The encoded MSG_JOB and the two fields of its head that decide a
	 * job's fate after a death (msg.h), all three set by job_encode().
	 * The payload stays until the job's RESULT: the backend borrows it
	 * (backend.h), no copy is made on the plugin's side.
	 */
	struct buf payload;
	uint32_t retries;       /* config `retries`: runs again after a worker crash */
	int64_t timeout_ms;     /* config `timeout`: 0 none */
	int dry;                /* make -n inside a recipe: echoed, not run */
	int cached;             /* answered from the cache: done, never run */
	int64_t ran_ns;         /* cached: how long the run that made the answer took */
	struct buf cache_key;   /* cache on: where its answer is to be kept */
	char *where;            /* "FILE:LINE" that queued it (mk_where), or NULL */
	int in_recipe;          /* queued while make expanded a recipe */
	int preview;            /* make runs with -n or -q: nothing is built */

	/* engine (lock held) */
	int64_t id;             /* set by engine_submit(), unique in this make */
	enum job_state state;
	enum job_slot slot;
	unsigned char token;    /* SLOT_TOKEN: the very byte read from the jobserver */
	int in_wait;            /* in the set make's thread is blocked on */
	int discard;            /* cancelled: the engine frees it once it ends */
	struct collect_wait *wait; /* a recipe wait's collector reports it (collect.h) */
	int64_t queued_ns, dispatched_ns, started_ns;
	int64_t token_wait_ns, token_wait_start; /* time at the queue head without a token */
	int worker;
	struct result_msg res;  /* valid once state == JOB_DONE; make's thread reads it after the wait */
	struct job *next;       /* run queue, or the engine's discarded list */
	struct job *hnext;      /* jobtab's name hash chain */
	struct job *prev_all, *next_all; /* jobtab's list of jobs not yet waited for */

	/* the backend's, from its submit() to its result (backend.h) */
	struct {
		struct job *next, *prev; /* the backend's own list of jobs it holds */
		int held;                /* in that list */
		int cancelled;           /* cancel() was called */
		int64_t started_ns;      /* when the backend saw it start (0: not yet) */
		uint32_t attempts;       /* runs lost with their runner so far */
	} be;
};

/*
 * make's thread: encode m as j's payload and set j->retries and
 * j->timeout_ms from it, so the three agree.
 */
void job_encode(struct job *j, const struct job_msg *m);

/* Free a job and everything it owns; NULL is fine. */
void job_free(struct job *j);
/* Is it an async-shell job (never in $(async-wait)'s set)? */
int job_internal(const struct job *j);

#endif
