/*
 * sig.c - process-level helpers of the worker and the supervisor: signals
 * turned into bytes on a self-pipe, and reaping what a job left behind.
 * Declared in sig.h.
 */
#include "lib/sig.h"
#include "lib/buf.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- signals as bytes on a pipe ---- */

static volatile sig_atomic_t sig_wfd = -1;
static sigset_t sig_caught;

static void sig_handler(int sig)
{
	int saved = errno;
	unsigned char c = (unsigned char)sig;

	if (sig_wfd >= 0)
		(void)!write(sig_wfd, &c, 1);
	errno = saved;
}

int sig_open(const int *sigs)
{
	struct sigaction sa;
	sigset_t set;
	int p[2];

	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
		return -1;
	sig_wfd = p[1];
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	/*
	 * Pool processes run outside make's process group (plugin/spawn.c),
	 * a background group on make's terminal: a diagnostic written there
	 * under `stty tostop` must not stop them.
	 */
	sigaction(SIGTTOU, &sa, NULL);
	sa.sa_handler = sig_handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&set);
	for (; *sigs; sigs++) {
		sigaction(*sigs, &sa, NULL);
		sigaddset(&set, *sigs);
	}
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	sig_caught = set;
	/* An inherited SIG_IGN would make the kernel reap jobs behind our back. */
	if (!sigismember(&set, SIGCHLD)) {
		sa.sa_handler = SIG_DFL;
		sa.sa_flags = 0;
		sigaction(SIGCHLD, &sa, NULL);
	}
	return p[0];
}

int sig_drain(int fd)
{
	unsigned char c[64];
	int sig = 0;
	ssize_t n;

	/* a SIGINT followed by the SIGCHLD of a dying worker must not be lost */
	while ((n = read(fd, c, sizeof c)) > 0 || (n < 0 && errno == EINTR))
		for (ssize_t i = 0; i < n; i++)
			if (!sig || (sig == SIGCHLD && c[i] != SIGCHLD))
				sig = c[i];
	return sig;
}

void sig_reap_strays(int (*spare)(void *ctx, pid_t pid), void *ctx)
{
	char path[64];
	int rounds;
	siginfo_t si;
	struct buf list = BUF_INIT;

	/* the common case, no child at all, in one system call */
	if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 && errno == ECHILD)
		return;
	snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)getpid());
	/* bounded: a stray that keeps forking is killed with each generation */
	for (rounds = 0; rounds < 100; rounds++) {
		int fd = open(path, O_RDONLY | O_CLOEXEC), found = 0;

		if (fd < 0)
			break;
		/* to the end: a supervisor's orphans come after all its workers */
		buf_reset(&list);
		buf_read_fd(&list, fd, 0);
		close(fd);
		if (!list.len)
			break;
		for (char *p = (char *)list.data, *end; *p; p = end) {
			long pid = strtol(p, &end, 10);

			if (end == p)
				break;
			if (pid > 0 && (!spare || !spare(ctx, (pid_t)pid))) {
				/*
				 * Our child, so its id is not reused before we
				 * reap it: its group, if any, is its own.
				 */
				kill(-(pid_t)pid, SIGKILL);
				kill((pid_t)pid, SIGKILL);
				waitpid((pid_t)pid, NULL, 0);
				found = 1;
			}
		}
		if (!found)
			break;
	}
	buf_release(&list);
}

void sig_close(int fd)
{
	struct sigaction sa;
	int wfd = sig_wfd;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	for (int sig = 1; sig < NSIG; sig++)
		if (sigismember(&sig_caught, sig) == 1)
			sigaction(sig, &sa, NULL);
	sigemptyset(&sig_caught);
	sig_wfd = -1;
	if (wfd >= 0)
		close(wfd);
	if (fd >= 0)
		close(fd);
}

/* ---- parent death ---- */

int sig_die_with_parent(pid_t parent, int sig)
{
	if (prctl(PR_SET_PDEATHSIG, sig) < 0)
		return -1;
	if (getppid() != parent) {
		errno = ESRCH;
		return -1;
	}
	return 0;
}
