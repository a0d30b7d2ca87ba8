/*
 * The subprocess start method: one supervisor process (worker executable
 * in --supervise mode) runs the pool and multiplexes every job over one
 * pipe pair.  If the supervisor dies, a new one is started and the jobs it
 * had are sent again; after SUB_MAX_RESTARTS deaths in a row without a
 * single result in between, the jobs fail with a clear reason instead.
 *
 * The jobs it holds are the engine's records, lent (backend.h): it finds
 * one by id through report->find() and links them in a list of its own
 * through j->be, so a new supervisor is sent the very bytes the job
 * record keeps; nothing is copied but into the pipe's queue.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/msgtab.h"
#include "lib/proto.h"
#include "plugin/backend.h"
#include "plugin/fatal.h"
#include "plugin/job.h"
#include "plugin/spawn.h"
#include "pool/pool.h"
#include "plugin/log.h"
#include "worker/worker.h"

#define SUB_MAX_RESTARTS 3
/* a supervisor that never answers HELLO counts as dead */
#define SUB_HELLO_MS 10000

struct sub {
	struct backend base;
	char *exe;
	int workers;
	int to, from;         /* -1 when no supervisor runs */
	pid_t pid;
	int ready;            /* HELLO answered */
	int64_t launched_ns;
	int deaths;           /* in a row, without a result in between */
	struct frame_decoder dec;
	struct frame_outq out;
	/*
	 * The jobs it holds, linked through j->be: be.cancelled (not to be
	 * sent again to a new supervisor), be.started_ns (when its STARTED
	 * came), be.attempts (supervisors it was seen running under).
	 */
	struct job *head, *tail; /* in the order they were submitted */
	int nheld;
	struct backend_report report;
};

static void sub_close(struct sub *s)
{
	if (s->to >= 0)
		close(s->to);
	if (s->from >= 0)
		close(s->from);
	s->to = s->from = -1;
	s->ready = 0;
	frame_outq_release(&s->out);
	frame_decoder_release(&s->dec);
	frame_decoder_init(&s->dec);
}

static int sub_launch(struct sub *s)
{
	char nbuf[16];
	char *argv[] = { s->exe, "--supervise", nbuf, NULL };
	struct buf hello = BUF_INIT;
	struct hello_msg h = { PROTO_VERSION, 0, (int32_t)getpid() };

	snprintf(nbuf, sizeof nbuf, "%d", s->workers);
	if (spawn_worker(s->exe, argv, -1, &s->to, &s->from, &s->pid) < 0) {
		log_msg("cannot start the pool supervisor %s:", s->exe);
		s->to = s->from = -1;
		return -1;
	}
	fcntl(s->to, F_SETFL, O_NONBLOCK);
	fcntl(s->from, F_SETFL, O_NONBLOCK);
	s->launched_ns = proto_now_ns();
	msg_put_hello(&hello, &h);
	frame_put(&s->out.buf, PROTO_ID_CONTROL, hello.data, hello.len);
	buf_release(&hello);
	return 0;
}

/*
 * Written from the job record at once when nothing is queued before it;
 * a broken pipe is seen by the next flush (sub_events), as ever.
 */
static void sub_send_job(struct sub *s, const struct job *j)
{
	(void)frame_outq_send(s->to, &s->out, j->id, j->payload.data, j->payload.len);
}

static void sub_hold(struct sub *s, struct job *j)
{
	memset(&j->be, 0, sizeof j->be);
	j->be.held = 1;
	j->be.prev = s->tail;
	if (s->tail)
		s->tail->be.next = j;
	else
		s->head = j;
	s->tail = j;
	s->nheld++;
}

/* Let go of j before it is reported: it may be freed then. */
static void sub_unhold(struct sub *s, struct job *j)
{
	if (!j->be.held)
		return;
	if (j->be.prev)
		j->be.prev->be.next = j->be.next;
	else
		s->head = j->be.next;
	if (j->be.next)
		j->be.next->be.prev = j->be.prev;
	else
		s->tail = j->be.prev;
	memset(&j->be, 0, sizeof j->be);
	s->nheld--;
}

/* Report a job the pool could not run (status 125, the reason in err). */
static void sub_report_failed(struct sub *s, int64_t id, uint32_t flags, uint32_t attempts,
			      const char *why)
{
	struct result_msg r;

	msg_result_fail(&r, STATUS_NOT_RUN, flags, "%s", why);
	r.attempts = attempts;
	s->report.result(s->report.ctx, id, &r);
	msg_result_release(&r);
}

