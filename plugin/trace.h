/*
 * trace.h - a Chrome trace-event JSON timeline of the jobs (config
 * `trace: FILE`), openable in Perfetto or chrome://tracing.
 *
 * trace_record() copies what it needs from a finished job (engine lock
 * held, I/O thread); trace_write() writes every span recorded so far to the
 * file, replacing it (make's thread, at each async-wait and at exit).
 * Spans: one per job on the track of the worker that ran it ("ph":"X"),
 * with its queue wait and token wait in args, plus one span per job on a
 * "queue" track from queueing to dispatch.
 */
#ifndef ASYNC_TRACE_H
#define ASYNC_TRACE_H

#include <stdint.h>

struct job;

void trace_record(const struct job *j);
/* 0, or -1 with errno (the caller warns once). */
int trace_write(const char *path);
void trace_reset(void);

#endif
