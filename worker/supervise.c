/*
 * supervise.c - supervise_main(): the pool process of the `subprocess`
 * start method.  One framed connection upstream (the plugin), a pool of
 * `worker_exe --worker INDEX` children, one poll() loop for everything.
 *
 * Upstream output is queued and written without blocking, so results
 * piling up while the plugin is busy never stall the pool.  The supervisor
 * owns its children, so reaping a worker is a plain waitpid(pid); SIGCHLD
 * only wakes the loop (a worker's death is seen as EOF on its pipe, which
 * arrives after its last frame).  It is also a child subreaper: the jobs of
 * a worker that died come to it, and sup_reap() ends them.
 */
#include "worker/diag.h"
#include "pool/start.h"
#include "worker/worker.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pool/pool.h"
#include "lib/err.h"
#include "lib/msgtab.h"
#include "lib/pollset.h"
#include "lib/proto.h"
#include "lib/run.h"
#include "lib/sig.h"

extern char **environ;

/* How long jobs get to go after SIGTERM when the supervisor shuts down. */
#define SUP_GRACE_MS 1000
/* How long a last ERROR or pending results may take to reach upstream. */
#define SUP_FLUSH_MS 1000

struct sup {
	int in_fd, out_fd, nworkers;
	/*
	 * Workers report a job started only once it has run this long: a
	 * trivial job then wakes us once, for its RESULT, not twice.  Safe
	 * because we are a child subreaper: the job of a worker that dies
	 * comes to us, and needs no pid from STARTED (see sup_reap).
	 */
	int started_after_ms;
	const char *exe;
	int sig_fd;
	struct pool *pool;
	struct frame_decoder dec;
	struct frame_outq upq; /* frames waiting for out_fd */
	int hello_done;
	int out_dead;
	int done, status;
	struct buf err; /* why it ends with status 1 */
};

/* ---- pool_ops ---- */

static int sup_start(void *ctx, int index, int *to_worker, int *from_worker, pid_t *pid)
{
	struct sup *s = ctx;
	char num[16], after[16];
	char *argv[] = { (char *)s->exe, "--worker", num, "--started-after", after, NULL };

	snprintf(num, sizeof num, "%d", index);
	snprintf(after, sizeof after, "%d", s->started_after_ms);
	return start_worker(s->exe, argv, NULL, -1, 0, to_worker, from_worker, pid);
}

static void sup_result(void *ctx, int64_t id, struct result_msg *res)
{
	struct sup *s = ctx;
	struct buf b = BUF_INIT;

	msg_put_result(&b, res);
	frame_put(&s->upq.buf, id, b.data, b.len);
	buf_release(&b);
}

/*
 * A worker's RESULT goes upstream as it came, behind the head the pool
 * gave it: copied once, into the queue, and never written to.
 */
static void sup_result_raw(void *ctx, int64_t id, const struct result_head *h,
			   const void *payload, size_t len)
{
	struct sup *s = ctx;

	frame_put_head(&s->upq.buf, id, len);
	msg_put_result_as(&s->upq.buf, h, payload, len);
}

static void sup_started(void *ctx, int64_t id, const struct started_msg *m)
{
	struct sup *s = ctx;
	struct buf b = BUF_INIT;

	msg_put_started(&b, m);
	frame_put(&s->upq.buf, id, b.data, b.len);
	buf_release(&b);
}

static int sup_spare(void *ctx, pid_t pid)
{
	struct sup *s = ctx;

	return pool_is_worker(s->pool, pid);
}

/*
 * A worker is gone.  Whatever it was running was re-parented to us (we are
 * a child subreaper) before we could reap it: end those processes, and
 * the groups they lead, now.  Every child but a live worker is such a
 * process.
 */
static void sup_reap(void *ctx, pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	sig_reap_strays(sup_spare, ctx);
}

static void sup_log(void *ctx, const char *msg)
{
	(void)ctx;
	diag_warn("%s", msg);
}

/* ---- upstream ---- */

/*
 * The supervisor ends with status 1; s->err says why (a later failure's
 * words replace an earlier one's).
 */
static void sup_end(struct sup *s)
{
	s->done = 1;
	s->status = 1;
	buf_reset(&s->err);
}
#define sup_fail(s, ...) (sup_end(s), (void)err_fail(&(s)->err, __VA_ARGS__))

static void sup_flush(struct sup *s)
{
	if (s->out_dead || !frame_outq_pending(&s->upq))
		return;
	if (frame_outq_flush(s->out_fd, &s->upq) < 0) {
		s->out_dead = 1; /* the plugin is gone: nobody wants results */
		frame_outq_release(&s->upq);
		s->done = 1;
	}
}

