/*
 * pool_workers.c - the pool's workers (pool.h): their life, and the
 * frames they send.
 *
 * Worker life: DOWN -> (ops->start, HELLO sent) HELLO -> (HELLO answered)
 * IDLE <-> BUSY, and back to DOWN when its result pipe reaches EOF or it
 * breaks the protocol.  Nothing blocks except pool_destroy() and ops->reap.
 *
 * Workers are only ever started from pool_tick() (run by pool_pollfds(),
 * at the end of pool_events()) and pool_warm(), both in this file, never
 * while pool_events() walks its pollfd array: a new worker could get the
 * number of a descriptor that a dead one still has in that array.
 *
 * A worker that dies mid-job leaves the job's process group behind; the
 * pool kills it by the pid the worker wrote on the pool's board (board.h)
 * or, for a pool without one, reported in STARTED.  The group's
 * leader was the worker's child, so it may already have been reaped by
 * init, and its id could in principle have been reused; pids are handed
 * out sequentially up to pid_max, which makes that window negligible.
 *
 * The job queue and results are pool_jobs.c's; pool.h's API, which
 * drives this, is pool.c's.
 */
#include "pool/pool.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/board.h"
#include "pool/pool_impl.h"
#include "lib/err.h"
#include "lib/msgtab.h"
#include "lib/run.h"

/* A worker must answer HELLO this fast (ASan and loaded machines included). */
#define POOL_HELLO_MS 10000
/* After this many start failures in a row with no worker up, queued jobs fail. */
#define POOL_MAX_START_FAILURES 5
#define POOL_BACKOFF_MAX_MS 1000
__attribute__((format(printf, 2, 3)))
static void pool_log(struct pool *p, const char *fmt, ...)
{
	char line[300];
	va_list ap;

	if (!p->ops.log)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	p->ops.log(p->ctx, line);
}

void pool_flush(struct pworker *w)
{
	if (!w->write_dead && frame_outq_pending(&w->out) &&
	    frame_outq_flush(w->to_fd, &w->out) < 0)
		w->write_dead = 1; /* it closed its input: exiting, EOF follows */
	if (w->write_dead)
		frame_outq_release(&w->out);
}

void pool_send(struct pworker *w, int64_t id, const void *payload, size_t len)
{
	if (!w->write_dead && frame_outq_send(w->to_fd, &w->out, id, payload, len) < 0)
		w->write_dead = 1; /* it closed its input: exiting, EOF follows */
	if (w->write_dead)
		frame_outq_release(&w->out);
}

static void pool_start_failed(struct pool *p, const char *why)
{
	int64_t backoff = 50;
	int live = 0;

	p->start_failures++;
	for (int i = 1; i < p->start_failures && backoff < POOL_BACKOFF_MAX_MS; i++)
		backoff *= 2;
	if (backoff > POOL_BACKOFF_MAX_MS)
		backoff = POOL_BACKOFF_MAX_MS;
	p->next_start = pool_now_ms() + backoff;
	for (int i = 0; i < p->n; i++)
		live += p->w[i].state != W_DOWN;
	if (p->start_failures < POOL_MAX_START_FAILURES || live)
		return;
	/* Nobody can run the queue: fail it rather than hang the caller. */
	pool_log(p, "asynccompile: giving up after %d failed worker starts: %s",
		 p->start_failures, why);
	p->start_failures = 0;
	p->next_start = 0;
	for (struct pjob *j; (j = pool_dequeue(p));)
		pool_report(p, j, STATUS_CANNOT_RUN, RES_SPAWN_FAILED,
			    "cannot start a worker: %s", why);
}

