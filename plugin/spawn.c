/* Starting worker processes from inside make. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/proto.h"
#include "lib/run.h"
#include "lib/sig.h"
#include "pool/start.h"
#include "worker/worker.h"
#include "lib/err.h"
#include "plugin/spawn.h"

extern char **environ;

#ifndef ASYNC_LIBEXECDIR
#define ASYNC_LIBEXECDIR "/usr/local/libexec/asynccompile"
#endif

/*
 * The environment workers start with, copied on make's thread by
 * spawn_snapshot_env().  Workers are also started later from the I/O
 * thread (pool growth, a crashed worker's replacement, the supervisor's
 * restart), while make's thread may be changing environ with putenv()
 * (make adds MAKE_RESTARTS before it re-executes itself): reading it
 * there once cost make-suite's options/print-directory an EFAULT from
 * posix_spawn.  Every worker of one make so starts with the same
 * environment, the one make had when the engine started.
 */
static char **spawn_env;

int spawn_snapshot_env(void)
{
	size_t n = 0;
	char **v;

	while (environ && environ[n])
		n++;
	v = calloc(n + 1, sizeof *v);
	if (!v)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (!(v[i] = strdup(environ[i]))) {
			strv_free(v);
			return -1;
		}
	strv_free(spawn_env);
	spawn_env = v;
	return 0;
}

/*
 * Own process groups: every pool process (supervisor, worker) leads or
 * joins a process group other than make's.  Jobs run in sessions of
 * their own (lib/launch.h), so a signal to make's group (kill -9
 * -PGID, timeout(1), a CI cancelling the build, Ctrl-C) never reaches
 * them; had it reached their workers, a SIGKILL would have orphaned
 * them for good.  Outside the group, the pool outlives make by the
 * moment it takes to see make gone (the end of its pipes, the
 * parent-death signal) and ends every job the usual way: its process
 * group, then whatever left it (the workers are child subreapers).
 */
static void spawn_close4(int to[2], int from[2])
{
	close(to[0]);
	close(to[1]);
	close(from[0]);
	close(from[1]);
}

int spawn_worker(const char *exe, char *const argv[], int board, int *to_child,
		 int *from_child, pid_t *pid)
{
	return spawn_process(exe, argv, &board, board >= 0, to_child, from_child, pid);
}

int spawn_process(const char *exe, char *const argv[], const int *fds, int nfds,
		  int *to_child, int *from_child, pid_t *pid)
{
	/* out of make's process group: see "Own process groups" above */
	return start_process(exe, argv, spawn_env, fds, nfds, 1, to_child, from_child, pid);
}

int spawn_fork_worker(int index, int board, int started_after_ms, int *to_child,
		      int *from_child, pid_t *pid)
{
	int to[2], from[2];
	pid_t p, make_pid = getpid();

	if (start_pipes(to, from) < 0)
		return -1;
	p = fork();
	if (p < 0) {
		spawn_close4(to, from);
		return -1;
	}
	if (p == 0) {
		/* make's handlers and blocked mask must not survive in a worker */
		struct sigaction sa;
		sigset_t none;

		memset(&sa, 0, sizeof sa);
		sa.sa_handler = SIG_DFL;
		for (int s = 1; s < NSIG; s++)
			sigaction(s, &sa, NULL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		setpgid(0, 0); /* see "Own process groups" above */
		/* environ may be half-changed by make's thread in this copy */
		if (spawn_env)
			environ = spawn_env;
		/*
		 * As the exec'd worker does in its main(): EOF on the pipe from
		 * make is not enough, anything holding a copy of its write end
		 * (a child make forked before closing it) would keep this
		 * worker and its job alive after make is gone.
		 */
		if (sig_die_with_parent(make_pid, SIGTERM) < 0)
			_exit(126);
		if (dup2(to[0], 0) < 0 || dup2(from[1], 1) < 0 ||
		    (board >= 0 && dup2(board, 3) < 0))
			_exit(126);
		/* make's descriptors (a jobserver write end!) must not live on here */
		int keep = board >= 0 ? 4 : 3;
		if (close_range((unsigned)keep, ~0U, 0) < 0)
			for (int fd = keep; fd < 65536; fd++)
				close(fd);
		_exit(serve_main(0, 1, index, started_after_ms, board >= 0 ? 3 : -1));
	}
	close(to[0]);
	close(from[1]);
	*to_child = to[1];
	*from_child = from[0];
	*pid = p;
	return 0;
}

static int spawn_executable(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

/*
 * One of the plugin's helper files: $ENVVAR if set, else the build tree
 * next to the plugin (build_rel), an install tree relocated as a whole
 * (../libexec/asynccompile/NAME), then the configured LIBEXECDIR.
 */
static char *spawn_find_file(const char *envvar, const char *build_rel, const char *name,
			     const char *what, struct buf *err)
{
	const char *env = getenv(envvar);
	Dl_info info;
	struct buf b = BUF_INIT;

	if (env && *env) {
		if (spawn_executable(env))
			return strdup(env);
		err_fail(err, "%s=%s is not an executable file", envvar, env);
		return NULL;
	}
	if (dladdr((void *)spawn_find_file, &info) && info.dli_fname) {
		const char *slash = strrchr(info.dli_fname, '/');
		if (slash)
			buf_add(&b, info.dli_fname, (size_t)(slash - info.dli_fname));
		else
			buf_addstr(&b, ".");
		size_t dir = b.len;
		buf_addf(&b, "/%s", build_rel);
		if (spawn_executable((char *)b.data))
			return buf_detach(&b, NULL);
		b.len = dir;
		buf_addf(&b, "/../libexec/asynccompile/%s", name);
		if (spawn_executable((char *)b.data))
			return buf_detach(&b, NULL);
		buf_release(&b);
	}
	buf_addf(&b, "%s/%s", ASYNC_LIBEXECDIR, name);
	if (spawn_executable((char *)b.data))
		return buf_detach(&b, NULL);
	buf_release(&b);
	err_fail(err, "cannot find the %s (looked next to the plugin and in %s; set %s)", what,
		 ASYNC_LIBEXECDIR, envvar);
	return NULL;
}

char *spawn_find_worker(struct buf *err)
{
	return spawn_find_file("ASYNC_COMPILE_WORKER", "worker/asynccompile-worker",
			       "asynccompile-worker", "worker executable", err);
}

char *spawn_find_tracer(struct buf *err)
{
	char *p = spawn_find_file("ASYNC_COMPILE_TRACER", "trace/asynccompile-trace.so",
				  "asynccompile-trace.so", "tracer", err);
	char *abs = p ? realpath(p, NULL) : NULL;

	/* LD_PRELOAD wants an absolute path */
	free(p);
	return abs;
}
