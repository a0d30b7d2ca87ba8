/*
 * The engine: the table of jobs not yet waited for, the run queue, slot
 * accounting (one implicit slot, jobserver tokens for the rest, or a plain
 * limit where no jobserver exists yet) and the I/O thread that drives the
 * backend.  See plugin.h for the locking rule.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "plugin.h"
#include "trace.h"

#define HASH_SIZE 4096
/* how often to look whether make started draining the jobserver */
#define DRAIN_CHECK_MS 200

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
	int workers;
	uint64_t results;          /* jobs reported so far (a change means: schedule) */
	char *trace;               /* trace file, or NULL */
	int trace_warned;

	struct jobserver js;
	int js_active;
	int limit;                 /* jobs at once without a jobserver */
	int implicit_busy;
	int limit_running;         /* SLOT_LIMIT jobs running */
	int want_token;            /* poll the jobserver for a token */
	int64_t token_wait_since;
	int js_warned;

	struct job *hash[HASH_SIZE];
	struct job **byid;
	size_t nbyid, capbyid;
	struct job *all_head, *all_tail;
	struct job *qhead, *qtail;
	int64_t next_id;
	struct engine_stats st;
} E = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.done = PTHREAD_COND_INITIALIZER,
	.wake = { -1, -1 },
	.js = { .rfd = -1, .wfd = -1, .make_wfd = -1 },
	.limit = 1,
};

void engine_log(const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;
	char tmp[1024];

	va_start(ap, fmt);
	vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	buf_addf(&b, "asynccompile: %s\n", tmp);
	(void)!write(2, b.data, b.len);
	buf_release(&b);
}

static unsigned engine_hash(const char *s)
{
	unsigned h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h % HASH_SIZE;
}

struct job *engine_find(const char *name)
{
	struct job *j;