static void pool_start(struct pool *p, struct pworker *w)
{
	struct hello_msg hello = { PROTO_VERSION, 0, (int32_t)getpid() };
	struct buf b = BUF_INIT, err = BUF_INIT;
	int to, from;
	pid_t pid;

	board_set(p->board, w->index, 0);
	if (p->ops.start(p->ctx, w->index, &to, &from, &pid) < 0) {
		err_fail(&err, "worker %d:", w->index);
		pool_log(p, "asynccompile: cannot start %s", (char *)err.data);
		pool_start_failed(p, (char *)err.data);
		buf_release(&err);
		return;
	}
	fcntl(to, F_SETFL, fcntl(to, F_GETFL) | O_NONBLOCK);
	fcntl(from, F_SETFL, fcntl(from, F_GETFL) | O_NONBLOCK);
	w->to_fd = to;
	w->from_fd = from;
	w->pid = pid;
	w->state = W_HELLO;
	w->write_dead = 0;
	w->job = NULL;
	w->job_pgid = 0;
	w->hello_deadline = pool_now_ms() + POOL_HELLO_MS;
	frame_decoder_init(&w->dec);
	if (w->started_before)
		p->st.restarts++;
	w->started_before = 1;
	msg_put_hello(&b, &hello);
	pool_send(w, PROTO_ID_CONTROL, b.data, b.len);
	buf_release(&b);
}

enum pool_fate pool_fate(int cancelled, int64_t timeout_ms, int64_t ran_ms, uint32_t attempts,
			 uint32_t retries)
{
	if (cancelled)
		return POOL_FATE_CANCELLED;
	if (timeout_ms > 0 && ran_ms >= timeout_ms)
		return POOL_FATE_TIMED_OUT;
	return attempts <= retries ? POOL_FATE_RETRY : POOL_FATE_GIVE_UP;
}

static void pool_job_lost(struct pool *p, struct pworker *w, struct pjob *j)
{
	uint32_t runs = j->retries + 1;
	int64_t timeout = j->cancelled ? 0 : j->timeout_ms;

	switch (pool_fate(j->cancelled, timeout, pool_now_ms() - j->dispatched_ms, j->attempts,
			  j->retries)) {
	case POOL_FATE_CANCELLED:
		pool_report(p, j, STATUS_NOT_RUN, RES_CANCELLED,
			    "worker %d died while this job was being cancelled",
			    w->index);
		break;
	case POOL_FATE_TIMED_OUT:
		pool_report(p, j, STATUS_TIMED_OUT, RES_TIMED_OUT,
			    "timed out after %" PRId64 " ms; worker %d died while it was "
			    "being stopped", timeout, w->index);
		break;
	case POOL_FATE_RETRY:
		pool_log(p, "asynccompile: re-running job %" PRId64
			 " (attempt %" PRIu32 " of %" PRIu32 ")",
			 j->id, j->attempts + 1, runs);
		p->st.retried++;
		pool_enqueue(p, j, 1);
		break;
	case POOL_FATE_GIVE_UP:
		pool_report(p, j, STATUS_NOT_RUN, RES_CRASHED,
			    "worker %d died while running this job (attempt %"
			    PRIu32 " of %" PRIu32 "); giving up",
			    w->index, j->attempts, runs);
		break;
	}
}

/*
 * The group of the job `w` runs, as far as the pool knows, or 0.  With a
 * board, its slot alone decides: the worker clears it before reaping the
 * job, while the pid from STARTED stays until the RESULT is read.
 */
static pid_t pool_job_group(const struct pool *p, const struct pworker *w)
{
	if (p->board >= 0)
		return w->job ? board_get(p->board, w->index) : 0;
	return w->job_pgid;
}

void pool_kill_job(const struct pool *p, const struct pworker *w, int sig)
{
	pid_t pgid = pool_job_group(p, w);

	if (pgid > 0)
		kill(-pgid, sig);
	else if (pgid == BOARD_STARTING)
		board_kill_marked(w->pid, sig);
}

/*
 * The worker is gone (EOF) or no longer trusted (`alive`: it broke the
 * protocol or never answered, so it is killed first).  Its job's group is
 * killed, the worker reaped, and the job re-queued or reported.  fmt
 * words why, after "worker N (pid P) ".
 */
__attribute__((format(printf, 4, 5)))
static void pool_lose(struct pool *p, struct pworker *w, int alive, const char *fmt, ...)
{
	struct pjob *j = w->job;
	enum wstate was = w->state;
	struct buf why = BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	err_failv(&why, fmt, ap);
	va_end(ap);
	pool_log(p, "asynccompile: worker %d (pid %d) %s", w->index, (int)w->pid,
		 (char *)why.data);
	if (alive)
		kill(w->pid, SIGKILL); /* first, or it could start the next job */
	pool_kill_job(p, w, SIGKILL);
	close(w->to_fd);
	close(w->from_fd);
	w->to_fd = w->from_fd = -1;
	frame_decoder_release(&w->dec);
	frame_outq_release(&w->out);
	w->state = W_DOWN;
	w->job = NULL;
	w->job_pgid = 0;
	if (p->ops.reap)
		p->ops.reap(p->ctx, w->pid);
	w->pid = 0;
	p->st.crashed_workers++;
	if (was == W_HELLO) {
		pool_start_failed(p, (char *)why.data);
	} else if (j) {
		p->busy--;
		pool_job_lost(p, w, j);
	}
	buf_release(&why);
}