static void sup_stats(struct sup *s)
{
	struct pool_stats st;
	struct buf b = BUF_INIT, text = BUF_INIT;

	pool_get_stats(s->pool, &st);
	buf_addf(&text, "workers=%d submitted=%" PRIu64 " completed=%" PRIu64
		 " retried=%" PRIu64 " crashed_workers=%" PRIu64 " restarts=%"
		 PRIu64 " running=%d queued=%d max_running=%d", s->nworkers,
		 st.submitted, st.completed, st.retried, st.crashed_workers,
		 st.restarts, st.running, st.queued, st.max_running);
	msg_put_text(&b, MSG_STATS, (char *)text.data);
	frame_put(&s->upq.buf, PROTO_ID_CONTROL, b.data, b.len);
	buf_release(&text);
	buf_release(&b);
}

static void sup_hello(struct sup *s)
{
	struct buf b = BUF_INIT, err = BUF_INIT;

	if (msg_hello_answer(s->dec.id, s->dec.payload.data, s->dec.payload.len,
			     (uint32_t)s->nworkers, &b, &err) < 0) {
		sup_fail(s, "%s", (char *)err.data);
		buf_release(&err);
		return;
	}
	frame_put(&s->upq.buf, PROTO_ID_CONTROL, b.data, b.len);
	buf_release(&b);
	s->hello_done = 1;
	/* The plugin starts the supervisor when it wants a pool: warm it now. */
	if (pool_warm(s->pool) < 0)
		diag_warn("no worker could be started yet");
}

/*
 * The plugin's messages after the handshake: each handler returns 0.
 * A JOB goes to the pool as it came: its head read (O(1)), the rest
 * left to the worker that decodes it, and the frame buffer it arrived
 * in (m->p) given to the pool (the decoder starts a new one), not copied.
 */
static int sup_on_job(void *ctx, const struct msg_in *m)
{
	struct sup *s = ctx;
	struct job_head head;
	struct buf err = BUF_INIT;
	unsigned char *job;
	size_t len;

	if (msg_get_job_head(m->p, m->n, &head, &err) < 0) {
		sup_fail(s, "job %" PRId64 ": %s", m->id, (char *)err.data);
		buf_release(&err);
		return 0;
	}
	job = (unsigned char *)buf_detach(&s->dec.payload, &len);
	if (pool_submit(s->pool, m->id, job, len, &head, POOL_GIVE) < 0) {
		int e = errno;

		free(job);
		if (e == EEXIST)
			sup_fail(s, "job %" PRId64 ": id already in use", m->id);
		else
			errno = e, sup_fail(s, "job %" PRId64 ":", m->id);
	}
	return 0;
}

static int sup_on_cancel(void *ctx, const struct msg_in *m)
{
	struct sup *s = ctx;

	if (m->n != 1)
		sup_fail(s, "job %" PRId64 ": CANCEL: trailing bytes after the message", m->id);
	else
		pool_cancel(s->pool, m->id); /* unknown id: it just finished */
	return 0;
}

/* A request (the type byte alone) gets the counters; a reply is ignored. */
static int sup_on_stats(void *ctx, const struct msg_in *m)
{
	if (m->n == 1)
		sup_stats(ctx);
	return 0;
}

static int sup_on_workers(void *ctx, const struct msg_in *m)
{
	struct sup *s = ctx;
	uint32_t want;
	struct buf err = BUF_INIT;

	if (msg_get_workers(m->p, m->n, &want, &err) < 0)
		sup_fail(s, "%s", (char *)err.data);
	else if (pool_resize(s->pool, (int)want) < 0)
		sup_fail(s, "cannot grow the pool to %" PRIu32 " workers: out of memory", want);
	else if ((int)want > s->nworkers)
		s->nworkers = (int)want;
	buf_release(&err);
	return 0;
}

static int sup_on_error(void *ctx, const struct msg_in *m)
{
	struct sup *s = ctx;

	diag_warn("peer reported an error: %.*s", m->text_len, m->text);
	s->done = 1;
	s->status = 1;
	s->out_dead = 1; /* do not answer an error with an error */
	return 0;
}

static const struct msg_route sup_routes[] = {
	{ MSG_JOB, MSG_ON_JOB, sup_on_job },
	{ MSG_CANCEL, MSG_ON_JOB, sup_on_cancel },
	{ MSG_STATS, MSG_ON_CONTROL, sup_on_stats },
	{ MSG_WORKERS, MSG_ON_CONTROL, sup_on_workers },
	{ MSG_ERROR, MSG_ON_CONTROL, sup_on_error },
};
static const struct msg_table sup_table = MSG_TABLE("supervisor", sup_routes);

static void sup_frame(struct sup *s)
{
	struct frame_decoder *d = &s->dec;
	struct buf err = BUF_INIT;

	if (!s->hello_done) {
		sup_hello(s);
		return;
	}
	if (d->id == PROTO_ID_SHUTDOWN) {
		s->done = 1;
		return;
	}
	if (msg_dispatch(&sup_table, s, d->id, d->payload.data, d->payload.len, &err) < 0)
		sup_fail(s, "%s", (char *)err.data);
	buf_release(&err);
}

static int sup_on_frame(void *ctx, struct frame_decoder *d)
{
	struct sup *s = ctx;

	(void)d;
	sup_frame(s);
	return s->done;
}

