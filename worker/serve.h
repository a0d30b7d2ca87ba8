/*
 * serve.h - a pool worker (serve.c); worker.h says what every role of the
 * worker executable promises.
 */
#ifndef ASYNC_SERVE_H
#define ASYNC_SERVE_H

/*
 * serve_main: run jobs one at a time (a pool worker).  `index` is
 * reported in results.  STARTED is sent once a job has run for started_after_ms (0: as soon as
 * it is spawned); a shorter job is reported by its RESULT alone, which
 * saves its pool a wake-up.  Only a pool that can find a dead worker's
 * job without the pid from STARTED may ask for a delay: a child subreaper
 * (the supervisor), or one that passes a board (board.h; slot `index` is
 * this worker's), else board_fd is -1.
 */
int serve_main(int in_fd, int out_fd, int index, int started_after_ms, int board_fd);

#endif
