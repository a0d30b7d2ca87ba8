/*
 * Jobserver tokens across make's re-exec.
 *
 * After it has remade one of its makefiles, make executes itself again.  A
 * sub-make does so with no warning a plugin could see: no exit handler
 * runs, the pool's descriptors close on exec (so its workers kill their
 * jobs and exit), and the tokens the plugin held for those jobs would be
 * lost to the whole build; the top-level make would end with "INTERNAL:
 * Exiting with N jobserver tokens available; should be M!".  (The
 * top-level make itself drains the jobserver before it re-executes, which
 * the I/O thread notices: see slots_make_draining (slots.c).)
 *
 * What survives exec is the process id, the process's start time and the
 * environment.  So the bytes of the tokens held are kept in one string put
 * into the environment when the engine starts and changed in place (the environment
 * array is never touched again, so make's thread may use it meanwhile):
 *
 *     ASYNCCOMPILE_HELD_TOKENS=PID.START:SLOTS
 *
 * SLOTS is HELDTOK_MAX pairs of characters, one per token held: its byte
 * in hex, or "--" for a free slot (lib/heldtok.h).  The length never changes (execve()
 * measures each string before it copies it), a change writes one pair,
 * and a freed slot is the next one taken: a token given back and another
 * taken next land in the same pair, so a copy made during the change
 * counts one of them, not both, and a half-written pair counts as free.
 * The plugin loaded by the new image gives those tokens back when PID and
 * START are its own; any other process that inherits the string (a job, a
 * recipe, a sub-make) sees another PID or START and only drops it.
 *
 * Limits: at most HELDTOK_MAX tokens are remembered.  A token given back in
 * the microseconds between execve()'s copy of the environment and the end
 * of the old image is given back twice.  The new image gives the tokens
 * back at load, when the old image's jobs may still be dying (their pool
 * kills them as its pipes close).  A new image that does not load the
 * plugin loses them.  Two different copies of the plugin in one make
 * would each take the other's record for its own.
 *
 * The same record serves make's fatal signals (fatal.c): make's handler
 * ends the process without exit handlers, so a handler of ours gives back
 * every token the record holds first, reexec_give_back_held().  It runs
 * on make's thread while the I/O thread may be taking or giving back a
 * token, so a slot is claimed by an atomic swap to "--" (a pair is one
 * aligned 16-bit word): whoever empties a slot gives its byte back, the
 * other side does not, and no byte goes back twice or without being
 * held.  What the handler cannot see is lost with the process: a token
 * between its read() and its slot (the I/O thread looks for the dying
 * mark after filling the slot and gives it back itself, if the process
 * lives that long), one beyond HELDTOK_MAX, one between its slot's release
 * and its write().
 *
 * SIGKILL runs no handler at all.  So the string lives in memory shared
 * with a guard process (a memfd, mapped MAP_SHARED; plugin/guard.c
 * starts it, worker/guard.c is its code), which outlives make and, once
 * this image has ended, empties the slots the same atomic way and gives
 * their tokens back.  The exchange makes the handler, the guard and the
 * I/O thread agree on who gives each token back.  A guarded record ends
 * in "g" (else "-"): the image a re-exec starts leaves such a record's
 * tokens to the guard, which sees the old image end on exec as on death,
 * so they go back once, and with what the old image held at its very
 * end rather than at execve()'s copy.  Without a memfd the string is on
 * the heap, as before: no guard, and SIGKILL loses the tokens held.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/heldtok.h"
#include "plugin/engine.h"
#include "plugin/mk.h"
#include "plugin/reexec.h"
#include "plugin/log.h"

#define REEXEC_SIZE (sizeof HELDTOK_NAME "=" + 48 + 2 * HELDTOK_MAX + 1)

/*
 * In the shared mapping (else on the heap), never freed: the environment
 * keeps pointing at it, and make 4.4 may unload this object (when it
 * remakes it) while make lives on.
 */
static char *reexec_env;
/* the memfd under it, close-on-exec, for the guard; -1: none */
static int reexec_memfd = -1;
/* SLOTS inside reexec_env, one 2-aligned word per slot; NULL: no record */
static uint16_t *reexec_slots;
/* free slots, stacked with the last freed on top (I/O thread only) */
static int reexec_free[HELDTOK_MAX], reexec_nfree;
/* tokens held beyond HELDTOK_MAX, in no slot (I/O thread only) */
static unsigned reexec_overflow;
/* where a signal handler gives the held tokens back */
static const struct jobserver *reexec_js;

/* This process's start time in clock ticks (field 22 of /proc/self/stat), or 0. */
static unsigned long long reexec_start_time(void)
{
	char state;
	unsigned long flags;
	unsigned long long t;

	return heldtok_proc((long)getpid(), &state, &flags, &t) == 0 ? t : 0;
}

