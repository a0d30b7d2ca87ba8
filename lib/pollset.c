/*
 * pollset.c - one poll(2) set rebuilt on each turn of a loop (pollset.h).
 */
#include "lib/pollset.h"

#include <limits.h>
#include <stdlib.h>

void pollset_begin(struct pollset *ps)
{
	ps->n = 0;
	ps->timeout_ms = -1;
}

struct pollfd *pollset_room(struct pollset *ps, size_t max)
{
	if (ps->cap - ps->n < max) {
		size_t cap = 2 * (ps->n + max);

		ps->fds = realloc(ps->fds, cap * sizeof *ps->fds);
		if (!ps->fds)
			abort();
		ps->cap = cap;
	}
	return ps->fds + ps->n;
}

size_t pollset_added(struct pollset *ps, size_t k)
{
	size_t first = ps->n;

	ps->n += k;
	return first;
}

size_t pollset_add(struct pollset *ps, int fd, short events)
{
	*pollset_room(ps, 1) = (struct pollfd){ .fd = fd, .events = events };
	return pollset_added(ps, 1);
}

void pollset_timeout(struct pollset *ps, int64_t ms)
{
	if (ms < 0)
		return;
	if (ms > INT_MAX)
		ms = INT_MAX;
	if (ps->timeout_ms < 0 || ps->timeout_ms > ms)
		ps->timeout_ms = (int)ms;
}

int pollset_wait(struct pollset *ps)
{
	return poll(ps->fds, (nfds_t)ps->n, ps->timeout_ms);
}

void pollset_release(struct pollset *ps)
{
	free(ps->fds);
	*ps = (struct pollset)POLLSET_INIT;
}
