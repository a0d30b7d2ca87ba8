/*
 * supervise.h - the pool supervisor (supervise.c); worker.h says what
 * every role of the worker executable promises.
 */
#ifndef ASYNC_SUPERVISE_H
#define ASYNC_SUPERVISE_H

/*
 * supervise_main: own a pool of `nworkers` workers, each started as
 * `worker_exe --worker INDEX --started-after MS`, and multiplex jobs from
 * in_fd by id.  A WORKERS frame grows the pool (workers: auto).  It is a child subreaper, so the jobs of a worker that dies
 * come to it and are ended.  started_after_ms < 0 means the default
 * (WORKER_STARTED_AFTER_MS).
 */
int supervise_main(int in_fd, int out_fd, int nworkers, const char *worker_exe,
		   int started_after_ms);

#endif
