/*
 * collect.h - the collector (collect.c), a process of its own.
 */
#ifndef ASYNC_WORKER_COLLECT_H
#define ASYNC_WORKER_COLLECT_H

/*
 * collect_main: `asynccompile-worker --collect SOCKET WAIT:COOKIE`,
 * the line a recipe's $(async-wait) expands to.  Connects to the make at
 * SOCKET, writes the wait's steps' output to fds 1 and 2 in queue order
 * and returns the exit status: 0, the first failed step's status
 * (1..255), or COLLECT_EXIT_ERROR when the wait could not be collected
 * (refused, make gone, a malformed message), with one line on stderr.
 */
#define COLLECT_EXIT_ERROR 2
int collect_main(const char *socket_path, const char *wait_arg);

#endif
