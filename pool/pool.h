/*
 * pool.h - dispatch jobs over N single-job workers, with crash recovery.
 *
 * Used by the supervisor process (subprocess start method) and directly by
 * the plugin's I/O thread (spawn and fork start methods).  The pool owns no
 * loop: the owner calls pool_pollfds() before poll() and pool_events() after
 * it.  Single-threaded: every call on one pool from one thread.
 *
 * Each worker speaks the framed protocol (proto.h) on a pipe pair and runs
 * one job at a time.  A worker whose result pipe reaches EOF has died: the
 * pool kills the process group of the job it was running (learned from the
 * worker's MSG_STARTED or, with a board, from the board; an owner without
 * either must be a child subreaper and end it itself), starts a
 * replacement through ops->start and re-runs
 * the job if it has re-runs left, else reports it with RES_CRASHED and a
 * line in result.err saying why.  A job whose timeout had run out (counted
 * from when it was handed to the worker) is not re-run: the worker was
 * stopping it, and it is reported timed out (124, RES_TIMED_OUT) with a
 * line saying its worker died.  Workers are started lazily, or all at once
 * by pool_warm().
 *
 * The pool never calls waitpid(-1); it calls ops->reap for the pid of a
 * worker it knows is gone (the owner decides whether waitpid(pid) is safe:
 * inside make it may already have been reaped by make).
 *
 * The owner's steps:
 *  1. pool_new(), then pool_warm() to start the workers now, not at the
 *     first job;
 *  2. pool_submit() each job, lent or given; a -1 means the pool did not
 *     take it (the id is in use, or no memory): it will never be
 *     reported, so the owner reports it itself;
 *  3. every round of its loop, pool_pollfds() before poll() and
 *     pool_events() after: results and STARTED reports come through ops
 *     from inside pool_events() (and from pool_pollfds() for a worker
 *     that could not start);
 *  4. pool_cancel() a job nobody wants; it is still reported;
 *  5. pool_destroy() once: whatever still runs is killed, not reported
 *     (lent bytes may be freed after it returns).
 * Descriptors: the pool owns every pipe end ops->start hands it and the
 * board; the owner owns the ones pool_pollfds() lists only for the
 * length of its poll().
 */
#ifndef ASYNC_POOL_H
#define ASYNC_POOL_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/proto.h"

struct pool;

struct pool_ops {
	/*
	 * Start worker `index`.  On success return 0 and set *to_worker (the
	 * fd the pool writes job frames to), *from_worker (the fd it reads
	 * result frames from) and *pid; the pool owns both fds from then on
	 * and makes them non-blocking.  Return -1 with errno on failure.
	 */
	int (*start)(void *ctx, int index, int *to_worker, int *from_worker, pid_t *pid);
	/*
	 * A job is done; `res` is only valid during the call, and the callee
	 * may take res->out and res->err (leaving them empty buffers).
	 */
	void (*result)(void *ctx, int64_t id, struct result_msg *res);
	/* Optional: a job's command started (forwarded MSG_STARTED). */
	void (*started)(void *ctx, int64_t id, const struct started_msg *m);
	/* Optional: a worker with this pid is gone (EOF seen, fds closed). */
	void (*reap)(void *ctx, pid_t pid);
	/* Optional: one-line diagnostics (worker restarts, protocol errors). */
	void (*log)(void *ctx, const char *msg);
	/*
	 * Optional: a worker's RESULT as it came, checked (msg_check_result),
	 * instead of `result`, for an owner that only passes it on: nothing
	 * is decoded, copied or written to.  `h` is the head the pool gives
	 * it (worker, attempts, running), to be sent in place of the
	 * payload's own (msg_put_result_as).  `payload` is only valid during
	 * the call.  Results the pool makes itself (crashes, no worker,
	 * cancels before start) still go to `result`.
	 */
	void (*result_raw)(void *ctx, int64_t id, const struct result_head *h, const void *payload,
			   size_t len);
};

struct pool_stats {
	uint64_t submitted, completed, retried, crashed_workers, restarts;
	int running, queued, max_running;
};

