/*
 * engine.c - make's side of the engine (engine.h): submitting, cancelling,
 * waiting, starting and stopping the pool, and the run queue those share
 * with the I/O thread.  Make's thread runs this file, but for the
 * lock-held helpers the I/O thread calls (engine_impl.h) and
 * engine_collect_forget/abandon (collect.c, on the I/O thread).  The I/O
 * thread itself is io.c's, the table of jobs jobtab.c's, what lets a job
 * run slots.c's.  Every wait on the_engine.done is here.
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

#include "lib/err.h"
#include "lib/progress.h"
#include "plugin/children.h"
#include "plugin/backend.h"
#include "plugin/collect.h"
#include "plugin/engine.h"
#include "plugin/engine_impl.h"
#include "plugin/io.h"
#include "plugin/fatal.h"
#include "plugin/jobtab.h"
#include "plugin/log.h"
#include "plugin/guard.h"
#include "plugin/reexec.h"
#include "plugin/slots.h"
#include "plugin/spawn.h"
#include "plugin/timeline.h"

struct engine the_engine = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.done = PTHREAD_COND_INITIALIZER,
	.wake = { -1, -1 },
	.slots = SLOTS_INIT, /* make loads us while it reads a makefile */
};

struct job *engine_find(const char *name)
{
	struct job *j;

	pthread_mutex_lock(&the_engine.lock);
	j = jobtab_find(&the_engine.tab, name);
	pthread_mutex_unlock(&the_engine.lock);
	return j;
}

/*
 * Lock held.  One byte wakes the thread however many jobs were queued
 * meanwhile: a burst of $(async-try) calls costs one wake-up, not one each.
 */
static void engine_wake(void)
{
	char c = 0;

	if (the_engine.wake[1] >= 0 && !the_engine.wake_sent) {
		the_engine.wake_sent = 1;
		(void)!write(the_engine.wake[1], &c, 1);
	}
}

/* Lock held.  make's thread sleeps until its whole wait set is done. */
void engine_job_done(struct job *j)
{
	j->state = JOB_DONE;
	if (j->in_wait && !--the_engine.wait_pending)
		pthread_cond_broadcast(&the_engine.done);
}

/* Lock held.  Take j out of the run queue; 1 if it was there. */
static int engine_unqueue(struct job *j)
{
	struct job **pp = &the_engine.qhead, *prev = NULL;

	while (*pp && *pp != j) {
		prev = *pp;
		pp = &(*pp)->next;
	}
	if (!*pp)
		return 0;
	*pp = j->next;
	if (the_engine.qtail == j)
		the_engine.qtail = prev;
	j->next = NULL;
	return 1;
}

void engine_promote(struct job *j)
{
	pthread_mutex_lock(&the_engine.lock);
	if (j->state == JOB_QUEUED)
		engine_to_head(j);
	pthread_mutex_unlock(&the_engine.lock);
}

/* Lock held.  A job the engine owns again: gone from every list, freed. */
void engine_forget(struct job *j)
{
	jobtab_drop_id(&the_engine.tab, j->id);
	job_free(j);
}

/* Lock held.  engine_cancel() for a job already out of the name table. */
static void engine_cancel_locked(struct job *j)
{
	if (j->state == JOB_QUEUED && engine_unqueue(j)) {
		the_engine.st.queued--;
		j->state = JOB_DONE;
	}
	if (j->state == JOB_DONE || !the_engine.backend) {
		engine_forget(j);
	} else {
		j->discard = 1;
		j->next = the_engine.discarded;
		the_engine.discarded = j;
		the_engine.backend->ops->cancel(the_engine.backend, j);
		engine_wake();
	}
}

void engine_cancel(struct job *j)
{
	pthread_mutex_lock(&the_engine.lock);
	jobtab_unlink(&the_engine.tab, j); /* still found by id: a running job's RESULT */
	engine_cancel_locked(j);
	pthread_mutex_unlock(&the_engine.lock);
}

void engine_collect_forget(struct job *j)
{
	engine_forget(j);
}

void engine_collect_abandon(struct job *j)
{
	/* the backend is gone (make exits): what it still ran is dead */
	if (j->state == JOB_RUNNING && !the_engine.backend)
		slots_release(&the_engine.slots, j);
	engine_cancel_locked(j);
}

