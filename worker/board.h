/*
 * board.h - where a pool's workers publish the pid of the job each one
 * runs, without waking the pool.
 *
 * STARTED tells the pool a job's pid, but the pool must wake up to read
 * it, and for trivial jobs such wake-ups are a good part of the cost; so
 * workers send STARTED only once a job has run for a while.  A pool that
 * is not a child subreaper still needs the pid at once, to end the job of
 * a worker that dies: the worker writes it here, into a memfd of one
 * 4-byte slot per worker index (pwrite), and the pool reads a slot
 * (pread) only after that worker has died.
 *
 * A slot holds 0 while its worker runs no job.  The worker clears it
 * after killing what is left of the job's group and before reaping the
 * job, while the pid cannot have been reused; the pool clears it before
 * it (re)starts the worker.  Errors are ignored: a slot that cannot be
 * read or written reads as 0, and the pool then has no pid for that job,
 * as it would have none before STARTED.
 */
#ifndef ASYNC_BOARD_H
#define ASYNC_BOARD_H

#include <sys/types.h>

/* A close-on-exec memfd (fd > 2) of `slots` zeroed slots, or -1 with errno. */
int board_create(int slots);
void board_set(int fd, int slot, pid_t pid);
/* The pid in `slot`, or 0. */
pid_t board_get(int fd, int slot);

#endif
