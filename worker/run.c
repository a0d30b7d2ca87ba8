/*
 * run.c - spawn, feed, capture, limit and reap one job (see run.h).
 */
#include "run.h"

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

extern char **environ;

#define RUN_READ_CHUNK ((size_t)64 << 10)
/* Without pidfd_open (Linux < 5.3) the runner polls for the exit. */
#define RUN_TICK_MS 10
#define NO_FD ((nfds_t)-1)

/* make's list (job.c sh_chars), plus other blanks make does not split on. */
static const char run_metachars[] = "#;\"*?[]&|<>(){}$`'\\!~=%^\n\r\v\f";

/* Reserved words and builtins: exec'ing a program of that name is wrong. */
static const char *const run_shell_words[] = {
	".", ":", "[[", "alias", "bg", "break", "case", "cd", "command",
	"continue", "declare", "do", "done", "elif", "else", "esac", "eval",
	"exec", "exit", "export", "fc", "fg", "fi", "for", "function",
	"getopts", "hash", "if", "in", "jobs", "let", "local", "login",
	"logout", "popd", "pushd", "read", "readonly", "return", "select",
	"set", "shift", "source", "then", "time", "times", "trap", "type",
	"typeset", "ulimit", "umask", "unalias", "unset", "until", "wait",
	"while", NULL,
};

enum run_stop { STOP_NONE, STOP_TIMEOUT, STOP_CANCEL, STOP_ABANDON };

struct run_stream {
	int fd;          /* read end; -1 after EOF */
	struct buf *into;
	size_t cap;
	int truncated;
};

struct run_state {
	const struct job_msg *job;
	const struct run_hooks *hooks;
	struct result_msg *res;
	pid_t pid;
	int pidfd;
	int in_fd;        /* write end of the command's stdin; -1 when done */
	size_t in_off;
	struct run_stream out, err;
	enum run_stop stop;
	int64_t term_at;  /* ms deadline for the timeout's SIGTERM; 0 = none */
	int64_t kill_at;  /* ms deadline for SIGKILL; 0 = none */
	int64_t drain_until;
	int reaped;
	int wstatus;
};

static int64_t run_now_ms(void)
{
	return proto_now_ns() / 1000000;
}

static void run_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* ---- deciding how to run the command ---- */

static int run_is_shell_word(const char *w, size_t n)
{
	for (const char *const *k = run_shell_words; *k; k++)
		if (strlen(*k) == n && !memcmp(*k, w, n))
			return 1;
	return 0;
}

int run_is_simple(const char *shell, char *const *shellflags, const char *command)
{
	const char *p = command;
	size_t n;

	if (!shell || strcmp(shell, "/bin/sh"))
		return 0;
	if (!shellflags || !shellflags[0] || shellflags[1] ||
	    (strcmp(shellflags[0], "-c") && strcmp(shellflags[0], "-ec")))
		return 0;
	if (strpbrk(command, run_metachars))
		return 0;
	p += strspn(p, " \t");
	n = strcspn(p, " \t");
	if (!n)
		return 0; /* empty: let the shell decide what nothing means */
	return !run_is_shell_word(p, n);
}

/* Split a simple command on blanks; the vector points into `copy`. */
static char **run_split(char *copy)
{
	size_t n = 0, cap = 8;
	char **v = malloc(cap * sizeof *v);
	char *p = copy;

	if (!v)
		return NULL;
	for (;;) {
		p += strspn(p, " \t");
		if (!*p)
			break;
		if (n + 2 > cap) {
			char **nv = realloc(v, (cap *= 2) * sizeof *v);

			if (!nv) {
				free(v);
				return NULL;
			}
			v = nv;
		}
		v[n++] = p;
		p += strcspn(p, " \t");
		if (*p)
			*p++ = 0;
	}
	v[n] = NULL;
	return v;
}

/*
 * The inherited environment with the job's entries applied.  Only the
 * pointer array is new; the strings stay where they are.
 */
static char **run_environ(char *const *extra)
{
	size_t n = 0, m = 0, len;
	char **v;

	while (environ && environ[n])
		n++;
	while (extra && extra[m])
		m++;
	v = malloc((n + m + 1) * sizeof *v);
	if (!v)
		return NULL;
	if (n)
		memcpy(v, environ, n * sizeof *v);
	for (size_t j = 0; j < m; j++) {
		const char *e = extra[j];
		size_t i;

		len = strcspn(e, "=");
		for (i = 0; i < n; i++)
			if (!strncmp(v[i], e, len) && v[i][len] == '=')
				break;
		if (!e[len]) { /* "K": unset K */
			if (i < n)
				memmove(v + i, v + i + 1, (--n - i) * sizeof *v);
			continue;
		}
		v[i] = (char *)e;
		if (i == n)
			n++;
	}
	v[n] = NULL;
	return v;
}

