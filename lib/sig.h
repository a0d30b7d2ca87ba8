/*
 * sig.h - process-level helpers of the worker and the supervisor (and of
 * a worker forked from make): signals turned into bytes on a self-pipe,
 * reaping what a job left behind, and dying with the parent.
 */
#ifndef ASYNC_SIG_H
#define ASYNC_SIG_H

#include <sys/types.h>

/*
 * Self-pipe for signals, shared by the worker and the supervisor: catch
 * each signal in `sigs` (0-terminated), unblock them, and make every
 * delivery write its number as one byte to the returned read end
 * (non-blocking, close-on-exec).  SIGPIPE and SIGTTOU are ignored.  One per process.
 * Returns the read end, or -1 with errno.
 */
int sig_open(const int *sigs);
/*
 * Read every pending signal number; returns the first one that is not
 * SIGCHLD, else SIGCHLD if one came, else 0.
 */
int sig_drain(int fd);
/*
 * Kill and reap every child of this process that is left, and the process
 * group each leads, except children for which spare(ctx, pid) returns
 * non-zero (spare NULL: none is spared).  For a child subreaper: the
 * worker's strays are a job's processes that left its process group
 * (timeout(1), setsid) and were re-parented to it, reaped between jobs;
 * the supervisor's are the jobs of a worker that died, told apart from
 * its live workers by pid.  (Not by session: in a pid namespace entered
 * from outside, getsid() is 0 for us and our workers alike.)
 */
void sig_reap_strays(int (*spare)(void *ctx, pid_t pid), void *ctx);
/* Default dispositions back for the caught signals; both ends closed. */
void sig_close(int fd);
/*
 * Have `sig` sent to this process when its parent dies (PR_SET_PDEATHSIG),
 * then make sure `parent` (the parent's pid, as the parent saw it before
 * fork, or as getppid() gave it before any wait) still is the parent: a
 * parent that died before the prctl() would never send it.  0, or -1
 * with errno (ESRCH: the parent is gone already).
 */
int sig_die_with_parent(pid_t parent, int sig);

#endif
