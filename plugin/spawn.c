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

#include "../worker/run.h"
#include "../worker/worker.h"
#include "spawn.h"

extern char **environ;

#ifndef ASYNC_LIBEXECDIR
#define ASYNC_LIBEXECDIR "/usr/local/libexec/asynccompile"
#endif

/*
 * spawn_own_group(): every pool process (supervisor, worker) leads or
 * joins a process group other than make's.  Jobs run in sessions of
 * their own (worker/launch.h), so a signal to make's group (kill -9
 * -PGID, timeout(1), a CI cancelling the build, Ctrl-C) never reaches
 * them; had it reached their workers, a SIGKILL would have orphaned
 * them for good.  Outside the group, the pool outlives make by the
 * moment it takes to see make gone (the end of its pipes, the
 * parent-death signal) and ends every job the usual way: its process
 * group, then whatever left it (the workers are child subreapers).
 */
static int spawn_pipes(int to[2], int from[2])
{
	if (pipe2(to, O_CLOEXEC) < 0)
		return -1;
	if (pipe2(from, O_CLOEXEC) < 0) {
		close(to[0]);
		close(to[1]);
		return -1;
	}
	/* big results drain in fewer, larger writes (failure is harmless) */
	(void)fcntl(from[0], F_SETPIPE_SZ, 1 << 20);
	return 0;
}

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
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, all;
	int to[2], from[2], rc;

	if (spawn_pipes(to, from) < 0)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, to[0], 0);
	posix_spawn_file_actions_adddup2(&fa, from[1], 1);
	if (board >= 0)
		posix_spawn_file_actions_adddup2(&fa, board, 3);
	/* nothing of make's (jobserver, other pipes) reaches the pool */
	posix_spawn_file_actions_addclosefrom_np(&fa, board >= 0 ? 4 : 3);
	posix_spawnattr_init(&attr);
	sigemptyset(&none);
	sigfillset(&all);
	sigdelset(&all, SIGKILL);
	sigdelset(&all, SIGSTOP);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &all);
	/* out of make's process group: see spawn_own_group() */
	posix_spawnattr_setpgroup(&attr, 0);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
				 POSIX_SPAWN_SETPGROUP);
	rc = posix_spawn(pid, exe, &fa, &attr, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (rc) {
		spawn_close4(to, from);
		errno = rc;
		return -1;
	}
	close(to[0]);
	close(from[1]);
	*to_child = to[1];
	*from_child = from[0];
	return 0;
}

int spawn_fork_worker(int index, int board, int started_after_ms, int *to_child,
		      int *from_child, pid_t *pid)
{
	int to[2], from[2];
	pid_t p, make_pid = getpid();

	if (spawn_pipes(to, from) < 0)
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
		setpgid(0, 0); /* see spawn_own_group() */
		/*
		 * As the exec'd worker does in its main(): EOF on the pipe from
		 * make is not enough, anything holding a copy of its write end
		 * (a child make forked before closing it) would keep this
		 * worker and its job alive after make is gone.
		 */
		if (run_die_with_parent(make_pid, SIGTERM) < 0)
			_exit(126);
		if (dup2(to[0], 0) < 0 || dup2(from[1], 1) < 0 ||
		    (board >= 0 && dup2(board, 3) < 0))
			_exit(126);
		/* make's descriptors (a jobserver write end!) must not live on here */
		int keep = board >= 0 ? 4 : 3;
		if (close_range((unsigned)keep, ~0U, 0) < 0)
			for (int fd = keep; fd < 65536; fd++)
				close(fd);
		_exit(worker_main(0, 1, index, started_after_ms, board >= 0 ? 3 : -1));
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

char *spawn_find_worker(struct buf *err)
{
	const char *env = getenv("ASYNC_COMPILE_WORKER");
	Dl_info info;
	struct buf b = BUF_INIT;

	if (env && *env) {
		if (spawn_executable(env))
			return strdup(env);
		buf_addf(err, "ASYNC_COMPILE_WORKER=%s is not an executable file", env);
		return NULL;
	}
	if (dladdr((void *)spawn_find_worker, &info) && info.dli_fname) {
		const char *slash = strrchr(info.dli_fname, '/');
		if (slash)
			buf_add(&b, info.dli_fname, (size_t)(slash - info.dli_fname));
		else
			buf_addstr(&b, ".");
		size_t dir = b.len;
		/* the build tree, then an install tree relocated as a whole */
		buf_addstr(&b, "/worker/asynccompile-worker");
		if (spawn_executable((char *)b.data))
			return buf_detach(&b, NULL);
		b.len = dir;
		buf_addstr(&b, "/../libexec/asynccompile/asynccompile-worker");
		if (spawn_executable((char *)b.data))
			return buf_detach(&b, NULL);
		buf_release(&b);
	}
	if (spawn_executable(ASYNC_LIBEXECDIR "/asynccompile-worker"))
		return strdup(ASYNC_LIBEXECDIR "/asynccompile-worker");
	buf_addf(err, "cannot find the worker executable (looked next to the plugin and in %s; "
		 "set ASYNC_COMPILE_WORKER)", ASYNC_LIBEXECDIR);
	return NULL;
}
