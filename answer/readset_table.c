/*
 * readset_table.c - a table of identities (readset_check.h, struct rs_table):
 * the read sets checked with one table stat each path once, probe it
 * for writers once and read each VALUE input once.
 *
 * The racy rule holds here as it does when a read set is built
 * (readset.c, rs_racy): an identity whose mtime or ctime lies within
 * RS_RACY_NS (plus its granularity) of the moment it was looked at may
 * change again without its identity showing it, so it is never kept:
 * every check looks at such a path afresh.
 */
#include "answer/readset_check.h"
#include "answer/readset_table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/readset_impl.h"
#include "lib/store.h"

struct rs_seen {
	char *path;             /* NULL: a free slot */
	uint64_t h;
	int nofollow;
	int err;                /* 0: sb is its identity; else stat's errno */
	struct stat sb;
	int writers;            /* -1: not probed yet; else readset_writers() */
};

struct rs_value {
	char *name, *now;       /* readset_value_now() of name */
	size_t nlen, len;
	struct rs_value *next;
};

struct rs_table {
	struct rs_seen *v;
	size_t cap, n;
	struct rs_value *values;
	unsigned long looked, reused;
};

struct rs_table *readset_table_new(void)
{
	struct rs_table *t = calloc(1, sizeof *t);

	if (!t)
		abort();
	return t;
}

void readset_table_free(struct rs_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->cap; i++)
		free(t->v[i].path);
	free(t->v);
	while (t->values) {
		struct rs_value *v = t->values;

		t->values = v->next;
		free(v->name);
		free(v->now);
		free(v);
	}
	free(t);
}

void readset_table_counts(const struct rs_table *t, unsigned long *looked, unsigned long *reused)
{
	*looked = t ? t->looked : 0;
	*reused = t ? t->reused : 0;
}

static struct rs_seen *rs_slot(struct rs_table *t, const char *path, int nofollow, uint64_t h)
{
	size_t i = h & (t->cap - 1);

	for (;; i = (i + 1) & (t->cap - 1)) {
		struct rs_seen *s = &t->v[i];

		if (!s->path || (s->h == h && s->nofollow == nofollow && !strcmp(s->path, path)))
			return s;
	}
}

static void rs_grow(struct rs_table *t)
{
	struct rs_seen *old = t->v;
	size_t n = t->cap;

	t->cap = n ? 2 * n : 256;
	t->v = calloc(t->cap, sizeof *t->v);
	if (!t->v)
		abort();
	for (size_t i = 0; i < n; i++)
		if (old[i].path)
			*rs_slot(t, old[i].path, old[i].nofollow, old[i].h) = old[i];
	free(old);
}

static int64_t rs_real_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t rs_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

struct rs_seen *readset_stat(struct rs_table *t, const char *path, int nofollow, struct stat *sb,
			     int *r)
{
	uint64_t h;
	struct rs_seen *s;
	int64_t now;

	if (!t) {
		*r = nofollow ? lstat(path, sb) : stat(path, sb);
		return NULL;
	}
	if (2 * (t->n + 1) > t->cap)
		rs_grow(t);
	h = store_hash(path, strlen(path), STORE_HASH_INIT + (uint64_t)nofollow);
	s = rs_slot(t, path, nofollow, h);
	if (s->path) {
		t->reused++;
		if (s->err) {
			errno = s->err;
			*r = -1;
		} else {
			*sb = s->sb;
			*r = 0;
		}
		return s;
	}
	t->looked++;
	now = rs_real_now();
	*r = nofollow ? lstat(path, sb) : stat(path, sb);
	/* changed just now: it may change again unseen, so it is looked at every time */
	if (*r == 0 && (readset_racy_ts(rs_ns(&sb->st_mtim), now) ||
			readset_racy_ts(rs_ns(&sb->st_ctim), now)))
		return NULL;
	s->path = strdup(path);
	if (!s->path)
		abort();
	s->h = h;
	s->nofollow = nofollow;
	s->err = *r < 0 ? errno : 0;
	if (*r == 0)
		s->sb = *sb;
	s->writers = -1;
	t->n++;
	if (*r < 0)
		errno = s->err;
	return s;
}

int readset_seen_writers(struct rs_seen *s, int safe, const char *path, int nofollow,
			 int64_t dev, int64_t ino)
{
	if (!s)
		return readset_writers(safe, path, nofollow, dev, ino);
	if (s->writers < 0)
		s->writers = readset_writers(safe, path, nofollow, dev, ino);
	return s->writers;
}

void readset_table_value(struct rs_table *t, const char *name, size_t n, struct buf *v)
{
	struct rs_value *e;
	struct buf now = BUF_INIT;

	if (!t) {
		readset_value_now(name, n, v);
		return;
	}
	for (e = t->values; e; e = e->next)
		if (e->nlen == n && !memcmp(e->name, name, n)) {
			buf_add(v, e->now, e->len);
			return;
		}
	readset_value_now(name, n, &now);
	e = calloc(1, sizeof *e);
	if (!e || !(e->name = malloc(n + 1)))
		abort();
	memcpy(e->name, name, n);
	e->name[n] = 0;
	e->nlen = n;
	e->len = now.len;
	e->now = buf_detach(&now, NULL);
	e->next = t->values;
	t->values = e;
	buf_add(v, e->now, e->len);
}
