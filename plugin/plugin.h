/*
 * plugin.h - internals of asynccompile.so shared by its modules.
 *
 * Threads: make's own thread runs the make functions (funcs.c, setup.c)
 * and is the only one that calls gmk_*.  The engine's I/O thread
 * (engine.c) owns the backend, the jobserver client and every descriptor
 * to the pool; it blocks every signal so make's handlers keep running on
 * make's thread.  One mutex, engine.lock, guards the job table, the queue
 * and the counters; the I/O thread holds it except while in poll(), so
 * backend callbacks (engine_on_*) run with it held.
 */
#ifndef ASYNC_PLUGIN_H
#define ASYNC_PLUGIN_H

#include <poll.h>
#include <stdint.h>
#include <sys/types.h>

#include "../config/config.h"
#include "../worker/buf.h"
#include "../worker/proto.h"
#include "jobserver.h"

/*
 * JOB_SHELL and JOB_SPEC are async-shell's own (shell.c): a command make
 * is waiting for, and one started ahead of need from the last run's
 * record.  They are "internal": never part of $(async-wait)'s set, never
 * warned about at exit.
 */
enum job_kind { JOB_COMPILE, JOB_TRY, JOB_SHELL, JOB_SPEC };
enum job_state { JOB_QUEUED, JOB_RUNNING, JOB_DONE };
enum job_slot { SLOT_NONE, SLOT_IMPLICIT, SLOT_TOKEN, SLOT_LIMIT };

struct job {
	int64_t id;
	char *name;
	enum job_kind kind;
	char *command;          /* as the user wrote it (for messages) */
	struct buf payload;     /* encoded MSG_JOB; released once dispatched */
	uint32_t retries;
	enum job_state state;
	enum job_slot slot;
	unsigned char token;
	int dry;                /* make -n inside a recipe: echoed, not run */
	int cached;             /* answered from the cache: done, never run */
	struct buf cache_key;   /* cache on: where its answer is to be kept */
	int in_wait;            /* in the set make's thread is blocked on */
	int discard;            /* cancelled: the engine frees it once it ends */
	int64_t queued_ns, dispatched_ns, started_ns;
	int64_t token_wait_ns, token_wait_start; /* time at the queue head without a token */
	int worker;
	struct result_msg res;  /* valid when state == JOB_DONE */
	struct job *next;       /* run queue link */
	struct job *hnext;      /* name hash chain */
	struct job *prev_all, *next_all; /* jobs not yet waited for, in queue order */
};

/* ---- engine.c: job table, scheduling, the I/O thread ---- */

