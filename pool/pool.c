/*
 * pool.c - N single-job workers behind one FIFO queue: the API of pool.h.
 * A worker's life and frames are pool_workers.c's, the job table and the
 * queue pool_jobs.c's; pool_impl.h is what the three share.
 */
#include "pool/pool.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/board.h"
#include "pool/pool_impl.h"

struct pool *pool_new(int nworkers, const struct pool_ops *ops, void *ctx)
{
	struct pool *p;

	if (nworkers < 1)
		nworkers = 1;
	p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->w = calloc((size_t)nworkers, sizeof *p->w);
	p->hsize = 64;
	p->hash = calloc(p->hsize, sizeof *p->hash);
	if (!p->w || !p->hash) {
		free(p->w);
		free(p->hash);
		free(p);
		return NULL;
	}
	p->n = nworkers;
	p->ops = *ops;
	p->ctx = ctx;
	p->board = -1; /* not tried yet; -2: tried, none */
	for (int i = 0; i < nworkers; i++) {
		p->w[i].index = i;
		p->w[i].to_fd = p->w[i].from_fd = -1;
	}
	return p;
}

int pool_resize(struct pool *p, int nworkers)
{
	struct pworker *w;

	if (nworkers <= p->n)
		return 0;
	/*
	 * Workers are addressed by index, never kept by pointer across
	 * calls, so the table may move.  The board needs nothing: a slot
	 * written past its end extends it, and one never written reads 0.
	 */
	w = realloc(p->w, (size_t)nworkers * sizeof *w);
	if (!w) {
		errno = ENOMEM;
		return -1;
	}
	memset(w + p->n, 0, (size_t)(nworkers - p->n) * sizeof *w);
	for (int i = p->n; i < nworkers; i++) {
		w[i].index = i;
		w[i].to_fd = w[i].from_fd = -1;
	}
	p->w = w;
	p->n = nworkers;
	return 0;
}

int pool_size(const struct pool *p)
{
	return p->n;
}

int pool_submit(struct pool *p, int64_t id, void *job, size_t len, const struct job_head *h,
		enum pool_own own)
{
	struct pjob *j;

	if (id <= 0 || pool_find(p, id)) {
		errno = id <= 0 ? EINVAL : EEXIST;
		return -1;
	}
	j = calloc(1, sizeof *j);
	if (!j) {
		errno = ENOMEM;
		return -1;
	}
	j->payload = job;
	j->len = len;
	j->id = id;
	j->retries = h->retries;
	j->timeout_ms = h->timeout_ms;
	if (pool_hash_add(p, j) < 0) {
		free(j);
		errno = ENOMEM;
		return -1;
	}
	j->given = own == POOL_GIVE; /* not before: a refusal leaves it the owner's */
	pool_enqueue(p, j, 0);
	p->st.submitted++;
	pool_dispatch(p);
	return 0;
}

int pool_cancel(struct pool *p, int64_t id)
{
	static const unsigned char cancel[] = { MSG_CANCEL };
	struct pjob *j = pool_find(p, id);

	if (!j)
		return -1;
	if (!pool_unqueue(p, j)) {
		pool_report(p, j, STATUS_CANCELLED, RES_CANCELLED,
			    "cancelled before it started");
		return 0;
	}
	if (j->cancelled)
		return 0;
	j->cancelled = 1;
	for (int i = 0; i < p->n; i++)
		if (p->w[i].state == W_BUSY && p->w[i].job == j)
			pool_send(&p->w[i], id, cancel, sizeof cancel);
	return 0;
}

int pool_free_slots(const struct pool *p)
{
	return p->n - p->busy - p->queued;
}

size_t pool_pollfds(struct pool *p, struct pollfd *fds, size_t max, int *timeout_ms)
{
	int64_t now, wake = 0;
	size_t k = 0;

	pool_tick(p);
	for (int i = 0; i < p->n; i++) {
		struct pworker *w = &p->w[i];

		if (w->state == W_DOWN)
			continue;
		if (k < max)
			fds[k++] = (struct pollfd){ w->from_fd, POLLIN, 0 };
		if (frame_outq_pending(&w->out) && !w->write_dead && k < max)
			fds[k++] = (struct pollfd){ w->to_fd, POLLOUT, 0 };
		if (w->state == W_HELLO && (!wake || w->hello_deadline < wake))
			wake = w->hello_deadline;
	}
	if (p->queued && p->next_start && (!wake || p->next_start < wake))
		wake = p->next_start;
	if (wake) {
		int64_t d;

		now = pool_now_ms();
		d = wake > now ? wake - now : 0;
		if (*timeout_ms < 0 || d < *timeout_ms)
			*timeout_ms = (int)d;
	}
	return k;
}

