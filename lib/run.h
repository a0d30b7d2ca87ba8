/*
 * run.h - run one job: spawn its command, feed its standard input,
 * capture its output, enforce its limits, reap it.  A worker runs every
 * job it is sent through here (worker/serve.c), and make's thread the
 * first, unspeculated command of an async-shell call, in make's own
 * group as $(shell) would (plugin/shell.c, callers_group).
 *
 * The command is started as launch.h describes: directly or through the
 * shell, in a session and process group of its own, with the job's
 * input, environment and directory, and no descriptor but 0, 1 and 2.
 *
 * Limits and the end of a job:
 *  - each of stdout and stderr keeps at most max_output bytes (0 means
 *    PROTO_MAX_OUTPUT); the rest is read and dropped, RES_TRUNCATED is set
 *    and a note line is appended to the captured stderr;
 *  - timeout_ms > 0: SIGTERM to the group when it expires, SIGKILL to the
 *    group kill_grace_ms later; the result is status 124, RES_TIMED_OUT,
 *    and a note;
 *  - when the command's own process exits, whatever is left of its group
 *    gets SIGKILL before it is reaped.  A compile step that leaves
 *    background processes behind would otherwise outlive the build (make's
 *    $(shell) would hang on them instead); killing them while the leader is
 *    still a zombie guarantees the group id has not been reused.  Output
 *    still arriving is read until EOF, for at most RUN_DRAIN_MS more (a
 *    process that left the group can keep a pipe open forever), and not
 *    at all once the job is abandoned;
 *  - a $(shell) drop-in (a traced job, or one in the caller's group) ends
 *    as $(shell) does instead: at the end of its stdout once its process
 *    has exited, however long what it left keeps stdout open (`(sleep 1;
 *    echo late) & echo early` gives both lines), and at once when they
 *    closed it, whoever still holds stderr; the timeout and a cancel still
 *    end the wait.  Then its group's leftovers get SIGKILL as above, but in
 *    the caller's group, which $(shell) leaves alone, they keep running,
 *    and what is in the stderr pipe then is all that is read of it;
 *  - a command that cannot be started gives status 127, RES_SPAWN_FAILED
 *    and a one-line reason in err; `started` is not called.
 *
 * A traced job (job->tracer): after the reap, its log becomes the
 * result's read set (readset.h).  While it runs, the runner also looks at
 * the log every RUN_PEEK_MS (10 ms) and at each wake-up, and has syscan.h
 * judge each program and library the command mapped: a first scan (cc1
 * about 50 ms) then overlaps the command instead of following it, and the
 * read set finds the verdict cached.  A scan holds this thread, so a
 * watched descriptor or the timeout may be served late by the scans of
 * one look (it ends once they have taken RUN_PEEK_MS; cc1's takes 50 ms,
 * the largest seen 110 ms), once per object and store.  The
 * objects of a run that is not pure are scanned too, which the settle
 * would have skipped.
 *
 * The status is the exit code, or 128+N after signal N (124 on timeout).
 * start_ns/end_ns (proto_now_ns) bracket spawn and reap; utime/stime/
 * maxrss come from wait4().  worker and attempts are left 0 for the
 * caller.
 *
 * The caller keeps control while a job runs through `watch`: the runner
 * polls the watched descriptors with the job's pipes and calls `watch`
 * when one is readable or hung up.  The callback must not block and says
 * whether the job goes on, is cancelled (ended like a timeout, reported
 * with RES_CANCELLED), or is abandoned (the caller is going away: the
 * group gets SIGTERM and, at most RUN_ABANDON_GRACE_MS later, SIGKILL;
 * watched descriptors are no longer polled).  Whatever happens, run_job()
 * returns only after the command's process is reaped.
 *
 * Not thread-safe (uses the process's environment and children, and
 * launch.h keeps its spawn attributes from one job to the next): one
 * thread of a process runs one job at a time, a worker's or make's
 * main thread (never the plugin's I/O thread).
 */
#ifndef ASYNC_RUN_H
#define ASYNC_RUN_H

#include <sys/types.h>

#include "lib/proto.h"

#define RUN_MAX_WATCH 4
#define RUN_ABANDON_GRACE_MS 1000
#define RUN_DRAIN_MS 1000

enum run_verdict {
	RUN_CONTINUE = 0,
	RUN_CANCEL = 1,
	RUN_ABANDON = 2,
};

struct run_hooks {
	int watch_fd[RUN_MAX_WATCH]; /* -1 = unused slot */
	/* Optional: set to the command's pid (its session) once it exists. */
	pid_t *pid_out;
	/* `fd` is readable or hung up; returns an enum run_verdict. */
	int (*watch)(void *ctx, int fd);
	/*
	 * Optional: the command's process (and group) `pid` exists and has
	 * run for started_after_ms (0: called at once).  A command that ends
	 * sooner never gets the call: its result says the rest.
	 */
	void (*started)(void *ctx, pid_t pid);
	int64_t started_after_ms;
	/*
	 * Optional: called with BOARD_STARTING just before the command is
	 * started, with its pid as soon as it exists, and with 0 when it is
	 * over (or could not start): after its group is killed and before it
	 * is reaped, while the pid cannot have been reused (see board.h), or
	 * when it turns out to have been reaped behind the runner's back.
	 */
	void (*job_pid)(void *ctx, pid_t pid);
	void *ctx;
	/*
	 * Non-zero: the command stays in the caller's session and process
	 * group, as make's $(shell) runs one, so that a signal to make's
	 * group reaches it; limits then signal its process alone, and what
	 * it leaves running is not killed (there is no group of its own).
	 */
	int callers_group;
};

enum run_outcome {
	RUN_DONE = 0,      /* *res is the job's result */
	RUN_ABANDONED = 1, /* *res is filled but nobody wants it */
};

/*
 * Run `job` to completion.  `hooks` may be NULL.  *res is overwritten
 * (not released first) and must be released with msg_result_release().
 */
int run_job(const struct job_msg *job, const struct run_hooks *hooks,
	    struct result_msg *res);

#endif
