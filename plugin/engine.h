/*
 * engine.h - the plugin's engine: the jobs make's functions queued, the
 * slots they run in, and the I/O thread that feeds them to the pool.
 *
 * Threads: make's own thread runs the make functions (funcs.c, shell.c,
 * setup.c) and is the only one that calls gmk_*.  The engine's I/O thread
 * (io.c) owns the backend, the slots (slots.h: jobserver client,
 * implicit slot, limit) and every descriptor to the pool; it blocks every
 * signal so make's handlers keep running on make's thread.  One mutex,
 * the_engine.lock, guards the job table, the queue and the counters; the I/O
 * thread holds it except while in poll(), so what a backend reports
 * (backend.h) comes in with it held.
 *
 * A make function's steps:
 *  1. engine_start() once the config is known (later calls do nothing);
 *  2. engine_set_slots() before each submission: the jobserver in
 *     MAKEFLAGS, or the limit -jN gives where there is none;
 *  3. engine_submit() a job (job.h says which fields it fills); the
 *     engine owns the job from then on;
 *  4. engine_wait() for a set of jobs (or all): make's thread blocks until
 *     they are done and owns them again; or engine_cancel() one nobody
 *     will wait for; or, inside a recipe, engine_collect() them for a
 *     collector line (collect.h), which leaves them the engine's;
 *  5. engine_report_unwaited() then engine_shutdown() at exit: jobs never
 *     waited for are reported, killed, and every token goes back.
 * Errors: engine_start() and engine_set_slots() return -1 with a reason
 * in err; a job that cannot run is never lost: it ends DONE with status
 * STATUS_NOT_RUN (125) and a reason in res.err.
 */
#ifndef ASYNC_ENGINE_H
#define ASYNC_ENGINE_H

#include <stdint.h>

#include "config/config.h"
#include "lib/buf.h"
#include "lib/msg_collect.h"
#include "lib/proto.h"
#include "plugin/job.h"
#include "plugin/js.h"

struct engine_stats {
	uint64_t submitted, completed, failed, retried, timed_out;
	uint64_t token_waits, token_wait_ns, bytes_in, bytes_out;
	int running, max_running, queued;
	int limit;              /* jobs at once outside a jobserver */
	int workers;            /* the pool's size now (0: not started) */
	const char *mode;       /* "jobserver-pipe", "jobserver-fifo", "limit" */
};

/*
 * Start the pool for `cfg` (copied).  0, or -1 with a reason in err.
 * Safe to call again: later calls do nothing.
 */
int engine_start(const struct config *cfg, struct buf *err);
int engine_started(void);
/*
 * The top-level make starts the trace file `path` afresh, once, before any
 * sub-make of its build can have written to it (at load when the
 * configuration asks for a trace, else when the pool starts); sub-makes
 * and a make that re-executed itself (MAKE_RESTARTS) add to it.
 */
void engine_trace_begin(const char *path);
/* Jobs ever submitted to the running engine. */
unsigned long engine_submitted(void);
/*
 * Where tokens come from: a jobserver (a != NULL) or, when there is none,
 * at most `limit` jobs at once.  Called from make's thread before each
 * submission; a change takes effect for jobs started afterwards.
 * Returns -1 with a warning text in err when the jobserver is unusable
 * (the engine then runs one job at a time).
 */
int engine_set_slots(const struct js_auth *a, int limit, struct buf *err);
/*
 * make has read its makefiles and may now run recipes: from here on the
 * implicit slot serves only jobs make waits for (slots_implicit_job).
 */
void engine_makefiles_read(void);
/* Find a job not yet waited for. */
struct job *engine_find(const char *name);
/* Hand a new job to the engine (which owns it from then on). */
void engine_submit(struct job *j);
/* A job still queued goes to the head of the queue (make waits for it). */
void engine_promote(struct job *j);
/*
 * Stop a job nobody will wait for: a queued one is dropped, a running one
 * is cancelled (SIGTERM to its group, SIGKILL after kill_grace) and its
 * slot or token comes back when the pool reports it ended.  The engine
 * owns j from then on and frees it; the caller must forget it.
 */
void engine_cancel(struct job *j);
/*
 * Block until every job in jobs[] is done (all jobs not waited for when
 * n == 0: then *jobs is set to a malloc'd array, in queue order, and *n to
 * its length).  Jobs returned are removed from the table; the caller frees
 * them with job_free().  With `progress`, a single status line on stderr
 * (lib/progress.h) is redrawn while the wait lasts longer than half a
 * second, and erased before returning.
 */
void engine_wait(struct job ***jobs, size_t *n, int progress);
/*
 * Every job not yet waited for, in queue order, async-shell's own
 * excepted: a malloc'd array (*jobs) of *n jobs that stay the engine's.
 */
void engine_pending(struct job ***jobs, size_t *n);
/*
 * A recipe wait (collect.h): jobs[0..n-1], in queue order, are handed
 * to a new wait, out of the name table; a collector line reports them
 * (and draws the status line: `progress` as collect_add's).
 * 0 with the wait's number in *id and its cookie, or -1 with the reason
 * in err (the private socket cannot be made; the jobs stay as they were).
 */
int engine_collect(struct job **jobs, size_t n, int progress, int64_t *id,
		   char cookie[COLLECT_COOKIE_HEX + 1], struct buf *err);
void engine_get_stats(struct engine_stats *st);
/* Write the trace file now (config `trace`); warns once on failure. */
void engine_write_trace(void);
/*
 * At exit, before engine_shutdown(): one line on stderr for each job
 * (async-shell's excepted) that no wait took and no drop let go.  It is
 * an error, "FILE:LINE: *** asynccompile: ... never waited for", when
 * make did not run with -n or -q when it was queued and the job is a
 * build step, or a probe queued inside a recipe; the count of those is
 * returned (the caller makes make's status 2).  A probe queued while
 * makefiles were read is not one: its wait may sit in the recipe of a
 * target that was up to date (it is said only under ASYNC_COMPILE_DEBUG).
 * Under -n or -q a build step gets a warning instead.
 */
int engine_report_unwaited(void);
/* Kill everything, give back tokens, stop the thread (at exit). */
void engine_shutdown(void);

/* Called by collect.c, engine lock held: a job it sent is freed ... */
void engine_collect_forget(struct job *j);
/* ... and one nobody will report is stopped (as engine_cancel). */
void engine_collect_abandon(struct job *j);

#endif
