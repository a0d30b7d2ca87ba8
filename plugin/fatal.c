/*
 * make's fatal signals.
 *
 * make catches SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGXCPU and SIGXFSZ.  Its
 * handler ends the recipes it runs and kills the process with the signal
 * again: no exit handler of ours runs (SIGQUIT aside, which exits).  The
 * jobserver tokens the plugin holds for its jobs died with it: a sub-make
 * stopped by `timeout 2 $(MAKE) ...` left the top-level make with
 * "INTERNAL: Exiting with 5 jobserver tokens available; should be 8!".
 *
 * So a handler of ours runs in front of make's, on make's thread (every
 * other thread blocks these signals): it marks the plugin dying, gives
 * back every token the record of reexec.c holds (open, write and close
 * are async-signal-safe), tells the token guard to go (guard.h: make's
 * handler may wait for its children), wakes the I/O thread, which from then on takes
 * no token, starts no job, restarts no pool and ends the pool it has, and
 * then calls make's handler, which goes on as before.
 *
 * Installed at load over make's handlers (never over SIG_IGN: make keeps
 * ignoring what it inherited ignored), put back at exit and at unload
 * (make 4.4 unloads a plugin it remakes).  Only this process acts: a
 * worker forked from make's image (fork start method) that a signal
 * reaches before it has reset its handlers just passes it on.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "plugin/fatal.h"
#include "plugin/guard.h"
#include "plugin/reexec.h"

static const int fatal_sigs[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGXCPU, SIGXFSZ };
#define FATAL_NSIGS (sizeof fatal_sigs / sizeof *fatal_sigs)

static struct sigaction fatal_old[FATAL_NSIGS];
static int fatal_ours[FATAL_NSIGS];
static pid_t fatal_pid;
/* read by the I/O thread: lock-free atomics, which a handler may use */
static int fatal_flag;
static int fatal_wake_fd = -1;
static pid_t fatal_child_pid;

static void fatal_handler(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	size_t k = 0;

	while (k < FATAL_NSIGS && fatal_sigs[k] != sig)
		k++;
	if (getpid() == fatal_pid) {
		int fd;

		/* before the record is emptied: see reexec.c */
		__atomic_store_n(&fatal_flag, 1, __ATOMIC_SEQ_CST);
		reexec_give_back_held();
		/* make's handler may wait for its children: the guard goes now */
		guard_fatal();
		fd = __atomic_load_n(&fatal_wake_fd, __ATOMIC_SEQ_CST);
		if (fd >= 0)
			(void)!write(fd, "", 1);
		/* a $(shell) child would have had the signal from make's group */
		pid_t child = __atomic_load_n(&fatal_child_pid, __ATOMIC_SEQ_CST);
		if (child > 0)
			kill(child, sig);
	}
	errno = saved;
	if (k == FATAL_NSIGS)
		return;
	if (fatal_old[k].sa_flags & SA_SIGINFO) {
		fatal_old[k].sa_sigaction(sig, si, uc);
	} else if (fatal_old[k].sa_handler == SIG_DFL) {
		struct sigaction dfl;

		/* blocked until we return, then fatal as it would have been */
		memset(&dfl, 0, sizeof dfl);
		dfl.sa_handler = SIG_DFL;
		sigaction(sig, &dfl, NULL);
		raise(sig);
	} else if (fatal_old[k].sa_handler != SIG_IGN) {
		fatal_old[k].sa_handler(sig);
	}
	errno = saved;
}

void fatal_child(pid_t pid)
{
	__atomic_store_n(&fatal_child_pid, pid > 0 ? pid : 0, __ATOMIC_SEQ_CST);
}

void fatal_init(void)
{
	if (fatal_pid)
		return;
	fatal_pid = getpid();
	for (size_t k = 0; k < FATAL_NSIGS; k++) {
		struct sigaction old, sa;

		if (sigaction(fatal_sigs[k], NULL, &old) < 0 ||
		    (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN))
			continue;
		fatal_old[k] = old;
		sa = old;
		sa.sa_sigaction = fatal_handler;
		sa.sa_flags = (old.sa_flags | SA_SIGINFO) & ~SA_RESETHAND;
		if (sigaction(fatal_sigs[k], &sa, NULL) == 0)
			fatal_ours[k] = 1;
	}
}

void fatal_release(void)
{
	for (size_t k = 0; k < FATAL_NSIGS; k++) {
		struct sigaction cur;

		/* unless make has changed it since (it resets it when dying) */
		if (fatal_ours[k] && sigaction(fatal_sigs[k], NULL, &cur) == 0 &&
		    (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == fatal_handler)
			sigaction(fatal_sigs[k], &fatal_old[k], NULL);
		fatal_ours[k] = 0;
	}
}

int fatal_dying(void)
{
	return __atomic_load_n(&fatal_flag, __ATOMIC_SEQ_CST);
}

void fatal_set_wake(int fd)
{
	__atomic_store_n(&fatal_wake_fd, fd, __ATOMIC_SEQ_CST);
}
