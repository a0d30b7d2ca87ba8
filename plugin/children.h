/*
 * children.h - is a child of this process's main thread still running?
 *
 * The plugin asks it about make: make counts its own running children
 * against its implicit jobserver slot, so the plugin may use that slot
 * only while make has none (see slots.h, slots_implicit_job).
 * A zombie does not count: it has finished, and make, blocked in one of
 * the plugin's functions, merely cannot reap it yet.
 */
#ifndef ASYNC_CHILDREN_H
#define ASYNC_CHILDREN_H

#include <sys/types.h>

/*
 * 1 if a child of the calling process's main thread (children of other
 * threads are not looked at) is alive and not a zombie, and `skip` (may
 * be NULL) does not claim it; else 0.  Read from
 * /proc/self/task/<pid>/children, or, on a kernel without that file, by
 * one pass over /proc/<pid>/stat (children of every thread then).
 */
int children_running(int (*skip)(void *ctx, pid_t pid), void *ctx);

#endif
