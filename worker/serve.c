/*
 * serve.c - serve_main(): one pool worker.  Answers the pool's HELLO, then
 * runs the jobs it is sent one at a time: JOB -> STARTED -> RESULT.
 *
 * The worker reads exactly up to the end of the frame it is decoding, so
 * nothing the pool sends is ever buffered here unseen: while a job runs the
 * input descriptor is handed to the runner as a watched fd and becomes
 * readable exactly when the pool says something (CANCEL, shutdown) or goes
 * away (EOF).  Output frames are written blocking: the pool never blocks,
 * and a dead pool gives EPIPE.
 */
#include "worker/diag.h"
#include "worker/worker.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "lib/board.h"
#include "lib/launch.h"
#include "lib/err.h"
#include "lib/msgtab.h"
#include "lib/proto.h"
#include "lib/run.h"
#include "lib/sig.h"

enum serve_event {
	EV_FRAME = 1,   /* a frame is ready in s->dec */
	EV_MORE = 0,    /* bytes consumed, no frame yet */
	EV_EOF = -1,    /* clean EOF between frames */
	EV_ERROR = -2,  /* protocol error (s->err set) */
	EV_SIGNAL = -3, /* fatal signal (s->signo set) */
	EV_PEER = -4,   /* the peer sent ERROR: fail without answering */
};

struct serve {
	int in_fd, out_fd, index;
	int started_after_ms;
	int board_fd;     /* board.h, or -1 */
	int sig_fd;
	struct frame_decoder dec;
	int64_t job_id;   /* job being run, 0 when idle */
	int signo;
	int peer_failed;  /* it sent ERROR */
	struct buf err;   /* the protocol error, once there is one */
};

/* The last failure's words are the ones reported (a later one replaces). */
#define serve_fail(s, ...) \
	(buf_reset(&(s)->err), err_fail(&(s)->err, __VA_ARGS__), EV_ERROR)

/* One read() of at most what the current frame still needs. */
static int serve_read_once(struct serve *s)
{
	switch (frame_read(s->in_fd, &s->dec, FRAME_READ_ONE, NULL, NULL, NULL)) {
	case FRAME_R_AGAIN:
		return EV_MORE;
	case FRAME_R_OK:
		return s->dec.ready ? EV_FRAME : EV_MORE;
	case FRAME_R_EOF:
		return EV_EOF;
	case FRAME_R_ERRNO:
		return serve_fail(s, "read:");
	default:
		return serve_fail(s, "%s", (char *)s->dec.err.data);
	}
}

/*
 * Read no further than the end of the current frame (what follows is the
 * pool's business until this frame is handled), at most two read()s: one
 * that completes the header may be followed at once by one for the
 * payload, which the pool wrote with it, saving a poll().
 */
static int serve_read(struct serve *s)
{
	int r = serve_read_once(s);

	if (r == EV_MORE && s->dec.hdr_got == PROTO_HEADER_SIZE &&
	    s->dec.payload.len == 0 && s->dec.len > 0)
		r = serve_read_once(s);
	return r;
}

/* Wait for the next frame while idle. */
static int serve_next(struct serve *s)
{
	struct pollfd pfd[2];

	if (s->dec.ready)
		frame_next(&s->dec); /* keep a partial frame read during a job */
	for (;;) {
		int r;

		pfd[0] = (struct pollfd){ s->in_fd, POLLIN, 0 };
		pfd[1] = (struct pollfd){ s->sig_fd, POLLIN, 0 };
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return serve_fail(s, "poll:");
		}
		if (pfd[1].revents) {
			s->signo = sig_drain(s->sig_fd);
			if (s->signo)
				return EV_SIGNAL;
		}
		if (pfd[0].revents && (r = serve_read(s)) != EV_MORE)
			return r;
	}
}

static int serve_send(struct serve *s, int64_t id, const struct buf *payload)
{
	if (frame_write_all(s->out_fd, id, payload->data, payload->len) < 0) {
		if (errno != EPIPE)
			diag_warn("write:");
		return -1;
	}
	return 0;
}

static void serve_send_error(struct serve *s)
{
	struct buf b = BUF_INIT;

	diag_warn("protocol error: %s", (char *)s->err.data);
	msg_put_text(&b, MSG_ERROR, (char *)s->err.data);
	serve_send(s, PROTO_ID_CONTROL, &b);
	buf_release(&b);
}