void engine_submit(struct job *j)
{
	pthread_mutex_lock(&the_engine.lock);
	j->id = ++the_engine.next_id;
	j->queued_ns = proto_now_ns();
	jobtab_add(&the_engine.tab, j);
	the_engine.st.submitted++;
	if (j->dry || j->cached) {
		j->state = JOB_DONE;
	} else if (the_engine.stopping) {
		/* the I/O thread stopped (make is exiting): nothing would run it */
		msg_result_fail(&j->res, STATUS_NOT_RUN, 0, "not run: make was exiting");
		j->state = JOB_DONE;
	} else {
		j->state = JOB_QUEUED;
		j->next = NULL;
		if (the_engine.qtail)
			the_engine.qtail->next = j;
		else
			the_engine.qhead = j;
		the_engine.qtail = j;
		the_engine.st.queued++;
	}
	engine_wake();
	pthread_mutex_unlock(&the_engine.lock);
}

int engine_owns(void *ctx, pid_t pid)
{
	(void)ctx;
	return (the_engine.backend && the_engine.backend->ops->owns(the_engine.backend, pid)) ||
	       guard_owns(pid);
}

/* Lock held.  A queued job goes to the head of the queue. */
void engine_to_head(struct job *j)
{
	if (the_engine.qhead != j && engine_unqueue(j)) {
		j->next = the_engine.qhead;
		the_engine.qhead = j;
		if (!the_engine.qtail)
			the_engine.qtail = j;
	}
}

int engine_started(void)
{
	return the_engine.started;
}

unsigned long engine_submitted(void)
{
	unsigned long n;

	pthread_mutex_lock(&the_engine.lock);
	n = (unsigned long)the_engine.st.submitted;
	pthread_mutex_unlock(&the_engine.lock);
	return n;
}

void engine_trace_begin(const char *path)
{
	static int begun;
	const char *level = getenv("MAKELEVEL"), *restarts = getenv("MAKE_RESTARTS");
	struct buf err = BUF_INIT;

	if (!path || !*path || begun++ || (level && *level && strcmp(level, "0")) ||
	    (restarts && *restarts))
		return;
	if (timeline_begin(path, &err) < 0 && !the_engine.trace_warned++)
		log_msg("warning: cannot write the trace file %s: %s", path, (char *)err.data);
	buf_release(&err);
}

int engine_start(const struct config *cfg, struct buf *err)
{
	sigset_t all, old;
	char *exe = NULL;
	int workers = config_workers(cfg), rc;

	if (the_engine.started)
		return 0;
	the_engine.stopping = 0;
	io_init();
	/* what a pool needs and a make that queues nothing does not pay for */
	fatal_init();
	reexec_arm();
	if (spawn_snapshot_env() < 0)
		return err_fail(err, "out of memory copying the environment");
	if (cfg->start_method != START_FORK) {
		exe = spawn_find_worker(err);
		if (!exe)
			return -1;
	}
	if (cfg->start_method == START_SUBPROCESS)
		the_engine.backend = backend_sub_new(exe, workers, &io_report, err);
	else
		the_engine.backend = backend_pool_new(exe, workers, cfg->start_method == START_FORK,
					     &io_report, err);
	free(exe);
	if (!the_engine.backend)
		return -1;
	if (pipe2(the_engine.wake, O_CLOEXEC | O_NONBLOCK) < 0) {
		err_fail(err, "pipe:");
		the_engine.backend->ops->destroy(the_engine.backend, 0);
		the_engine.backend = NULL;
		return -1;
	}
	the_engine.kill_grace_ms = cfg->kill_grace_ms;
	the_engine.workers = workers;
	the_engine.workers_max = config_workers_max(cfg);
	the_engine.trace = cfg->trace && *cfg->trace ? strdup(cfg->trace) : NULL;
	engine_trace_begin(the_engine.trace);
	reexec_jobserver(&the_engine.slots.js);
	/*
	 * On make's thread, before the I/O thread exists: spawning reads
	 * environ, which make's thread may change at any time once it runs
	 * on (make-suite's options/print-directory got EFAULT from
	 * posix_spawn when this ran on the I/O thread).
	 */
	if (cfg->warm && the_engine.backend->ops->warm(the_engine.backend) < 0)
		log_msg("could not start the worker pool early; will retry at the first job");
	/* make's signal handlers must run on make's thread only */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&the_engine.thread, NULL, io_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		errno = rc;
		err_fail(err, "cannot start the I/O thread:");
		the_engine.backend->ops->destroy(the_engine.backend, 0);
		the_engine.backend = NULL;
		close(the_engine.wake[0]);
		close(the_engine.wake[1]);
		the_engine.wake[0] = the_engine.wake[1] = -1;
		free(the_engine.trace);
		the_engine.trace = NULL;
		return -1;
	}
	fatal_set_wake(the_engine.wake[1]);
	the_engine.started = 1;
	return 0;
}

