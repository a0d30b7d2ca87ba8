/*
 * start.h - the one way a worker process is spawned: by the supervisor
 * (subprocess start method), by the plugin (spawn) and by the unit tests.
 * (The fork start method forks make instead: plugin/spawn.c.)
 *
 * start_pipes: two close-on-exec pipes, to[] towards the child and
 * from[] back from it; 0 or -1 with errno (nothing left open).
 *
 * start_worker: posix_spawn `exe` with `argv` and `envp` (environ when
 * NULL: a threaded caller passes a copy, see plugin/spawn.h), with
 * to[0] on its fd 0, from[1] on its fd 1, `board` (board.h) on its fd 3
 * unless it is -1, every other descriptor closed, an empty signal mask and
 * every signal at its default, and with `own_group` in a process group of
 * its own.  On success the caller owns *to_child (write to it) and
 * *from_child (read from it), and must reap *pid; returns 0.  On failure
 * returns -1 with errno and nothing is left open.
 *
 * start_process: the same with `nfds` (at most START_MAX_FDS)
 * descriptors fds[] on its fds 3, 4, ... (start_worker is it with the
 * board alone); for the guard (plugin/guard.h), which needs two.
 */
#define START_MAX_FDS 4
#ifndef ASYNC_START_H
#define ASYNC_START_H

#include <sys/types.h>

int start_pipes(int to[2], int from[2]);
int start_worker(const char *exe, char *const argv[], char *const envp[], int board,
		 int own_group, int *to_child, int *from_child, pid_t *pid);
int start_process(const char *exe, char *const argv[], char *const envp[], const int *fds,
		  int nfds, int own_group, int *to_child, int *from_child, pid_t *pid);

#endif
