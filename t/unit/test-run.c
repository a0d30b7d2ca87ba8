/* Unit tests for lib/run.c helpers that need no job. */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/run.h"
#include "lib/sig.h"
#include "tap.h"

static int drained(const unsigned char *bytes, size_t n)
{
	int p[2], r;

	if (pipe2(p, O_NONBLOCK) < 0 || write(p[1], bytes, n) != (ssize_t)n)
		abort();
	r = sig_drain(p[0]);
	close(p[0]);
	close(p[1]);
	return r;
}

static int spare_one(void *ctx, pid_t pid)
{
	return pid == *(pid_t *)ctx;
}

int main(void)
{
	unsigned char a[] = { SIGINT, SIGCHLD };
	unsigned char b[] = { SIGCHLD, SIGCHLD, SIGTERM, SIGCHLD };
	unsigned char c[] = { SIGCHLD, SIGCHLD };

	ok(drained(a, 2) == SIGINT, "SIGINT then SIGCHLD: SIGINT is not lost");
	ok(drained(b, 4) == SIGTERM, "SIGTERM among SIGCHLDs is found");
	ok(drained(c, 2) == SIGCHLD, "only SIGCHLD: SIGCHLD");
	ok(drained(NULL, 0) == 0, "nothing pending: 0");

	/* a grandchild re-parented to us (subreaper) is killed and reaped */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	pid_t kid = fork();
	if (kid == 0) {
		if (fork() == 0) {
			pause();
			_exit(0);
		}
		_exit(0);
	}
	waitpid(kid, NULL, 0);
	sig_reap_strays(NULL, NULL);
	ok(waitpid(-1, NULL, WNOHANG) < 0, "no child left after sig_reap_strays");

	/* a spared child (the supervisor's live worker) is left running */
	pid_t keep = fork(), stray;
	if (keep == 0) {
		pause();
		_exit(0);
	}
	stray = fork();
	if (stray == 0) {
		pause();
		_exit(0);
	}
	sig_reap_strays(spare_one, &keep);
	ok(waitpid(stray, NULL, WNOHANG) < 0, "the stray was killed and reaped");
	ok(waitpid(keep, NULL, WNOHANG) == 0, "the spared child still runs");
	kill(keep, SIGKILL);
	waitpid(keep, NULL, 0);
	return done_testing();
}
