/*
 * pstate.h - the process state a command starts with and can read
 * without a file: part of what an answer depends on, as its environment
 * is (asynccompile(7), "The answer model").
 *
 * A child inherits it from the thread that starts it: the runner writes
 * the state it starts a traced command with into the command's log (a
 * VALUE "state=...", lib/tracelog.h), and whoever checks the answer for
 * reuse compares it with its own (readset_check(), in make's thread: the
 * state a call's command, or $(shell)'s, would start with).  A job run in
 * a pool worker is so compared with make's: a worker whose state is not
 * make's has its answers refused, not used.
 *
 * What is in it, and why (each a word "name:value", words split by one
 * space, in this order):
 *  - umask: every file the command creates, and `umask` itself;
 *  - uid, gid (real, effective, saved, file system), groups, and the
 *    capability sets: `id`, and every permission check (access(2), a
 *    failed open) whose outcome the file's identity alone does not fix;
 *  - no_new_privs, seccomp: what the command may run and call;
 *  - cpus (the affinity list): nproc, make -j$(nproc), OpenMP;
 *  - nice, the scheduling policy and priority, the I/O priority: nice,
 *    chrt, ionice print them;
 *  - personality: uname -m under linux32, the address-space layout;
 *  - every RLIMIT_*, soft and hard: ulimit, getconf ARG_MAX (a quarter of
 *    the stack limit), what a build may allocate or open.
 * Not in it: the signal mask and dispositions and the session (the
 * runner resets them for every command, launch.h), the parent-death
 * signal (not inherited), the timer slack, NUMA memory policy.
 *
 * The thread's own status (/proc/thread-self/status: affinity, nice and
 * credentials are per thread) is read for the first group; without /proc
 * there is no state to vouch for, and nothing is reused.
 */
#ifndef ASYNC_PSTATE_H
#define ASYNC_PSTATE_H

#include <stddef.h>

#include "lib/buf.h"

/* The name of its VALUE: "state=" and the words. */
#define PSTATE_VALUE "state"

/*
 * Append the calling thread's state (the words above, without
 * "state=").  0, or -1 when it cannot be read whole (what was appended
 * is then not a state any other can equal).
 */
int pstate_get(struct buf *out);

/*
 * From now on this process's state is read once, at the next
 * pstate_get(), and that reading is every later one's: for make, whose
 * state nothing changes while it runs (make sets no limit, umask,
 * priority or affinity of its own; a command cannot change its
 * parent's), and which reads it at every reuse of an answer (about 30
 * system calls' worth each).  The thread that calls pstate_get() first
 * must be the one commands are started from (make's).  A process forked
 * from this one reads its own.
 */
void pstate_hold(void);

/*
 * Name the first word that differs between a state then (a, n bytes) and
 * one now (b, m bytes), appended to why: "umask 0077, was 0022".
 */
void pstate_diff(const char *a, size_t n, const char *b, size_t m, struct buf *why);

#endif
