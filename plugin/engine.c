/*
 * The engine: the run queue, the I/O thread that drives the backend, and
 * make's waits.  The table of jobs is jobtab.c's, what lets a job run is
 * slots.c's.  See engine.h for the threads and the locking rule.
 *
 * Why this file is longer than the others: it is every place that takes
 * engine.lock.  Both sides of the lock (make's thread submitting and
 * waiting, the I/O thread dispatching and reporting) stay in one file so
 * that what the lock guards, and every wait on its condition variable, can
 * be checked in one read.  What needs no lock lives elsewhere.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "plugin/children.h"
#include "plugin/backend.h"
#include "plugin/collect.h"
#include "plugin/engine.h"
#include "plugin/fatal.h"
#include "plugin/fault.h"
#include "plugin/jobtab.h"
#include "plugin/log.h"
#include "plugin/reexec.h"
#include "plugin/slots.h"
#include "plugin/spawn.h"
#include "plugin/trace.h"

/* how often to look whether make started draining the jobserver */
#define DRAIN_CHECK_MS 200
/* how often to look whether make's last running child has ended */
#define CHILDREN_CHECK_MS 10
/*
 * A token a collector's stand-in gave back is left to make this long
 * (it is make's next target that waits for it), before the pool's queued
 * steps may compete for tokens again.
 */
#define SWAP_HOLD_MS 20

static struct engine {
	pthread_mutex_t lock;
	pthread_cond_t done;       /* make's wait set is done, or the pool stopped */
	pthread_t thread;
	int started, stopping;
	int wake[2];               /* self-pipe: make's thread -> I/O thread */
	int wake_sent;             /* a byte is in it the thread has not read */
	size_t wait_pending;       /* jobs in make's wait set not yet done */
	struct backend *backend;
	int64_t kill_grace_ms;
	int workers;               /* the pool's size now */
	int workers_max;           /* what it may grow to (config_workers_max) */
	uint64_t results;          /* jobs reported so far (a change means: schedule) */
	char *trace;               /* trace file, or NULL */
	int trace_warned;

	struct slots slots;
	int64_t token_wait_since;  /* the queue's head has waited for a token since */
	int64_t token_hold_until;  /* no token taken before then (SWAP_HOLD_MS) */
	struct jobtab tab;
	struct job *qhead, *qtail;
	struct job *discarded;     /* cancelled running jobs, linked by `next` */
	int64_t next_id;
	struct engine_stats st;
} E = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.done = PTHREAD_COND_INITIALIZER,
	.wake = { -1, -1 },
	.slots = SLOTS_INIT, /* make loads us while it reads a makefile */
};

struct job *engine_find(const char *name)
{
	struct job *j;

	pthread_mutex_lock(&E.lock);
	j = jobtab_find(&E.tab, name);
	pthread_mutex_unlock(&E.lock);
	return j;
}

/*
 * Lock held.  One byte wakes the thread however many jobs were queued
 * meanwhile: a burst of $(async-try) calls costs one wake-up, not one each.
 */
static void engine_wake(void)
{
	char c = 0;

	if (E.wake[1] >= 0 && !E.wake_sent) {
		E.wake_sent = 1;
		(void)!write(E.wake[1], &c, 1);
	}
}

/* Lock held.  make's thread sleeps until its whole wait set is done. */
static void engine_job_done(struct job *j)
{
	j->state = JOB_DONE;
	if (j->in_wait && !--E.wait_pending)
		pthread_cond_broadcast(&E.done);
}

/* Lock held.  Take j out of the run queue; 1 if it was there. */
static int engine_unqueue(struct job *j)
{
	struct job **pp = &E.qhead, *prev = NULL;

	while (*pp && *pp != j) {
		prev = *pp;
		pp = &(*pp)->next;
	}
	if (!*pp)
		return 0;
	*pp = j->next;
	if (E.qtail == j)
		E.qtail = prev;
	j->next = NULL;
	return 1;
}

static void engine_to_head(struct job *j);

void engine_promote(struct job *j)
{
	pthread_mutex_lock(&E.lock);
	if (j->state == JOB_QUEUED)
		engine_to_head(j);
	pthread_mutex_unlock(&E.lock);
}