void pool_dispatch(struct pool *p)
{
	for (int i = 0; i < p->n && p->qhead; i++) {
		struct pworker *w = &p->w[i];
		struct pjob *j;

		if (w->state != W_IDLE)
			continue;
		j = pool_dequeue(p);
		j->attempts++;
		j->dispatched_ms = pool_now_ms();
		w->job = j;
		w->job_pgid = 0;
		w->state = W_BUSY;
		if (++p->busy > p->st.max_running)
			p->st.max_running = p->busy;
		j->running = (uint32_t)p->busy;
		pool_send(w, j->id, j->payload, j->len);
	}
}

/* Timers, dispatch and lazy starts: everything not driven by an fd. */
void pool_tick(struct pool *p)
{
	int64_t now = pool_now_ms();
	int starting = 0;

	for (int i = 0; i < p->n; i++) {
		struct pworker *w = &p->w[i];

		if (w->state == W_HELLO && now >= w->hello_deadline)
			pool_lose(p, w, 1, "did not answer HELLO in time");
	}
	pool_dispatch(p);
	for (int i = 0; i < p->n; i++)
		starting += p->w[i].state == W_HELLO;
	for (int i = 0; i < p->n && p->queued > starting; i++) {
		if (p->w[i].state != W_DOWN)
			continue;
		if (now < p->next_start)
			break;
		pool_start(p, &p->w[i]);
		if (p->w[i].state == W_DOWN)
			break; /* failed: back off */
		starting++;
	}
}

/* ---- frames from a worker ---- */

static void pool_got_hello(struct pool *p, struct pworker *w)
{
	struct hello_msg m;
	struct buf err = BUF_INIT;

	if (w->state != W_HELLO) {
		pool_lose(p, w, 1, "sent HELLO twice");
		return;
	}
	if (msg_get_hello(w->dec.payload.data, w->dec.payload.len, &m, &err) < 0) {
		pool_lose(p, w, 1, "sent a bad HELLO: %s", (char *)err.data);
		buf_release(&err);
		return;
	}
	if (m.version != PROTO_VERSION) {
		pool_lose(p, w, 1, "speaks protocol %" PRIu32 ", not %d",
			  m.version, PROTO_VERSION);
		return;
	}
	w->state = W_IDLE;
	p->start_failures = 0;
	p->next_start = 0;
}

static void pool_got_result(struct pool *p, struct pworker *w)
{
	struct result_msg res;
	struct pjob *j = w->job;
	struct buf *payload = &w->dec.payload;
	struct buf err = BUF_INIT;
	struct result_head head = { w->index, j->attempts, j->running };
	int64_t id = j->id;
	int bad;

	if (p->ops.result_raw) {
		bad = msg_check_result(payload->data, payload->len, &err);
	} else if (!(bad = msg_get_result(payload->data, payload->len, &res, &err))) {
		res.worker = head.worker;
		res.attempts = head.attempts;
		res.running = head.running;
	}
	if (bad < 0) {
		pool_lose(p, w, 1, "sent a bad RESULT: %s", (char *)err.data);
		buf_release(&err);
		return;
	}
	w->job = NULL;
	w->job_pgid = 0;
	w->state = W_IDLE;
	p->busy--;
	pool_job_free(p, j);
	p->st.completed++;
	if (p->ops.result_raw) {
		p->ops.result_raw(p->ctx, id, &head, payload->data, payload->len);
		return;
	}
	p->ops.result(p->ctx, id, &res);
	msg_result_release(&res);
}

/* A worker's messages (handlers return 0): the frame is in r->w->dec. */
struct pool_reading {
	struct pool *p;
	struct pworker *w;
};

static int pool_on_hello(void *ctx, const struct msg_in *m)
{
	struct pool_reading *r = ctx;

	(void)m; /* pool_got_hello() reads it in r->w->dec */
	pool_got_hello(r->p, r->w);
	return 0;
}

