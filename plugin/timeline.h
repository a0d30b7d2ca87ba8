/*
 * timeline.h - a Chrome trace-event JSON timeline of the jobs (config
 * `trace: FILE`), openable in Perfetto or chrome://tracing.
 *
 * timeline_record() copies what it needs from a finished job (engine lock
 * held, I/O thread); timeline_write() writes every span recorded so far into
 * the file (make's thread, at each async-wait and at exit).
 * Spans: one per job on the track of the worker that ran it ("ph":"X"),
 * with its queue wait and token wait in args, plus one span per job on a
 * "queue" track from queueing to dispatch.
 *
 * Every make of a recursive build writes into the same file, each on a
 * process track of its own (pid; times on one monotonic clock): a writer
 * locks the file's directory (flock), keeps the lines other processes
 * wrote, replaces its own and renames a new file into place, so the file
 * is always whole, valid JSON.  Each event line carries "ac": its
 * writer's pid and start time (a re-executed make keeps its pid).
 * timeline_begin() starts the file afresh: the top-level make does it when
 * its engine first starts, before any sub-make can run.
 * Both return 0, or -1 with what failed (which file, which step) in err
 * (lib/err.h).
 */
#ifndef ASYNC_TIMELINE_H
#define ASYNC_TIMELINE_H

#include <stdint.h>

struct buf;
struct job;

void timeline_record(const struct job *j);
int timeline_write(const char *path, struct buf *err);
int timeline_begin(const char *path, struct buf *err);
void timeline_reset(void);

#endif