struct engine_stats {
	uint64_t submitted, completed, failed, retried, timed_out;
	uint64_t token_waits, token_wait_ns, bytes_in, bytes_out, restarts;
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
 * implicit slot serves only jobs make waits for (engine_implicit_job).
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
/* Is it an async-shell job (never in $(async-wait)'s set)? */
int job_internal(const struct job *j);
/*
 * Block until every job in jobs[] is done (all jobs not waited for when
 * n == 0: then *jobs is set to a malloc'd array, in queue order, and *n to
 * its length).  Jobs returned are removed from the table; the caller frees
 * them with job_free().  With `progress`, a single status line on stderr
 * is redrawn while the wait lasts longer than half a second, and erased
 * before returning.
 */
void engine_wait(struct job ***jobs, size_t *n, int progress);
void engine_get_stats(struct engine_stats *st);
/* Write the trace file now (config `trace`); warns once on failure. */
void engine_write_trace(void);
/* Kill everything, give back tokens, stop the thread (atexit). */
void engine_shutdown(void);
void job_free(struct job *j);

/* Called by backends from the I/O thread, engine lock held. */
void engine_on_started(int64_t id, const struct started_msg *m);
/* May take res->out and res->err (leaving them empty); the caller releases res. */
void engine_on_result(int64_t id, struct result_msg *res);
void engine_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * reexec.c: tokens held when a sub-make re-executes itself, given back by
 * the plugin in the new image, or by a fatal signal's handler.
 * reexec_init: once, on make's thread, at load, before the engine runs.
 * reexec_jobserver: the jobserver every held token comes from (the
 * engine's), before the first one is taken.  reexec_hold: with
 * engine.lock held, for every token taken (+1) or to be given back (-1);
 * for -1 it returns 1 when the caller writes the byte back, 0 when
 * reexec_give_back_held() already did (then js_forget() it).
 * reexec_give_back_held: async-signal-safe; gives back every token held.
 */
void reexec_init(void);
void reexec_jobserver(const struct jobserver *js);
int reexec_hold(unsigned char tok, int delta);
void reexec_give_back_held(void);

/*
 * fatal.c: make's fatal signals (HUP, INT, QUIT, TERM, XCPU, XFSZ).
 * fatal_init: at load, on make's thread: a handler in front of make's that
 * gives back the held tokens, marks the plugin dying and writes a byte to
 * the descriptor of fatal_set_wake (the I/O thread's wake pipe; -1:
 * none).  fatal_dying: from then on no token is taken, no job started and
 * no pool restarted.  fatal_release: make's handlers back (at unload).
 */
void fatal_init(void);
void fatal_release(void);
int fatal_dying(void);
void fatal_set_wake(int fd);

/* ---- backends: how jobs reach workers (I/O thread only) ---- */

struct backend {
	const struct backend_ops *ops;
};

struct backend_ops {
	/* Start workers now (warm).  0 or -1. */
	int (*warm)(struct backend *b);
	/* How many more jobs it can start now (negative: that many queued). */
	int (*free_slots)(struct backend *b);
	/*
	 * Send a job (payload is an encoded MSG_JOB, copied).  0: the backend
	 * owns it and reports it; -1 with errno: refused, never reported.
	 */
	int (*submit)(struct backend *b, int64_t id, const void *job, size_t len, uint32_t retries);
	/*
	 * Stop a submitted job; its RESULT (RES_CANCELLED, or its real one if
	 * it ended first) still comes through engine_on_result.
	 */
	void (*cancel)(struct backend *b, int64_t id);
	size_t (*pollfds)(struct backend *b, struct pollfd *fds, size_t max, int *timeout_ms);
	void (*events)(struct backend *b, const struct pollfd *fds, size_t n);
	/* Kill every job, stop every worker, free b. */
	void (*destroy)(struct backend *b, int64_t grace_ms);
	/*
	 * Let the pool run up to `workers` workers (more than it was created
	 * with; workers: auto).  The new ones start as jobs need them.  0 or -1.
	 */
	int (*grow)(struct backend *b, int workers);
	/* Is pid a live process of the pool's that make's thread started (a worker, the supervisor)? */
	int (*owns)(struct backend *b, pid_t pid);
};

/* backend_sub.c: one supervisor process multiplexing `workers` jobs. */
struct backend *backend_subprocess_new(const char *worker_exe, int workers, struct buf *err);
/* backend_pool.c: the plugin's own pool of workers, exec'd or forked. */
struct backend *backend_pool_new(const char *worker_exe, int workers, int fork_mode, struct buf *err);

/*
 * spawn.c: start the worker executable with a pipe pair on its fd 0/1 and,
 * unless `board` is -1, that descriptor (board.h) on its fd 3.
 */
int spawn_worker(const char *exe, char *const argv[], int board, int *to_child,
		 int *from_child, pid_t *pid);
/* Path of the worker executable (env, next to the .so, libexec); malloc'd. */
char *spawn_find_worker(struct buf *err);
/*
 * Fork a worker from this process image, running worker_main() with
 * started_after_ms; the board as above.
 */
int spawn_fork_worker(int index, int board, int started_after_ms, int *to_child,
		      int *from_child, pid_t *pid);

#endif
