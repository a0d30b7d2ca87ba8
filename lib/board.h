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
 * (pread) only after that worker has died, or when it shuts down.
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

/*
 * A slot holds BOARD_STARTING from just before a job is started until its
 * pid is written: a job that kills its worker in between (the worker may
 * not get the CPU again before the job runs) leaves no pid behind.  The
 * pool then finds such a job, and whatever it started, by the mark every
 * job carries in its environment (BOARD_MARK=<its worker's pid>, added by
 * launch.c): board_kill_marked().
 */
#define BOARD_STARTING ((pid_t)-1)
#define BOARD_MARK "ASYNCCOMPILE_WORKER_PID"

/* A close-on-exec memfd (fd > 2) of `slots` zeroed slots, or -1 with errno. */
int board_create(int slots);
void board_set(int fd, int slot, pid_t pid);
/* The pid in `slot`, BOARD_STARTING, or 0. */
pid_t board_get(int fd, int slot);
/*
 * Send sig to every process, and the group it leads, whose environment
 * carries BOARD_MARK=worker: one pass over /proc, for a worker that died
 * with BOARD_STARTING in its slot.  Processes we may not read are skipped.
 */
void board_kill_marked(pid_t worker, int sig);

#endif