static const char *run_getenv(char *const *envp, const char *key)
{
	size_t len = strlen(key);

	for (; envp && *envp; envp++)
		if (!strncmp(*envp, key, len) && (*envp)[len] == '=')
			return *envp + len + 1;
	return NULL;
}

/*
 * Look `name` up in the job's PATH the way execvp() would, but with the
 * job's environment and relative to the job's directory (posix_spawnp()
 * would use the worker's own PATH).  Returns a malloc'd path or NULL with
 * errno set.
 */
static char *run_find_program(const char *name, char *const *envp, const char *cwd)
{
	const char *path = run_getenv(envp, "PATH");
	int saw_eacces = 0;
	struct buf cand = BUF_INIT;
	struct stat sb;

	if (strchr(name, '/'))
		return strdup(name);
	if (!path)
		path = "/bin:/usr/bin";
	for (;;) {
		size_t n = strcspn(path, ":");

		buf_reset(&cand);
		if (n == 0 || path[0] != '/') {
			if (cwd && *cwd)
				buf_addf(&cand, "%s/", cwd);
		}
		if (n)
			buf_add(&cand, path, n);
		else
			buf_addch(&cand, '.');
		buf_addf(&cand, "/%s", name);
		if (!access((char *)cand.data, X_OK)) {
			if (!stat((char *)cand.data, &sb) && S_ISREG(sb.st_mode))
				return buf_detach(&cand, NULL);
			saw_eacces = 1;
		} else if (errno == EACCES) {
			saw_eacces = 1;
		}
		if (!path[n])
			break;
		path += n + 1;
	}
	buf_release(&cand);
	errno = saw_eacces ? EACCES : ENOENT;
	return NULL;
}

/* ---- spawning ---- */

static int run_spawn_argv(struct run_state *st, const char *path, char **argv,
			  char **envp, int child_in, int child_out, int child_err)
{
	const struct job_msg *job = st->job;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, all;
	int rc;

	if ((rc = posix_spawn_file_actions_init(&fa)))
		return rc;
	if ((rc = posix_spawnattr_init(&at))) {
		posix_spawn_file_actions_destroy(&fa);
		return rc;
	}
	sigemptyset(&none);
	sigfillset(&all);
	sigdelset(&all, SIGKILL);
	sigdelset(&all, SIGSTOP);
	if (child_in >= 0)
		rc = posix_spawn_file_actions_adddup2(&fa, child_in, 0);
	else
		rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (!rc)
		rc = posix_spawn_file_actions_adddup2(&fa, child_out, 1);
	if (!rc)
		rc = posix_spawn_file_actions_adddup2(&fa, child_err, 2);
	if (!rc && job->cwd && *job->cwd)
		rc = posix_spawn_file_actions_addchdir_np(&fa, job->cwd);
	if (!rc)
		rc = posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	/*
	 * A session of its own, not just a process group: in make's session
	 * the job would be a background group on make's terminal, and one
	 * touching /dev/tty (an ssh prompt) would be stopped by SIGTTIN
	 * forever.  Without a controlling terminal that open fails at once.
	 * The session leader's pid is still its process group id.
	 */
	if (!rc)
		rc = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSID |
					      POSIX_SPAWN_SETSIGMASK |
					      POSIX_SPAWN_SETSIGDEF);
	if (!rc)
		rc = posix_spawnattr_setsigmask(&at, &none);
	if (!rc)
		rc = posix_spawnattr_setsigdefault(&at, &all);
	if (!rc)
		rc = posix_spawn(&st->pid, path, &fa, &at, argv, envp);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	return rc;
}

/* The shell's argv: shell, flags..., command. */
static char **run_shell_argv(const struct job_msg *job)
{
	size_t n = 0, i = 0;
	char **v;

	while (job->shellflags && job->shellflags[n])
		n++;
	v = malloc((n + 3) * sizeof *v);
	if (!v)
		return NULL;
	v[i++] = job->shell;
	for (size_t j = 0; j < n; j++)
		v[i++] = job->shellflags[j];
	v[i++] = job->command;
	v[i] = NULL;
	return v;
}