static void sub_fail_all(struct sub *s, const char *why)
{
	for (struct job *j; (j = s->head);) {
		int64_t id = j->id;

		sub_unhold(s, j);
		sub_report_failed(s, id, RES_CRASHED, (uint32_t)s->deaths, why);
	}
}

/*
 * What becomes of an in-flight job of a supervisor that died: pool_fate()
 * decides, as the pool does for a worker's death.  It ran for as long as
 * its STARTED says, which workers send once a job has run for
 * WORKER_STARTED_AFTER_MS; one never reported started is sent again and
 * not counted as an attempt.  0: send it again; else it was reported.
 */
static int sub_job_lost(struct sub *s, struct job *j)
{
	int64_t timeout = j->timeout_ms, ran_ms = 0, id = j->id;
	uint32_t attempts;
	struct result_msg r;

	if (j->be.started_ns) {
		ran_ms = (proto_now_ns() - j->be.started_ns) / 1000000 + WORKER_STARTED_AFTER_MS;
		j->be.attempts++;
		j->be.started_ns = 0;
	}
	attempts = j->be.attempts;
	switch (pool_fate(j->be.cancelled, timeout, ran_ms, attempts, j->retries)) {
	case POOL_FATE_RETRY:
		return 0;
	case POOL_FATE_CANCELLED:
		msg_result_fail(&r, STATUS_NOT_RUN, RES_CANCELLED, "cancelled");
		break;
	case POOL_FATE_TIMED_OUT:
		msg_result_fail(&r, STATUS_TIMED_OUT, RES_TIMED_OUT, "timed out after %lld ms; the "
				"pool supervisor died while it was being stopped", (long long)timeout);
		break;
	case POOL_FATE_GIVE_UP:
		msg_result_fail(&r, STATUS_NOT_RUN, RES_CRASHED, "the pool supervisor died while "
				"this job ran (attempt %u of %u); giving up", (unsigned)attempts,
				(unsigned)j->retries + 1);
		break;
	}
	r.attempts = attempts ? attempts : 1;
	sub_unhold(s, j);
	s->report.result(s->report.ctx, id, &r);
	msg_result_release(&r);
	return 1;
}

/* The supervisor is gone: start another and hand it the same jobs. */
static void sub_died(struct sub *s, const char *why)
{
	sub_close(s);
	s->deaths++;
	if (fatal_dying()) {
		sub_fail_all(s, "make is exiting (fatal signal); the pool supervisor is not restarted");
		return;
	}
	if (s->nheld == 0 && s->deaths <= SUB_MAX_RESTARTS) {
		/* nothing lost; start lazily on the next job */
		log_msg("pool supervisor %d stopped (%s)", (int)s->pid, why);
		return;
	}
	if (s->deaths > SUB_MAX_RESTARTS) {
		struct buf msg = BUF_INIT;

		buf_addf(&msg, "the pool supervisor died %d times in a row (last: %s); job not run",
			 s->deaths, why);
		log_msg("%s", (char *)msg.data);
		sub_fail_all(s, (char *)msg.data);
		buf_release(&msg);
		return;
	}
	log_msg("pool supervisor %d died (%s); restarting it and re-sending %d job%s",
		   (int)s->pid, why, s->nheld, s->nheld == 1 ? "" : "s");
	if (sub_launch(s) < 0) {
		sub_fail_all(s, "the pool supervisor could not be restarted");
		return;
	}
	for (struct job *j = s->head, *next; j; j = next) {
		next = j->be.next; /* j may be reported, and freed */
		if (!sub_job_lost(s, j))
			sub_send_job(s, j);
	}
}

static int sub_warm(struct backend *b)
{
	struct sub *s = (struct sub *)b;

	if (s->to >= 0)
		return 0;
	return sub_launch(s);
}

static int sub_free_slots(struct backend *b)
{
	struct sub *s = (struct sub *)b;

	if (s->deaths > SUB_MAX_RESTARTS)
		s->deaths = 0; /* a fresh batch gets a fresh chance */
	return s->workers - s->nheld;
}

static int sub_submit(struct backend *b, struct job *j)
{
	struct sub *s = (struct sub *)b;

	/* the engine may queue up to `workers` jobs ahead in the supervisor */
	if (s->nheld >= 2 * s->workers) {
		errno = EAGAIN;
		return -1;
	}
	if (s->to < 0 && sub_launch(s) < 0) {
		sub_report_failed(s, j->id, RES_SPAWN_FAILED, 0, "the pool supervisor could not be started");
		return 0;
	}
	sub_hold(s, j);
	sub_send_job(s, j);
	return 0;
}