/* Give back what the image before us recorded, if it was this very process. */
static void reexec_give_back(const char *v, const char *me)
{
	unsigned char tok[HELDTOK_MAX];
	size_t n = 0, mlen = strlen(me);
	struct js_auth a;

	if (strncmp(v, me, mlen) || v[mlen] != ':')
		return;
	/* the guard gives them back: it saw this image end */
	if (heldtok_guarded(v + mlen + 1))
		return;
	for (v += mlen + 1; v[0] && v[1] && n < HELDTOK_MAX; v += 2) {
		int r = heldtok_unpair(v, &tok[n]);

		if (r < 0)
			return; /* not ours after all */
		n += (size_t)r;
	}
	if (!n || !js_parse_auth(getenv("MAKEFLAGS"), &a))
		return;
	if (js_give_back(&a, tok, n) < 0)
		log_msg("could not give back %zu jobserver token(s) held before make "
			   "re-executed itself", n);
	js_auth_release(&a);
}

void reexec_init(void)
{
	static int done;
	const char *v = getenv(HELDTOK_NAME);
	char me[48];

	if (done++ || !v)
		return;
	/* compare "PID.START" only: ours is the text between '=' and ':' */
	snprintf(me, sizeof me, "%ld.%llu", (long)getpid(), reexec_start_time());
	reexec_give_back(v, me);
	unsetenv(HELDTOK_NAME);
	/* imported by make at startup: not for its recipes */
	mk_eval("undefine " HELDTOK_NAME);
}

/*
 * Memory for the record: a page of a memfd shared with the guard, or the
 * heap.  One byte of slack is left for reexec_arm to put SLOTS on an
 * even address.
 */
static char *reexec_memory(void)
{
	void *m;
	int fd = memfd_create("asynccompile-held-tokens", MFD_CLOEXEC);

	if (fd >= 0 && ftruncate(fd, REEXEC_SIZE + 1) == 0 &&
	    (m = mmap(NULL, REEXEC_SIZE + 1, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) !=
		    MAP_FAILED) {
		reexec_memfd = fd;
		return m;
	}
	if (fd >= 0)
		close(fd);
	return malloc(REEXEC_SIZE + 1);
}

void reexec_arm(void)
{
	static int done;
	char *base;
	int len;
	long pid = (long)getpid();
	unsigned long long start;

	if (done++)
		return;
	start = reexec_start_time();
	len = snprintf(NULL, 0, "%s=%ld.%llu:", HELDTOK_NAME, pid, start);
	if (len < 0 || (size_t)len >= REEXEC_SIZE - 2 * HELDTOK_MAX - 1 ||
	    !(base = reexec_memory()))
		return;
	/* one byte of slack puts SLOTS on an even address */
	reexec_env = base + (((uintptr_t)base + (size_t)len) & 1);
	base[0] = 0;
	snprintf(reexec_env, REEXEC_SIZE, "%s=%ld.%llu:", HELDTOK_NAME, pid, start);
	reexec_slots = (uint16_t *)(void *)(reexec_env + len);
	/* the slots, and G: not guarded (yet) */
	memset(reexec_env + len, '-', 2 * HELDTOK_MAX + 1);
	reexec_env[len + 2 * HELDTOK_MAX + 1] = 0;
	for (int i = 0; i < HELDTOK_MAX; i++)
		reexec_free[i] = HELDTOK_MAX - 1 - i; /* slot 0 on top */
	reexec_nfree = HELDTOK_MAX;
	if (putenv(reexec_env)) {
		reexec_slots = NULL;
		if (reexec_memfd >= 0)
			close(reexec_memfd);
		reexec_memfd = -1;
	}
}

int reexec_record_fd(void)
{
	return reexec_slots ? reexec_memfd : -1;
}

void reexec_guarded(int on)
{
	if (reexec_slots)
		__atomic_store_n((char *)(reexec_slots + HELDTOK_MAX),
				 on ? HELDTOK_GUARDED : '-', __ATOMIC_SEQ_CST);
}

void reexec_jobserver(const struct jobserver *js)
{
	reexec_js = js;
}

int reexec_hold(unsigned char tok, int delta)
{
	uint16_t want = heldtok_pair(tok);
	int i;

	if (!reexec_slots)
		return 1;
	if (delta > 0) {
		if (!reexec_nfree) {
			reexec_overflow++; /* not remembered */
			return 1;
		}
		i = reexec_free[--reexec_nfree];
		__atomic_store_n(&reexec_slots[i], want, __ATOMIC_SEQ_CST);
		return 1;
	}
	/* any slot with this byte will do: equal bytes are the same token */
	for (i = 0; i < HELDTOK_MAX; i++) {
		uint16_t cur = want;

		if (__atomic_load_n(&reexec_slots[i], __ATOMIC_SEQ_CST) == want &&
		    __atomic_compare_exchange_n(&reexec_slots[i], &cur, HELDTOK_EMPTY, 0,
						__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
			reexec_free[reexec_nfree++] = i;
			return 1;
		}
	}
	if (reexec_overflow) {
		reexec_overflow--;
		return 1;
	}
	return 0; /* reexec_give_back_held() or the guard gave it back */
}

void reexec_give_back_held(void)
{
	unsigned char tok[HELDTOK_MAX];
	size_t n;
	int fd;

	if (!reexec_slots || !reexec_js)
		return;
	n = heldtok_take_all(reexec_slots, tok);
	/* a slot is only filled while the jobserver it came from is open */
	if (!n || (fd = js_write_end(reexec_js)) < 0)
		return;
	(void)heldtok_write(fd, tok, n);
	close(fd);
}
