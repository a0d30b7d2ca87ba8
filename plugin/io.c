/*
 * io.c - the engine's I/O thread (io.h): each round it starts what the
 * queue and the slots allow, polls the backend, the jobserver and the
 * collectors, and takes in what the backend reports.  It runs on the
 * plugin's I/O thread only, holding the_engine.lock except while in poll(); the
 * state it shares with make's thread is engine_impl.h's.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/pollset.h"
#include "plugin/collect.h"
#include "plugin/engine_impl.h"
#include "plugin/fatal.h"
#include "plugin/fault.h"
#include "plugin/io.h"
#include "plugin/log.h"
#include "plugin/timeline.h"

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

void io_init(void)
{
	fault_init();
}

static void io_on_result(void *ctx, int64_t id, struct result_msg *res);

static void io_dispatch(struct job *j, enum job_slot slot, unsigned char tok)
{
	size_t len = j->payload.len; /* a job reported at once has released it */
	int rc;

	the_engine.qhead = j->next;
	if (!the_engine.qhead)
		the_engine.qtail = NULL;
	the_engine.st.queued--;
	j->next = NULL;
	j->slot = slot;
	j->token = tok;
	j->state = JOB_RUNNING;
	j->dispatched_ns = proto_now_ns();
	/* may report the job finished at once (e.g. no pool could start) */
	rc = fault_hit("submit", j->name) ? (errno = ENOMEM, -1)
		: the_engine.backend->ops->submit(the_engine.backend, j);
	if (rc == 0)
		the_engine.st.bytes_out += len;
	if (rc < 0) {
		/*
		 * Refused, not taken: a job left RUNNING here would hold its
		 * slot for ever and its wait would never return.
		 */
		struct result_msg r;

		msg_result_fail(&r, STATUS_NOT_RUN, 0, "the pool refused the job (%s); not run",
				strerror(errno));
		io_on_result(NULL, j->id, &r);
		msg_result_release(&r);
	}
}

/*
 * workers: auto grows the pool up to what make lets run at once: -jN
 * where no jobserver exists (the limit; `make -j` without a number sets
 * it to the CPU count, so the pool stays as it started), else as far as
 * tokens can be had.  An explicit `workers` has workers_max == workers.
 */
static int io_can_grow(void)
{
	int cap = the_engine.slots.js_active || the_engine.slots.limit > the_engine.workers_max
			  ? the_engine.workers_max
			  : the_engine.slots.limit;

	return the_engine.workers < cap;
}

/*
 * Lock held.  A job holds a slot and the pool has no worker for it:
 * one more worker, started as the job reaches the pool.  0 or -1.
 */
static int io_grow(void)
{
	if (!io_can_grow() ||
	    the_engine.backend->ops->grow(the_engine.backend, the_engine.workers + 1) < 0)
		return -1;
	the_engine.workers++;
	return 0;
}

/* Lock held.  The queue's head starts waiting for a token. */
static void io_token_wait_begin(void)
{
	if (!the_engine.qhead->token_wait_start)
		the_engine.qhead->token_wait_start = proto_now_ns();
	if (!the_engine.token_wait_since) {
		the_engine.token_wait_since = proto_now_ns();
		the_engine.st.token_waits++;
	}
}

/* Lock held.  The queue's head got its token. */
static void io_token_wait_end(void)
{
	if (the_engine.qhead->token_wait_start) {
		the_engine.qhead->token_wait_ns += proto_now_ns() - the_engine.qhead->token_wait_start;
		the_engine.qhead->token_wait_start = 0;
	}
	if (the_engine.token_wait_since) {
		the_engine.st.token_wait_ns += (uint64_t)(proto_now_ns() - the_engine.token_wait_since);
		the_engine.token_wait_since = 0;
	}
}

