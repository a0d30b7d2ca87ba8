/*
 * pool-client - drive `asynccompile-worker --supervise N` over the framed
 * protocol, for the t1xxx pool tests.
 * Over 600 lines: one small mode per pool test, sharing the client loop.
 *
 *   pool-client [options] WORKER_EXE N MODE [args]
 *
 * Modes:
 *   many COUNT CMD   COUNT jobs submitted at once (pipelined); every id must
 *                    get exactly one RESULT, status 0, after its STARTED;
 *                    prints "jobs/sec: X" on stderr
 *   one CMD          one job; prints status=, flags=, attempts=, worker=,
 *                    out_bytes=, err_bytes=, then the stderr text as
 *                    "err: LINE" lines
 *   bigio MB         a job that echoes MB MiB of stdin on stdout while
 *                    writing MB MiB on stderr; checks exact contents;
 *                    prints "wall_ms: X" on stderr
 *   orphan CMD       submit, wait for STARTED, write pids, close both pipes
 *                    without a shutdown frame; print the supervisor's exit
 *   stop CMD         the same after sending a shutdown frame
 *   hold CMD         submit, wait for STARTED, write pids, wait to be killed
 *   cancel CMD       submit, wait for STARTED, send CANCEL; prints as `one`
 *   stats CMD        run CMD as job 1, then ask for STATS; prints the reply
 *   malformed KIND   after the handshake send a bad frame (neglen, badid,
 *                    badtype, shortjob, truncated) or, for nohello, a JOB
 *                    first, or for version a HELLO of version 99; prints
 *                    the ERROR text and the supervisor's exit
 * Options (before WORKER_EXE):
 *   -t MS  timeout   -g MS  kill grace   -r N  retries   -m BYTES  max_output
 *   -i TEXT  stdin   -e K=V  env (repeatable)   -C DIR  cwd   -s SHELL
 *   -p FILE  write "supervisor PID", "worker PID" and "job PID" lines
 *   -O FILE / -E FILE  write the job's stdout / stderr (mode one)
 *   -W       talk to `WORKER_EXE --worker 0` directly instead (N must be 1);
 *            "supervisor" in the pid file is then the worker
 *   -D FILE  delete FILE once the supervisor runs (its own executable, so
 *            that it cannot start workers)
 *   -S MS    pass --started-after MS (to the supervisor, or the -W worker)
 *
 * Exit status: 0 when every check passed, 1 otherwise; a watchdog aborts
 * after 120 s so a hang fails instead of stalling the suite.
 */
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
#include <sys/wait.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include "lib/proto.h"

extern char **environ;

static struct job_msg job;
static char *env_list[64];
static int env_n;
static const char *pid_file, *out_file, *err_file, *delete_file;
static int bare_worker;
static const char *started_after;
static pid_t sup_pid;
static int to_sup = -1, from_sup = -1;

__attribute__((format(printf, 1, 2), noreturn))
static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("pool-client: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void on_alarm(int sig)
{
	static const char msg[] = "pool-client: watchdog: no progress, giving up\n";

	(void)sig;
	(void)!write(2, msg, sizeof msg - 1);
	_exit(3);
}

static void note_pid(const char *what, long pid)
{
	FILE *f;

	if (!pid_file)
		return;
	f = fopen(pid_file, "a");
	if (!f)
		die("%s: %s", pid_file, strerror(errno));
	fprintf(f, "%s %ld\n", what, pid);
	fclose(f);
}

/* The supervisor's children, found by their parent pid in /proc. */
static void note_workers(void)
{
	DIR *dir = opendir("/proc");
	struct dirent *e;

	if (!dir)
		die("/proc: %s", strerror(errno));
	while ((e = readdir(dir))) {
		char path[300], stat[512], *p;
		long ppid;
		FILE *f;
		size_t n;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		n = fread(stat, 1, sizeof stat - 1, f);
		fclose(f);
		stat[n] = 0;
		/* pid (comm) state ppid ...; comm may contain spaces */
		if (!(p = strrchr(stat, ')')) || sscanf(p + 1, " %*c %ld", &ppid) != 1)
			continue;
		if (ppid == sup_pid)
			note_pid("worker", atol(e->d_name));
	}
	closedir(dir);
}

static void start_supervisor(const char *exe, const char *n)
{
	int to[2], from[2];
	posix_spawn_file_actions_t fa;
	char *argv[] = { (char *)exe, "--supervise", (char *)n, NULL, NULL, NULL };

	if (bare_worker) {
		argv[1] = "--worker";
		argv[2] = "0";
	}
	if (started_after) {
		argv[3] = "--started-after";
		argv[4] = (char *)started_after;
	}
	int rc;

	if (pipe2(to, O_CLOEXEC) || pipe2(from, O_CLOEXEC))
		die("pipe: %s", strerror(errno));
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, to[0], 0);
	posix_spawn_file_actions_adddup2(&fa, from[1], 1);
	rc = posix_spawn(&sup_pid, exe, &fa, NULL, argv, environ);
	if (rc)
		die("cannot run %s: %s", exe, strerror(rc));
	posix_spawn_file_actions_destroy(&fa);
	close(to[0]);
	close(from[1]);
	to_sup = to[1];
	from_sup = from[0];
	note_pid("supervisor", sup_pid);
	if (delete_file && unlink(delete_file))
		die("%s: %s", delete_file, strerror(errno));
}