/* Lock held.  A job the engine owns again: gone from every list, freed. */
static void engine_forget(struct job *j)
{
	jobtab_drop_id(&E.tab, j->id);
	job_free(j);
}

/* Lock held.  engine_cancel() for a job already out of the name table. */
static void engine_cancel_locked(struct job *j)
{
	if (j->state == JOB_QUEUED && engine_unqueue(j)) {
		E.st.queued--;
		j->state = JOB_DONE;
	}
	if (j->state == JOB_DONE || !E.backend) {
		engine_forget(j);
	} else {
		j->discard = 1;
		j->next = E.discarded;
		E.discarded = j;
		E.backend->ops->cancel(E.backend, j->id);
		engine_wake();
	}
}

void engine_cancel(struct job *j)
{
	pthread_mutex_lock(&E.lock);
	jobtab_unlink(&E.tab, j); /* still found by id: a running job's RESULT */
	engine_cancel_locked(j);
	pthread_mutex_unlock(&E.lock);
}

void engine_collect_forget(struct job *j)
{
	engine_forget(j);
}

void engine_collect_abandon(struct job *j)
{
	/* the backend is gone (make exits): what it still ran is dead */
	if (j->state == JOB_RUNNING && !E.backend)
		slots_release(&E.slots, j);
	engine_cancel_locked(j);
}

void engine_submit(struct job *j)
{
	pthread_mutex_lock(&E.lock);
	j->id = ++E.next_id;
	j->queued_ns = proto_now_ns();
	jobtab_add(&E.tab, j);
	E.st.submitted++;
	if (j->dry || j->cached) {
		j->state = JOB_DONE;
	} else if (E.stopping) {
		/* the I/O thread stopped (make is exiting): nothing would run it */
		j->res.status = STATUS_NOT_RUN;
		buf_addstr(&j->res.err, "asynccompile: not run: make was exiting\n");
		j->state = JOB_DONE;
	} else {
		j->state = JOB_QUEUED;
		j->next = NULL;
		if (E.qtail)
			E.qtail->next = j;
		else
			E.qhead = j;
		E.qtail = j;
		E.st.queued++;
	}
	engine_wake();
	pthread_mutex_unlock(&E.lock);
}

static void engine_on_result(void *ctx, int64_t id, struct result_msg *res);

static void engine_dispatch(struct job *j, enum job_slot slot, unsigned char tok)
{
	int rc;

	E.qhead = j->next;
	if (!E.qhead)
		E.qtail = NULL;
	E.st.queued--;
	j->next = NULL;
	j->slot = slot;
	j->token = tok;
	j->state = JOB_RUNNING;
	j->dispatched_ns = proto_now_ns();
	/* may report the job finished at once (e.g. no pool could start) */
	rc = fault_hit("submit", j->name) ? (errno = ENOMEM, -1)
		: E.backend->ops->submit(E.backend, j->id, j->payload.data, j->payload.len,
					 j->retries);
	if (rc == 0)
		E.st.bytes_out += j->payload.len;
	buf_release(&j->payload);
	if (rc < 0) {
		/*
		 * Refused, not taken: a job left RUNNING here would hold its
		 * slot for ever and its wait would never return.
		 */
		struct result_msg r;

		memset(&r, 0, sizeof r);
		r.status = STATUS_NOT_RUN;
		r.worker = -1;
		buf_addf(&r.err, "asynccompile: the pool refused the job (%s); not run\n",
			 strerror(errno));
		engine_on_result(NULL, j->id, &r);
		result_msg_release(&r);
	}
}

/*
 * workers: auto grows the pool up to what make lets run at once: -jN
 * where no jobserver exists (the limit; `make -j` without a number sets
 * it to the CPU count, so the pool stays as it started), else as far as
 * tokens can be had.  An explicit `workers` has workers_max == workers.
 */
static int engine_can_grow(void)
{
	int cap = E.slots.js_active || E.slots.limit > E.workers_max ? E.workers_max
								     : E.slots.limit;

	return E.workers < cap;
}

/*
 * Lock held.  A job holds a slot and the pool has no worker for it:
 * one more worker, started as the job reaches the pool.  0 or -1.
 */
