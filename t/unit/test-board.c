/* Unit tests for lib/board.c: slots, and finding a job by its mark. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/board.h"
#include "tap.h"

struct kid {
	pid_t pid;
	int to, from; /* its stdin, its fd 3 */
};

/*
 * A shell with `entry` in its environment (exec'd, so /proc/PID/environ
 * shows it).  It says "ready", then answers "alive" to each line: a
 * killed one answers end-of-file instead, without any waiting on time.
 */
static struct kid child_with(const char *entry)
{
	int in[2], out[2];
	char c[6];
	struct kid k;

	/* close-on-exec: a later child must not hold this one's stdin open */
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0)
		abort();
	k.pid = fork();
	if (k.pid == 0) {
		char *argv[] = { "sh", "-c",
			"echo ready >&3; while read l; do echo alive >&3; done", NULL };
		char *envp[] = { "PATH=/usr/bin:/bin", (char *)entry, NULL };

		dup2(in[0], 0);
		dup2(out[1], 3);
		close(in[1]);
		close(out[0]);
		execve("/bin/sh", argv, envp);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	k.to = in[1];
	k.from = out[0];
	if (read(k.from, c, 6) != 6)
		abort();
	return k;
}

static int answers(struct kid *k)
{
	char c[6];

	return write(k->to, "\n", 1) == 1 && read(k->from, c, 6) == 6 && !memcmp(c, "alive\n", 6);
}

static void kid_end(struct kid *k)
{
	close(k->to); /* read gets end-of-file: the shell exits */
	close(k->from);
	waitpid(k->pid, NULL, 0);
}

static int killed_by(pid_t pid, int sig)
{
	int st;

	return waitpid(pid, &st, 0) == pid && WIFSIGNALED(st) && WTERMSIG(st) == sig;
}

int main(void)
{
	int fd = board_create(4);

	signal(SIGPIPE, SIG_IGN); /* a killed child's stdin: EPIPE, a failed test */
	char mine[64], other[64], longer[64];

	ok(fd > 2, "a board is a descriptor above 2");
	board_set(fd, 1, 4242);
	ok(board_get(fd, 1) == 4242 && board_get(fd, 0) == 0, "a slot holds its pid, the others 0");
	board_set(fd, 1, BOARD_STARTING);
	ok(board_get(fd, 1) == BOARD_STARTING, "BOARD_STARTING reads back as itself");
	board_set(fd, 1, -7);
	ok(board_get(fd, 1) == 0, "any other negative value reads as 0");
	close(fd);

	/* a worker pid no process can have: above Linux's PID_MAX_LIMIT */
	snprintf(mine, sizeof mine, "%s=9999999", BOARD_MARK);
	snprintf(other, sizeof other, "%s=999999", BOARD_MARK);
	snprintf(longer, sizeof longer, "%s=99999990", BOARD_MARK);
	struct kid a = child_with(mine), b = child_with(other), c = child_with(longer);

	board_kill_marked(9999999, SIGKILL);
	/* it no longer answers (end-of-file), then it is reaped: no hang */
	ok(!answers(&a) && killed_by(a.pid, SIGKILL), "the job with this worker's mark is killed");
	ok(answers(&b), "a job with a shorter worker pid is left alone");
	ok(answers(&c), "a job with a longer worker pid is left alone");
	kid_end(&a);
	kid_end(&b);
	kid_end(&c);
	return done_testing();
}
