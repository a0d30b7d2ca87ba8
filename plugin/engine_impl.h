/*
 * engine_impl.h - what engine.c (make's side of the engine) and io.c (its
 * I/O thread) share, and nothing else includes: the engine's state and
 * the helpers both sides call.  Every field, and every helper here, is
 * used with the_engine.lock held (engine.h says who holds it when); the I/O
 * thread alone touches the backend and the slots' descriptors.
 */
#ifndef ASYNC_ENGINE_IMPL_H
#define ASYNC_ENGINE_IMPL_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "plugin/backend.h"
#include "plugin/engine.h"
#include "plugin/jobtab.h"
#include "plugin/slots.h"

struct engine {
	pthread_mutex_t lock;
	pthread_cond_t done;       /* make's wait set is done, or the pool stopped */
	pthread_t thread;
	int started, stopping;
	int wake[2];               /* self-pipe: make's thread -> I/O thread */
	int wake_sent;             /* a byte is in it the thread has not read */
	size_t wait_pending;       /* jobs in make's wait set not yet done */
	struct backend *backend;
	int64_t kill_grace_ms;
	int workers;               /* the pool's size now */
	int workers_max;           /* what it may grow to (config_workers_max) */
	uint64_t results;          /* jobs reported so far (a change means: schedule) */
	char *trace;               /* trace file, or NULL */
	int trace_warned;

	struct slots slots;
	int64_t token_wait_since;  /* the queue's head has waited for a token since */
	int64_t token_hold_until;  /* no token taken before then (io.c) */
	struct jobtab tab;
	struct job *qhead, *qtail;
	struct job *discarded;     /* cancelled running jobs, linked by `next` */
	int64_t next_id;
	struct engine_stats st;
};

extern struct engine the_engine;

/* engine.c, lock held: a job is done (wakes make's wait when it was the last). */
void engine_job_done(struct job *j);
/* engine.c, lock held: a job the engine owns again: gone from every list, freed. */
void engine_forget(struct job *j);
/* engine.c, lock held: a queued job goes to the head of the queue. */
void engine_to_head(struct job *j);
/* engine.c: is pid a live process of the pool's (children.h, slots.h)? */
int engine_owns(void *ctx, pid_t pid);

#endif
