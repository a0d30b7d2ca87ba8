/*
 * pollset.h - one poll(2) set, rebuilt on each turn of an event loop, in
 * the spirit of redis's ae but without callbacks: each part of the loop
 * adds its descriptors and lowers the timeout, poll() runs once, then
 * each part reads its own revents back at the index its add returned.
 *
 * A turn:
 *   1. pollset_begin(): no descriptors, no timeout;
 *   2. pollset_add() per descriptor, or pollset_room() then
 *      pollset_added() for a part that fills an array itself;
 *   3. pollset_timeout() as often as parts want (the shortest wins);
 *   4. pollset_wait();
 *   5. each part looks at fds[its index ...].
 *
 * The set owns its array only; descriptors stay their owners'.  One
 * thread per set.  Out of memory aborts (as buf.h does).
 */
#ifndef ASYNC_POLLSET_H
#define ASYNC_POLLSET_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

struct pollset {
	struct pollfd *fds;
	size_t n, cap;
	int timeout_ms; /* -1: wait for ever */
};
#define POLLSET_INIT { NULL, 0, 0, -1 }

void pollset_begin(struct pollset *ps);
/* One descriptor; its index in fds. */
size_t pollset_add(struct pollset *ps, int fd, short events);
/* Room for up to `max` more at the returned pointer; then pollset_added(). */
struct pollfd *pollset_room(struct pollset *ps, size_t max);
/* The first `k` of that room are in use; the index of the first of them. */
size_t pollset_added(struct pollset *ps, size_t k);
/* Wait at most `ms` (< 0: no limit from this caller). */
void pollset_timeout(struct pollset *ps, int64_t ms);
/* poll(2) on the set: its return value, errno as it left it. */
int pollset_wait(struct pollset *ps);
void pollset_release(struct pollset *ps);

#endif