static void sup_read(struct sup *s)
{
	switch (frame_read(s->in_fd, &s->dec, 0, sup_on_frame, s, NULL)) {
	case FRAME_R_AGAIN: case FRAME_R_OK: case FRAME_R_STOP:
		return;
	case FRAME_R_ERRNO: /* as good as an end: the plugin is gone */
		if (frame_eof(&s->dec) == 0)
			break;
		/* fall through */
	case FRAME_R_BAD: /* malformed, or cut off mid-frame */
		sup_fail(s, "%s", (char *)s->dec.err.data);
		break;
	}
	s->done = 1;
}

/* Give the last frames (results, an ERROR) a bounded chance to leave. */
static void sup_flush_bounded(struct sup *s)
{
	int64_t deadline = proto_now_ns() / 1000000 + SUP_FLUSH_MS;

	sup_flush(s);
	while (!s->out_dead && frame_outq_pending(&s->upq)) {
		int64_t now = proto_now_ns() / 1000000;
		struct pollfd pfd = { s->out_fd, POLLOUT, 0 };

		if (now >= deadline)
			break;
		if (poll(&pfd, 1, (int)(deadline - now)) < 0 && errno != EINTR)
			break;
		sup_flush(s);
	}
}

static void sup_loop(struct sup *s)
{
	struct pollset ps = POLLSET_INIT;

	while (!s->done) {
		int timeout = -1;
		size_t sig, in, at_p, np, room = 2 * (size_t)s->nworkers;

		pollset_begin(&ps);
		sig = pollset_add(&ps, s->sig_fd, POLLIN);
		in = pollset_add(&ps, s->in_fd, POLLIN);
		/* the plugin may have grown the pool (WORKERS): two pipes a worker */
		np = pool_pollfds(s->pool, pollset_room(&ps, room), room, &timeout);
		at_p = pollset_added(&ps, np);
		pollset_timeout(&ps, timeout);
		sup_flush(s); /* pool_pollfds may have produced results */
		/* A negative fd is skipped: no POLLERR spin while idle; sup_flush() writes. */
		pollset_add(&ps, frame_outq_pending(&s->upq) && !s->out_dead ? s->out_fd : -1,
				  POLLOUT);
		if (pollset_wait(&ps) < 0) {
			if (errno == EINTR)
				continue;
			sup_fail(s, "poll:");
			break;
		}
		if (ps.fds[sig].revents) {
			int got = sig_drain(s->sig_fd);

			if (got && got != SIGCHLD) {
				s->done = 1;
				s->status = 128 + got;
				break;
			}
		}
		if (ps.fds[in].revents)
			sup_read(s);
		if (s->done)
			break;
		pool_events(s->pool, ps.fds + at_p, np);
		sup_flush(s);
	}
	pollset_release(&ps);
}

int supervise_main(int in_fd, int out_fd, int nworkers, const char *worker_exe,
		   int started_after_ms)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGCHLD, 0 };
	static const struct pool_ops ops = {
		.start = sup_start,
		.result = sup_result,
		.started = sup_started,
		.reap = sup_reap,
		.log = sup_log,
		.result_raw = sup_result_raw,
	};
	struct sup s;

	memset(&s, 0, sizeof s);
	/* not a subreaper: a dead worker's job is found by STARTED only */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		started_after_ms = 0;
	s.in_fd = in_fd;
	s.out_fd = out_fd;
	s.nworkers = nworkers < 1 ? 1 : nworkers;
	s.started_after_ms = started_after_ms < 0 ? WORKER_STARTED_AFTER_MS
						  : started_after_ms;
	s.exe = worker_exe;
	frame_decoder_init(&s.dec);
	s.sig_fd = sig_open(sigs);
	s.pool = pool_new(s.nworkers, &ops, &s);
	if (s.sig_fd < 0 || !s.pool) {
		diag_warn("cannot set up:");
		if (s.pool)
			pool_destroy(s.pool, 0);
		if (s.sig_fd >= 0)
			sig_close(s.sig_fd);
		return 1;
	}
	fcntl(in_fd, F_SETFL, fcntl(in_fd, F_GETFL) | O_NONBLOCK);
	fcntl(out_fd, F_SETFL, fcntl(out_fd, F_GETFL) | O_NONBLOCK);
	sup_loop(&s);
	if (s.err.len) {
		struct buf b = BUF_INIT;

		diag_warn("protocol error: %s", (char *)s.err.data);
		msg_put_text(&b, MSG_ERROR, (char *)s.err.data);
		frame_put(&s.upq.buf, PROTO_ID_CONTROL, b.data, b.len);
		buf_release(&b);
	}
	/* After a signal, ending the jobs comes first; else the last words. */
	if (s.status <= 1)
		sup_flush_bounded(&s);
	pool_destroy(s.pool, SUP_GRACE_MS);
	frame_decoder_release(&s.dec);
	frame_outq_release(&s.upq);
	buf_release(&s.err);
	sig_close(s.sig_fd);
	return s.status;
}