static int pool_on_error(void *ctx, const struct msg_in *m)
{
	struct pool_reading *r = ctx;

	/* a peer's text is bounded, as it was in the old fixed line */
	pool_lose(r->p, r->w, 1, "reported an error: %.*s", m->text_len < 180 ? m->text_len : 180,
		  m->text);
	return 0;
}

/* A job's frame must be about the job the worker runs. */
static int pool_job_frame_ok(struct pool_reading *r, const struct msg_in *m)
{
	struct pworker *w = r->w;

	if (w->state == W_BUSY && m->id == w->job->id)
		return 1;
	pool_lose(r->p, w, 1, "sent a frame (job %" PRId64 ", type %d) it had no business sending",
		  m->id, m->type);
	return 0;
}

static int pool_on_started(void *ctx, const struct msg_in *m)
{
	struct pool_reading *r = ctx;
	struct pool *p = r->p;
	struct pworker *w = r->w;
	struct started_msg sm;
	struct buf err = BUF_INIT;

	if (!pool_job_frame_ok(r, m))
		return 0;
	if (msg_get_started(m->p, m->n, &sm, &err) < 0) {
		pool_lose(p, w, 1, "sent a bad STARTED: %s", (char *)err.data);
		buf_release(&err);
		return 0;
	}
	w->job_pgid = sm.pid;
	sm.worker = w->index;
	sm.running = w->job->running;
	if (p->ops.started)
		p->ops.started(p->ctx, m->id, &sm);
	return 0;
}

static int pool_on_result(void *ctx, const struct msg_in *m)
{
	struct pool_reading *r = ctx;

	if (pool_job_frame_ok(r, m))
		pool_got_result(r->p, r->w);
	return 0;
}

static const struct msg_route pool_routes[] = {
	{ MSG_HELLO, MSG_ON_CONTROL, pool_on_hello },
	{ MSG_STARTED, MSG_ON_JOB, pool_on_started },
	{ MSG_RESULT, MSG_ON_JOB, pool_on_result },
	{ MSG_STATS, MSG_ON_CONTROL, msg_ignore },
	{ MSG_ERROR, MSG_ON_CONTROL, pool_on_error },
};
static const struct msg_table pool_table = MSG_TABLE("pool", pool_routes);

static int pool_on_frame(void *ctx, struct frame_decoder *d)
{
	struct pool_reading *r = ctx;
	struct buf err = BUF_INIT;

	if (msg_dispatch(&pool_table, r, d->id, d->payload.data, d->payload.len, &err) < 0)
		pool_lose(r->p, r->w, 1, "sent an %s", (char *)err.data);
	buf_release(&err);
	return r->w->state == W_DOWN; /* its decoder is gone with it */
}

void pool_read(struct pool *p, struct pworker *w)
{
	struct pool_reading ctx = { p, w };
	size_t total = 0, n = 0;

	/* a short read emptied the pipe: no EAGAIN read is needed to prove it */
	for (int full = 1; full && total < POOL_READ_BUDGET; total += n, full = n == FRAME_READ_MAX) {
		switch (frame_read(w->from_fd, &w->dec, 0, pool_on_frame, &ctx, &n)) {
		case FRAME_R_OK:
			continue;
		case FRAME_R_AGAIN:
			return;
		case FRAME_R_EOF: case FRAME_R_ERRNO:
			if (frame_eof(&w->dec) == 0) {
				pool_lose(p, w, 0, "exited unexpectedly");
				return;
			}
			/* fall through */
		case FRAME_R_BAD:
			if (!n) /* the end came mid-frame */
				pool_lose(p, w, 0, "exited mid-frame (%s)", (char *)w->dec.err.data);
			else
				pool_lose(p, w, 1, "sent a malformed frame: %s", (char *)w->dec.err.data);
			return;
		default: /* FRAME_R_STOP: the worker is down */
			return;
		}
	}
}

int pool_warm(struct pool *p)
{
	int live = 0;

	for (int i = 0; i < p->n; i++) {
		if (p->w[i].state == W_DOWN)
			pool_start(p, &p->w[i]);
		live += p->w[i].state != W_DOWN;
	}
	return live ? 0 : -1;
}
