/*
 * test-pollset.c - lib/pollset.h: the indices parts get back, the
 * shortest timeout winning, growth keeping what was added, and a wait
 * that reports the readable descriptor where its add said.
 */
#include <stdlib.h>
#include <unistd.h>

#include "lib/pollset.h"
#include "tap.h"

int main(void)
{
	struct pollset ps = POLLSET_INIT;
	struct pollfd *room;
	size_t a, b, first;
	int p[2];

	if (pipe(p) < 0)
		abort();
	pollset_begin(&ps);
	ok(ps.n == 0 && ps.timeout_ms == -1, "a new turn: no descriptors, no timeout");
	a = pollset_add(&ps, p[0], POLLIN);
	room = pollset_room(&ps, 100);
	for (int i = 0; i < 3; i++)
		room[i] = (struct pollfd){ .fd = -1 };
	first = pollset_added(&ps, 3);
	b = pollset_add(&ps, p[1], POLLOUT);
	ok(a == 0 && first == 1 && b == 4 && ps.n == 5, "indices follow the adds (%zu %zu %zu)",
	   a, first, b);
	ok(ps.fds[0].fd == p[0] && ps.fds[4].fd == p[1], "growing kept what was added");
	pollset_timeout(&ps, -1);
	ok(ps.timeout_ms == -1, "a caller with no limit sets none");
	pollset_timeout(&ps, 500);
	pollset_timeout(&ps, 900);
	ok(ps.timeout_ms == 500, "the shortest timeout wins");
	pollset_timeout(&ps, (int64_t)1 << 40);
	ok(ps.timeout_ms == 500, "a huge one changes nothing");
	pollset_timeout(&ps, 0);
	ok(pollset_wait(&ps) == 1 && !ps.fds[a].revents && (ps.fds[b].revents & POLLOUT),
	   "an empty pipe: only its write end is ready");
	if (write(p[1], "x", 1) != 1)
		abort();
	ok(pollset_wait(&ps) == 2 && (ps.fds[a].revents & POLLIN), "a byte: the read end too");
	pollset_begin(&ps);
	ok(ps.n == 0 && ps.timeout_ms == -1 && ps.cap >= 5, "the next turn starts empty, memory kept");
	pollset_release(&ps);
	ok(!ps.fds && ps.cap == 0, "released");
	close(p[0]);
	close(p[1]);
	return done_testing();
}