/*
 * Start the command with its pipes.  Returns 0, or -1 with a reason line
 * in st->res->err.
 */
static int run_spawn(struct run_state *st)
{
	const struct job_msg *job = st->job;
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, err[2] = { -1, -1 };
	char **envp = NULL, **argv = NULL, *copy = NULL, *path = NULL;
	const char *what = job->command;
	int rc = 0, direct;

	if ((job->has_input && pipe2(in, O_CLOEXEC)) ||
	    pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC) ||
	    !(envp = run_environ(job->env))) {
		rc = errno ? errno : ENOMEM;
		buf_addf(&st->res->err, "asynccompile: cannot set up the command: %s\n",
			 strerror(rc));
		goto out;
	}
	direct = run_is_simple(job->shell, job->shellflags, job->command);
	if (direct) {
		copy = strdup(job->command);
		argv = copy ? run_split(copy) : NULL;
		if (!argv) {
			rc = ENOMEM;
		} else {
			what = argv[0];
			path = run_find_program(argv[0], envp, job->cwd);
			rc = path ? run_spawn_argv(st, path, argv, envp, in[0],
						   out[1], err[1]) : errno;
		}
		/* A script without #! is the shell's to run, as for execvp(). */
		if (rc == ENOEXEC)
			direct = 0;
	}
	if (!direct) {
		free(argv);
		free(path);
		what = job->shell;
		argv = run_shell_argv(job);
		path = argv ? run_find_program(job->shell, envp, job->cwd) : NULL;
		if (!argv)
			rc = ENOMEM;
		else
			rc = path ? run_spawn_argv(st, path, argv, envp, in[0],
						   out[1], err[1]) : errno;
	}
	if (rc) {
		struct stat sb;

		if (job->cwd && *job->cwd && stat(job->cwd, &sb))
			buf_addf(&st->res->err,
				 "asynccompile: cannot change to directory '%s': %s\n",
				 job->cwd, strerror(errno));
		else
			buf_addf(&st->res->err, "asynccompile: cannot run '%s': %s\n",
				 what, strerror(rc));
	}