	pthread_mutex_lock(&E.lock);
	for (j = E.hash[engine_hash(name)]; j; j = j->hnext)
		if (!strcmp(j->name, name))
			break;
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

static void engine_table_add(struct job *j)
{
	unsigned h = engine_hash(j->name);

	j->hnext = E.hash[h];
	E.hash[h] = j;
	j->prev_all = E.all_tail;
	j->next_all = NULL;
	if (E.all_tail)
		E.all_tail->next_all = j;
	else
		E.all_head = j;
	E.all_tail = j;
	if ((size_t)j->id >= E.capbyid) {
		size_t cap = E.capbyid ? E.capbyid * 2 : 1024;
		while (cap <= (size_t)j->id)
			cap *= 2;
		struct job **n = realloc(E.byid, cap * sizeof *n);
		if (!n)
			abort();
		memset(n + E.capbyid, 0, (cap - E.capbyid) * sizeof *n);
		E.byid = n;
		E.capbyid = cap;
	}
	E.byid[j->id] = j;
}

static void engine_table_remove(struct job *j)
{
	struct job **pp = &E.hash[engine_hash(j->name)];

	while (*pp && *pp != j)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = j->hnext;
	if (j->prev_all)
		j->prev_all->next_all = j->next_all;
	else
		E.all_head = j->next_all;
	if (j->next_all)
		j->next_all->prev_all = j->prev_all;
	else
		E.all_tail = j->prev_all;
	E.byid[j->id] = NULL;
}

void job_free(struct job *j)
{
	if (!j)
		return;
	free(j->name);
	free(j->command);
	buf_release(&j->payload);
	result_msg_release(&j->res);
	free(j);
}

void engine_submit(struct job *j)
{
	pthread_mutex_lock(&E.lock);
	j->id = ++E.next_id;
	j->queued_ns = proto_now_ns();
	engine_table_add(j);
	E.st.submitted++;
	if (j->dry) {
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

static void engine_dispatch(struct job *j, enum job_slot slot, unsigned char tok)
{
	E.qhead = j->next;
	if (!E.qhead)
		E.qtail = NULL;
	E.st.queued--;
	j->next = NULL;
	j->slot = slot;
	j->token = tok;
	j->state = JOB_RUNNING;
	j->dispatched_ns = proto_now_ns();
	E.st.bytes_out += j->payload.len;
	/* may report the job finished at once (e.g. no pool could start) */
	E.backend->ops->submit(E.backend, j->id, j->payload.data, j->payload.len, j->retries);
	buf_release(&j->payload);
}

/* A token taken from E.js goes back, unless fatal.c's handler did that. */
static void engine_give_back(unsigned char tok)
{
	if (!reexec_hold(tok, -1))
		js_forget(&E.js);
	else if (js_release(&E.js, tok) < 0)
		engine_log("could not give a jobserver token back: %s", strerror(errno));
}

/* Start every queued job a slot is free for.  Lock held. */
static void engine_schedule(void)
{
	/*
	 * Without a jobserver and with a limit the pool cannot exceed, the
	 * pool itself keeps the budget: hand it up to `workers` more jobs to
	 * queue, so a worker that finishes starts the next job at once
	 * instead of waiting for a round trip through this thread.  Under a
	 * jobserver a token is only taken for a job that starts now.
	 */
	int ahead = !E.js_active && E.limit >= E.workers ? E.workers : 0;
	int room = E.backend->ops->free_slots(E.backend) + ahead;

	E.want_token = 0;
	if (fatal_dying())
		return;
	for (; E.qhead && room > 0; room--) {
		unsigned char tok = 0;

		if (!E.implicit_busy) {
			E.implicit_busy = 1;
			engine_dispatch(E.qhead, SLOT_IMPLICIT, 0);
			continue;
		}
		if (E.js_active) {
			/*
			 * Jobs started before the jobserver existed hold no token
			 * but do use the budget: let them stand in for tokens.
			 */
			if (E.limit_running > 0)
				return;
			int r = js_try_acquire(&E.js, &tok);

			if (r == 1) {
				reexec_hold(tok, 1);
				/* the handler may have run between read() and record */
				if (fatal_dying()) {
					engine_give_back(tok);
					return;
				}
				if (E.qhead->token_wait_start) {
					E.qhead->token_wait_ns += proto_now_ns() - E.qhead->token_wait_start;
					E.qhead->token_wait_start = 0;
				}
				if (E.token_wait_since) {
					E.st.token_wait_ns += (uint64_t)(proto_now_ns() - E.token_wait_since);
					E.token_wait_since = 0;
				}
				engine_dispatch(E.qhead, SLOT_TOKEN, tok);
				continue;
			}
			if (r == 0) {
				if (!E.qhead->token_wait_start)
					E.qhead->token_wait_start = proto_now_ns();
				if (!E.token_wait_since) {
					E.token_wait_since = proto_now_ns();
					E.st.token_waits++;
				}
				E.want_token = 1;
				return;
			}
			if (!E.js_warned++)
				engine_log("jobserver unusable (%s); running one job at a time",
					   strerror(errno));
			if (!E.js.held)
				js_close(&E.js);
			E.js_active = 0;
			E.limit = 1;
			return;
		}
		if (ahead || E.limit_running + 1 < E.limit) {
			E.limit_running++;
			engine_dispatch(E.qhead, SLOT_LIMIT, 0);
			continue;
		}
		return;
	}
}

static void engine_release_slot(struct job *j)
{
	switch (j->slot) {
	case SLOT_IMPLICIT:
		E.implicit_busy = 0;
		break;
	case SLOT_TOKEN:
		engine_give_back(j->token);
		break;
	case SLOT_LIMIT:
		E.limit_running--;
		break;
	case SLOT_NONE:
		break;
	}
	j->slot = SLOT_NONE;
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

void engine_on_started(int64_t id, const struct started_msg *m)
{
	struct job *j = id > 0 && (size_t)id < E.capbyid ? E.byid[id] : NULL;

	if (j && j->state == JOB_RUNNING && !j->started_ns) {
		j->started_ns = proto_now_ns();
		j->worker = m->worker;
		/* running = started by a worker, not merely handed to the pool */
		E.st.running++;
		engine_saw_running(m->running);
	}
}

void engine_on_result(int64_t id, struct result_msg *res)
{
	struct job *j = id > 0 && (size_t)id < E.capbyid ? E.byid[id] : NULL;

	if (!j || j->state != JOB_RUNNING)
		return;
	engine_release_slot(j);
	engine_saw_running(res->running);
	j->res.status = res->status;
	j->res.flags = res->flags;
	/* moved, not copied: a result may be max_output twice over */
	buf_release(&j->res.out);
	buf_release(&j->res.err);
	j->res.out = res->out;
	j->res.err = res->err;
	res->out = (struct buf)BUF_INIT;
	res->err = (struct buf)BUF_INIT;
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
}

/*
 * The top-level make, at exit, closes its jobserver write end and then
 * reads tokens back until EOF - before any atexit handler of ours runs.
 * Jobs never waited for that hold tokens would keep it waiting (forever,
 * for a job that never ends).  make closing its end is the sign: the jobs
 * are killed and their tokens given back.
 */
static int engine_make_draining(void)
{
	return E.js_active && E.js.held && js_make_draining(&E.js);
}

/* Stop every job and give every token back.  Lock held, I/O thread. */
static void engine_stop_all(void)
{
	struct job *j;

	if (!E.backend)
		return;
	E.backend->ops->destroy(E.backend, E.kill_grace_ms);
	E.backend = NULL;
	for (j = E.all_head; j; j = j->next_all) {
		if (j->state == JOB_RUNNING) {
			engine_release_slot(j);
			engine_job_done(j);
			j->res.status = 125;
			buf_addstr(&j->res.err, "asynccompile: killed: make was exiting\n");
		}
	}
	pthread_cond_broadcast(&E.done);
}

static void *engine_main(void *arg)
{
	size_t cap = 2 * (size_t)E.workers + 8;
	struct pollfd *fds = calloc(cap, sizeof *fds);

	(void)arg;
	if (!fds)
		abort();
	pthread_mutex_lock(&E.lock);
	while (!E.stopping) {
		size_t n = 0, nb;
		int timeout = -1;
		uint64_t seen;

		engine_schedule();
		fds[n++] = (struct pollfd){ .fd = E.wake[0], .events = POLLIN };
		if (E.want_token && E.js_active)
			fds[n++] = (struct pollfd){ .fd = E.js.rfd, .events = POLLIN };
		seen = E.results;
		nb = E.backend->ops->pollfds(E.backend, fds + n, cap - n, &timeout);
		/* pollfds may itself report jobs (failed starts): schedule again */
		if (E.results != seen)
			timeout = 0;
		if (E.js.held && E.js.make_wfd >= 0 &&
		    (timeout < 0 || timeout > DRAIN_CHECK_MS))
			timeout = DRAIN_CHECK_MS;
		pthread_mutex_unlock(&E.lock);
		if (poll(fds, n + nb, timeout) < 0 && errno != EINTR) {
			/* EINVAL/ENOMEM: nothing better than to try again shortly */
			engine_log("poll: %s", strerror(errno));
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
		if (engine_make_draining()) {
			engine_log("warning: make is exiting while jobs never waited for still run; killing them");
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

int engine_start(const struct config *cfg, struct buf *err)
{
	sigset_t all, old;
	char *exe = NULL;
	int workers = config_workers(cfg), rc;

	if (E.started)
		return 0;
	E.stopping = 0;
	if (cfg->start_method != START_FORK) {
		exe = spawn_find_worker(err);
		if (!exe)
			return -1;
	}
	if (cfg->start_method == START_SUBPROCESS)
		E.backend = backend_subprocess_new(exe, workers, err);
	else
		E.backend = backend_pool_new(exe, workers, cfg->start_method == START_FORK, err);
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
	E.trace = cfg->trace && *cfg->trace ? strdup(cfg->trace) : NULL;
	reexec_jobserver(&E.js);
	if (cfg->warm && E.backend->ops->warm(E.backend) < 0)
		engine_log("could not start the worker pool early; will retry at the first job");
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

int engine_set_slots(const struct js_auth *a, int limit, struct buf *err)
{
	int ret = 0, old_limit, old_active;

	pthread_mutex_lock(&E.lock);
	old_limit = E.limit;
	old_active = E.js_active;
	if (a) {
		if (!(E.js_active && js_auth_equal(&E.js.auth, a)) && !E.js.held) {
			if (E.js.rfd >= 0)
				js_close(&E.js);
			E.js_active = js_open(&E.js, a, err) == 0;
			if (!E.js_active)
				ret = -1;
		}
		E.limit = 1;
	} else {
		if (E.js_active && !E.js.held) {
			js_close(&E.js);
			E.js_active = 0;
		}
		E.limit = limit > 0 ? limit : 1;
	}
	/* nothing changed: the submission that follows wakes the thread */
	if (E.limit != old_limit || E.js_active != old_active)
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
		size_t cnt = 0;
		for (struct job *j = E.all_head; j; j = j->next_all)
			cnt++;
		*jobs = calloc(cnt ? cnt : 1, sizeof **jobs);
		if (!*jobs)
			abort();
		for (struct job *j = E.all_head; j; j = j->next_all)
			(*jobs)[(*n)++] = j;
	}
	E.wait_pending = 0;
	for (i = 0; i < *n; i++) {
		(*jobs)[i]->in_wait = 1;
		E.wait_pending += (*jobs)[i]->state != JOB_DONE;
	}
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
			if (proto_now_ns() - since > 500 * 1000000LL)
				engine_progress(*jobs, *n, &drawn);
		}
	}
	for (i = 0; i < *n; i++)
		engine_table_remove((*jobs)[i]);
	pthread_mutex_unlock(&E.lock);
	if (drawn)
		(void)!write(2, "\r\033[K", 4);
}

void engine_write_trace(void)
{
	if (E.trace && trace_write(E.trace) < 0 && !E.trace_warned++)
		engine_log("warning: cannot write the trace file %s: %s", E.trace, strerror(errno));
}

void engine_get_stats(struct engine_stats *st)
{
	pthread_mutex_lock(&E.lock);
	*st = E.st;
	st->limit = E.limit;
	st->mode = E.js_active ? (E.js.auth.style == JS_FIFO ? "jobserver-fifo" : "jobserver-pipe")
			       : "limit";
	pthread_mutex_unlock(&E.lock);
}

void engine_shutdown(void)
{
	struct job *j;

	if (!E.started)
		return;
	pthread_mutex_lock(&E.lock);
	for (j = E.all_head; j; j = j->next_all) {
		if (j->state != JOB_DONE)
			engine_log("warning: job '%s' was never waited for; killed", j->name);
		else if (j->kind == JOB_COMPILE && j->res.status)
			engine_log("warning: build step '%s' failed (status %d) but was never waited for",
				   j->name, j->res.status);
	}
	E.stopping = 1;
	engine_wake();
	pthread_mutex_unlock(&E.lock);
	/* the thread kills the jobs and gives their tokens back */
	pthread_join(E.thread, NULL);
	js_close(&E.js);
	E.js_active = 0;
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
