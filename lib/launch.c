/*
 * launch.c - how a job's command line is run, and starting it (see
 * launch.h).
 *
 * Past 600 lines: the command-line rules, the environment and its
 * digest, and a traced job's set-up (the log's descriptor under the
 * descriptor limit, the preload's variable with the parent to show and
 * the ahead-of-need mark) all shape the one posix_spawn call; the traced
 * set-up is the part to move out when this grows again.
 */
#include "lib/launch.h"
#include "lib/err.h"
#include "lib/tracelog.h"
#include "lib/store.h"
#include "lib/board.h"
#include "lib/pstate.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

/* make's list (job.c sh_chars), plus other blanks make does not split on. */
static const char launch_metachars[] = "#;\"*?[]&|<>(){}$`'\\!~=%^\n\r\v\f";

/* Reserved words and builtins: exec'ing a program of that name is wrong. */
static const char *const launch_shell_words[] = {
	".", ":", "[[", "alias", "bg", "break", "case", "cd", "command",
	"continue", "declare", "do", "done", "elif", "else", "esac", "eval",
	"exec", "exit", "export", "fc", "fg", "fi", "for", "function",
	"getopts", "hash", "if", "in", "jobs", "let", "local", "login",
	"logout", "popd", "pushd", "read", "readonly", "return", "select",
	"set", "shift", "source", "then", "time", "times", "trap", "type",
	"typeset", "ulimit", "umask", "unalias", "unset", "until", "wait",
	"while", NULL,
};


/* ---- deciding how to run the command ---- */

static int launch_is_shell_word(const char *w, size_t n)
{
	for (const char *const *k = launch_shell_words; *k; k++)
		if (strlen(*k) == n && !memcmp(*k, w, n))
			return 1;
	return 0;
}

int launch_is_simple(const char *shell, char *const *shellflags, const char *command)
{
	const char *p = command;
	size_t n;

	if (!shell || strcmp(shell, "/bin/sh"))
		return 0;
	if (!shellflags || !shellflags[0] || shellflags[1] ||
	    (strcmp(shellflags[0], "-c") && strcmp(shellflags[0], "-ec")))
		return 0;
	if (strpbrk(command, launch_metachars))
		return 0;
	p += strspn(p, " \t");
	n = strcspn(p, " \t");
	if (!n)
		return 0; /* empty: let the shell decide what nothing means */
	return !launch_is_shell_word(p, n);
}