/* Start every queued job a slot and a worker are free for.  Lock held. */
static void io_schedule(void)
{
	/*
	 * Without a jobserver and with a limit the pool cannot exceed (nor
	 * grow to), the pool itself keeps the budget: hand it up to
	 * `workers` more jobs to queue, so a worker that finishes starts the
	 * next job at once instead of waiting for a round trip through this
	 * thread.  Under a jobserver a token is only taken for a job that
	 * starts now.
	 */
	int ahead = !the_engine.slots.js_active && the_engine.slots.reading &&
		    the_engine.slots.limit >= the_engine.workers && !io_can_grow()
			    ? the_engine.workers
			    : 0;
	int room = the_engine.backend->ops->free_slots(the_engine.backend) + ahead;

	slots_round(&the_engine.slots);
	if (fatal_dying())
		return;
	/* a connected collector stands in for a step that holds a token */
	for (struct job *j; (j = collect_swappable());) {
		if (j->slot == SLOT_TOKEN)
			the_engine.token_hold_until = proto_now_ns() + SWAP_HOLD_MS * 1000000LL;
		slots_release(&the_engine.slots, j);
		j->slot = SLOT_LENT;
		collect_lend(j);
	}
	/* no room: take a slot only if the pool can grow a worker for it */
	for (; the_engine.qhead && (room > 0 || io_can_grow()); room = room > 0 ? room - 1 : 0) {
		unsigned char tok = 0;
		struct job *j = collect_lendable();

		if (j) {
			/* a collector's slot, lent to the steps it waits for */
			if (room <= 0 && io_grow() < 0)
				return;
			engine_to_head(j);
			collect_lend(j);
			io_dispatch(the_engine.qhead, SLOT_LENT, 0);
			continue;
		}
		j = slots_implicit_job(&the_engine.slots, the_engine.qhead, engine_owns, NULL);
		if (j) {
			if (room <= 0 && io_grow() < 0)
				return;
			engine_to_head(j);
			the_engine.slots.implicit_busy = 1;
			io_dispatch(the_engine.qhead, SLOT_IMPLICIT, 0);
			continue;
		}
		if (the_engine.slots.js_active) {
			int r;

			if (the_engine.token_hold_until > proto_now_ns())
				return; /* io_main wakes up when the hold ends */
			r = slots_take_token(&the_engine.slots, &tok);

			if (r == 1) {
				if (room <= 0 && io_grow() < 0) {
					slots_give_back(&the_engine.slots, tok);
					return;
				}
				io_token_wait_end();
				io_dispatch(the_engine.qhead, SLOT_TOKEN, tok);
				continue;
			}
			if (r == 0 && the_engine.slots.want_token)
				io_token_wait_begin();
			return;
		}
		if (slots_take_limit(&the_engine.slots, ahead)) {
			if (room <= 0 && io_grow() < 0) {
				the_engine.slots.limit_running--;
				return;
			}
			io_dispatch(the_engine.qhead, SLOT_LIMIT, 0);
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
static void io_saw_running(uint32_t n)
{
	if (n <= INT32_MAX && (int)n > the_engine.st.max_running)
		the_engine.st.max_running = (int)n;
}

/* The backend reports (backend.h).  I/O thread, lock held. */
static void io_on_started(void *ctx, int64_t id, const struct started_msg *m)
{
	(void)ctx;
	struct job *j = jobtab_by_id(&the_engine.tab, id);

	if (j && j->state == JOB_RUNNING && !j->started_ns) {
		j->started_ns = proto_now_ns();
		j->worker = m->worker;
		/* running = started by a worker, not merely handed to the pool */
		the_engine.st.running++;
		io_saw_running(m->running);
		fault_started(j->name);
		collect_started(j);
	}
}

/* The job the backend holds: one that is running (backend.h). */
static struct job *io_find(void *ctx, int64_t id)
{
	struct job *j = jobtab_by_id(&the_engine.tab, id);

	(void)ctx;
	return j && j->state == JOB_RUNNING ? j : NULL;
}

static void io_on_result(void *ctx, int64_t id, struct result_msg *res)
{
	struct job *j = io_find(ctx, id);
	int lent;

	if (!j)
		return;
	/* the backend is done with the bytes it borrowed */
	buf_release(&j->payload);
	lent = j->slot == SLOT_LENT;
	slots_release(&the_engine.slots, j);
	io_saw_running(res->running);
	if (j->discard) {
		struct job **pp = &the_engine.discarded;

		while (*pp != j)
			pp = &(*pp)->next;
		*pp = j->next;
		if (j->started_ns)
			the_engine.st.running--;
		engine_forget(j);
		return;
	}
	/* moved, not copied: a result may be max_output twice over */
	msg_result_release(&j->res);
	j->res = *res;
	*res = (struct result_msg){ 0 };
	engine_job_done(j);
	if (j->started_ns)
		the_engine.st.running--;
	the_engine.st.completed++;
	if (j->res.status)
		the_engine.st.failed++;
	if (j->res.flags & RES_TIMED_OUT)
		the_engine.st.timed_out++;
	if (j->res.attempts > 1)
		the_engine.st.retried += j->res.attempts - 1;
	the_engine.st.bytes_in += j->res.out.len + j->res.err.len;
	the_engine.results++;
	if (the_engine.trace)
		timeline_record(j);
	/* last: its collector may be sent it now, and it freed */
	collect_ended(j, lent);
}

/* Stop every job and give every token back.  Lock held, I/O thread. */
static void io_stop_all(void)
{
	struct job *j;

	if (!the_engine.backend)
		return;
	the_engine.backend->ops->destroy(the_engine.backend, the_engine.kill_grace_ms);
	the_engine.backend = NULL;
	/* queued ones too: with the thread gone nothing would ever start them */
	for (j = the_engine.tab.head; j; j = j->next_all) {
		if (j->state == JOB_DONE)
			continue;
		slots_release(&the_engine.slots, j);
		msg_result_release(&j->res);
		msg_result_fail(&j->res, STATUS_NOT_RUN, 0, "%s: make was exiting",
				j->state == JOB_RUNNING ? "killed" : "not run");
		engine_job_done(j);
	}
	while ((j = the_engine.discarded)) {
		the_engine.discarded = j->next;
		slots_release(&the_engine.slots, j);
		engine_forget(j);
	}
	/* recipe waits' jobs: their queued ones are in the queue still */
	collect_stop();
	the_engine.qhead = the_engine.qtail = NULL;
	the_engine.st.queued = 0;
	pthread_cond_broadcast(&the_engine.done);
}

void *io_main(void *arg)
{
	struct pollset ps = POLLSET_INIT;

	(void)arg;
	pthread_mutex_lock(&the_engine.lock);
	while (!the_engine.stopping) {
		size_t wake, at_c, nc, at_b, nb, room;
		int timeout = -1;
		uint64_t seen;

		io_schedule();
		pollset_begin(&ps);
		wake = pollset_add(&ps, the_engine.wake[0], POLLIN);
		if (slots_poll_fd(&the_engine.slots) >= 0)
			pollset_add(&ps, slots_poll_fd(&the_engine.slots), POLLIN);
		room = collect_nfds();
		nc = collect_pollfds(pollset_room(&ps, room), room);
		at_c = pollset_added(&ps, nc);
		seen = the_engine.results;
		/* the pool may have grown: each worker has two pipes */
		room = 2 * (size_t)the_engine.workers + 8;
		nb = the_engine.backend->ops->pollfds(the_engine.backend, pollset_room(&ps, room), room,
						      &timeout);
		at_b = pollset_added(&ps, nb);
		pollset_timeout(&ps, timeout);
		/* pollfds may itself report jobs (failed starts): schedule again */
		if (the_engine.results != seen)
			pollset_timeout(&ps, 0);
		if (slots_watch_drain(&the_engine.slots))
			pollset_timeout(&ps, DRAIN_CHECK_MS);
		if (the_engine.token_hold_until) {
			int64_t left = (the_engine.token_hold_until - proto_now_ns()) / 1000000 + 1;

			if (left <= 0)
				the_engine.token_hold_until = 0;
			else
				pollset_timeout(&ps, left);
		}
		if (the_engine.slots.watch_children)
			pollset_timeout(&ps, CHILDREN_CHECK_MS);
		pthread_mutex_unlock(&the_engine.lock);
		if (pollset_wait(&ps) < 0 && errno != EINTR) {
			/* EINVAL/ENOMEM: nothing better than to try again shortly */
			log_msg("poll:");
			usleep(10000);
			pthread_mutex_lock(&the_engine.lock);
			continue;
		}
		pthread_mutex_lock(&the_engine.lock);
		if (ps.fds[wake].revents) {
			char tmp[256];
			while (read(the_engine.wake[0], tmp, sizeof tmp) > 0)
				;
			the_engine.wake_sent = 0;
		}
		/* make is dying of a signal (fatal.c): end the pool, restart nothing */
		if (fatal_dying()) {
			io_stop_all();
			the_engine.stopping = 1;
			break;
		}
		/* a readable jobserver is retried by io_schedule() */
		the_engine.backend->ops->events(the_engine.backend, ps.fds + at_b, nb);
		collect_events(ps.fds + at_c, nc);
		if (slots_make_draining(&the_engine.slots) || fault_stop_now()) {
			log_msg("warning: make is exiting while jobs never waited for still run; killing them");
			io_stop_all();
			the_engine.stopping = 1;
		}
	}
	/*
	 * The pool goes down on this thread: workers it started die with it
	 * (parent-death signal), and with every signal blocked here a write
	 * to a dead worker is EPIPE, not a SIGPIPE that would kill make.
	 */
	io_stop_all();
	pthread_mutex_unlock(&the_engine.lock);
	pollset_release(&ps);
	return NULL;
}

const struct backend_report io_report = {
	io_on_started, io_on_result, io_find, NULL,
};
