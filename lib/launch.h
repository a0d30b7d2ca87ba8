/*
 * launch.h - decide how a job's command line is run, and start it.
 *
 * How the command line is run: when the shell is /bin/sh with the flag
 * -c (or -ec), and the command has no shell metacharacter and does not
 * start with a shell keyword or builtin, it is split on blanks and run
 * directly, found through the job's PATH, as make does for recipe lines;
 * otherwise `shell shellflags... command` is run.  A direct command that
 * is not an executable format (ENOEXEC) is retried through the shell.
 *
 * The command starts in a session and process group of its own (pgid =
 * its pid; or in the caller's, see launch_start()), with an empty
 * signal mask and default dispositions for every signal, standard input
 * from a pipe (job->has_input) or /dev/null, standard output and error
 * on two pipes (in the caller's group, out of descriptors for the
 * second: the caller's stderr), in job->cwd, and with no other
 * descriptor (but the trace log at TL_FD, or below a lower
 * RLIMIT_NOFILE, when traced: tracelog.h; none fits: untraced).  Its
 * environment is the caller's `environ` with the job's "K=V" entries
 * replacing or adding variables (an entry without '=' removes K).
 *
 * A session, not just a process group: in make's session the job would
 * be a background group on make's terminal, and one touching /dev/tty
 * (an ssh prompt) would be stopped by SIGTTIN forever.  Without a
 * controlling terminal that open fails at once.
 *
 * Not thread-safe: the spawn attributes and file actions are kept from
 * one job to the next (building them costs a getrlimit() per action in
 * glibc, more than the rest of a trivial job's bookkeeping).
 */
#ifndef ASYNC_LAUNCH_H
#define ASYNC_LAUNCH_H

#include <sys/types.h>

#include "lib/proto.h"

struct launch {
	pid_t pid;    /* the command's process, session and group id */
	int in_fd;    /* write end of its stdin, or -1 without has_input */
	int out_fd;   /* read end of its stdout */
	int err_fd;   /* read end of its stderr; -1: it writes to the caller's (EMFILE) */
	/*
	 * The command's own ends of those two pipes, still open here.  A
	 * caller that keeps them until the command's process has exited is
	 * woken once by the exit, instead of by the end of the output and
	 * then again by the exit; it must close them then, or it never sees
	 * end-of-file.
	 */
	int out_w, err_w;
	/*
	 * A traced job (job_msg.tracer): the trace log, a memfd the caller
	 * reads once the command and what it left are reaped, and closes;
	 * start_real_ns is CLOCK_REALTIME just before the command started
	 * (readset_build()).  -1 when the job is not traced.
	 */
	int trace_fd;
	int64_t start_real_ns;
	uint64_t env_digest; /* launch_env_digest() of its environment */
	pid_t shown_ppid;    /* the parent its root process is shown (LAUNCH_PPID), or 0 */
};

/*
 * An entry "LAUNCH_PPID=PID" in a job's env names the pid its command's
 * root process is to see as its parent (getppid), the one $(shell)'s
 * child would see: make's, for a job run ahead of need in a worker.  It
 * is taken out of the command's environment and given to the tracer
 * (tracelog.h); an untraced command sees its real parent.
 */
#define LAUNCH_PPID "ASYNCCOMPILE_PPID"

/*
 * Start job's command.  callers_group: instead of a session of its own,
 * the command stays in the caller's session and process group, as make's
 * $(shell) runs one (a signal to make's group reaches it).  On success
 * returns 0 and fills *l; the caller owns the five descriptors (all close-on-exec; the three read and write
 * ends the caller uses are non-blocking) and must reap l->pid.  On
 * failure returns -1 with one reason appended to err (err.h: "cannot run
 * 'cc': No such file or directory"), and nothing is left open or running.
 */
int launch_start(const struct job_msg *job, int callers_group, struct launch *l,
		 struct buf *err);

/*
 * 1 if `command` may be exec'd directly instead of through the shell
 * (see above), else 0.
 */
int launch_is_simple(const char *shell, char *const *shellflags, const char *command);

/*
 * The caller's environ (nothing with `full`) with `extra` applied as a
 * job's env is (see above), the worker's mark included: a fresh pointer
 * array (free it; the strings are environ's and extra's).  NULL if out of
 * memory.
 */
char **launch_environ(char *const *extra, int full);
/*
 * What tells two environments apart for an answer: a digest of envp's
 * entries in any order, the plugin's own ASYNCCOMPILE_* left out.
 */
uint64_t launch_env_digest(char *const *envp);

/* Free what launch_start() keeps between jobs (for leak checkers). */
void launch_release(void);

#endif