/* Split a simple command on blanks; the vector points into `copy`. */
static char **launch_split(char *copy)
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
char **launch_environ(char *const *extra, int full)
{
	/*
	 * the worker's mark (board.h), after the job's own entries; made
	 * again in a process forked from one that made it (a fork worker
	 * forked from make, which runs async-shell commands itself)
	 */
	static char mark[64];
	static pid_t mark_pid;
	size_t n = 0, m = 0, len;
	char **v;

	if (mark_pid != getpid()) {
		mark_pid = getpid();
		snprintf(mark, sizeof mark, "%s=%ld", BOARD_MARK, (long)mark_pid);
	}
	while (!full && environ && environ[n])
		n++;
	while (extra && extra[m])
		m++;
	v = malloc((n + m + 2) * sizeof *v);
	if (!v)
		return NULL;
	if (n)
		memcpy(v, environ, n * sizeof *v);
	for (size_t j = 0; j <= m; j++) {
		const char *e = j < m ? extra[j] : mark;
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

uint64_t launch_env_digest(char *const *envp)
{
	uint64_t sum = 0;

	/*
	 * A sum of per-entry hashes: the order of environ does not matter.
	 * The plugin's own variables are left out: the worker's mark differs
	 * from worker to worker, and ASYNCCOMPILE_HELD_TOKENS changes in
	 * make's environment as tokens come and go (plugin/reexec.c).
	 * ASYNC_COMPILE_DEBUG is not: the command sees it, and one that
	 * prints it would be answered stale.
	 */
	for (; envp && *envp; envp++)
		if (strncmp(*envp, "ASYNCCOMPILE_", 13))
			sum += store_hash(*envp, strlen(*envp), STORE_HASH_INIT);
	return sum;
}

static const char *launch_getenv(char *const *envp, const char *key)
{
	size_t len = strlen(key);

	for (; envp && *envp; envp++)
		if (!strncmp(*envp, key, len) && (*envp)[len] == '=')
			return *envp + len + 1;
	return NULL;
}

/*
 * Room for a traced job's events (tracelog.h, struct tl_shm): what the
 * runner reads back at most (run.c), less the header.  Only what is
 * written takes memory.
 */
#define LAUNCH_TRACE_CAP (((uint64_t)64 << 20) - TL_SHM_DATA)

/*
 * A runner's event that could not be written: the header loses its
 * magic, so the run is opaque (tl_shm_check), never a read set short of
 * the event.  The header's page was written when the log was made, so
 * this write needs no new memory.
 */
static void launch_trace_broken(int fd)
{
	static const char none[8];

	if (pwrite(fd, none, sizeof none, 0) != (ssize_t)sizeof none && ftruncate(fd, 0) < 0) {
		/* nothing else to do: launch_trace_setup checked this works */
	}
}

/*
 * The shared log, before the command runs: the runner is its only
 * writer, so head is read and moved with pread and pwrite.
 */
static void launch_trace_append(int fd, const void *ev, size_t n)
{
	struct tl_shm h;

	if (pread(fd, &h, sizeof h, 0) != (ssize_t)sizeof h || h.head > h.cap ||
	    n > h.cap - h.head ||
	    pwrite(fd, ev, n, (off_t)(TL_SHM_DATA + h.head)) != (ssize_t)n) {
		launch_trace_broken(fd);
		return;
	}
	h.head += n;
	if (pwrite(fd, &h, sizeof h, 0) != (ssize_t)sizeof h)
		launch_trace_broken(fd);
}

/* One event into a traced job's log, as the preload writes them. */
static void launch_trace_event(int fd, int type, const struct stat *sb, const char *text,
			       size_t n)
{
	struct {
		struct tl_event ev;
		char path[TL_MAX_EVENT - sizeof(struct tl_event)];
	} e;

	if (fd < 0)
		return;
	if (n > sizeof e.path) {
		type = TL_OPAQUE;
		text = "the runner's event is too long";
		n = strlen(text);
		sb = NULL;
	}
	memset(&e.ev, 0, sizeof e.ev);
	e.ev.type = (uint8_t)type;
	e.ev.pid = (int32_t)getpid();
	if (sb) {
		e.ev.kind = S_ISREG(sb->st_mode) ? TL_FILE : S_ISDIR(sb->st_mode) ? TL_DIR : TL_OTHER;
		e.ev.mode = sb->st_mode;
		e.ev.dev = sb->st_dev;
		e.ev.ino = sb->st_ino;
		e.ev.size = sb->st_size;
		e.ev.mtime_ns = (int64_t)sb->st_mtim.tv_sec * 1000000000 + sb->st_mtim.tv_nsec;
		e.ev.ctime_ns = (int64_t)sb->st_ctim.tv_sec * 1000000000 + sb->st_ctim.tv_nsec;
	}
	memcpy(e.path, text, n);
	e.ev.len = (uint32_t)(sizeof e.ev + n);
	launch_trace_append(fd, &e, e.ev.len);
}

/*
 * The runner's own PATH search is the traced command's too: each
 * candidate goes into the log as the preload would put it (tracelog.h),
 * found or absent, so a program that appears earlier on PATH is seen.
 */
static void launch_trace_lookup(int fd, const char *path)
{
	static const char cannot[] = "cannot look at a PATH entry";
	struct stat sb;

	if (!stat(path, &sb))
		launch_trace_event(fd, TL_READ, &sb, path, strlen(path));
	else if (errno != ENOENT && errno != ENOTDIR)
		launch_trace_event(fd, TL_OPAQUE, NULL, cannot, sizeof cannot - 1);
	else
		launch_trace_event(fd, TL_READ, NULL, path, strlen(path));
}

/*
 * The state the command starts with: this thread's, which posix_spawn
 * passes on unchanged (no limit, priority or mask of the runner's own is
 * set on a job; pstate.h).
 */
static void launch_trace_state(int fd)
{
	struct buf v = BUF_INIT;

	if (fd < 0)
		return;
	buf_addstr(&v, PSTATE_VALUE "=");
	pstate_get(&v);
	launch_trace_event(fd, TL_VALUE, NULL, (const char *)v.data, v.len);
	buf_release(&v);
}

/*
 * Look `name` up in the job's PATH the way execvp() would, but with the
 * job's environment and relative to the job's directory (posix_spawnp()
 * would use the worker's own PATH).  Returns a malloc'd path or NULL with
 * errno set.
 */
static char *launch_find_program(const char *name, char *const *envp, const char *cwd,
				 int trace_fd)
{
	const char *path = launch_getenv(envp, "PATH");
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
		launch_trace_lookup(trace_fd, (char *)cand.data);
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

/* The shell's argv: shell, flags..., command. */
static char **launch_shell_argv(const struct job_msg *job)
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


/* ---- spawning ---- */

/*
 * What posix_spawn() is told, kept from one job to the next: the actions
 * depend only on the descriptor numbers, which are the same for every job
 * of a worker once it is in its stride, and on the directory.
 */
static struct {
	int valid;
	int in, out, err;
	char *cwd;
	int once;       /* built with a job's own descriptors: not for the next */
	posix_spawn_file_actions_t fa;
} launch_fa;
/* [0]: a session of its own; [1]: the caller's session and group */
static int launch_attr_valid[2];
static posix_spawnattr_t launch_attr[2];

void launch_release(void)
{
	if (launch_fa.valid)
		posix_spawn_file_actions_destroy(&launch_fa.fa);
	free(launch_fa.cwd);
	launch_fa.cwd = NULL;
	launch_fa.valid = 0;
	for (int i = 0; i < 2; i++) {
		if (launch_attr_valid[i])
			posix_spawnattr_destroy(&launch_attr[i]);
		launch_attr_valid[i] = 0;
	}
}

static int launch_get_attr(int callers_group)
{
	posix_spawnattr_t *a = &launch_attr[callers_group];
	sigset_t none, all;
	int rc;

	if (launch_attr_valid[callers_group])
		return 0;
	if ((rc = posix_spawnattr_init(a)))
		return rc;
	sigemptyset(&none);
	sigfillset(&all);
	sigdelset(&all, SIGKILL);
	sigdelset(&all, SIGSTOP);
	rc = posix_spawnattr_setflags(a, (callers_group ? 0 : POSIX_SPAWN_SETSID) |
				      POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	if (!rc)
		rc = posix_spawnattr_setsigmask(a, &none);
	if (!rc)
		rc = posix_spawnattr_setsigdefault(a, &all);
	if (rc)
		posix_spawnattr_destroy(a);
	else
		launch_attr_valid[callers_group] = 1;
	return rc;
}

/*
 * child_in -1: /dev/null.  cwd NULL or "": the worker's own.  fds: the
 * job's own descriptors (job_msg.fds), opened in the child after every
 * other descriptor is closed.
 */
static int launch_get_actions(int child_in, int child_out, int child_err, const char *cwd,
			      char *const *fds)
{
	posix_spawn_file_actions_t *fa = &launch_fa.fa;
	int rc, own = fds && *fds;

	if (!cwd)
		cwd = "";
	if (launch_fa.valid && !launch_fa.once && !own && launch_fa.in == child_in &&
	    launch_fa.out == child_out && launch_fa.err == child_err &&
	    !strcmp(launch_fa.cwd, cwd))
		return 0;
	if (launch_fa.valid)
		posix_spawn_file_actions_destroy(fa);
	free(launch_fa.cwd);
	launch_fa.valid = 0;
	if (!(launch_fa.cwd = strdup(cwd)))
		return ENOMEM;
	if ((rc = posix_spawn_file_actions_init(fa)))
		return rc;
	if (child_in >= 0)
		rc = posix_spawn_file_actions_adddup2(fa, child_in, 0);
	else
		rc = posix_spawn_file_actions_addopen(fa, 0, "/dev/null", O_RDONLY, 0);
	if (!rc)
		rc = posix_spawn_file_actions_adddup2(fa, child_out, 1);
	if (!rc)
		rc = posix_spawn_file_actions_adddup2(fa, child_err, 2);
	if (!rc && *cwd)
		rc = posix_spawn_file_actions_addchdir_np(fa, cwd);
	if (!rc)
		rc = posix_spawn_file_actions_addclosefrom_np(fa, 3);
	for (char *const *f = fds; !rc && f && *f; f++) {
		char *end;
		int fd = (int)strtol(*f, &end, 10); /* checked by msg_get_job */

		/* '+' is the trace log only (launch_trace_setup), never from a JOB */
		rc = posix_spawn_file_actions_addopen(fa, fd, end + 1,
						      *end == '<' ? O_RDONLY
						      : *end == '+' ? O_RDWR | O_APPEND
						      : O_WRONLY | O_APPEND, 0);
	}
	launch_fa.once = own;
	if (rc) {
		posix_spawn_file_actions_destroy(fa);
		return rc;
	}
	launch_fa.in = child_in;
	launch_fa.out = child_out;
	launch_fa.err = child_err;
	launch_fa.valid = 1;
	return 0;
}

/* Returns 0 or an errno value. */
static int launch_spawn(pid_t *pid, const char *path, char **argv, char **envp,
			const char *cwd, int child_in, int child_out, int child_err,
			char *const *fds, int callers_group)
{
	int rc = launch_get_attr(callers_group);

	if (!rc)
		rc = launch_get_actions(child_in, child_out, child_err, cwd, fds);
	if (!rc)
		rc = posix_spawn(pid, path, &launch_fa.fa, &launch_attr[callers_group], argv, envp);
	return rc;
}

static void launch_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* "DEV:INO" of a descriptor, for the tracer to recognise what it is given. */
static void launch_fd_id(struct buf *b, int fd)
{
	struct stat sb;

	if (fstat(fd, &sb) < 0)
		memset(&sb, 0, sizeof sb);
	buf_addf(b, ":%llu:%llu", (unsigned long long)sb.st_dev, (unsigned long long)sb.st_ino);
}

/* Take LAUNCH_PPID out of envp (launch.h): its pid, or 0. */
static long launch_take_ppid(char **envp)
{
	const size_t len = strlen(LAUNCH_PPID "=");
	long pid = 0;

	for (size_t i = 0; envp[i]; i++) {
		if (strncmp(envp[i], LAUNCH_PPID "=", len))
			continue;
		pid = strtol(envp[i] + len, NULL, 10);
		do
			envp[i] = envp[i + 1];
		while (envp[i++]);
		break;
	}
	return pid > 0 ? pid : 0;
}

/*
 * The descriptor the command gets the log on: TL_FD, or under a lower
 * soft RLIMIT_NOFILE the highest one the command may have (a descriptor
 * at or past the limit cannot be opened, and posix_spawn refuses the
 * whole command: "Bad file descriptor" where $(shell) works), never 0-2
 * nor one of the job's own (fds).  -1 when none is left: the command
 * runs untraced, and so opaque.
 */
static int launch_trace_fd(char *const *fds)
{
	struct rlimit rl;
	long fd = TL_FD;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur <= (rlim_t)TL_FD)
		fd = (long)rl.rlim_cur - 1;
	for (; fd > 2; fd--) {
		char *const *f = fds;

		while (f && *f && strtol(*f, NULL, 10) != fd)
			f++;
		if (!f || !*f)
			return (int)fd;
	}
	return -1;
}

/*
 * The LD_PRELOAD a traced command keeps, each entry followed by ':'.  In
 * the suite's ASan build (make runs with the sanitizer runtimes
 * preloaded, t/lib.sh) they are not passed on to the commands, which are
 * not instrumented: the runtimes read the monotonic clock in every
 * process, which makes every answer opaque (tracelog.h, CLOCK).
 */
static void launch_preload_keep(struct buf *b, const char *old)
{
	while (old && *old) {
		size_t n = strcspn(old, ": ");
		int drop = 0;
#if defined(__SANITIZE_ADDRESS__)
		const char *base = old;

		for (size_t i = 0; i < n; i++)
			if (old[i] == '/')
				base = old + i + 1;
		drop = !strncmp(base, "libasan", 7) || !strncmp(base, "libubsan", 8);
#endif
		if (n && !drop) {
			buf_add(b, old, n);
			buf_addch(b, ':');
		}
		old += n;
		old += strspn(old, ": ");
	}
}

/*
 * Set a traced job up: the log (a memfd, l->trace_fd), the preload and
 * the variable that names the log in the environment, and the log's
 * descriptor among the job's own.  The strings live in `keep` (one
 * NUL-separated block per string, pointed to by *envp and *fds, both
 * fresh arrays).  Returns 0, or -1 when the job cannot be traced, which
 * only makes its run opaque.
 */
static int launch_trace_setup(const struct job_msg *job, int out_w, int err_w, long ppid,
			      char ***envp, char ***fds, struct launch *l, struct buf keep[3])
{
	const char *tr = job->tracer, *old = NULL;
	size_t n = 0, k = 0, pre = SIZE_MAX;
	char **e, **f;
	int fd;

	if (!tr || strpbrk(tr, ": \t") || (fd = launch_trace_fd(job->fds)) < 0)
		return -1;
	l->trace_fd = memfd_create("asynccompile-trace", MFD_CLOEXEC);
	if (l->trace_fd < 0)
		return -1;
	if (tl_shm_make(l->trace_fd, LAUNCH_TRACE_CAP) < 0) {
		launch_close(&l->trace_fd);
		return -1;
	}
	for (; (*envp)[n]; n++)
		if (!strncmp((*envp)[n], "LD_PRELOAD=", 11)) {
			pre = n;
			old = (*envp)[n] + 11;
		}
	while (job->fds && job->fds[k])
		k++;
	e = malloc((n + 3) * sizeof *e);
	f = malloc((k + 2) * sizeof *f);
	if (!e || !f) {
		free(e);
		free(f);
		return -1;
	}
	memcpy(e, *envp, (n + 1) * sizeof *e);
	if (k)
		memcpy(f, job->fds, k * sizeof *f);
	/* last: a sanitizer's runtime must stay first in the list */
	buf_addstr(&keep[0], "LD_PRELOAD=");
	launch_preload_keep(&keep[0], old);
	buf_addstr(&keep[0], tr);
	buf_addf(&keep[1], "%s=%d", TL_ENV, fd);
	launch_fd_id(&keep[1], l->trace_fd);
	launch_fd_id(&keep[1], out_w);
	launch_fd_id(&keep[1], err_w);
	if (ppid > 0 && ppid != (long)getpid())
		buf_addf(&keep[1], ":%ld:%ld", (long)getpid(), ppid);
	if (job->ahead)
		buf_addstr(&keep[1], TL_ENV_AHEAD);
	/* '+': read and write, appending (the preload maps it) */
	buf_addf(&keep[2], "%d+/proc/%ld/fd/%d", fd, (long)getpid(), l->trace_fd);
	if (pre != SIZE_MAX) {
		e[pre] = (char *)keep[0].data;
	} else {
		e[n++] = (char *)keep[0].data;
	}
	e[n++] = (char *)keep[1].data;
	e[n] = NULL;
	f[k] = (char *)keep[2].data;
	f[k + 1] = NULL;
	free(*envp);
	*envp = e;
	*fds = f;
	return 0;
}

/*
 * No descriptor left for a stderr pipe (a low RLIMIT_NOFILE): a command in
 * the caller's group writes to the caller's stderr, as $(shell)'s does,
 * rather than fail where $(shell) would not.  Returns 1 when it may.
 */
static int launch_err_shared(int callers_group, int errpipe[2])
{
	if (!callers_group || (errno != EMFILE && errno != ENFILE))
		return 0;
	errpipe[0] = errpipe[1] = -1;
	return 1;
}

int launch_start(const struct job_msg *job, int callers_group, struct launch *l,
		 struct buf *err)
{
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, errpipe[2] = { -1, -1 };
	char **envp = NULL, **argv = NULL, *copy = NULL, *path = NULL;
	char **fds = job->fds, **own_fds = NULL;
	struct buf keep[3] = { BUF_INIT, BUF_INIT, BUF_INIT };
	const char *what = job->command;
	int rc = 0, direct;
	long ppid;
	struct timespec now;

	l->pid = -1;
	l->trace_fd = -1;
	if ((job->has_input && pipe2(in, O_CLOEXEC)) || pipe2(out, O_CLOEXEC) ||
	    (pipe2(errpipe, O_CLOEXEC) && !launch_err_shared(callers_group, errpipe)) ||
	    !(envp = launch_environ(job->env, job->env_full))) {
		rc = errno ? errno : ENOMEM;
		errno = rc;
		err_fail(err, "cannot set up the command:");
		goto out;
	}
	ppid = launch_take_ppid(envp);
	l->shown_ppid = ppid > 0 ? (pid_t)ppid : 0;
	/* only a traced job's read set carries it: no pass for other jobs */
	l->env_digest = job->tracer ? launch_env_digest(envp) : 0;
	if (job->tracer &&
	    launch_trace_setup(job, out[1], errpipe[1], ppid, &envp, &own_fds, l, keep) == 0)
		fds = own_fds;
	launch_trace_state(l->trace_fd);
	clock_gettime(CLOCK_REALTIME, &now);
	l->start_real_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
	direct = launch_is_simple(job->shell, job->shellflags, job->command);
	if (direct) {
		copy = strdup(job->command);
		argv = copy ? launch_split(copy) : NULL;
		if (!argv) {
			rc = ENOMEM;
		} else {
			what = argv[0];
			path = launch_find_program(argv[0], envp, job->cwd, l->trace_fd);
			rc = path ? launch_spawn(&l->pid, path, argv, envp, job->cwd,
						 in[0], out[1], errpipe[1] < 0 ? 2 : errpipe[1], fds,
						 callers_group) : errno;
		}
		/* A script without #! is the shell's to run, as for execvp(). */
		if (rc == ENOEXEC)
			direct = 0;
	}
	if (!direct) {
		free(argv);
		free(path);
		what = job->shell;
		argv = launch_shell_argv(job);
		path = argv ? launch_find_program(job->shell, envp, job->cwd, l->trace_fd) : NULL;
		if (!argv)
			rc = ENOMEM;
		else
			rc = path ? launch_spawn(&l->pid, path, argv, envp, job->cwd,
						 in[0], out[1], errpipe[1] < 0 ? 2 : errpipe[1], fds,
						 callers_group) : errno;
	}
	if (rc) {
		struct stat sb;

		if (job->cwd && *job->cwd && stat(job->cwd, &sb)) {
			err_fail(err, "cannot change to directory '%s':", job->cwd);
		} else {
			errno = rc;
			err_fail(err, "cannot run '%s':", what);
		}
	}
out:
	free(argv);
	free(copy);
	free(path);
	free(envp);
	free(own_fds);
	for (int i = 0; i < 3; i++)
		buf_release(&keep[i]);
	launch_close(&in[0]);
	if (rc) {
		launch_close(&l->trace_fd);
		launch_close(&out[1]);
		launch_close(&errpipe[1]);
		launch_close(&in[1]);
		launch_close(&out[0]);
		launch_close(&errpipe[0]);
		return -1;
	}
	/* only the worker's ends: the command's stay blocking */
	if (in[1] >= 0)
		fcntl(in[1], F_SETFL, O_NONBLOCK);
	fcntl(out[0], F_SETFL, O_NONBLOCK);
	if (errpipe[0] >= 0)
		fcntl(errpipe[0], F_SETFL, O_NONBLOCK);
	l->in_fd = in[1];
	l->out_fd = out[0];
	l->err_fd = errpipe[0];
	l->out_w = out[1];
	l->err_w = errpipe[1];
	return 0;
}