static int engine_grow(void)
{
	if (!engine_can_grow() || E.backend->ops->grow(E.backend, E.workers + 1) < 0)
		return -1;
	E.workers++;
	return 0;
}

static int engine_owns(void *ctx, pid_t pid)
{
	(void)ctx;
	return E.backend && E.backend->ops->owns(E.backend, pid);
}

/* Lock held.  A queued job goes to the head of the queue. */
static void engine_to_head(struct job *j)
{
	if (E.qhead != j && engine_unqueue(j)) {
		j->next = E.qhead;
		E.qhead = j;
		if (!E.qtail)
			E.qtail = j;
	}
}

/* Lock held.  The queue's head starts waiting for a token. */
static void engine_token_wait_begin(void)
{
	if (!E.qhead->token_wait_start)
		E.qhead->token_wait_start = proto_now_ns();
	if (!E.token_wait_since) {
		E.token_wait_since = proto_now_ns();
		E.st.token_waits++;
	}
}

/* Lock held.  The queue's head got its token. */
static void engine_token_wait_end(void)
{
	if (E.qhead->token_wait_start) {
		E.qhead->token_wait_ns += proto_now_ns() - E.qhead->token_wait_start;
		E.qhead->token_wait_start = 0;
	}
	if (E.token_wait_since) {
		E.st.token_wait_ns += (uint64_t)(proto_now_ns() - E.token_wait_since);
		E.token_wait_since = 0;
	}
}

/* Start every queued job a slot and a worker are free for.  Lock held. */
static void engine_schedule(void)
{
	/*
	 * Without a jobserver and with a limit the pool cannot exceed (nor
	 * grow to), the pool itself keeps the budget: hand it up to
	 * `workers` more jobs to queue, so a worker that finishes starts the
	 * next job at once instead of waiting for a round trip through this
	 * thread.  Under a jobserver a token is only taken for a job that
	 * starts now.
	 */
	int ahead = !E.slots.js_active && E.slots.reading && E.slots.limit >= E.workers &&
		!engine_can_grow() ? E.workers : 0;
	int room = E.backend->ops->free_slots(E.backend) + ahead;

	slots_round(&E.slots);
	if (fatal_dying())
		return;
	/* a connected collector stands in for a step that holds a token */
	for (struct job *j; (j = collect_swappable());) {
		if (j->slot == SLOT_TOKEN)
			E.token_hold_until = proto_now_ns() + SWAP_HOLD_MS * 1000000LL;
		slots_release(&E.slots, j);
		j->slot = SLOT_LENT;
		collect_lend(j);
	}
	/* no room: take a slot only if the pool can grow a worker for it */
	for (; E.qhead && (room > 0 || engine_can_grow()); room = room > 0 ? room - 1 : 0) {
		unsigned char tok = 0;
		struct job *j = collect_lendable();

		if (j) {
			/* a collector's slot, lent to the steps it waits for */
			if (room <= 0 && engine_grow() < 0)
				return;
			engine_to_head(j);
			collect_lend(j);
			engine_dispatch(E.qhead, SLOT_LENT, 0);
			continue;
		}
		j = slots_implicit_job(&E.slots, E.qhead, engine_owns, NULL);
		if (j) {
			if (room <= 0 && engine_grow() < 0)
				return;
			engine_to_head(j);
			E.slots.implicit_busy = 1;
			engine_dispatch(E.qhead, SLOT_IMPLICIT, 0);
			continue;
		}
		if (E.slots.js_active) {
			int r;

			if (E.token_hold_until > proto_now_ns())
				return; /* engine_main wakes up when the hold ends */
			r = slots_take_token(&E.slots, &tok);

			if (r == 1) {
				if (room <= 0 && engine_grow() < 0) {
					slots_give_back(&E.slots, tok);
					return;
				}
				engine_token_wait_end();
				engine_dispatch(E.qhead, SLOT_TOKEN, tok);
				continue;
			}
			if (r == 0 && E.slots.want_token)
				engine_token_wait_begin();
			return;
		}
		if (slots_take_limit(&E.slots, ahead)) {
			if (room <= 0 && engine_grow() < 0) {
				E.slots.limit_running--;
				return;
			}
			engine_dispatch(E.qhead, SLOT_LIMIT, 0);
			continue;
		}
		return;
	}
}

