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
 * SLOTS is REEXEC_MAX pairs of characters, one per token held: its byte
 * in hex, or "--" for a free slot.  The length never changes (execve()
 * measures each string before it copies it), a change writes one pair,
 * and a freed slot is the next one taken: a token given back and another
 * taken next land in the same pair, so a copy made during the change
 * counts one of them, not both, and a half-written pair counts as free.
 * The plugin loaded by the new image gives those tokens back when PID and
 * START are its own; any other process that inherits the string (a job, a
 * recipe, a sub-make) sees another PID or START and only drops it.
 *
 * Limits: at most REEXEC_MAX tokens are remembered.  A token given back in
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
 * lives that long), one beyond REEXEC_MAX, one between its slot's release
 * and its write().
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugin/engine.h"
#include "plugin/mk.h"
#include "plugin/reexec.h"
#include "plugin/log.h"

#define REEXEC_NAME "ASYNCCOMPILE_HELD_TOKENS"
#define REEXEC_MAX 256

#define REEXEC_SIZE (sizeof REEXEC_NAME "=" + 48 + 2 * REEXEC_MAX)

/*
 * On the heap, never freed: the environment keeps pointing at it, and make
 * 4.4 may unload this object (when it remakes it) while make lives on.
 */
static char *reexec_env;
/* SLOTS inside reexec_env, one 2-aligned word per slot; NULL: no record */
static uint16_t *reexec_slots;
/* free slots, stacked with the last freed on top (I/O thread only) */
static int reexec_free[REEXEC_MAX], reexec_nfree;
/* tokens held beyond REEXEC_MAX, in no slot (I/O thread only) */
static unsigned reexec_overflow;
/* where a signal handler gives the held tokens back */
static const struct jobserver *reexec_js;
static const char reexec_hexd[] = "0123456789abcdef";
#define REEXEC_EMPTY 0x2d2d /* "--" in either byte order */

static uint16_t reexec_pair(unsigned char tok)
{
	char c[2] = { reexec_hexd[tok >> 4], reexec_hexd[tok & 15] };
	uint16_t v;

	memcpy(&v, c, 2);
	return v;
}

/* This process's start time in clock ticks (field 22 of /proc/self/stat), or 0. */
static unsigned long long reexec_start_time(void)
{
	char buf[1024];
	unsigned long long t = 0;
	FILE *f = fopen("/proc/self/stat", "re");
	size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
	char *p;

	if (f)
		fclose(f);
	buf[n] = 0;
	/* the name in parentheses may hold blanks: count fields after it */
	p = strrchr(buf, ')');
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (p)
		t = strtoull(p + 1, NULL, 10);
	return t;
}

static int reexec_unhex(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Give back what the image before us recorded, if it was this very process. */
static void reexec_give_back(const char *v, const char *me)
{
	unsigned char tok[REEXEC_MAX];
	size_t n = 0, mlen = strlen(me);
	struct js_auth a;

	if (strncmp(v, me, mlen) || v[mlen] != ':')
		return;
	for (v += mlen + 1; v[0] && v[1] && n < REEXEC_MAX; v += 2) {
		int hi = reexec_unhex(v[0]), lo = reexec_unhex(v[1]);

		if (hi >= 0 && lo >= 0)
			tok[n++] = (unsigned char)(hi << 4 | lo);
		else if ((hi < 0 && v[0] != '-') || (lo < 0 && v[1] != '-'))
			return; /* not ours after all */
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
	const char *v = getenv(REEXEC_NAME);
	char me[48];

	if (done++ || !v)
		return;
	/* compare "PID.START" only: ours is the text between '=' and ':' */
	snprintf(me, sizeof me, "%ld.%llu", (long)getpid(), reexec_start_time());
	reexec_give_back(v, me);
	unsetenv(REEXEC_NAME);
	/* imported by make at startup: not for its recipes */
	mk_eval("undefine " REEXEC_NAME);
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
	len = snprintf(NULL, 0, "%s=%ld.%llu:", REEXEC_NAME, pid, start);
	if (len < 0 || (size_t)len >= REEXEC_SIZE - 2 * REEXEC_MAX ||
	    !(base = malloc(REEXEC_SIZE + 1)))
		return;
	/* one byte of slack puts SLOTS on an even address */
	reexec_env = base + (((uintptr_t)base + (size_t)len) & 1);
	snprintf(reexec_env, REEXEC_SIZE, "%s=%ld.%llu:", REEXEC_NAME, pid, start);
	reexec_slots = (uint16_t *)(void *)(reexec_env + len);
	memset(reexec_env + len, '-', 2 * REEXEC_MAX);
	reexec_env[len + 2 * REEXEC_MAX] = 0;
	for (int i = 0; i < REEXEC_MAX; i++)
		reexec_free[i] = REEXEC_MAX - 1 - i; /* slot 0 on top */
	reexec_nfree = REEXEC_MAX;
	if (putenv(reexec_env))
		reexec_slots = NULL;
}

void reexec_jobserver(const struct jobserver *js)
{
	reexec_js = js;
}

int reexec_hold(unsigned char tok, int delta)
{
	uint16_t want = reexec_pair(tok);
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
	for (i = 0; i < REEXEC_MAX; i++) {
		uint16_t cur = want;

		if (__atomic_load_n(&reexec_slots[i], __ATOMIC_SEQ_CST) == want &&
		    __atomic_compare_exchange_n(&reexec_slots[i], &cur, REEXEC_EMPTY, 0,
						__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
			reexec_free[reexec_nfree++] = i;
			return 1;
		}
	}
	if (reexec_overflow) {
		reexec_overflow--;
		return 1;
	}
	return 0; /* reexec_give_back_held() gave it back */
}

void reexec_give_back_held(void)
{
	unsigned char tok[REEXEC_MAX];
	size_t n = 0;
	int fd;

	if (!reexec_slots || !reexec_js)
		return;
	for (int i = 0; i < REEXEC_MAX; i++) {
		uint16_t v = __atomic_exchange_n(&reexec_slots[i], REEXEC_EMPTY, __ATOMIC_SEQ_CST);
		char c[2];
		int hi, lo;

		memcpy(c, &v, 2);
		hi = reexec_unhex(c[0]);
		lo = reexec_unhex(c[1]);
		if (hi >= 0 && lo >= 0)
			tok[n++] = (unsigned char)(hi << 4 | lo);
	}
	/* a slot is only filled while the jobserver it came from is open */
	if (!n || (fd = js_write_end(reexec_js)) < 0)
		return;
	for (size_t off = 0; off < n;) {
		ssize_t w = write(fd, tok + off, n - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	close(fd);
}
