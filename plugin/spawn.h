/*
 * spawn.h - how the plugin starts its worker processes (spawned through
 * pool/start.h, or forked from make's image) and finds the worker
 * executable and the tracer.
 */
#ifndef ASYNC_SPAWN_H
#define ASYNC_SPAWN_H

#include <sys/types.h>

#include "lib/buf.h"

/*
 * spawn.c: start the worker executable with a pipe pair on its fd 0/1 and,
 * unless `board` is -1, that descriptor (board.h) on its fd 3.
 */
int spawn_worker(const char *exe, char *const argv[], int board, int *to_child,
		 int *from_child, pid_t *pid);
/* The same with nfds descriptors fds[] on its fds 3, 4, ... (pool/start.h). */
int spawn_process(const char *exe, char *const argv[], const int *fds, int nfds,
		  int *to_child, int *from_child, pid_t *pid);
/*
 * Copy environ for every worker started from now on, on make's thread
 * (engine_start): workers are started from the I/O thread too, which must
 * never read the environ make's thread changes.  Until the first call
 * workers get environ itself.  0, or -1 when out of memory (the previous
 * copy stays).
 */
int spawn_snapshot_env(void);
/* Path of the worker executable (env, next to the .so, libexec); malloc'd. */
char *spawn_find_worker(struct buf *err);
/*
 * Absolute path of the tracer (lib/tracelog.h), found the same way
 * (ASYNC_COMPILE_TRACER, trace/ next to the .so, libexec); malloc'd, or
 * NULL with the reason in err.
 */
char *spawn_find_tracer(struct buf *err);
/*
 * Fork a worker from this process image, running serve_main() with
 * started_after_ms; the board as above.
 */
int spawn_fork_worker(int index, int board, int started_after_ms, int *to_child,
		      int *from_child, pid_t *pid);

#endif
