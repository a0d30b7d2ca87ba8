/*
 * run.c - spawn, feed, capture, limit and reap one job (see run.h).
 */
#include "lib/run.h"
#include "lib/board.h"

#include "lib/launch.h"
#include "lib/readset.h"
#include "lib/syscan.h"
#include "lib/tracelog.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define RUN_READ_CHUNK ((size_t)64 << 10)
/* Without pidfd_open (Linux < 5.3) the runner polls for the exit. */
#define RUN_TICK_MS 10
/* A trace longer than this is not read: the run is opaque. */
#define RUN_MAX_TRACE ((size_t)64 << 20)
#define NO_FD ((nfds_t)-1)
/* How often a traced job's log is looked at for code to scan (run_peek),
   and how much of it at a time. */
#define RUN_PEEK_MS 10
#define RUN_PEEK_MAX ((size_t)1 << 20)

enum run_stop { STOP_NONE, STOP_TIMEOUT, STOP_CANCEL, STOP_ABANDON };

struct run_stream {
	int fd;          /* read end; -1 after EOF */
	struct buf *into;
	size_t cap;
	int truncated;
	int stream;      /* RES_OUT or RES_ERR, in the result's order */
	struct buf *order;
};

struct run_state {
	const struct job_msg *job;
	const struct run_hooks *hooks;
	struct result_msg *res;
	pid_t pid;
	int pidfd;
	int in_fd;        /* write end of the command's stdin; -1 when done */
	int out_w, err_w; /* the command's ends of its output pipes, until it exits */
	size_t in_off;
	struct run_stream out, err;
	enum run_stop stop;
	int64_t term_at;  /* ms deadline for the timeout's SIGTERM; 0 = none */
	int64_t kill_at;  /* ms deadline for SIGKILL; 0 = none */
	int64_t drain_until;
	int64_t started_at; /* ms deadline for hooks->started; 0 = none due */
	int exited;       /* the command's process has exited (not yet reaped) */
	int gone;         /* ... and was reaped behind the runner's back */
	int reaped;
	int wstatus;
	int callers_group; /* hooks->callers_group: signal the process, not a group */
	int to_eof;       /* read stdout to its end, as $(shell) does (run.h) */
	int trace_fd;     /* a traced job's log (launch.h), or -1 */
	size_t peeked;    /* bytes of its events run_peek() has been through */
	struct buf peek;
};

static int64_t run_now_ms(void)
{
	return proto_now_ns() / 1000000;
}

/* The command's group, or only its process when it is in the caller's. */
static void run_kill(const struct run_state *st, int sig)
{
	kill(st->callers_group ? st->pid : -st->pid, sig);
}

static void run_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* ---- the running job ---- */

static void run_stop(struct run_state *st, enum run_stop why)
{
	int64_t now = run_now_ms(), grace = st->job->kill_grace_ms;

	if (st->reaped) {
		/*
		 * Shutdown, a signal or EOF while the exited job's output is
		 * still drained: stop draining and let the caller act on it.
		 */
		if (why == STOP_ABANDON) {
			st->stop = why;
			st->drain_until = now;
		}
		return;
	}
	if (why <= st->stop)
		return;
	if (why == STOP_ABANDON && grace > RUN_ABANDON_GRACE_MS)
		grace = RUN_ABANDON_GRACE_MS;
	if (st->stop == STOP_NONE)
		run_kill(st, SIGTERM);
	st->stop = why;
	if (!st->kill_at || now + grace < st->kill_at)
		st->kill_at = now + grace;
}