void engine_makefiles_read(void)
{
	pthread_mutex_lock(&the_engine.lock);
	the_engine.slots.reading = 0;
	pthread_mutex_unlock(&the_engine.lock);
}

int engine_set_slots(const struct js_auth *a, int limit, struct buf *err)
{
	int ret, changed;

	pthread_mutex_lock(&the_engine.lock);
	ret = slots_set(&the_engine.slots, a, limit, err, &changed);
	/* nothing changed: the submission that follows wakes the thread */
	if (changed)
		engine_wake();
	pthread_mutex_unlock(&the_engine.lock);
	return ret;
}

/* The status line over the jobs being waited for (lib/progress.h). */
static void engine_progress(struct job **jobs, size_t n, int64_t since, int *drawn)
{
	struct progress p = { .total = n, .elapsed_ns = proto_now_ns() - since };
	const struct job *oldest = NULL;
	struct buf line = BUF_INIT;

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
		const struct job *j = jobs[i];

		p.done += j->state == JOB_DONE;
		if (j->state != JOB_RUNNING)
			continue;
		p.running++;
		if (j->started_ns && (!oldest || j->started_ns < oldest->started_ns))
			oldest = j;
	}
	p.oldest = oldest ? oldest->name : NULL;
	progress_format(&line, &p, progress_width(2));
	(void)!write(2, line.data, line.len);
	buf_release(&line);
	*drawn = 1;
}

void engine_wait(struct job ***jobs, size_t *n, int progress)
{
	size_t i;
	int drawn = 0;
	int64_t since = proto_now_ns();

	pthread_mutex_lock(&the_engine.lock);
	if (*n == 0) {
		size_t cnt = jobtab_count(&the_engine.tab);

		*jobs = calloc(cnt ? cnt : 1, sizeof **jobs);
		if (!*jobs)
			abort();
		for (struct job *j = the_engine.tab.head; j; j = j->next_all)
			if (!job_internal(j))
				(*jobs)[(*n)++] = j;
	}
	the_engine.wait_pending = 0;
	the_engine.slots.wait_seq++;
	for (i = 0; i < *n; i++) {
		(*jobs)[i]->in_wait = 1;
		the_engine.wait_pending += (*jobs)[i]->state != JOB_DONE;
	}
	/* queued jobs of the set may now take the implicit slot */
	if (the_engine.wait_pending)
		engine_wake();
	for (i = 0; i < *n; i++) {
		while ((*jobs)[i]->state != JOB_DONE) {
			struct timespec ts;

			if (!progress) {
				pthread_cond_wait(&the_engine.done, &the_engine.lock);
				continue;
			}
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 250 * 1000000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&the_engine.done, &the_engine.lock, &ts);
			if ((*jobs)[i]->state != JOB_DONE && proto_now_ns() - since > 500 * 1000000LL)
				engine_progress(*jobs, *n, since, &drawn);
		}
	}
	for (i = 0; i < *n; i++) {
		jobtab_unlink(&the_engine.tab, (*jobs)[i]);
		jobtab_drop_id(&the_engine.tab, (*jobs)[i]->id);
	}
	pthread_mutex_unlock(&the_engine.lock);
	if (drawn > 0)
		(void)!write(2, PROGRESS_ERASE, sizeof PROGRESS_ERASE - 1);
}