/* Returns NULL only on allocation failure.  nworkers >= 1. */
struct pool *pool_new(int nworkers, const struct pool_ops *ops, void *ctx);
/*
 * The pool's board (board.h), created at the first call, or -1 if it
 * cannot be made (then never again, for every worker alike).  A pool that is not a child subreaper hands it to its workers
 * (ops->start) so that they can report STARTED late; the pool owns it.
 */
int pool_board(struct pool *p);
/* Start every worker now (warm pool).  Returns 0 or -1 if none started. */
int pool_warm(struct pool *p);
/*
 * Let the pool run up to `nworkers` workers from now on (it never
 * shrinks).  The new ones start lazily, as jobs wait for a worker.  Not
 * from inside an ops callback.  0, or -1 (ENOMEM: the size is unchanged).
 */
int pool_resize(struct pool *p, int nworkers);
/* How many workers it may run. */
int pool_size(const struct pool *p);
/*
 * Queue a job: `job` is an encoded MSG_JOB payload (msg_put_job) and `h`
 * its head (re-runs after worker crashes, the timeout), which the owner
 * has at hand: the plugin in its job record, the supervisor from
 * msg_get_job_head().  The pool never decodes the rest.  Who owns the
 * bytes:
 *   POOL_LEND  the owner keeps them, unchanged and valid, until the job
 *              is reported (or pool_destroy()); the pool copies nothing.
 *   POOL_GIVE  they are malloc'd and the pool's from now on: it frees
 *              them once the job is reported (the supervisor hands over
 *              the frame buffer they arrived in).
 * Returns 0, or -1 if id is already queued or running (EEXIST), not
 * positive (EINVAL) or out of memory; then the owner still owns `job`.
 */
enum pool_own { POOL_LEND, POOL_GIVE };
int pool_submit(struct pool *p, int64_t id, void *job, size_t len, const struct job_head *h,
		enum pool_own own);
/*
 * The one decision about a job whose process died under it: a worker in
 * the pool, or, in the plugin, the supervisor with its whole pool.  One
 * being cancelled ends cancelled.  One whose timeout had run out by then
 * ends timed out: its runner was stopping it, and a re-run would run the
 * command again from the start, its side effects twice, only to be
 * stopped again.  Any other runs again while attempts <= retries
 * (`attempts` counts the runs it was handed to so far), else gives up.
 * ran_ms: how long it had run (0: not known to have started).
 */
enum pool_fate { POOL_FATE_RETRY, POOL_FATE_CANCELLED, POOL_FATE_TIMED_OUT, POOL_FATE_GIVE_UP };
enum pool_fate pool_fate(int cancelled, int64_t timeout_ms, int64_t ran_ms, uint32_t attempts,
			 uint32_t retries);
/* Stop a queued or running job; it is reported with RES_CANCELLED. */
int pool_cancel(struct pool *p, int64_t id);
/* Workers with nothing to do (started or not) minus jobs waiting. */
int pool_free_slots(const struct pool *p);
/*
 * Fill at most `max` pollfds (max >= 2 * pool_size() is always enough) and
 * return how many were filled; the pool may also need a timeout (-1 = none,
 * in ms) which it stores in *timeout_ms if sooner than the value there.
 */
size_t pool_pollfds(struct pool *p, struct pollfd *fds, size_t max, int *timeout_ms);
/* Handle the revents of the fds pool_pollfds() returned. */
void pool_events(struct pool *p, const struct pollfd *fds, size_t n);
void pool_get_stats(const struct pool *p, struct pool_stats *st);
/* Non-zero when pid is one of the pool's workers that is not yet down. */
int pool_is_worker(const struct pool *p, pid_t pid);
/*
 * Kill every running job's process group (SIGTERM, then SIGKILL after
 * grace_ms), send shutdown frames, close all fds, reap through ops->reap,
 * free the pool.  Jobs still queued or running are NOT reported.
 */
void pool_destroy(struct pool *p, int64_t grace_ms);

#endif