static void run_feed_input(struct run_state *st)
{
	const struct job_msg *job = st->job;

	while (st->in_off < job->input_len) {
		size_t n = job->input_len - st->in_off;
		ssize_t w;

		if (n > RUN_READ_CHUNK)
			n = RUN_READ_CHUNK;
		w = write(st->in_fd, job->input + st->in_off, n);
		if (w > 0) {
			st->in_off += (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			return;
		break; /* EPIPE: the command does not want the rest */
	}
	run_close(&st->in_fd);
}

static void run_read_stream(struct run_stream *s)
{
	/*
	 * Bytes go straight into the result while it has room to spare, and
	 * otherwise through this chunk: growing the result by a whole chunk
	 * before each read cost a job with no output two 128 KiB allocations
	 * (mmap and munmap, and their page faults).
	 */
	static unsigned char chunk[RUN_READ_CHUNK];
	ssize_t n;

	for (int i = 0; i < 4; i++) {
		struct buf *b = s->into;
		size_t room = b->len < s->cap ? s->cap - b->len : 0;
		size_t spare = b->cap > b->len ? b->cap - b->len - 1 : 0;

		if (room > RUN_READ_CHUNK)
			room = RUN_READ_CHUNK;
		if (room && spare >= room) {
			n = read(s->fd, b->data + b->len, room);
			if (n > 0) {
				b->len += (size_t)n;
				b->data[b->len] = 0;
				msg_result_order_add(s->order, s->stream, (size_t)n);
			}
		} else {
			n = read(s->fd, chunk, sizeof chunk);
			if (n > 0) {
				size_t keep = (size_t)n < room ? (size_t)n : room;

				if (keep) {
					buf_add(b, chunk, keep);
					msg_result_order_add(s->order, s->stream, keep);
				}
				if (keep < (size_t)n)
					s->truncated = 1;
			}
		}
		if (n > 0)
			continue;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		run_close(&s->fd);
		return;
	}
}

static void run_job_pid(const struct run_hooks *h, pid_t pid)
{
	if (h && h->job_pid)
		h->job_pid(h->ctx, pid);
}

/*
 * Has the command's process exited?  It is left a zombie, which keeps its
 * pid and group id ours while what it left may still be signalled; the
 * command's ends of the output pipes go, so that their end can be seen.
 * ECHILD (reaped behind our back): its group id may already belong to
 * someone else, so the group is left alone and the job is over.
 */
static void run_check_exit(struct run_state *st)
{
	siginfo_t si;

	memset(&si, 0, sizeof si);
	if (waitid(P_PID, (id_t)st->pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0) {
		if (errno == EINTR)
			return;
		st->gone = 1;
	} else if (si.si_pid != st->pid) {
		return;
	}
	st->exited = 1;
	run_close(&st->pidfd);
	run_close(&st->in_fd);
	run_close(&st->out_w);
	run_close(&st->err_w);
}

/*
 * The exited command's job is over: kill the leftovers of its group first
 * (not in the caller's group: $(shell) leaves them), while the zombie
 * still pins the group id, then reap it.  What its leftovers still write
 * is read for at most RUN_DRAIN_MS more, and not at all once the job is
 * abandoned, or when the caller's group keeps them: $(shell) returns at
 * the end of stdout too, whoever holds stderr.
 */
static void run_reap(struct run_state *st)
{
	struct rusage ru;
	pid_t r = -1;
	int gone = st->gone;

	memset(&ru, 0, sizeof ru);
	if (!gone && !st->callers_group)
		kill(-st->pid, SIGKILL);
	/* before the reap below, while the pid is still ours */
	run_job_pid(st->hooks, 0);
	if (!gone) {
		do
			r = wait4(st->pid, &st->wstatus, 0, &ru);
		while (r < 0 && errno == EINTR);
	}
	if (r < 0)
		st->wstatus = W_EXITCODE(STATUS_NOT_RUN, 0);
	st->res->end_ns = proto_now_ns();
	st->res->utime_us = (int64_t)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec;
	st->res->stime_us = (int64_t)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec;
	st->res->maxrss_kb = ru.ru_maxrss;
	st->reaped = 1;
	st->drain_until = run_now_ms() + (st->stop == STOP_ABANDON || st->callers_group
					  ? 0 : RUN_DRAIN_MS);
	/* what is left is output of processes that outlived it; usually none */
	if (st->out.fd >= 0)
		run_read_stream(&st->out);
	if (st->err.fd >= 0)
		run_read_stream(&st->err);
}

/*
 * Is the exited command's job over?  Without to_eof, at once (what it
 * left is killed); with it, at the end of its stdout, as $(shell) ends,
 * or when it is stopped: abandoned, or, with its leftovers signalled
 * (SIGKILL sent to its group) or out of reach (the caller's group).
 */
static int run_over(const struct run_state *st)
{
	if (!st->exited || st->reaped)
		return 0;
	if (!st->to_eof || st->out.fd < 0 || st->gone || st->stop == STOP_ABANDON)
		return 1;
	return st->stop != STOP_NONE && (st->callers_group || !st->kill_at);
}

static int run_deadline(int64_t at, int64_t now, int timeout)
{
	int64_t d;

	if (!at)
		return timeout;
	d = at > now ? at - now : 0;
	if (d > INT32_MAX)
		d = INT32_MAX;
	return timeout < 0 || d < timeout ? (int)d : timeout;
}

static void run_check_timers(struct run_state *st)
{
	int64_t now = run_now_ms();

	if (st->term_at && st->stop == STOP_NONE && now >= st->term_at)
		run_stop(st, STOP_TIMEOUT);
	if (st->kill_at && now >= st->kill_at && !st->reaped) {
		run_kill(st, SIGKILL);
		st->kill_at = 0;
	}
}

/*
 * While a traced command runs, this thread only waits.  So it scans the
 * code the command maps as the log shows it (syscan.h: the first scan of
 * an object costs, cc1's about 50 ms on the bench's VM), and the settle
 * after the exit finds the verdicts cached.  Only a head start: what an
 * event that is still being written says is never trusted for more than
 * a scan of the file at that path that has that identity, and the
 * settle reads the whole log again.  Each look reads at most
 * RUN_PEEK_MAX bytes, ends once its scans have taken RUN_PEEK_MS, and
 * stops for good at an event that does not parse (the run is opaque
 * then; its writer died, or it lies).
 */
static void run_peek(struct run_state *st)
{
	struct tl_shm h;
	struct tl_event ev;
	const char *path;
	size_t off = 0, plen, want;
	uint32_t len;
	int64_t start = run_now_ms();
	ssize_t got;

	if (pread(st->trace_fd, &h, sizeof h, 0) != (ssize_t)sizeof h ||
	    h.head > RUN_MAX_TRACE || h.head <= st->peeked)
		return;
	/* not committed yet (or never: a writer that died): look again later */
	if (pread(st->trace_fd, &len, sizeof len, (off_t)(TL_SHM_DATA + st->peeked)) !=
		    (ssize_t)sizeof len || !len)
		return;
	want = (size_t)h.head - st->peeked;
	if (want > RUN_PEEK_MAX)
		want = RUN_PEEK_MAX;
	buf_reset(&st->peek);
	buf_grow(&st->peek, want);
	got = pread(st->trace_fd, st->peek.data, want, (off_t)(TL_SHM_DATA + st->peeked));
	if (got <= 0)
		return;
	while (tl_next(st->peek.data, (size_t)got, &off, &ev, &path, &plen)) {
		char name[4096];

		if (!tl_code_to_scan(&ev) || plen >= sizeof name)
			continue;
		memcpy(name, path, plen);
		name[plen] = 0;
		syscan_object(name, &ev, NULL);
		if (run_now_ms() - start >= RUN_PEEK_MS)
			break;
	}
	if (!off)
		st->trace_fd = -1; /* the first event, committed, does not parse */
	st->peeked += off;
}

static void run_loop(struct run_state *st)
{
	const struct run_hooks *h = st->hooks;
	struct pollfd pfd[4 + RUN_MAX_WATCH];
	int64_t now;

	for (;;) {
		nfds_t n = 0, in_i = NO_FD, out_i = NO_FD, err_i = NO_FD;
		nfds_t pid_i = NO_FD, w0;
		int timeout = -1;

		run_check_timers(st);
		if (run_over(st))
			run_reap(st);
		now = run_now_ms();
		if (st->reaped && ((st->out.fd < 0 && st->err.fd < 0) ||
				       now >= st->drain_until))
			return;
		if (st->in_fd >= 0)
			pfd[in_i = n++] = (struct pollfd){ st->in_fd, POLLOUT, 0 };
		if (st->out.fd >= 0)
			pfd[out_i = n++] = (struct pollfd){ st->out.fd, POLLIN, 0 };
		if (st->err.fd >= 0)
			pfd[err_i = n++] = (struct pollfd){ st->err.fd, POLLIN, 0 };
		if (!st->exited && st->pidfd >= 0)
			pfd[pid_i = n++] = (struct pollfd){ st->pidfd, POLLIN, 0 };
		else if (!st->exited)
			timeout = RUN_TICK_MS;
		w0 = n;
		for (int i = 0; h && h->watch && st->stop != STOP_ABANDON &&
		     i < RUN_MAX_WATCH; i++)
			if (h->watch_fd[i] >= 0)
				pfd[n++] = (struct pollfd){ h->watch_fd[i], POLLIN, 0 };
		if (!st->reaped) {
			if (!st->exited && st->trace_fd >= 0)
				timeout = run_deadline(now + RUN_PEEK_MS, now, timeout);
			if (!st->exited)
				timeout = run_deadline(st->started_at, now, timeout);
			if (st->stop == STOP_NONE)
				timeout = run_deadline(st->term_at, now, timeout);
			timeout = run_deadline(st->kill_at, now, timeout);
		} else {
			timeout = run_deadline(st->drain_until, now, timeout);
		}
		if (poll(pfd, n, timeout) < 0) {
			if (errno != EINTR)
				usleep(1000 * RUN_TICK_MS); /* ENOMEM: try again */
			continue;
		}
		if (in_i < n && pfd[in_i].revents)
			run_feed_input(st);
		if (out_i < n && pfd[out_i].revents)
			run_read_stream(&st->out);
		if (err_i < n && pfd[err_i].revents)
			run_read_stream(&st->err);
		for (nfds_t i = w0; i < n; i++) {
			if (!pfd[i].revents || st->stop == STOP_ABANDON)
				continue;
			switch (h->watch(h->ctx, pfd[i].fd)) {
			case RUN_CANCEL:
				run_stop(st, STOP_CANCEL);
				break;
			case RUN_ABANDON:
				run_stop(st, STOP_ABANDON);
				break;
			}
		}
		if (!st->exited && st->trace_fd >= 0)
			run_peek(st);
		if (!st->exited && (pid_i >= n || pfd[pid_i].revents))
			run_check_exit(st);
		if (st->started_at && !st->exited && run_now_ms() >= st->started_at) {
			st->started_at = 0;
			h->started(h->ctx, st->pid);
		}
	}
}

/* Pool notes go on a line of their own at the end of stderr. */
__attribute__((format(printf, 2, 3)))
static void run_note(struct result_msg *res, const char *fmt, ...)
{
	va_list ap;
	char line[256];

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (res->err.len && res->err.data[res->err.len - 1] != '\n')
		buf_addch(&res->err, '\n');
	buf_addf(&res->err, "asynccompile: %s\n", line);
}

static void run_finish(struct run_state *st)
{
	struct result_msg *res = st->res;
	int ws = st->wstatus;

	if (WIFEXITED(ws))
		res->status = WEXITSTATUS(ws);
	else if (WIFSIGNALED(ws))
		res->status = 128 + WTERMSIG(ws);
	else
		res->status = STATUS_NOT_RUN;
	if (st->stop == STOP_TIMEOUT) {
		res->status = STATUS_TIMED_OUT;
		res->flags |= RES_TIMED_OUT;
		run_note(res, "timed out after %" PRId64 " ms; killed",
			 st->job->timeout_ms);
	} else if (st->stop == STOP_CANCEL) {
		res->flags |= RES_CANCELLED;
		run_note(res, "cancelled; killed");
	}
	/* the caller's group: $(shell) does not wait for stderr either */
	if (st->out.fd >= 0 || (st->err.fd >= 0 && !st->callers_group))
		run_note(res, "output still open %d ms after the command exited; "
			 "stopped reading", RUN_DRAIN_MS);
	if (st->out.truncated || st->err.truncated)
		res->flags |= RES_TRUNCATED;
	if (st->out.truncated)
		run_note(res, "stdout truncated at %zu bytes", st->out.cap);
	if (st->err.truncated)
		run_note(res, "stderr truncated at %zu bytes", st->err.cap);
}

/*
 * The events of a shared trace log (tracelog.h): what its header says
 * was taken, read with pread (the command's processes could still shrink
 * the file: a read past its end is short, never a fault).  -1 with *why
 * when the run must be opaque.
 */
static int run_trace_read(int fd, struct buf *log, const char **why)
{
	struct tl_shm h;
	struct stat sb;
	size_t got = 0;

	*why = "the trace could not be read whole";
	if (pread(fd, &h, sizeof h, 0) != (ssize_t)sizeof h || fstat(fd, &sb) < 0)
		return -1;
	if ((*why = tl_shm_check(&h, (uint64_t)sb.st_size)))
		return -1;
	*why = "the trace could not be read whole";
	if (h.head > RUN_MAX_TRACE)
		return -1;
	buf_grow(log, (size_t)h.head);
	while (got < h.head) {
		ssize_t r = pread(fd, log->data + got, (size_t)h.head - got,
				  (off_t)(TL_SHM_DATA + got));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	log->len = got;
	return 0;
}

/* A traced job's log, read once everything it started is reaped. */
static void run_trace_settle(struct launch *l, pid_t pid, struct result_msg *res)
{
	struct buf log = BUF_INIT;
	const char *why;

	if (l->trace_fd < 0) {
		readset_opaque(&res->readset, "the command could not be traced");
		return;
	}
	if (run_trace_read(l->trace_fd, &log, &why) < 0)
		readset_opaque(&res->readset, why);
	else
		readset_build_answer(log.data, log.len, pid, l->shown_ppid, l->start_real_ns, l->env_digest,
				     &res->out, &res->err, &res->readset);
	buf_release(&log);
	run_close(&l->trace_fd);
}

int run_job(const struct job_msg *job, const struct run_hooks *hooks,
	    struct result_msg *res)
{
	struct run_state st;
	struct launch l;
	struct buf err = BUF_INIT;
	size_t cap = job->max_output > 0 ? (size_t)job->max_output
					 : (size_t)PROTO_MAX_OUTPUT;

	memset(res, 0, sizeof *res);
	memset(&st, 0, sizeof st);
	st.job = job;
	st.callers_group = hooks && hooks->callers_group;
	st.to_eof = st.callers_group || job->tracer;
	st.hooks = hooks;
	st.res = res;
	st.pidfd = st.in_fd = st.out.fd = st.err.fd = st.out_w = st.err_w = -1;
	st.out.into = &res->out;
	st.err.into = &res->err;
	st.out.stream = RES_OUT;
	st.err.stream = RES_ERR;
	st.out.order = st.err.order = &res->order;
	st.trace_fd = -1;
	st.out.cap = st.err.cap = cap;
	res->start_ns = proto_now_ns();
	run_job_pid(hooks, BOARD_STARTING);
	if (launch_start(job, st.callers_group, &l, &err) < 0) {
		/* the command's stderr is where its user looks */
		buf_addf(&res->err, "asynccompile: %s\n", (char *)err.data);
		buf_release(&err);
		run_job_pid(hooks, 0);
		res->status = STATUS_CANNOT_RUN;
		res->flags = RES_SPAWN_FAILED;
		res->end_ns = proto_now_ns();
		return RUN_DONE;
	}
	st.pid = l.pid;
	if (hooks->pid_out)
		*hooks->pid_out = st.pid;
	run_job_pid(hooks, st.pid);
	st.in_fd = l.in_fd;
	st.out.fd = l.out_fd;
	st.err.fd = l.err_fd;
	st.out_w = l.out_w;
	st.err_w = l.err_w;
	st.trace_fd = job->tracer ? l.trace_fd : -1;
	/* close-on-exec by itself; the poll falls back to a tick without it */
	st.pidfd = (int)syscall(SYS_pidfd_open, st.pid, 0);
	if (st.pidfd < 0) {
		/* no exit notification: let the end of the output wake us */
		run_close(&st.out_w);
		run_close(&st.err_w);
	}
	if (hooks && hooks->started) {
		if (hooks->started_after_ms > 0)
			st.started_at = run_now_ms() + hooks->started_after_ms;
		else
			hooks->started(hooks->ctx, st.pid);
	}
	if (job->timeout_ms > 0)
		st.term_at = run_now_ms() + job->timeout_ms;
	if (st.in_fd >= 0 && !job->input_len)
		run_close(&st.in_fd);
	run_loop(&st);
	buf_release(&st.peek);
	run_finish(&st); /* before the pipes close: it notes which are open */
	if (job->tracer)
		run_trace_settle(&l, st.pid, res);
	run_close(&st.in_fd);
	run_close(&st.out.fd);
	run_close(&st.err.fd);
	run_close(&st.out_w);
	run_close(&st.err_w);
	run_close(&st.pidfd);
	return st.stop == STOP_ABANDON ? RUN_ABANDONED : RUN_DONE;
}