/*
 * The pool counts what its workers run at once and sends the count with
 * STARTED and RESULT: a job too short to be reported started (workers
 * report only jobs that outlive WORKER_STARTED_AFTER_MS) still counts.
 */
static void engine_saw_running(uint32_t n)
{
	if (n <= INT32_MAX && (int)n > E.st.max_running)
		E.st.max_running = (int)n;
}

/* The backend reports (backend.h).  I/O thread, lock held. */
static void engine_on_started(void *ctx, int64_t id, const struct started_msg *m)
{
	(void)ctx;
	struct job *j = jobtab_by_id(&E.tab, id);

	if (j && j->state == JOB_RUNNING && !j->started_ns) {
		j->started_ns = proto_now_ns();
		j->worker = m->worker;
		/* running = started by a worker, not merely handed to the pool */
		E.st.running++;
		engine_saw_running(m->running);
		fault_started(j->name);
	}
}

static void engine_on_result(void *ctx, int64_t id, struct result_msg *res)
{
	struct job *j = jobtab_by_id(&E.tab, id);
	int lent;

	(void)ctx;
	if (!j || j->state != JOB_RUNNING)
		return;
	lent = j->slot == SLOT_LENT;
	slots_release(&E.slots, j);
	engine_saw_running(res->running);
	if (j->discard) {
		struct job **pp = &E.discarded;

		while (*pp != j)
			pp = &(*pp)->next;
		*pp = j->next;
		if (j->started_ns)
			E.st.running--;
		engine_forget(j);
		return;
	}
	j->res.status = res->status;
	j->res.flags = res->flags;
	/* moved, not copied: a result may be max_output twice over */
	buf_release(&j->res.out);
	buf_release(&j->res.err);
	buf_release(&j->res.order);
	buf_release(&j->res.readset);
	j->res.out = res->out;
	j->res.err = res->err;
	j->res.order = res->order;
	j->res.readset = res->readset;
	res->out = (struct buf)BUF_INIT;
	res->err = (struct buf)BUF_INIT;
	res->order = (struct buf)BUF_INIT;
	res->readset = (struct buf)BUF_INIT;
	j->res.start_ns = res->start_ns;
	j->res.end_ns = res->end_ns;
	j->res.utime_us = res->utime_us;
	j->res.stime_us = res->stime_us;
	j->res.maxrss_kb = res->maxrss_kb;
	j->res.worker = res->worker;
	j->res.attempts = res->attempts;
	engine_job_done(j);
	if (j->started_ns)
		E.st.running--;
	E.st.completed++;
	if (res->status)
		E.st.failed++;
	if (res->flags & RES_TIMED_OUT)
		E.st.timed_out++;
	if (res->attempts > 1)
		E.st.retried += res->attempts - 1;
	E.st.bytes_in += j->res.out.len + j->res.err.len;
	E.results++;
	if (E.trace)
		trace_record(j);
	/* last: its collector may be sent it now, and it freed */
	collect_ended(j, lent);
}

/* Stop every job and give every token back.  Lock held, I/O thread. */
static void engine_stop_all(void)
{
	struct job *j;

	if (!E.backend)
		return;
	E.backend->ops->destroy(E.backend, E.kill_grace_ms);
	E.backend = NULL;
	/* queued ones too: with the thread gone nothing would ever start them */
	for (j = E.tab.head; j; j = j->next_all) {
		if (j->state == JOB_DONE)
			continue;
		slots_release(&E.slots, j);
		buf_addstr(&j->res.err, j->state == JOB_RUNNING
			   ? "asynccompile: killed: make was exiting\n"
			   : "asynccompile: not run: make was exiting\n");
		j->res.status = STATUS_NOT_RUN;
		engine_job_done(j);
	}
	while ((j = E.discarded)) {
		E.discarded = j->next;
		slots_release(&E.slots, j);
		engine_forget(j);
	}
	/* recipe waits' jobs: their queued ones are in the queue still */
	collect_stop();
	E.qhead = E.qtail = NULL;
	E.st.queued = 0;
	pthread_cond_broadcast(&E.done);
}