/* A peer's ERROR (the text runs to the end of the payload) ends the worker. */
static void serve_peer_error(struct serve *s, const struct msg_in *m)
{
	diag_warn("peer reported an error: %.*s", m->text_len, m->text);
	s->peer_failed = 1;
}

/*
 * The frame in s->dec through `t`: the handler's value, or -1 after
 * serve_fail() with the unexpected message.
 */
static int serve_dispatch(struct serve *s, const struct msg_table *t)
{
	struct buf err = BUF_INIT;
	int r = msg_dispatch(t, s, s->dec.id, s->dec.payload.data, s->dec.payload.len, &err);

	if (r < 0)
		(void)serve_fail(s, "%s", (char *)err.data);
	buf_release(&err);
	return r;
}

static void serve_started(void *ctx, pid_t pid)
{
	struct serve *s = ctx;
	struct started_msg m = { .pid = pid, .worker = s->index };
	struct buf b = BUF_INIT;

	msg_put_started(&b, &m);
	serve_send(s, s->job_id, &b); /* EPIPE shows up as EOF on in_fd */
	buf_release(&b);
}

static void serve_job_pid(void *ctx, pid_t pid)
{
	struct serve *s = ctx;

	board_set(s->board_fd, s->index, pid);
}

/*
 * While a job runs (serve_watch), handlers return RUN_CONTINUE, RUN_CANCEL
 * or RUN_ABANDON.  A CANCEL of another job crossed that job's RESULT on
 * the wire.
 */
static int serve_busy_on_cancel(void *ctx, const struct msg_in *m)
{
	return m->id == ((struct serve *)ctx)->job_id ? RUN_CANCEL : RUN_CONTINUE;
}

static int serve_busy_on_error(void *ctx, const struct msg_in *m)
{
	serve_peer_error(ctx, m);
	return RUN_ABANDON;
}

static const struct msg_route serve_busy_routes[] = {
	{ MSG_CANCEL, MSG_ON_JOB, serve_busy_on_cancel },
	{ MSG_STATS, MSG_ON_CONTROL, msg_ignore },
	{ MSG_ERROR, MSG_ON_CONTROL, serve_busy_on_error },
};
static const struct msg_table serve_busy = MSG_TABLE("worker running a job", serve_busy_routes);

/*
 * The runner saw the pool speak or a signal arrive while a job runs.
 * Anything but a CANCEL of this job ends the job; what ends the worker is
 * left in s->err / s->signo for serve_main().
 */
static int serve_watch(void *ctx, int fd)
{
	struct serve *s = ctx;
	int r;

	if (fd == s->sig_fd) {
		s->signo = sig_drain(fd);
		return s->signo ? RUN_ABANDON : RUN_CONTINUE;
	}
	r = serve_read(s);
	if (r == EV_MORE)
		return RUN_CONTINUE;
	if (r == EV_EOF || r == EV_ERROR)
		return RUN_ABANDON;
	if (s->dec.id == PROTO_ID_SHUTDOWN)
		return RUN_ABANDON; /* dec stays ready: serve_main sees it */
	r = serve_dispatch(s, &serve_busy);
	if (r < 0)
		return RUN_ABANDON;
	if (r != RUN_ABANDON)
		frame_next(&s->dec);
	return r;
}

/* A process the job left in a session of its own is a daemon: spared. */
static int serve_daemon(void *ctx, pid_t pid)
{
	pid_t sid = getsid(pid);

	return sid > 0 && sid != *(pid_t *)ctx;
}

/* Returns 0 to go on, 1 when the worker must stop (reason in s). */
static int serve_job(struct serve *s)
{
	pid_t session = 0;
	int kill_daemons;
	struct run_hooks hooks = {
		.watch_fd = { s->in_fd, s->sig_fd, -1, -1 },
		.watch = serve_watch,
		.started = serve_started,
		.started_after_ms = s->started_after_ms,
		.job_pid = s->board_fd >= 0 ? serve_job_pid : NULL,
		.ctx = s,
		.pid_out = &session,
	};
	struct job_msg job;
	struct result_msg res;
	struct buf b = BUF_INIT, err = BUF_INIT;
	int r;

	if (msg_get_job(s->dec.payload.data, s->dec.payload.len, &job, &err) < 0) {
		(void)serve_fail(s, "job %" PRId64 ": %s", s->dec.id, (char *)err.data);
		buf_release(&err);
		return 1;
	}
	s->job_id = s->dec.id;
	frame_next(&s->dec);
	r = run_job(&job, &hooks, &res);
	kill_daemons = job.kill_daemons;
	msg_job_release(&job);
	/*
	 * Nothing the job started outlives it in its session, inside its
	 * group or not (timeout(1) changes group, not session).  What it
	 * started in a session of its own is a daemon, a shared server the
	 * next job may use (sccache): it stays, unless `daemons: kill`, until
	 * this worker ends, which ends everything.
	 */
	sig_reap_strays(kill_daemons || !session ? NULL : serve_daemon, &session);
	if (r == RUN_DONE) {
		res.worker = s->index;
		res.attempts = 1;
		msg_put_result(&b, &res);
		r = serve_send(s, s->job_id, &b) < 0;
		buf_release(&b);
	}
	msg_result_release(&res);
	s->job_id = 0;
	return r != 0;
}

