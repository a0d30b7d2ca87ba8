/*
 * The record of held jobserver tokens (lib/heldtok.h) and the token guard
 * that reads it once make is gone (worker/guard.c): each token the record
 * holds goes back once, whoever empties its slot first, and the guard
 * holds no write end of the jobserver while it waits.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/heldtok.h"
#include "pool/start.h"
#include "t/unit/tap.h"

/* A record as plugin/reexec.c lays it out: "NAME=PID.START:" SLOTS G. */
static char *t_record(char *base, long pid, int guarded, uint16_t **slots)
{
	int len = sprintf(base, "%s=%ld.%llu:", HELDTOK_NAME, pid, 12345ULL);
	char *rec = base;

	if (len & 1) { /* SLOTS on an even address, a byte of slack first */
		rec = base + 1;
		base[0] = 0;
		sprintf(rec, "%s=%ld.%llu:", HELDTOK_NAME, pid, 12345ULL);
	}
	memset(rec + len, '-', 2 * HELDTOK_MAX);
	rec[len + 2 * HELDTOK_MAX] = guarded ? HELDTOK_GUARDED : '-';
	rec[len + 2 * HELDTOK_MAX + 1] = 0;
	*slots = (uint16_t *)(void *)(rec + len);
	return rec;
}

static void test_format(void)
{
	char base[1024], c[2];
	unsigned char tok = 0, out[HELDTOK_MAX];
	uint16_t *slots, p = heldtok_pair(0xa7);
	long pid;
	unsigned long long start;
	char *rec, *s;

	memcpy(c, &p, 2);
	ok(heldtok_unpair(c, &tok) == 1 && tok == 0xa7, "a pair is its byte in hex");
	ok(heldtok_unpair("--", &tok) == 0, "\"--\" is a free slot");
	ok(heldtok_unpair("3-", &tok) == 0, "a half-written pair counts as free");
	ok(heldtok_unpair("x1", &tok) == -1, "anything else is not a slot");

	rec = t_record(base, 4242, 0, &slots);
	s = heldtok_parse(rec, &pid, &start);
	ok(s == (char *)slots && pid == 4242 && start == 12345, "the record parses");
	ok(!heldtok_guarded(s), "a record made unguarded says so");
	rec = t_record(base, 4242, 1, &slots);
	ok(heldtok_guarded(heldtok_parse(rec, &pid, &start)), "a guarded record says so");
	ok(!heldtok_guarded("61"), "a record without G is not guarded");
	ok(!heldtok_parse("OTHER=1.2:--", &pid, &start) &&
	   !heldtok_parse(HELDTOK_NAME "=1:--", &pid, &start), "other text does not parse");

	slots[3] = heldtok_pair('a');
	slots[200] = heldtok_pair('b');
	is_int((int)heldtok_take_all(slots, out), 2, "take_all: the two tokens held");
	ok(out[0] == 'a' && out[1] == 'b', "take_all: their very bytes");
	is_int((int)heldtok_take_all(slots, out), 0, "take_all again: nothing (no token twice)");
}

/* read what the pipe holds now, without blocking: bytes, or -1 at EOF */
static int t_drain(int fd, char *got, size_t max)
{
	size_t n = 0;

	for (;;) {
		ssize_t r = read(fd, got + n, max - n);

		if (r > 0) {
			n += (size_t)r;
			continue;
		}
		if (r == 0 && !n)
			return -1;
		got[n] = 0;
		return (int)n;
	}
}

/*
 * The guard of a make that held 'a' and 'b' (and had given 'c' back):
 * nothing while make lives, both once its pipe ends, and no write end
 * held meanwhile (the top-level make drains until EOF).
 */
static void test_guard(const char *exe)
{
	int js[2], mfd, to, from, fds[2], st;
	char *base, got[64], pidbuf[32];
	uint16_t *slots;
	pid_t pid;

	if (pipe2(js, O_CLOEXEC | O_NONBLOCK) < 0 ||
	    (mfd = memfd_create("test-heldtok", MFD_CLOEXEC)) < 0 || ftruncate(mfd, 4096) < 0 ||
	    (base = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0)) == MAP_FAILED) {
		ok(0, "set-up: %s", strerror(errno));
		return;
	}
	t_record(base, (long)getpid(), 1, &slots);
	slots[0] = heldtok_pair('a');
	slots[1] = heldtok_pair('b');
	(void)!write(js[1], "c", 1);
	fds[0] = mfd;
	fds[1] = js[0];
	snprintf(pidbuf, sizeof pidbuf, "%ld", (long)getpid());
	char *argv[] = { (char *)exe, "--guard", pidbuf, NULL };
	if (start_process(exe, argv, NULL, fds, 2, 1, &to, &from, &pid) < 0) {
		ok(0, "start the guard: %s", strerror(errno));
		return;
	}
	/* a record the guard has mapped: it changes with ours */
	slots[1] = HELDTOK_EMPTY; /* 'b' went back through make */
	(void)!write(js[1], "b", 1);
	is_string(t_drain(js[0], got, sizeof got - 1) >= 0 ? got : "EOF", "cb",
		  "while make lives the guard gives nothing back");
	close(js[1]);
	is_int(t_drain(js[0], got, sizeof got - 1), -1,
	       "the guard holds no write end of the jobserver while it waits");
	close(to);
	struct pollfd p = { .fd = from, .events = POLLIN };
	ok(poll(&p, 1, 30000) == 1 && read(from, got, 1) == 0, "the guard ends with make");
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the guard exits 0");
	is_string(t_drain(js[0], got, sizeof got - 1) >= 0 ? got : "EOF", "a",
		  "the token make still held comes back, once");
	ok(slots[0] == HELDTOK_EMPTY && slots[1] == HELDTOK_EMPTY, "the record is empty");
	close(from);
	close(js[0]);
	close(mfd);
}

int main(void)
{
	const char *env = getenv("ASYNC_COMPILE_WORKER");
	const char *exe = env && *env ? env : "worker/asynccompile-worker";

	test_format();
	if (access(exe, X_OK))
		ok(1, "# SKIP no worker executable at %s (run from the top of the tree)", exe);
	else
		test_guard(exe);
	return done_testing();
}