static void sub_cancel(struct backend *b, struct job *j)
{
	static const unsigned char cancel[] = { MSG_CANCEL };
	struct sub *s = (struct sub *)b;

	if (j->be.held && !j->be.cancelled) {
		j->be.cancelled = 1;
		if (s->to >= 0)
			frame_put(&s->out.buf, j->id, cancel, sizeof cancel);
	}
}

static size_t sub_pollfds(struct backend *b, struct pollfd *fds, size_t max, int *timeout_ms)
{
	struct sub *s = (struct sub *)b;
	size_t n = 0;

	if (s->to >= 0 && !s->ready) {
		int64_t left = SUB_HELLO_MS - (proto_now_ns() - s->launched_ns) / 1000000;

		if (left <= 0) {
			if (s->pid > 0)
				kill(s->pid, SIGKILL);
			sub_died(s, "it did not answer the handshake");
		} else if (*timeout_ms < 0 || *timeout_ms > left) {
			*timeout_ms = (int)left;
		}
	}
	if (s->from >= 0 && n < max)
		fds[n++] = (struct pollfd){ .fd = s->from, .events = POLLIN };
	if (s->to >= 0 && frame_outq_pending(&s->out) && n < max)
		fds[n++] = (struct pollfd){ .fd = s->to, .events = POLLOUT };
	return n;
}

/*
 * A frame the supervisor got wrong: logged (err released), and the
 * connection is unusable (1).
 */
static int sub_bad(int64_t id, struct buf *err)
{
	log_msg("bad frame from the pool supervisor (job %lld): %s", (long long)id,
		(char *)err->data);
	buf_release(err);
	return 1;
}

/* The supervisor's messages: 0 to go on, 1 when the connection is unusable. */
static int sub_on_hello(void *ctx, const struct msg_in *m)
{
	struct hello_msg h;

	if (msg_get_hello(m->p, m->n, &h, NULL) < 0 || h.version != PROTO_VERSION) {
		log_msg("pool supervisor speaks protocol %u, not %d", h.version, PROTO_VERSION);
		return 1;
	}
	((struct sub *)ctx)->ready = 1;
	return 0;
}

static int sub_on_error(void *ctx, const struct msg_in *m)
{
	(void)ctx;
	log_msg("pool supervisor reported: %.*s", m->text_len, m->text);
	return 1;
}

static int sub_on_started(void *ctx, const struct msg_in *m)
{
	struct sub *s = ctx;
	struct started_msg sm;
	struct buf err = BUF_INIT;
	struct job *j;

	if (msg_get_started(m->p, m->n, &sm, &err) < 0)
		return sub_bad(m->id, &err);
	if ((j = s->report.find(s->report.ctx, m->id)) && j->be.held && !j->be.started_ns)
		j->be.started_ns = proto_now_ns();
	s->report.started(s->report.ctx, m->id, &sm);
	return 0;
}

static int sub_on_result(void *ctx, const struct msg_in *m)
{
	struct result_msg r;
	struct buf err = BUF_INIT;
	struct sub *s = ctx;
	struct job *j;

	if (msg_get_result(m->p, m->n, &r, &err) < 0)
		return sub_bad(m->id, &err);
	s->deaths = 0;
	if ((j = s->report.find(s->report.ctx, m->id)))
		sub_unhold(s, j);
	s->report.result(s->report.ctx, m->id, &r);
	msg_result_release(&r);
	return 0;
}

static const struct msg_route sub_routes[] = {
	{ MSG_HELLO, MSG_ON_CONTROL, sub_on_hello },
	{ MSG_STARTED, MSG_ON_JOB, sub_on_started },
	{ MSG_RESULT, MSG_ON_JOB, sub_on_result },
	{ MSG_STATS, MSG_ON_CONTROL, msg_ignore },
	{ MSG_ERROR, MSG_ON_CONTROL, sub_on_error },
};
static const struct msg_table sub_table = MSG_TABLE("plugin", sub_routes);

/* One complete frame from the supervisor: non-zero if it is unusable. */
static int sub_on_frame(void *ctx, struct frame_decoder *d)
{
	struct buf err = BUF_INIT;
	int r;

	if (d->id == PROTO_ID_SHUTDOWN)
		return 1;
	r = msg_dispatch(&sub_table, ctx, d->id, d->payload.data, d->payload.len, &err);
	if (r < 0)
		return sub_bad(d->id, &err);
	return r != 0;
}