static void *engine_main(void *arg)
{
	size_t cap = 0;
	struct pollfd *fds = NULL;

	(void)arg;
	pthread_mutex_lock(&E.lock);
	while (!E.stopping) {
		size_t n = 0, nb, nc;
		int timeout = -1;
		uint64_t seen;

		engine_schedule();
		/* the pool may have grown */
		if (cap < 2 * (size_t)E.workers + 8 + collect_nfds()) {
			cap = 2 * (size_t)E.workers + 8 + collect_nfds();
			fds = realloc(fds, cap * sizeof *fds);
			if (!fds)
				abort();
		}
		fds[n++] = (struct pollfd){ .fd = E.wake[0], .events = POLLIN };
		if (slots_poll_fd(&E.slots) >= 0)
			fds[n++] = (struct pollfd){ .fd = slots_poll_fd(&E.slots), .events = POLLIN };
		nc = collect_pollfds(fds + n, cap - n);
		n += nc;
		seen = E.results;
		nb = E.backend->ops->pollfds(E.backend, fds + n, cap - n, &timeout);
		/* pollfds may itself report jobs (failed starts): schedule again */
		if (E.results != seen)
			timeout = 0;
		if (slots_watch_drain(&E.slots) && (timeout < 0 || timeout > DRAIN_CHECK_MS))
			timeout = DRAIN_CHECK_MS;
		if (E.token_hold_until) {
			int64_t left = (E.token_hold_until - proto_now_ns()) / 1000000 + 1;

			if (left <= 0)
				E.token_hold_until = 0;
			else if (timeout < 0 || timeout > left)
				timeout = (int)left;
		}
		if (E.slots.watch_children && (timeout < 0 || timeout > CHILDREN_CHECK_MS))
			timeout = CHILDREN_CHECK_MS;
		pthread_mutex_unlock(&E.lock);
		if (poll(fds, n + nb, timeout) < 0 && errno != EINTR) {
			/* EINVAL/ENOMEM: nothing better than to try again shortly */
			log_msg("poll: %s", strerror(errno));
			usleep(10000);
			pthread_mutex_lock(&E.lock);
			continue;
		}
		pthread_mutex_lock(&E.lock);
		if (fds[0].revents) {
			char tmp[256];
			while (read(E.wake[0], tmp, sizeof tmp) > 0)
				;
			E.wake_sent = 0;
		}
		/* make is dying of a signal (fatal.c): end the pool, restart nothing */
		if (fatal_dying()) {
			engine_stop_all();
			E.stopping = 1;
			break;
		}
		/* a readable jobserver is retried by engine_schedule() */
		E.backend->ops->events(E.backend, fds + n, nb);
		collect_events(fds + n - nc, nc);
		if (slots_make_draining(&E.slots) || fault_stop_now()) {
			log_msg("warning: make is exiting while jobs never waited for still run; killing them");
			engine_stop_all();
			E.stopping = 1;
		}
	}
	/*
	 * The pool goes down on this thread: workers it started die with it
	 * (parent-death signal), and with every signal blocked here a write
	 * to a dead worker is EPIPE, not a SIGPIPE that would kill make.
	 */
	engine_stop_all();
	pthread_mutex_unlock(&E.lock);
	free(fds);
	return NULL;
}

int engine_started(void)
{
	return E.started;
}

unsigned long engine_submitted(void)
{
	unsigned long n;

	pthread_mutex_lock(&E.lock);
	n = (unsigned long)E.st.submitted;
	pthread_mutex_unlock(&E.lock);
	return n;
}

void engine_trace_begin(const char *path)
{
	static int begun;
	const char *level = getenv("MAKELEVEL"), *restarts = getenv("MAKE_RESTARTS");
	struct buf why = BUF_INIT;

	if (!path || !*path || begun++ || (level && *level && strcmp(level, "0")) ||
	    (restarts && *restarts))
		return;
	if (trace_begin(path, &why) < 0 && !E.trace_warned++)
		log_msg("warning: cannot write the trace file %s: %s", path, (char *)why.data);
	buf_release(&why);
}

static const struct backend_report engine_report = {
	engine_on_started, engine_on_result, NULL,
};