static int serve_hello(struct serve *s)
{
	struct buf b = BUF_INIT, err = BUF_INIT;
	int r = serve_next(s);

	if (r != EV_FRAME)
		return r;
	if (msg_hello_answer(s->dec.id, s->dec.payload.data, s->dec.payload.len, 1, &b, &err) < 0) {
		r = serve_fail(s, "%s", (char *)err.data);
		buf_release(&err);
		return r;
	}
	r = serve_send(s, PROTO_ID_CONTROL, &b);
	buf_release(&b);
	return r < 0 ? EV_EOF : EV_MORE;
}

/*
 * While idle (serve_frame), handlers return 0 to go on, 1 when the worker
 * must stop (why is in s).
 */
static int serve_on_job(void *ctx, const struct msg_in *m)
{
	(void)m; /* serve_job() takes the frame from s->dec */
	return serve_job(ctx);
}

static int serve_on_error(void *ctx, const struct msg_in *m)
{
	serve_peer_error(ctx, m);
	return 1;
}

static const struct msg_route serve_idle_routes[] = {
	{ MSG_JOB, MSG_ON_JOB, serve_on_job },
	{ MSG_CANCEL, MSG_ON_JOB, msg_ignore }, /* it crossed its job's RESULT */
	{ MSG_STATS, MSG_ON_CONTROL, msg_ignore },
	{ MSG_ERROR, MSG_ON_CONTROL, serve_on_error },
};
static const struct msg_table serve_idle = MSG_TABLE("worker", serve_idle_routes);

/* Handle the frame in s->dec while idle: EV_MORE to go on, else why not. */
static int serve_frame(struct serve *s)
{
	if (s->dec.id == PROTO_ID_SHUTDOWN)
		return EV_EOF;
	switch (serve_dispatch(s, &serve_idle)) {
	case 0:
		return EV_MORE;
	case -1:
		return EV_ERROR;
	}
	/* a peer's ERROR is not answered with an error */
	return s->err.len ? EV_ERROR : s->signo ? EV_SIGNAL : s->peer_failed ? EV_PEER : EV_EOF;
}

int serve_main(int in_fd, int out_fd, int index, int started_after_ms, int board_fd)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, 0 };
	struct serve s;
	int r;

	memset(&s, 0, sizeof s);
	s.in_fd = in_fd;
	s.out_fd = out_fd;
	s.index = index;
	s.started_after_ms = started_after_ms;
	s.board_fd = board_fd;
	/* serve_read() may try a read that finds nothing yet */
	fcntl(in_fd, F_SETFL, fcntl(in_fd, F_GETFL) | O_NONBLOCK);
	frame_decoder_init(&s.dec);
	/*
	 * Processes a job moves out of its process group (timeout(1),
	 * setsid) become our children when their parent exits, instead of
	 * init's, so sig_reap_strays() can end them.
	 */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	diag_set_worker(index);
	s.sig_fd = sig_open(sigs);
	if (s.sig_fd < 0) {
		diag_warn("pipe:");
		return 1;
	}
	r = serve_hello(&s);
	while (r == EV_MORE) {
		r = serve_next(&s);
		if (r == EV_FRAME)
			r = serve_frame(&s);
	}
	if (r == EV_ERROR)
		serve_send_error(&s);
	if (r == EV_SIGNAL && s.signo != SIGTERM)
		diag_warn("%s", strsignal(s.signo));
	sig_reap_strays(NULL, NULL);
	launch_release();
	frame_decoder_release(&s.dec);
	buf_release(&s.err);
	sig_close(s.sig_fd);
	if (r == EV_SIGNAL)
		return 128 + s.signo;
	return r == EV_ERROR || r == EV_PEER ? 1 : 0;
}