static void sub_events(struct backend *b, const struct pollfd *fds, size_t nfds)
{
	struct sub *s = (struct sub *)b;

	for (size_t i = 0; i < nfds; i++) {
		if (!fds[i].revents)
			continue;
		if (fds[i].fd == s->to && s->to >= 0 && (fds[i].revents & (POLLOUT | POLLERR))) {
			if (frame_outq_flush(s->to, &s->out) < 0) {
				sub_died(s, "its input pipe broke");
				return;
			}
		}
		if (fds[i].fd == s->from && s->from >= 0) {
			switch (frame_read(s->from, &s->dec, 0, sub_on_frame, s, NULL)) {
			case FRAME_R_AGAIN: case FRAME_R_OK:
				break;
			case FRAME_R_EOF:
				sub_died(s, "end of file");
				return;
			case FRAME_R_ERRNO:
				sub_died(s, strerror(errno));
				return;
			case FRAME_R_BAD:
				log_msg("bad frame from the pool supervisor: %s", (char *)s->dec.err.data);
				/* fall through */
			default: /* FRAME_R_STOP: a frame it had no business sending */
				if (s->pid > 0)
					kill(s->pid, SIGKILL);
				sub_died(s, "protocol error");
				return;
			}
		}
	}
	/* opportunistic flush: most frames fit the pipe at once */
	if (s->to >= 0 && frame_outq_pending(&s->out) && frame_outq_flush(s->to, &s->out) < 0)
		sub_died(s, "its input pipe broke");
}

static void sub_destroy(struct backend *b, int64_t grace_ms)
{
	struct sub *s = (struct sub *)b;

	if (s->to >= 0) {
		/*
		 * A shutdown frame after whatever is queued (cutting a frame
		 * short would only earn a protocol complaint), then EOF;
		 * either ends every job.  Bounded: a stuck supervisor gets EOF.
		 */
		int64_t until = proto_now_ns() + 1000 * 1000000LL;

		frame_put(&s->out.buf, PROTO_ID_SHUTDOWN, NULL, 0);
		while (frame_outq_pending(&s->out) && proto_now_ns() < until) {
			struct pollfd pfd = { .fd = s->to, .events = POLLOUT };

			if (poll(&pfd, 1, 100) < 0 && errno != EINTR)
				break;
			if (frame_outq_flush(s->to, &s->out) < 0)
				break;
		}
		close(s->to);
		s->to = -1;
		/*
		 * Wait for its end of the pipe to close, so no job outlives
		 * this call (bounded: SIGKILL it after the grace period).
		 */
		int64_t deadline = proto_now_ns() + (grace_ms + 2000) * 1000000;
		for (;;) {
			struct pollfd pfd = { .fd = s->from, .events = POLLIN };
			unsigned char tmp[4096];
			int64_t left = (deadline - proto_now_ns()) / 1000000;

			if (left <= 0) {
				kill(s->pid, SIGKILL);
				break;
			}
			if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR)
				break;
			if (pfd.revents && read(s->from, tmp, sizeof tmp) == 0)
				break;
		}
	}
	sub_close(s);
	/* the engine's records, not ours: let them go, unreported (backend.h) */
	while (s->head)
		sub_unhold(s, s->head);
	frame_outq_release(&s->out);
	frame_decoder_release(&s->dec);
	free(s->exe);
	free(s);
}

/*
 * A supervisor started later gets the new size on its command line; the
 * running one is told in a WORKERS frame.
 */
static int sub_grow(struct backend *b, int workers)
{
	struct sub *s = (struct sub *)b;
	struct buf m = BUF_INIT;

	if (workers <= s->workers)
		return 0;
	s->workers = workers;
	if (s->to >= 0) {
		msg_put_workers(&m, (uint32_t)workers);
		frame_put(&s->out.buf, PROTO_ID_CONTROL, m.data, m.len);
		buf_release(&m);
	}
	return 0;
}

static int sub_owns(struct backend *b, pid_t pid)
{
	struct sub *s = (struct sub *)b;

	return s->to >= 0 && pid == s->pid;
}

static const struct backend_ops sub_ops = {
	sub_warm, sub_free_slots, sub_submit, sub_cancel, sub_pollfds, sub_events, sub_destroy,
	sub_grow, sub_owns,
};

struct backend *backend_sub_new(const char *worker_exe, int workers,
				const struct backend_report *report, struct buf *err)
{
	struct sub *s = calloc(1, sizeof *s);

	if (!s || !(s->exe = strdup(worker_exe))) {
		err_fail(err, "out of memory");
		if (s)
			free(s->exe);
		free(s);
		return NULL;
	}
	s->base.ops = &sub_ops;
	s->workers = workers;
	s->report = *report;
	s->to = s->from = -1;
	frame_decoder_init(&s->dec);
	return &s->base;
}
