/* The token guard's start: see guard.h (its code is worker/guard.c). */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/buf.h"
#include "plugin/fatal.h"
#include "plugin/guard.h"
#include "plugin/log.h"
#include "plugin/reexec.h"
#include "plugin/spawn.h"

/* how long a guard told to leave may take to end (it has nothing to do) */
#define GUARD_LEAVE_MS 5000

/* written on make's thread before the I/O thread exists, read there after */
static char *guard_exe;
/*
 * The I/O thread's: the guard's stdout, and what it covers; and its stdin,
 * which fatal.c's handler may close too: taken by an atomic exchange, so
 * it is closed once.
 */
static int guard_to = -1, guard_from = -1;
/* also read on make's thread (guard_owns): atomic, 0 while none runs */
static pid_t guard_pid;
static dev_t guard_dev;
static ino_t guard_ino;
static int guard_warned;

void guard_prepare(void)
{
	static int done;
	struct buf err = BUF_INIT;

	if (done++)
		return;
	guard_exe = spawn_find_worker(&err);
	buf_release(&err); /* the pool says so, if it needs the executable */
}

/*
 * The guard of another jobserver leaves.  No token is held then (slots.c
 * changes jobservers only so), but the record is filled again as soon
 * as we return: it must have ended first, or it would give those tokens
 * to the jobserver it covered.
 */
static void guard_leave(void)
{
	struct pollfd p = { .fd = guard_from, .events = POLLIN };
	int ended = 0;
	char c;

	reexec_guarded(0);
	guard_fatal();
	/* its stdout ends when it does: it writes nothing */
	while (!ended && poll(&p, 1, GUARD_LEAVE_MS) > 0)
		ended = read(guard_from, &c, 1) <= 0;
	if (!ended) {
		/* stopped, or worse: it must not take tokens it does not cover */
		kill(guard_pid, SIGKILL);
		log_msg("warning: the jobserver token guard %ld did not end; killed it",
			(long)guard_pid);
	}
	__atomic_store_n(&guard_pid, 0, __ATOMIC_SEQ_CST);
	close(guard_from);
	guard_from = -1;
}

void guard_cover(const struct jobserver *js)
{
	char pid[32];
	char *argv[] = { guard_exe, "--guard", pid, NULL };
	int fds[2] = { reexec_record_fd(), js_poll_fd(js) }, to;
	pid_t p;

	/* after a failed start, no other try (each token would pay for one) */
	if (!guard_exe || guard_warned || fds[0] < 0 || fds[1] < 0)
		return;
	if (guard_from >= 0) {
		if (guard_dev == js->dev && guard_ino == js->ino)
			return;
		guard_leave();
	}
	snprintf(pid, sizeof pid, "%ld", (long)getpid());
	if (spawn_process(guard_exe, argv, fds, 2, &to, &guard_from, &p) < 0) {
		guard_from = -1;
		if (!guard_warned++)
			log_msg("warning: cannot start the jobserver token guard %s "
				"(a SIGKILL would lose the tokens held):", guard_exe);
		return;
	}
	__atomic_store_n(&guard_pid, p, __ATOMIC_SEQ_CST);
	__atomic_store_n(&guard_to, to, __ATOMIC_SEQ_CST);
	guard_dev = js->dev;
	guard_ino = js->ino;
	reexec_guarded(1);
	/* the handler ran during the start: that guard goes too */
	if (fatal_dying())
		guard_fatal();
}

void guard_fatal(void)
{
	int fd = __atomic_exchange_n(&guard_to, -1, __ATOMIC_SEQ_CST);

	if (fd >= 0)
		close(fd);
}

int guard_owns(pid_t pid)
{
	return pid > 0 && pid == __atomic_load_n(&guard_pid, __ATOMIC_SEQ_CST);
}
