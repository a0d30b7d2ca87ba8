/*
 * The spawn and fork start methods: the plugin's I/O thread runs the pool
 * itself (pool/pool.c), starting each worker as the worker executable
 * (spawn) or as a fork of make's own image (fork).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool/pool.h"
#include "worker/worker.h"
#include "lib/err.h"
#include "plugin/backend.h"
#include "plugin/fatal.h"
#include "plugin/job.h"
#include "plugin/spawn.h"
#include "plugin/log.h"

struct pb {
	struct backend base;
	struct pool *pool;
	char *exe;
	int fork_mode;
	struct backend_report report;
};

/*
 * make cannot be a child subreaper, so workers write their job's pid on
 * the pool's board; with it they may report STARTED late (worker.h).
 * Without one (no memfd) they report it at once, as the pool needs.
 */
static int pb_start(void *ctx, int index, int *to, int *from, pid_t *pid)
{
	struct pb *b = ctx;
	int board = pool_board(b->pool);
	int after = board >= 0 ? WORKER_STARTED_AFTER_MS : 0;
	char ibuf[16], abuf[16];
	/* spawn_worker() puts the board on fd 3 */
	char *argv[] = { b->exe, "--worker", ibuf, "--started-after", abuf,
			 board >= 0 ? "--pid-board" : NULL, "3", NULL };

	if (fatal_dying()) {
		errno = ECANCELED; /* make is exiting: no worker is replaced */
		return -1;
	}
	if (b->fork_mode)
		return spawn_fork_worker(index, board, after, to, from, pid);
	snprintf(ibuf, sizeof ibuf, "%d", index);
	snprintf(abuf, sizeof abuf, "%d", after);
	return spawn_worker(b->exe, argv, board, to, from, pid);
}

static void pb_result(void *ctx, int64_t id, struct result_msg *res)
{
	struct pb *b = ctx;

	b->report.result(b->report.ctx, id, res);
}

static void pb_started(void *ctx, int64_t id, const struct started_msg *m)
{
	struct pb *b = ctx;

	b->report.started(b->report.ctx, id, m);
}

/*
 * Workers are make's children: make reaps them with waitpid(-1) and drops
 * pids it does not know, so waiting for a pid here could steal the status
 * of a recycled pid that is now one of make's jobs.  Leave them to make.
 */
static void pb_reap(void *ctx, pid_t pid)
{
	(void)ctx;
	(void)pid;
}

static void pb_log(void *ctx, const char *msg)
{
	(void)ctx;
	/* the pool's lines already carry the prefix log_msg adds */
	if (!strncmp(msg, "asynccompile: ", 14))
		msg += 14;
	log_msg("%s", msg);
}

static const struct pool_ops pb_pool_ops = {
	pb_start, pb_result, pb_started, pb_reap, pb_log, NULL,
};

static int pb_warm(struct backend *b)
{
	return pool_warm(((struct pb *)b)->pool);
}

static int pb_free_slots(struct backend *b)
{
	return pool_free_slots(((struct pb *)b)->pool);
}

/* The job's bytes are lent: they stay in its record until its RESULT. */
static int pb_submit(struct backend *b, struct job *j)
{
	struct job_head h = { j->retries, j->timeout_ms };

	return pool_submit(((struct pb *)b)->pool, j->id, j->payload.data, j->payload.len, &h,
			   POOL_LEND);
}

static void pb_cancel(struct backend *b, struct job *j)
{
	pool_cancel(((struct pb *)b)->pool, j->id); /* unknown id: it just finished */
}

static size_t pb_pollfds(struct backend *b, struct pollfd *fds, size_t max, int *timeout_ms)
{
	return pool_pollfds(((struct pb *)b)->pool, fds, max, timeout_ms);
}

static void pb_events(struct backend *b, const struct pollfd *fds, size_t n)
{
	pool_events(((struct pb *)b)->pool, fds, n);
}

static void pb_destroy(struct backend *b, int64_t grace_ms)
{
	struct pb *p = (struct pb *)b;

	pool_destroy(p->pool, grace_ms);
	free(p->exe);
	free(p);
}

static int pb_grow(struct backend *b, int workers)
{
	return pool_resize(((struct pb *)b)->pool, workers);
}

static int pb_owns(struct backend *b, pid_t pid)
{
	return pool_is_worker(((struct pb *)b)->pool, pid);
}

static const struct backend_ops pb_ops = {
	pb_warm, pb_free_slots, pb_submit, pb_cancel, pb_pollfds, pb_events, pb_destroy,
	pb_grow, pb_owns,
};

struct backend *backend_pool_new(const char *worker_exe, int workers, int fork_mode,
				 const struct backend_report *report, struct buf *err)
{
	struct pb *p = calloc(1, sizeof *p);

	if (!p || !(p->exe = strdup(worker_exe ? worker_exe : ""))) {
		free(p);
		err_fail(err, "out of memory");
		return NULL;
	}
	p->base.ops = &pb_ops;
	p->fork_mode = fork_mode;
	p->report = *report;
	p->pool = pool_new(workers, &pb_pool_ops, p);
	if (!p->pool) {
		free(p->exe);
		free(p);
		err_fail(err, "out of memory");
		return NULL;
	}
	return &p->base;
}
