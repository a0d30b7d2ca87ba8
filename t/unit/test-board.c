/* Unit tests for worker/board.c: slots, and finding a job by its mark. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../worker/board.h"
#include "tap.h"

/* A child that waits in pause() with `entry` in its environment (exec'd, so
 * that /proc/PID/environ shows it); reports readiness through a pipe. */
static pid_t child_with(const char *entry)
{
	int p[2];
	char c;
	pid_t pid;

	if (pipe(p) < 0)
		abort();
	pid = fork();
	if (pid == 0) {
		char *argv[] = { "sh", "-c", "echo x >&3; exec sleep 30", NULL };
		char *envp[] = { "PATH=/usr/bin:/bin", (char *)entry, NULL };

		close(p[0]);
		dup2(p[1], 3);
		execve("/bin/sh", argv, envp);
		_exit(127);
	}
	close(p[1]);
	/* the shell has exec'd (its environment is in /proc) once it writes */
	if (read(p[0], &c, 1) != 1)
		abort();
	close(p[0]);
	return pid;
}

static int killed_by(pid_t pid, int sig)
{
	int st;

	return waitpid(pid, &st, 0) == pid && WIFSIGNALED(st) && WTERMSIG(st) == sig;
}

int main(void)
{
	int fd = board_create(4);
	char mine[64], other[64], longer[64];

	ok(fd > 2, "a board is a descriptor above 2");
	board_set(fd, 1, 4242);
	ok(board_get(fd, 1) == 4242 && board_get(fd, 0) == 0, "a slot holds its pid, the others 0");
	board_set(fd, 1, BOARD_STARTING);
	ok(board_get(fd, 1) == BOARD_STARTING, "BOARD_STARTING reads back as itself");
	board_set(fd, 1, -7);
	ok(board_get(fd, 1) == 0, "any other negative value reads as 0");
	close(fd);

	/* a made-up worker pid: 999999 is above any default pid_max here */
	snprintf(mine, sizeof mine, "%s=999999", BOARD_MARK);
	snprintf(other, sizeof other, "%s=99999", BOARD_MARK);
	snprintf(longer, sizeof longer, "%s=9999990", BOARD_MARK);
	pid_t a = child_with(mine), b = child_with(other), c = child_with(longer);

	board_kill_marked(999999, SIGKILL);
	ok(killed_by(a, SIGKILL), "the job with this worker's mark is killed");
	ok(waitpid(b, NULL, WNOHANG) == 0, "a job with a shorter worker pid is left alone");
	ok(waitpid(c, NULL, WNOHANG) == 0, "a job with a longer worker pid is left alone");
	kill(b, SIGKILL);
	kill(c, SIGKILL);
	waitpid(b, NULL, 0);
	waitpid(c, NULL, 0);
	return done_testing();
}
