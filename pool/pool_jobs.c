/*
 * pool_jobs.c - the pool's jobs by id and its queue (see pool_impl.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool/pool_impl.h"

static size_t pool_hash_slot(const struct pool *p, int64_t id)
{
	return (size_t)(((uint64_t)id * 0x9E3779B97F4A7C15ull) >> 32) & (p->hsize - 1);
}

struct pjob *pool_find(const struct pool *p, int64_t id)
{
	struct pjob *j = p->hash[pool_hash_slot(p, id)];

	while (j && j->id != id)
		j = j->hnext;
	return j;
}

int pool_hash_add(struct pool *p, struct pjob *j)
{
	size_t s;

	if (p->hcount >= p->hsize) {
		size_t nsize = p->hsize * 2, old = p->hsize;
		struct pjob **nh = calloc(nsize, sizeof *nh), **oh = p->hash;

		if (!nh)
			return -1;
		p->hash = nh;
		p->hsize = nsize;
		for (size_t i = 0; i < old; i++)
			for (struct pjob *k = oh[i], *next; k; k = next) {
				next = k->hnext;
				s = pool_hash_slot(p, k->id);
				k->hnext = nh[s];
				nh[s] = k;
			}
		free(oh);
	}
	s = pool_hash_slot(p, j->id);
	j->hnext = p->hash[s];
	p->hash[s] = j;
	p->hcount++;
	return 0;
}

void pool_hash_del(struct pool *p, struct pjob *j)
{
	struct pjob **pp = &p->hash[pool_hash_slot(p, j->id)];

	while (*pp && *pp != j)
		pp = &(*pp)->hnext;
	if (*pp) {
		*pp = j->hnext;
		p->hcount--;
	}
}

void pool_job_free(struct pool *p, struct pjob *j)
{
	pool_hash_del(p, j);
	if (j->given)
		free(j->payload);
	free(j);
}

/* Report a job the pool ends itself (crash, cancel, no worker) and free it. */
void pool_report(struct pool *p, struct pjob *j, int status, uint32_t flags,
			const char *fmt, ...)
{
	struct result_msg res;
	char why[300];
	va_list ap;
	int64_t id = j->id;

	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	msg_result_fail(&res, status, flags, "%s", why);
	res.attempts = j->attempts;
	res.running = j->running;
	pool_job_free(p, j);
	p->st.completed++;
	p->ops.result(p->ctx, id, &res);
	msg_result_release(&res);
}

/* ---- queue ---- */

void pool_enqueue(struct pool *p, struct pjob *j, int front)
{
	j->next = NULL;
	if (front) {
		j->next = p->qhead;
		p->qhead = j;
		if (!p->qtail)
			p->qtail = j;
	} else {
		if (p->qtail)
			p->qtail->next = j;
		else
			p->qhead = j;
		p->qtail = j;
	}
	p->queued++;
}

struct pjob *pool_dequeue(struct pool *p)
{
	struct pjob *j = p->qhead;

	if (j) {
		p->qhead = j->next;
		if (!p->qhead)
			p->qtail = NULL;
		j->next = NULL;
		p->queued--;
	}
	return j;
}

int pool_unqueue(struct pool *p, struct pjob *j)
{
	struct pjob **pp = &p->qhead, *prev = NULL;

	while (*pp && *pp != j) {
		prev = *pp;
		pp = &(*pp)->next;
	}
	if (!*pp)
		return -1;
	*pp = j->next;
	if (p->qtail == j)
		p->qtail = prev;
	p->queued--;
	return 0;
}