static struct pworker *pool_by_fd(struct pool *p, int fd, int *is_from)
{
	for (int i = 0; i < p->n; i++) {
		struct pworker *w = &p->w[i];

		if (w->state == W_DOWN)
			continue;
		if (w->from_fd == fd || w->to_fd == fd) {
			*is_from = w->from_fd == fd;
			return w;
		}
	}
	return NULL;
}

void pool_events(struct pool *p, const struct pollfd *fds, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct pworker *w;
		int is_from;

		if (!fds[i].revents || !(w = pool_by_fd(p, fds[i].fd, &is_from)))
			continue;
		if (is_from)
			pool_read(p, w);
		else
			pool_flush(w);
	}
	pool_tick(p);
}

void pool_get_stats(const struct pool *p, struct pool_stats *st)
{
	*st = p->st;
	st->running = p->busy;
	st->queued = p->queued;
}

int pool_is_worker(const struct pool *p, pid_t pid)
{
	for (int i = 0; i < p->n; i++)
		if (p->w[i].state != W_DOWN && p->w[i].pid == pid)
			return 1;
	return 0;
}

/* Wait until every worker has closed its result pipe, or the deadline. */
static void pool_drain_all(struct pool *p, int64_t deadline)
{
	struct pollfd *fds = calloc(2 * (size_t)p->n, sizeof *fds);
	struct pworker **of = calloc(2 * (size_t)p->n, sizeof *of);
	unsigned char tmp[64 << 10];

	for (;;) {
		int64_t now = pool_now_ms();
		nfds_t k = 0;

		if (!fds || !of)
			break;
		for (int i = 0; i < p->n; i++) {
			struct pworker *w = &p->w[i];

			if (w->state == W_DOWN || w->from_fd < 0)
				continue;
			of[k] = w;
			fds[k++] = (struct pollfd){ w->from_fd, POLLIN, 0 };
			if (frame_outq_pending(&w->out) && !w->write_dead) {
				of[k] = w;
				fds[k++] = (struct pollfd){ w->to_fd, POLLOUT, 0 };
			}
		}
		if (!k || now >= deadline)
			break;
		if (poll(fds, k, (int)(deadline - now)) < 0 && errno != EINTR)
			break;
		for (nfds_t i = 0; i < k; i++) {
			struct pworker *w = of[i];
			ssize_t r;

			if (!fds[i].revents)
				continue;
			if (fds[i].fd == w->to_fd) {
				pool_flush(w);
				continue;
			}
			r = read(w->from_fd, tmp, sizeof tmp);
			if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
				close(w->from_fd);
				w->from_fd = -1; /* exited */
			}
		}
	}
	free(fds);
	free(of);
}

void pool_destroy(struct pool *p, int64_t grace_ms)
{
	for (int i = 0; i < p->n; i++) {
		struct pworker *w = &p->w[i];

		if (w->state == W_DOWN)
			continue;
		pool_kill_job(p, w, SIGTERM);
		pool_send(w, PROTO_ID_SHUTDOWN, NULL, 0);
	}
	pool_drain_all(p, pool_now_ms() + (grace_ms > 0 ? grace_ms : 0));
	for (int i = 0; i < p->n; i++) {
		struct pworker *w = &p->w[i];

		if (w->state == W_DOWN)
			continue;
		if (w->from_fd >= 0) {
			kill(w->pid, SIGKILL); /* first, or it could start the next job */
			close(w->from_fd);
		}
		pool_kill_job(p, w, SIGKILL);
		close(w->to_fd);
		frame_decoder_release(&w->dec);
		frame_outq_release(&w->out);
		/* down before reap: the owner's sweep spares live workers only */
		w->state = W_DOWN;
		if (p->ops.reap)
			p->ops.reap(p->ctx, w->pid);
		w->pid = 0;
		if (w->job)
			pool_job_free(p, w->job);
	}
	for (struct pjob *j; (j = pool_dequeue(p));)
		pool_job_free(p, j);
	if (p->board >= 0)
		close(p->board);
	free(p->hash);
	free(p->w);
	free(p);
}

int pool_board(struct pool *p)
{
	/*
	 * Tried once only: a board that appeared after some workers started
	 * without one would hide the pids their STARTED gave.
	 */
	if (p->board == -1 && (p->board = board_create(p->n)) < 0)
		p->board = -2;
	return p->board < 0 ? -1 : p->board;
}