static void send_frame(int64_t id, const struct buf *b)
{
	if (frame_write_all(to_sup, id, b ? b->data : NULL, b ? b->len : 0) < 0)
		die("write to supervisor: %s", strerror(errno));
}

static void hello(int expect_workers)
{
	struct hello_msg me = { PROTO_VERSION, 0, (int32_t)getpid() }, peer;
	struct frame_decoder d;
	struct buf b = BUF_INIT;

	msg_put_hello(&b, &me);
	send_frame(PROTO_ID_CONTROL, &b);
	buf_release(&b);
	frame_decoder_init(&d);
	if (frame_read_one(from_sup, &d) != 1)
		die("no HELLO from the supervisor (%s)", d.err.len ? (char *)d.err.data : "");
	if (d.id != PROTO_ID_CONTROL ||
	    msg_get_hello(d.payload.data, d.payload.len, &peer, NULL) < 0)
		die("first frame is not a HELLO");
	if (peer.version != PROTO_VERSION || (int)peer.workers != expect_workers ||
	    peer.pid != sup_pid)
		die("HELLO says version %u workers %u pid %d", peer.version,
		    peer.workers, peer.pid);
	frame_decoder_release(&d);
}

static void job_payload(struct buf *b, const char *cmd)
{
	job.command = (char *)cmd;
	msg_put_job(b, &job);
}

/* Wait for the supervisor to exit; returns its exit status or 128+sig. */
static int reap_supervisor(void)
{
	int st;

	while (waitpid(sup_pid, &st, 0) < 0)
		if (errno != EINTR)
			die("waitpid: %s", strerror(errno));
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void shutdown_supervisor(void)
{
	int st;

	send_frame(PROTO_ID_SHUTDOWN, NULL);
	close(to_sup);
	st = reap_supervisor();
	if (st)
		die("supervisor exited with %d after shutdown", st);
}

static const char *flag_names(uint32_t f)
{
	static char s[128];
	static const char *const names[] = {
		"TIMED_OUT", "CRASHED", "TRUNCATED", "SPAWN_FAILED", "CANCELLED",
	};

	s[0] = 0;
	for (int i = 0; i < 5; i++)
		if (f & (1u << i))
			snprintf(s + strlen(s), sizeof s - strlen(s), "%s%s",
				 s[0] ? "," : "", names[i]);
	return s[0] ? s : "none";
}

/* Read frames until the RESULT of `id`; STARTED is noted on the way. */
static void wait_result(int64_t id, struct result_msg *res, int stop_at_started)
{
	struct frame_decoder d;
	struct buf why = BUF_INIT; /* filled only before die() */

	frame_decoder_init(&d);
	for (;;) {
		int r = frame_read_one(from_sup, &d);
		int type;

		if (r != 1)
			die("supervisor closed the connection (%s)", r ? (d.err.len ? (char *)d.err.data : "") : "EOF");
		type = msg_type(d.payload.data, d.payload.len);
		if (d.id == id && type == MSG_STARTED) {
			struct started_msg m;

			if (msg_get_started(d.payload.data, d.payload.len, &m, &why) < 0)
				die("bad STARTED: %s", (char *)why.data);
			note_pid("job", m.pid);
			if (stop_at_started)
				break;
			continue;
		}
		if (d.id == id && type == MSG_RESULT) {
			if (msg_get_result(d.payload.data, d.payload.len, res, &why) < 0)
				die("bad RESULT: %s", (char *)why.data);
			break;
		}
		die("unexpected frame: id %" PRId64 " type %d", d.id, type);
	}
	frame_decoder_release(&d);
}

static void write_file(const char *path, const struct buf *b)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(b->data, 1, b->len, f) != b->len || fclose(f))
		die("%s: %s", path, strerror(errno));
}

