/* Starting a worker process: see start.h. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include "pool/start.h"

extern char **environ;

int start_pipes(int to[2], int from[2])
{
	if (pipe2(to, O_CLOEXEC) < 0)
		return -1;
	if (pipe2(from, O_CLOEXEC) < 0) {
		int e = errno;

		close(to[0]);
		close(to[1]);
		errno = e;
		return -1;
	}
	/* big results drain in fewer, larger writes (failure is harmless) */
	(void)fcntl(from[0], F_SETPIPE_SZ, 1 << 20);
	return 0;
}

static void start_close(const int *fd, int n)
{
	for (int i = 0; i < n; i++)
		close(fd[i]);
}

int start_worker(const char *exe, char *const argv[], char *const envp[], int board,
		 int own_group, int *to_child, int *from_child, pid_t *pid)
{
	return start_process(exe, argv, envp, &board, board >= 0, own_group, to_child,
			     from_child, pid);
}

int start_process(const char *exe, char *const argv[], char *const envp[], const int *fds,
		  int nfds, int own_group, int *to_child, int *from_child, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, all;
	int to[2], from[2], rc;
	short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
	int tmp[START_MAX_FDS], ntmp = 0;

	if (nfds > START_MAX_FDS) {
		errno = EINVAL;
		return -1;
	}
	while (ntmp < nfds && (tmp[ntmp] = fcntl(fds[ntmp], F_DUPFD_CLOEXEC, 3 + nfds)) >= 0)
		ntmp++;
	if (ntmp < nfds || start_pipes(to, from) < 0) {
		int e = errno;

		start_close(tmp, ntmp);
		errno = e;
		return -1;
	}
	sigemptyset(&none);
	sigfillset(&all);
	sigdelset(&all, SIGKILL);
	sigdelset(&all, SIGSTOP);
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	rc = posix_spawn_file_actions_adddup2(&fa, to[0], 0);
	if (!rc)
		rc = posix_spawn_file_actions_adddup2(&fa, from[1], 1);
	/* copies above 3 + nfds: no fds[j] is overwritten before it is moved */
	for (int i = 0; !rc && i < nfds; i++)
		rc = posix_spawn_file_actions_adddup2(&fa, tmp[i], 3 + i);
	/* nothing of the starter's (make's jobserver, other pipes) reaches it */
	if (!rc)
		rc = posix_spawn_file_actions_addclosefrom_np(&fa, 3 + nfds);
	if (!rc)
		rc = posix_spawnattr_setsigmask(&attr, &none);
	if (!rc)
		rc = posix_spawnattr_setsigdefault(&attr, &all);
	if (!rc && own_group) {
		rc = posix_spawnattr_setpgroup(&attr, 0);
		flags |= POSIX_SPAWN_SETPGROUP;
	}
	if (!rc)
		rc = posix_spawnattr_setflags(&attr, flags);
	if (!rc)
		rc = posix_spawn(pid, exe, &fa, &attr, argv, envp ? envp : environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	start_close(tmp, ntmp);
	close(to[0]);
	close(from[1]);
	if (rc) {
		close(to[1]);
		close(from[0]);
		errno = rc;
		return -1;
	}
	*to_child = to[1];
	*from_child = from[0];
	return 0;
}