int engine_start(const struct config *cfg, struct buf *err)
{
	sigset_t all, old;
	char *exe = NULL;
	int workers = config_workers(cfg), rc;

	if (E.started)
		return 0;
	E.stopping = 0;
	fault_init();
	/* what a pool needs and a make that queues nothing does not pay for */
	fatal_init();
	reexec_arm();
	if (spawn_snapshot_env() < 0) {
		buf_addstr(err, "out of memory copying the environment");
		return -1;
	}
	if (cfg->start_method != START_FORK) {
		exe = spawn_find_worker(err);
		if (!exe)
			return -1;
	}
	if (cfg->start_method == START_SUBPROCESS)
		E.backend = backend_sub_new(exe, workers, &engine_report, err);
	else
		E.backend = backend_pool_new(exe, workers, cfg->start_method == START_FORK,
					     &engine_report, err);
	free(exe);
	if (!E.backend)
		return -1;
	if (pipe2(E.wake, O_CLOEXEC | O_NONBLOCK) < 0) {
		buf_addf(err, "pipe: %s", strerror(errno));
		E.backend->ops->destroy(E.backend, 0);
		E.backend = NULL;
		return -1;
	}
	E.kill_grace_ms = cfg->kill_grace_ms;
	E.workers = workers;
	E.workers_max = config_workers_max(cfg);
	E.trace = cfg->trace && *cfg->trace ? strdup(cfg->trace) : NULL;
	engine_trace_begin(E.trace);
	reexec_jobserver(&E.slots.js);
	/*
	 * On make's thread, before the I/O thread exists: spawning reads
	 * environ, which make's thread may change at any time once it runs
	 * on (make-suite's options/print-directory got EFAULT from
	 * posix_spawn when this ran on the I/O thread).
	 */
	if (cfg->warm && E.backend->ops->warm(E.backend) < 0)
		log_msg("could not start the worker pool early; will retry at the first job");
	/* make's signal handlers must run on make's thread only */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&E.thread, NULL, engine_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		buf_addf(err, "cannot start the I/O thread: %s", strerror(rc));
		E.backend->ops->destroy(E.backend, 0);
		E.backend = NULL;
		close(E.wake[0]);
		close(E.wake[1]);
		E.wake[0] = E.wake[1] = -1;
		free(E.trace);
		E.trace = NULL;
		return -1;
	}
	fatal_set_wake(E.wake[1]);
	E.started = 1;
	return 0;
}

void engine_makefiles_read(void)
{
	pthread_mutex_lock(&E.lock);
	E.slots.reading = 0;
	pthread_mutex_unlock(&E.lock);
}

int engine_set_slots(const struct js_auth *a, int limit, struct buf *err)
{
	int ret, changed;

	pthread_mutex_lock(&E.lock);
	ret = slots_set(&E.slots, a, limit, err, &changed);
	/* nothing changed: the submission that follows wakes the thread */
	if (changed)
		engine_wake();
	pthread_mutex_unlock(&E.lock);
	return ret;
}

/* done/running/queued over the jobs being waited for, on one line */
static void engine_progress(struct job **jobs, size_t n, int *drawn)
{
	size_t done = 0, running = 0;
	char line[160];
	int len;

	/*
	 * The line is redrawn in place ("\r", erase to the end): a recipe of
	 * make's that ran during this wait may have printed half a line,
	 * which that would wipe.  Blocked in our wait, make starts no new
	 * child: so the first time the line is due decides for the whole
	 * wait (*drawn: 0 undecided, 1 drawn, -1 never).
	 */
	if (*drawn < 0)
		return;
	if (!*drawn && children_running(engine_owns, NULL)) {
		*drawn = -1;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		done += jobs[i]->state == JOB_DONE;
		running += jobs[i]->state == JOB_RUNNING;
	}
	len = snprintf(line, sizeof line, "\r\033[Kasynccompile: %zu/%zu done, %zu running, %zu queued",
		       done, n, running, n - done - running);
	(void)!write(2, line, (size_t)len);
	*drawn = 1;
}

