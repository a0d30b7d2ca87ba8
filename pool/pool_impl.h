/*
 * pool_impl.h - the pool's insides, shared by pool.c (the API of pool.h),
 * pool_workers.c (the workers and their frames) and pool_jobs.c (the job
 * table and the queue).  Nothing outside those three files includes it.
 */
#ifndef ASYNC_POOL_IMPL_H
#define ASYNC_POOL_IMPL_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "pool/pool.h"
#include "lib/proto.h"
#include "lib/run.h"

/* Bytes read from one worker per wake-up, so one big result cannot starve the rest. */
#define POOL_READ_BUDGET ((size_t)1 << 20)

struct pjob {
	int64_t id;
	unsigned char *payload; /* the encoded JOB: lent, or the pool's (given) */
	size_t len;
	int given;           /* POOL_GIVE: freed with the job */
	uint32_t retries;    /* from the JOB's head */
	int64_t timeout_ms;  /* from the JOB's head */
	uint32_t attempts; /* runs handed to a worker so far */
	uint32_t running;  /* busy workers when it was last handed to one, itself included */
	int64_t dispatched_ms; /* when it was last handed to a worker (pool_now_ms) */
	int cancelled;
	struct pjob *next;  /* queue order */
	struct pjob *hnext; /* hash chain */
};

enum wstate { W_DOWN, W_HELLO, W_IDLE, W_BUSY };

struct pworker {
	int index;
	enum wstate state;
	int to_fd, from_fd;
	pid_t pid;
	struct frame_outq out;
	struct frame_decoder dec;
	struct pjob *job;
	pid_t job_pgid;     /* from STARTED; 0 until then */
	int64_t hello_deadline;
	int write_dead;     /* EPIPE seen; wait for the EOF that must follow */
	int started_before;
};

struct pool {
	int n;
	struct pworker *w;
	struct pool_ops ops;
	void *ctx;
	struct pjob *qhead, *qtail;
	int queued, busy;
	struct pjob **hash;
	size_t hsize, hcount;
	struct pool_stats st;
	int start_failures;
	int64_t next_start; /* ms: no start before this (back-off) */
	int board;          /* board.h; -1 not made yet, -2 cannot be made */
};

static inline int64_t pool_now_ms(void)
{
	return proto_now_ns() / 1000000;
}

/* ---- pool_workers.c ---- */

/* Write what w's pipe takes of its queue (a broken pipe drops it). */
void pool_flush(struct pworker *w);
/* Queue one frame for w and write what its pipe takes. */
void pool_send(struct pworker *w, int64_t id, const void *payload, size_t len);
/* Signal the process group of the job w runs, if the pool knows it. */
void pool_kill_job(const struct pool *p, const struct pworker *w, int sig);
/* Hand queued jobs to idle workers. */
void pool_dispatch(struct pool *p);
/* Timers, dispatch and worker starts: everything not driven by an fd. */
void pool_tick(struct pool *p);
/* Read what w sent (up to POOL_READ_BUDGET) and act on each frame. */
void pool_read(struct pool *p, struct pworker *w);

/* ---- pool_jobs.c ---- */

/* The job with this id, queued or running, or NULL. */
struct pjob *pool_find(const struct pool *p, int64_t id);
/* Index j by its id (the caller checks it is free): 0, or -1 out of memory. */
int pool_hash_add(struct pool *p, struct pjob *j);
void pool_hash_del(struct pool *p, struct pjob *j);
/* Unindex and free j (it must be in no queue and on no worker). */
void pool_job_free(struct pool *p, struct pjob *j);
/*
 * Report a job the pool ends itself (crash, cancel, no worker) as a
 * RESULT with `status`, `flags` and the note as its stderr, and free it.
 */
__attribute__((format(printf, 5, 6)))
void pool_report(struct pool *p, struct pjob *j, int status, uint32_t flags,
		 const char *fmt, ...);
/* The FIFO of jobs no worker has: at its back, or its front (re-runs). */
void pool_enqueue(struct pool *p, struct pjob *j, int front);
struct pjob *pool_dequeue(struct pool *p);
/* Take j out of the queue wherever it is: 0, or -1 if it is not queued. */
int pool_unqueue(struct pool *p, struct pjob *j);

#endif
