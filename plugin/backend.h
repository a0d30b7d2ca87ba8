/*
 * backend.h - how jobs reach workers.  The engine's I/O thread is the only
 * caller, with the_engine.lock held; backends report back through the
 * struct backend_report given at creation, from inside pollfds(),
 * events(), submit() or destroy(), so on that thread with that lock held.
 *
 * The I/O thread's steps, each round:
 *  1. free_slots(), submit() and cancel() as the queue and slots allow;
 *  2. pollfds() for the descriptors (and the timeout) to wait on;
 *  3. poll(), then events() with what it returned;
 *  4. destroy() once, at the end: every job is killed and reported.
 * The backend owns every descriptor to its workers and every process it
 * started.
 *
 * A job is lent, never copied: submit() gets the engine's job record
 * (job.h), whose id, payload, retries and timeout_ms stay unchanged and
 * valid until report->result() for that job returns; the backend reads
 * them, keeps its own state in j->be, and touches neither once it has
 * reported the job.  It finds a job by id through report->find(), the
 * engine's table: backend_sub keeps none of its own (backend_pool's pool
 * has its own, pool.h, as it has in the supervisor).
 */
#ifndef ASYNC_BACKEND_H
#define ASYNC_BACKEND_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/buf.h"

struct job;
struct started_msg;
struct result_msg;

/* What a backend reports: its creator's callbacks, each given ctx. */
struct backend_report {
	/* A worker started job id. */
	void (*started)(void *ctx, int64_t id, const struct started_msg *m);
	/*
	 * Job id ended.  It may take res->out and res->err (leaving them
	 * empty); the backend releases res afterwards.
	 */
	void (*result)(void *ctx, int64_t id, struct result_msg *res);
	/* The job with this id that the backend holds (submitted, not yet reported), or NULL. */
	struct job *(*find)(void *ctx, int64_t id);
	void *ctx;
};

struct backend {
	const struct backend_ops *ops;
};

struct backend_ops {
	/* Start workers now (warm).  0 or -1. */
	int (*warm)(struct backend *b);
	/* How many more jobs it can start now (negative: that many queued). */
	int (*free_slots)(struct backend *b);
	/*
	 * Send job j (j->payload an encoded MSG_JOB, lent as above).  0: the
	 * backend holds it and reports it; -1 with errno: refused, never
	 * reported.
	 */
	int (*submit)(struct backend *b, struct job *j);
	/*
	 * Stop a job it holds; its RESULT (RES_CANCELLED, or its real one if
	 * it ended first) still comes through report->result.
	 */
	void (*cancel)(struct backend *b, struct job *j);
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

/*
 * The constructors copy *report.  NULL with a reason in err if out of
 * memory; nothing is started until warm() or the first submit().
 */
/* backend_sub.c: one supervisor process multiplexing `workers` jobs. */
struct backend *backend_sub_new(const char *worker_exe, int workers,
				const struct backend_report *report, struct buf *err);
/* backend_pool.c: the plugin's own pool of workers, exec'd or forked. */
struct backend *backend_pool_new(const char *worker_exe, int workers, int fork_mode,
				 const struct backend_report *report, struct buf *err);

#endif