out:
	free(argv);
	free(copy);
	free(path);
	free(envp);
	run_close(&in[0]);
	run_close(&out[1]);
	run_close(&err[1]);
	if (rc) {
		run_close(&in[1]);
		run_close(&out[0]);
		run_close(&err[0]);
		return -1;
	}
	st->in_fd = in[1];
	st->out.fd = out[0];
	st->err.fd = err[0];
	if (st->in_fd >= 0)
		fcntl(st->in_fd, F_SETFL, fcntl(st->in_fd, F_GETFL) | O_NONBLOCK);
	fcntl(st->out.fd, F_SETFL, fcntl(st->out.fd, F_GETFL) | O_NONBLOCK);
	fcntl(st->err.fd, F_SETFL, fcntl(st->err.fd, F_GETFL) | O_NONBLOCK);
	return 0;
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
		kill(-st->pid, SIGTERM);
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
	static unsigned char sink[RUN_READ_CHUNK];
	ssize_t n;

	for (int i = 0; i < 4; i++) {
		size_t room = s->into->len < s->cap ? s->cap - s->into->len : 0;

		if (room > RUN_READ_CHUNK)
			room = RUN_READ_CHUNK;
		if (room) {
			buf_grow(s->into, room);
			n = read(s->fd, s->into->data + s->into->len, room);
			if (n > 0) {
				s->into->len += (size_t)n;
				s->into->data[s->into->len] = 0;
			}
		} else {
			n = read(s->fd, sink, sizeof sink);
			if (n > 0)
				s->truncated = 1;
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

/*
 * Reap the command if it has exited.  The leftovers of its group are killed
 * first, while the zombie still pins the group id.
 */
static void run_try_reap(struct run_state *st)
{
	siginfo_t si;
	struct rusage ru;
	pid_t r = -1;

	memset(&si, 0, sizeof si);
	memset(&ru, 0, sizeof ru);
	if (waitid(P_PID, (id_t)st->pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0) {
		if (errno == EINTR)
			return;
		/*
		 * ECHILD: reaped behind our back, so its group id may already
		 * belong to someone else; leave the group alone.
		 */
	} else if (si.si_pid != st->pid) {
		return;
	} else {
		kill(-st->pid, SIGKILL);
		do
			r = wait4(st->pid, &st->wstatus, 0, &ru);
		while (r < 0 && errno == EINTR);
	}
	if (r < 0)
		st->wstatus = W_EXITCODE(125, 0);
	st->res->end_ns = proto_now_ns();
	st->res->utime_us = (int64_t)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec;
	st->res->stime_us = (int64_t)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec;
	st->res->maxrss_kb = ru.ru_maxrss;
	st->reaped = 1;
	st->drain_until = run_now_ms() + RUN_DRAIN_MS;
	run_close(&st->pidfd);
	run_close(&st->in_fd);
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
		kill(-st->pid, SIGKILL);
		st->kill_at = 0;
	}
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
		if (!st->reaped && st->pidfd >= 0)
			pfd[pid_i = n++] = (struct pollfd){ st->pidfd, POLLIN, 0 };
		else if (!st->reaped)
			timeout = RUN_TICK_MS;
		w0 = n;
		for (int i = 0; h && h->watch && st->stop != STOP_ABANDON &&
		     i < RUN_MAX_WATCH; i++)
			if (h->watch_fd[i] >= 0)
				pfd[n++] = (struct pollfd){ h->watch_fd[i], POLLIN, 0 };
		if (!st->reaped) {
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
		if (!st->reaped && (pid_i >= n || pfd[pid_i].revents))
			run_try_reap(st);
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
		res->status = 125;
	if (st->stop == STOP_TIMEOUT) {
		res->status = 124;
		res->flags |= RES_TIMED_OUT;
		run_note(res, "timed out after %" PRId64 " ms; killed",
			 st->job->timeout_ms);
	} else if (st->stop == STOP_CANCEL) {
		res->flags |= RES_CANCELLED;
		run_note(res, "cancelled; killed");
	}
	if (st->out.fd >= 0 || st->err.fd >= 0)
		run_note(res, "output still open %d ms after the command exited; "
			 "stopped reading", RUN_DRAIN_MS);
	if (st->out.truncated || st->err.truncated)
		res->flags |= RES_TRUNCATED;
	if (st->out.truncated)
		run_note(res, "stdout truncated at %zu bytes", st->out.cap);
	if (st->err.truncated)
		run_note(res, "stderr truncated at %zu bytes", st->err.cap);
}

int run_job(const struct job_msg *job, const struct run_hooks *hooks,
	    struct result_msg *res)
{
	struct run_state st;
	size_t cap = job->max_output > 0 ? (size_t)job->max_output
					 : (size_t)PROTO_MAX_OUTPUT;

	memset(res, 0, sizeof *res);
	memset(&st, 0, sizeof st);
	st.job = job;
	st.hooks = hooks;
	st.res = res;
	st.pidfd = st.in_fd = st.out.fd = st.err.fd = -1;
	st.out.into = &res->out;
	st.err.into = &res->err;
	st.out.cap = st.err.cap = cap;
	res->start_ns = proto_now_ns();
	if (run_spawn(&st) < 0) {
		res->status = 127;
		res->flags = RES_SPAWN_FAILED;
		res->end_ns = proto_now_ns();
		return RUN_DONE;
	}
	st.pidfd = (int)syscall(SYS_pidfd_open, st.pid, 0);
	if (st.pidfd >= 0)
		fcntl(st.pidfd, F_SETFD, FD_CLOEXEC);
	if (hooks && hooks->started)
		hooks->started(hooks->ctx, st.pid);
	if (job->timeout_ms > 0)
		st.term_at = run_now_ms() + job->timeout_ms;
	if (st.in_fd >= 0 && !job->input_len)
		run_close(&st.in_fd);
	run_loop(&st);
	run_finish(&st); /* before the pipes close: it notes which are open */
	run_close(&st.in_fd);
	run_close(&st.out.fd);
	run_close(&st.err.fd);
	run_close(&st.pidfd);
	return st.stop == STOP_ABANDON ? RUN_ABANDONED : RUN_DONE;
}

/* ---- output queue ---- */

int run_outq_flush(int fd, struct run_outq *q)
{
	int ret = 0;

	while (q->off < q->buf.len) {
		ssize_t n = write(fd, q->buf.data + q->off, q->buf.len - q->off);

		if (n > 0) {
			q->off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n == 0)
			errno = EIO;
		ret = -1;
		break;
	}
	if (q->off == q->buf.len) {
		buf_reset(&q->buf);
		q->off = 0;
	} else if (q->off > q->buf.len / 2) {
		int saved = errno;

		buf_consume(&q->buf, q->off);
		q->off = 0;
		errno = saved;
	}
	return ret;
}

void run_outq_release(struct run_outq *q)
{
	buf_release(&q->buf);
	q->off = 0;
}