void engine_pending(struct job ***jobs, size_t *n)
{
	pthread_mutex_lock(&the_engine.lock);
	*jobs = calloc(jobtab_count(&the_engine.tab) + 1, sizeof **jobs);
	if (!*jobs)
		abort();
	*n = 0;
	for (struct job *j = the_engine.tab.head; j; j = j->next_all)
		if (!job_internal(j))
			(*jobs)[(*n)++] = j;
	pthread_mutex_unlock(&the_engine.lock);
}

int engine_collect(struct job **jobs, size_t n, int progress, int64_t *id,
		   char cookie[COLLECT_COOKIE_HEX + 1], struct buf *err)
{
	pthread_mutex_lock(&the_engine.lock);
	if (collect_open(err) < 0) {
		pthread_mutex_unlock(&the_engine.lock);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		jobtab_unlink(&the_engine.tab, jobs[i]); /* still found by id for its RESULT */
	*id = collect_add(jobs, n, cookie, progress);
	/* the I/O thread polls the socket from its next round */
	engine_wake();
	pthread_mutex_unlock(&the_engine.lock);
	return 0;
}

void engine_write_trace(void)
{
	struct buf err = BUF_INIT;

	if (the_engine.trace && timeline_write(the_engine.trace, &err) < 0 && !the_engine.trace_warned++)
		log_msg("warning: cannot write the trace file %s: %s", the_engine.trace, (char *)err.data);
	buf_release(&err);
}

void engine_get_stats(struct engine_stats *st)
{
	pthread_mutex_lock(&the_engine.lock);
	*st = the_engine.st;
	st->limit = the_engine.slots.limit;
	st->workers = the_engine.started ? the_engine.workers : 0;
	st->mode = slots_mode(&the_engine.slots);
	pthread_mutex_unlock(&the_engine.lock);
}

int engine_report_unwaited(void)
{
	struct buf line = BUF_INIT;
	int errors = 0;

	/* jobs without a pool: ASYNC_COMPILE_DISABLE ran them (request.h) */
	if (!the_engine.started && !the_engine.st.submitted)
		return 0;
	pthread_mutex_lock(&the_engine.lock);
	for (struct job *j = the_engine.tab.head; j; j = j->next_all) {
		const char *what = j->kind == JOB_COMPILE ? "build step" : "probe";

		if (job_internal(j))
			continue;
		buf_reset(&line);
		if (!j->preview && (j->kind == JOB_COMPILE || j->in_recipe)) {
			errors++;
			buf_addf(&line, "%s%s*** asynccompile: %s '%s' was queued%s and never "
				 "waited for: add $(async-wait %s), or $(async-drop %s) to let it go\n",
				 j->where ? j->where : "", j->where ? ": " : "", what, j->name,
				 j->where ? " here" : "", j->name, j->name);
		} else if (j->kind == JOB_COMPILE || j->in_recipe) {
			/* -n or -q: said, not counted */
			buf_addf(&line, "%s%sasynccompile: warning: %s '%s' was queued%s and never "
				 "waited for%s\n", j->where ? j->where : "", j->where ? ": " : "",
				 what, j->name, j->where ? " here" : "",
				 j->state != JOB_DONE ? "; killed" : "");
		} else if (log_debugging()) {
			buf_addf(&line, "asynccompile: probe '%s'%s%s was never waited for%s\n",
				 j->name, j->where ? " queued at " : "", j->where ? j->where : "",
				 j->state != JOB_DONE ? "; killed" : "");
		}
		if (line.len)
			(void)!write(2, line.data, line.len);
	}
	pthread_mutex_unlock(&the_engine.lock);
	buf_release(&line);
	return errors;
}

void engine_shutdown(void)
{
	if (!the_engine.started)
		return;
	pthread_mutex_lock(&the_engine.lock);
	the_engine.stopping = 1;
	engine_wake();
	pthread_mutex_unlock(&the_engine.lock);
	/* the thread kills the jobs and gives their tokens back */
	pthread_join(the_engine.thread, NULL);
	slots_close(&the_engine.slots);
	engine_write_trace();
	timeline_reset();
	free(the_engine.trace);
	the_engine.trace = NULL;
	fatal_set_wake(-1);
	close(the_engine.wake[0]);
	close(the_engine.wake[1]);
	the_engine.wake[0] = the_engine.wake[1] = -1;
	the_engine.wake_sent = 0;
	the_engine.started = 0;
}
