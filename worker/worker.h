/*
 * worker.h - entry points of the worker executable's two roles, callable
 * from its main() and (fork start method) from a child forked by the plugin.
 *
 * Both speak the framed protocol on in_fd/out_fd (blocking descriptors are
 * fine; they are made non-blocking as needed), start by answering the
 * peer's MSG_HELLO, and return an exit status for the process (0 after a
 * clean shutdown frame or EOF on in_fd, non-zero after a protocol error,
 * which is also reported to the peer as MSG_ERROR and to stderr).
 * They install their own signal handling (SIGTERM/SIGINT/SIGHUP and the
 * parent-death signal end every job's process group, then return) and
 * never return while a job they started is still alive.
 */
#ifndef ASYNC_WORKER_H
#define ASYNC_WORKER_H

/*
 * Run jobs one at a time (a pool worker).  `index` is reported in results.
 * STARTED is sent once a job has run for started_after_ms (0: as soon as
 * it is spawned); a shorter job is reported by its RESULT alone, which
 * saves its pool a wake-up.  Only a pool that can find a dead worker's
 * job without the pid from STARTED may ask for a delay: a child subreaper
 * (the supervisor), or one that passes a board (board.h; slot `index` is
 * this worker's), else board_fd is -1.
 */
#define WORKER_STARTED_AFTER_MS 20
int worker_main(int in_fd, int out_fd, int index, int started_after_ms, int board_fd);
/*
 * Supervisor: own a pool of `nworkers` workers, each started as
 * `worker_exe --worker INDEX --started-after MS`, and multiplex jobs from
 * in_fd by id.  A WORKERS frame grows the pool (workers: auto).  It is a child subreaper, so the jobs of a worker that dies
 * come to it and are ended.  started_after_ms < 0 means the default
 * (WORKER_STARTED_AFTER_MS).
 */
int supervise_main(int in_fd, int out_fd, int nworkers, const char *worker_exe,
		   int started_after_ms);

/*
 * Collector (collect.c): `asynccompile-worker --collect SOCKET WAIT:COOKIE`,
 * the line a recipe's $(async-wait) expands to.  Connects to the make at
 * SOCKET, writes the wait's steps' output to fds 1 and 2 in queue order
 * and returns the exit status: 0, the first failed step's status
 * (1..255), or COLLECT_EXIT_ERROR when the wait could not be collected
 * (refused, make gone, a malformed message), with one line on stderr.
 */
#define COLLECT_EXIT_ERROR 2
int collect_main(const char *socket_path, const char *wait_arg);

#endif
