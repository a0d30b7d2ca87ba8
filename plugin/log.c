/*
 * log.c - the plugin's lines on stderr (log.h).  Make's thread and the
 * engine's I/O thread both call log_msg(); it keeps no state.  The debug
 * level is set once by make's thread at load, before any other thread
 * exists; the debug tally is make's thread's alone.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/err.h"
#include "plugin/log.h"

/* Kinds of misses the summary tells apart; the rest are counted as "other". */
#define LOG_KINDS 32
/* A kind's text is cut to this many bytes. */
#define LOG_KIND_MAX 80

static int log_level;

static struct {
	char *kind[LOG_KINDS];  /* "what (kind)", malloc'd */
	unsigned long count[LOG_KINDS];
	size_t n;
	unsigned long other, events;
} T;

void log_msg(const char *fmt, ...)
{
	static const char prefix[] = "asynccompile: ";
	struct buf line = BUF_INIT;
	int e = errno;
	va_list ap;

	buf_addstr(&line, prefix);
	errno = e; /* the prefix's allocation may have changed it */
	va_start(ap, fmt);
	err_failv(&line, fmt, ap); /* err.h's trailing-colon rule */
	va_end(ap);
	if (line.len > sizeof prefix - 1 + 1023)
		line.len = sizeof prefix - 1 + 1023;
	buf_addch(&line, '\n');
	(void)!write(2, line.data, line.len);
	buf_release(&line);
}

void log_debug_init(void)
{
	const char *dbg = getenv("ASYNC_COMPILE_DEBUG");
	char *end;
	long v;

	if (!dbg || !*dbg || !strcmp(dbg, "0")) {
		log_level = 0;
		return;
	}
	v = strtol(dbg, &end, 10);
	log_level = !*end && v >= 2 ? 2 : 1;
}

int log_debugging(void)
{
	return log_level > 0;
}

int log_debug_level(void)
{
	return log_level;
}

/*
 * The kind of a reason: its first part that reads as words (the parts
 * between ": " that hold no '/' and a blank), so that the same miss on
 * other paths or records counts as one kind; a changed variable keeps
 * its name, the one thing a user can act on.
 */
static void log_kind(struct buf *out, const char *what, const struct buf *why)
{
	static const char env[] = "the environment differs in ";
	const char *s = why->len ? (const char *)why->data : "?", *pick = s;
	size_t len = strlen(s);

	for (const char *p = s; *p;) {
		const char *end = strstr(p, ": ");
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if (memchr(p, ' ', n) && !memchr(p, '/', n)) {
			pick = p;
			len = n;
			break;
		}
		if (!end)
			break;
		p = end + 2;
	}
	if (len > LOG_KIND_MAX)
		len = LOG_KIND_MAX;
	buf_addf(out, "%s (", what);
	if (len > sizeof env - 1 && !strncmp(pick, env, sizeof env - 1)) {
		buf_addstr(out, "env ");
		buf_add(out, pick + sizeof env - 1, len - (sizeof env - 1));
	} else {
		buf_add(out, pick, len);
	}
	buf_addch(out, ')');
}

void log_debug(const char *what, const struct buf *why)
{
	struct buf k = BUF_INIT;
	size_t i;

	if (!log_level)
		return;
	if (log_level >= 2)
		log_msg("async-shell: %s: %s", what, why->len ? (char *)why->data : "?");
	T.events++;
	log_kind(&k, what, why);
	for (i = 0; i < T.n && strcmp(T.kind[i], (char *)k.data); i++)
		;
	if (i < T.n) {
		T.count[i]++;
	} else if (T.n < LOG_KINDS) {
		T.kind[T.n] = buf_detach(&k, NULL);
		T.count[T.n++] = 1;
	} else {
		T.other++;
	}
	buf_release(&k);
}

void log_debug_summary(unsigned long calls, const char *counts)
{
	struct buf line = BUF_INIT;
	int used[LOG_KINDS] = { 0 };

	if (!log_level || (!calls && !T.events))
		return;
	buf_addf(&line, "asynccompile: async-shell: %s", counts);
	if (!T.events)
		buf_addstr(&line, "; no misses");
	for (size_t k = 0; k < T.n; k++) {
		size_t best = T.n;

		for (size_t i = 0; i < T.n; i++)
			if (!used[i] && (best == T.n || T.count[i] > T.count[best]))
				best = i;
		used[best] = 1;
		buf_addf(&line, "%s%lu %s", k ? ", " : "; misses: ", T.count[best], T.kind[best]);
	}
	if (T.other)
		buf_addf(&line, ", %lu of other kinds", T.other);
	buf_addch(&line, '\n');
	(void)!write(2, line.data, line.len);
	buf_release(&line);
	for (size_t i = 0; i < T.n; i++)
		free(T.kind[i]);
	memset(&T, 0, sizeof T);
}