static int mode_one(const char *cmd)
{
	struct buf b = BUF_INIT;
	struct result_msg res;
	char *line, *save = NULL;

	job_payload(&b, cmd);
	send_frame(1, &b);
	buf_release(&b);
	wait_result(1, &res, 0);
	printf("status=%d\nflags=%s\nattempts=%u\nworker=%d\nout_bytes=%zu\n"
	       "err_bytes=%zu\nwall_ms=%" PRId64 "\n", res.status,
	       flag_names(res.flags), res.attempts, res.worker, res.out.len,
	       res.err.len, (res.end_ns - res.start_ns) / 1000000);
	if (out_file)
		write_file(out_file, &res.out);
	if (err_file)
		write_file(err_file, &res.err);
	for (line = strtok_r((char *)res.err.data, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		printf("err: %s\n", line);
	msg_result_release(&res);
	shutdown_supervisor();
	return 0;
}

static int64_t now_ns(void)
{
	return proto_now_ns();
}

static int mode_many(long count, const char *cmd)
{
	struct frame_outq q = { BUF_INIT, 0 };
	struct buf payload = BUF_INIT;
	struct frame_decoder d;
	unsigned char *seen = calloc((size_t)count + 1, 1), tmp[65536];
	long results = 0, bad = 0;
	int64_t t0 = now_ns(), t1;
	struct buf why = BUF_INIT; /* filled only before die() */

	if (!seen)
		die("out of memory");
	job_payload(&payload, cmd);
	for (long i = 1; i <= count; i++)
		frame_put(&q.buf, i, payload.data, payload.len);
	buf_release(&payload);
	fcntl(to_sup, F_SETFL, O_NONBLOCK);
	fcntl(from_sup, F_SETFL, O_NONBLOCK);
	frame_decoder_init(&d);
	while (results < count) {
		struct pollfd p[2] = { { from_sup, POLLIN, 0 }, { to_sup, POLLOUT, 0 } };
		ssize_t n;
		size_t off = 0, used;

		if (poll(p, frame_outq_pending(&q) ? 2 : 1, -1) < 0 && errno != EINTR)
			die("poll: %s", strerror(errno));
		if (frame_outq_pending(&q) && p[1].revents && frame_outq_flush(to_sup, &q) < 0)
			die("write: %s", strerror(errno));
		if (!p[0].revents)
			continue;
		n = read(from_sup, tmp, sizeof tmp);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			die("supervisor closed the connection after %ld results", results);
		while (off < (size_t)n) {
			int r = frame_feed(&d, tmp + off, (size_t)n - off, &used);
			int type;

			off += used;
			if (r == FRAME_ERROR)
				die("bad frame: %s", (char *)d.err.data);
			if (r != FRAME_READY)
				continue;
			type = msg_type(d.payload.data, d.payload.len);
			if (d.id < 1 || d.id > count)
				die("frame for unknown id %" PRId64, d.id);
			if (type == MSG_STARTED) {
				if (seen[d.id])
					die("STARTED for job %" PRId64 " after its RESULT", d.id);
			} else if (type == MSG_RESULT) {
				struct result_msg res;

				if (msg_get_result(d.payload.data, d.payload.len, &res, &why) < 0)
					die("bad RESULT: %s", (char *)why.data);
				if (seen[d.id]++)
					die("second RESULT for job %" PRId64, d.id);
				if (res.status != 0 || res.flags) {
					if (bad++ < 5)
						fprintf(stderr, "job %" PRId64 ": status %d flags %s: %s\n",
							d.id, res.status, flag_names(res.flags),
							(char *)res.err.data);
				}
				msg_result_release(&res);
				results++;
			} else {
				die("unexpected message type %d", type);
			}
			frame_next(&d);
		}
	}
	t1 = now_ns();
	frame_decoder_release(&d);
	frame_outq_release(&q);
	free(seen);
	fcntl(to_sup, F_SETFL, 0);
	fcntl(from_sup, F_SETFL, 0);
	shutdown_supervisor();
	fprintf(stderr, "jobs/sec: %.0f\n", (double)count * 1e9 / (double)(t1 - t0));
	printf("results=%ld failed=%ld\n", results, bad);
	return bad != 0;
}

static int mode_bigio(long mb)
{
	size_t n = (size_t)mb << 20;
	unsigned char *in = malloc(n);
	struct buf b = BUF_INIT;
	struct result_msg res;
	char cmd[200];
	int64_t t0;
	int fail = 0;

	if (!in)
		die("out of memory");
	for (size_t i = 0; i < n; i++)
		in[i] = (unsigned char)(i * 2654435761u >> 13);
	snprintf(cmd, sizeof cmd, "head -c %zu /dev/zero >&2 & cat; wait", n);
	job.input = in;
	job.input_len = n;
	job.has_input = 1;
	t0 = now_ns();
	job_payload(&b, cmd);
	send_frame(1, &b);
	buf_release(&b);
	wait_result(1, &res, 0);
	fprintf(stderr, "wall_ms: %.1f\n", (double)(now_ns() - t0) / 1e6);
	printf("status=%d flags=%s out_bytes=%zu err_bytes=%zu\n", res.status,
	       flag_names(res.flags), res.out.len, res.err.len);
	if (res.status || res.flags || res.out.len != n || res.err.len != n) {
		fail = 1;
	} else if (memcmp(res.out.data, in, n)) {
		printf("stdout differs from stdin\n");
		fail = 1;
	} else {
		for (size_t i = 0; i < n; i++)
			if (res.err.data[i]) {
				printf("stderr byte %zu is not 0\n", i);
				fail = 1;
				break;
			}
	}
	msg_result_release(&res);
	free(in);
	shutdown_supervisor();
	return fail;
}

enum after_started { CLOSE_PIPES, SEND_SHUTDOWN, HOLD };

static int mode_started(const char *cmd, enum after_started how)
{
	struct buf b = BUF_INIT;
	struct result_msg res;

	job_payload(&b, cmd);
	send_frame(1, &b);
	buf_release(&b);
	wait_result(1, &res, 1);
	note_workers();
	note_pid("ready", 1);
	if (how == HOLD) {
		alarm(0);
		for (;;)
			pause();
	}
	if (how == SEND_SHUTDOWN)
		send_frame(PROTO_ID_SHUTDOWN, NULL);
	close(to_sup);
	close(from_sup);
	printf("supervisor_exit=%d\n", reap_supervisor());
	return 0;
}

static int mode_stats(const char *cmd)
{
	struct buf b = BUF_INIT;
	struct result_msg res;
	struct frame_decoder d;

	job_payload(&b, cmd);
	send_frame(1, &b);
	buf_reset(&b);
	wait_result(1, &res, 0);
	msg_result_release(&res);
	wire_put_u8(&b, MSG_STATS);
	send_frame(PROTO_ID_CONTROL, &b);
	buf_release(&b);
	frame_decoder_init(&d);
	if (frame_read_one(from_sup, &d) != 1 || d.id != PROTO_ID_CONTROL ||
	    msg_type(d.payload.data, d.payload.len) != MSG_STATS)
		die("no STATS reply");
	printf("stats: %.*s\n", (int)d.payload.len - 1, (char *)d.payload.data + 1);
	frame_decoder_release(&d);
	shutdown_supervisor();
	return 0;
}

static int mode_cancel(const char *cmd)
{
	static const unsigned char cancel[] = { MSG_CANCEL };
	struct buf b = BUF_INIT;
	struct result_msg res;

	job_payload(&b, cmd);
	send_frame(1, &b);
	buf_release(&b);
	wait_result(1, &res, 1);
	buf_add(&b, cancel, sizeof cancel);
	send_frame(1, &b);
	send_frame(2, &b); /* unknown id: ignored */
	buf_release(&b);
	wait_result(1, &res, 0);
	printf("status=%d\nflags=%s\n", res.status, flag_names(res.flags));
	for (char *save = NULL, *line = strtok_r((char *)res.err.data, "\n", &save);
	     line; line = strtok_r(NULL, "\n", &save))
		printf("err: %s\n", line);
	msg_result_release(&res);
	shutdown_supervisor();
	return 0;
}

static int mode_malformed(const char *kind)
{
	unsigned char hdr[16];
	int64_t id = 1, len = 0;
	struct buf b = BUF_INIT;
	struct frame_decoder d;
	int st;

	if (!strcmp(kind, "neglen")) {
		len = -5;
	} else if (!strcmp(kind, "badid")) {
		id = -7;
	} else if (!strcmp(kind, "badtype")) {
		wire_put_u8(&b, 99);
	} else if (!strcmp(kind, "shortjob")) {
		wire_put_u8(&b, MSG_JOB);
		wire_put_u32(&b, 3);
	} else if (!strcmp(kind, "truncated")) {
		len = 100;
	} else if (!strcmp(kind, "version")) {
		struct hello_msg h = { 99, 0, (int32_t)getpid() };

		msg_put_hello(&b, &h);
		send_frame(PROTO_ID_CONTROL, &b);
		buf_reset(&b);
		goto read_error;
	} else if (strcmp(kind, "nohello")) {
		die("unknown kind %s", kind);
	}
	if (!strcmp(kind, "nohello")) {
		job_payload(&b, "true");
		send_frame(1, &b);
	} else if (b.len) {
		send_frame(id, &b);
	} else {
		memcpy(hdr, &id, 8);
		memcpy(hdr + 8, &len, 8);
		if (write(to_sup, hdr, sizeof hdr) != sizeof hdr)
			die("write: %s", strerror(errno));
		if (!strcmp(kind, "truncated") && write(to_sup, "abc", 3) != 3)
			die("write: %s", strerror(errno));
	}
	buf_release(&b);
	if (!strcmp(kind, "truncated"))
		close(to_sup); /* EOF in the middle of the payload */
read_error:
	buf_release(&b);
	frame_decoder_init(&d);
	for (;;) {
		int r = frame_read_one(from_sup, &d);

		if (r != 1) {
			printf("no ERROR frame before EOF\n");
			break;
		}
		if (d.id == PROTO_ID_CONTROL &&
		    msg_type(d.payload.data, d.payload.len) == MSG_ERROR) {
			printf("error: %.*s\n", (int)d.payload.len - 1,
			       (char *)d.payload.data + 1);
			break;
		}
		if (d.id == PROTO_ID_CONTROL &&
		    msg_type(d.payload.data, d.payload.len) == MSG_HELLO)
			continue;
	}
	frame_decoder_release(&d);
	st = reap_supervisor();
	printf("supervisor_exit=%d\n", st);
	return 0;
}

int main(int argc, char **argv)
{
	static char *flags[] = { "-c", NULL };
	static char cwd[4096];
	const char *mode;
	int opt, n;

	signal(SIGALRM, on_alarm);
	signal(SIGPIPE, SIG_IGN);
	alarm(120);
	job.shell = "/bin/sh";
	job.shellflags = flags;
	job.cwd = getcwd(cwd, sizeof cwd) ? cwd : "";
	job.kill_grace_ms = 5000;
	job.max_output = 16 << 20;
	job.retries = 1;
	while ((opt = getopt(argc, argv, "t:g:r:m:i:e:C:s:p:O:E:D:WS:")) != -1) {
		switch (opt) {
		case 't': job.timeout_ms = atoll(optarg); break;
		case 'g': job.kill_grace_ms = atoll(optarg); break;
		case 'r': job.retries = (uint32_t)atoi(optarg); break;
		case 'm': job.max_output = atoll(optarg); break;
		case 'i':
			job.input = (unsigned char *)optarg;
			job.input_len = strlen(optarg);
			job.has_input = 1;
			break;
		case 'e':
			if (env_n < 63)
				env_list[env_n++] = optarg;
			job.env = env_list;
			break;
		case 'C': job.cwd = optarg; break;
		case 's': job.shell = optarg; break;
		case 'p': pid_file = optarg; break;
		case 'O': out_file = optarg; break;
		case 'E': err_file = optarg; break;
		case 'D': delete_file = optarg; break;
		case 'W': bare_worker = 1; break;
		case 'S': started_after = optarg; break;
		default: die("bad option (see the comment at the top)");
		}
	}
	if (argc - optind < 3)
		die("usage: pool-client [options] WORKER_EXE N MODE [args]");
	n = atoi(argv[optind + 1]);
	mode = argv[optind + 2];
	argv += optind + 3;
	argc -= optind + 3;
	start_supervisor(argv[-3], argv[-2]);
	if (!strcmp(mode, "malformed") && argc == 1 &&
	    (!strcmp(argv[0], "nohello") || !strcmp(argv[0], "version")))
		return mode_malformed(argv[0]);
	hello(n);
	if (!strcmp(mode, "one") && argc == 1)
		return mode_one(argv[0]);
	if (!strcmp(mode, "many") && argc == 2)
		return mode_many(atol(argv[0]), argv[1]);
	if (!strcmp(mode, "bigio") && argc == 1)
		return mode_bigio(atol(argv[0]));
	if (!strcmp(mode, "orphan") && argc == 1)
		return mode_started(argv[0], CLOSE_PIPES);
	if (!strcmp(mode, "stop") && argc == 1)
		return mode_started(argv[0], SEND_SHUTDOWN);
	if (!strcmp(mode, "hold") && argc == 1)
		return mode_started(argv[0], HOLD);
	if (!strcmp(mode, "stats") && argc == 1)
		return mode_stats(argv[0]);
	if (!strcmp(mode, "cancel") && argc == 1)
		return mode_cancel(argv[0]);
	if (!strcmp(mode, "malformed") && argc == 1)
		return mode_malformed(argv[0]);
	die("bad mode or arguments: %s", mode);
}