void engine_wait(struct job ***jobs, size_t *n, int progress)
{
	size_t i;
	int drawn = 0;
	int64_t since = proto_now_ns();

	pthread_mutex_lock(&E.lock);
	if (*n == 0) {
		size_t cnt = jobtab_count(&E.tab);

		*jobs = calloc(cnt ? cnt : 1, sizeof **jobs);
		if (!*jobs)
			abort();
		for (struct job *j = E.tab.head; j; j = j->next_all)
			if (!job_internal(j))
				(*jobs)[(*n)++] = j;
	}
	E.wait_pending = 0;
	E.slots.wait_seq++;
	for (i = 0; i < *n; i++) {
		(*jobs)[i]->in_wait = 1;
		E.wait_pending += (*jobs)[i]->state != JOB_DONE;
	}
	/* queued jobs of the set may now take the implicit slot */
	if (E.wait_pending)
		engine_wake();
	for (i = 0; i < *n; i++) {
		while ((*jobs)[i]->state != JOB_DONE) {
			struct timespec ts;

			if (!progress) {
				pthread_cond_wait(&E.done, &E.lock);
				continue;
			}
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 250 * 1000000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&E.done, &E.lock, &ts);
			if ((*jobs)[i]->state != JOB_DONE && proto_now_ns() - since > 500 * 1000000LL)
				engine_progress(*jobs, *n, &drawn);
		}
	}
	for (i = 0; i < *n; i++) {
		jobtab_unlink(&E.tab, (*jobs)[i]);
		jobtab_drop_id(&E.tab, (*jobs)[i]->id);
	}
	pthread_mutex_unlock(&E.lock);
	if (drawn > 0)
		(void)!write(2, "\r\033[K", 4);
}

void engine_pending(struct job ***jobs, size_t *n)
{
	pthread_mutex_lock(&E.lock);
	*jobs = calloc(jobtab_count(&E.tab) + 1, sizeof **jobs);
	if (!*jobs)
		abort();
	*n = 0;
	for (struct job *j = E.tab.head; j; j = j->next_all)
		if (!job_internal(j))
			(*jobs)[(*n)++] = j;
	pthread_mutex_unlock(&E.lock);
}

int engine_collect(struct job **jobs, size_t n, int64_t *id,
		   char cookie[COLLECT_COOKIE_HEX + 1], struct buf *err)
{
	pthread_mutex_lock(&E.lock);
	if (collect_open(err) < 0) {
		pthread_mutex_unlock(&E.lock);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		jobtab_unlink(&E.tab, jobs[i]); /* still found by id for its RESULT */
	*id = collect_add(jobs, n, cookie);
	/* the I/O thread polls the socket from its next round */
	engine_wake();
	pthread_mutex_unlock(&E.lock);
	return 0;
}

void engine_write_trace(void)
{
	struct buf why = BUF_INIT;

	if (E.trace && trace_write(E.trace, &why) < 0 && !E.trace_warned++)
		log_msg("warning: cannot write the trace file %s: %s", E.trace, (char *)why.data);
	buf_release(&why);
}

void engine_get_stats(struct engine_stats *st)
{
	pthread_mutex_lock(&E.lock);
	*st = E.st;
	st->limit = E.slots.limit;
	st->workers = E.started ? E.workers : 0;
	st->mode = slots_mode(&E.slots);
	pthread_mutex_unlock(&E.lock);
}

void engine_shutdown(void)
{
	struct job *j;

	if (!E.started)
		return;
	pthread_mutex_lock(&E.lock);
	for (j = E.tab.head; j; j = j->next_all) {
		if (job_internal(j))
			continue;
		if (j->state != JOB_DONE)
			log_msg("warning: job '%s' was never waited for; killed", j->name);
		else if (j->kind == JOB_COMPILE && j->res.status)
			log_msg("warning: build step '%s' failed (status %d) but was never waited for",
				   j->name, j->res.status);
	}
	E.stopping = 1;
	engine_wake();
	pthread_mutex_unlock(&E.lock);
	/* the thread kills the jobs and gives their tokens back */
	pthread_join(E.thread, NULL);
	slots_close(&E.slots);
	engine_write_trace();
	trace_reset();
	free(E.trace);
	E.trace = NULL;
	fatal_set_wake(-1);
	close(E.wake[0]);
	close(E.wake[1]);
	E.wake[0] = E.wake[1] = -1;
	E.wake_sent = 0;
	E.started = 0;
}
