/*
 * log.c - the plugin's lines on stderr (log.h).  Make's thread and the
 * engine's I/O thread both call it; it keeps no state but the debug flag,
 * which make's thread sets once at load before any other thread exists.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/err.h"
#include "plugin/log.h"

static int log_debug_on;

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

	log_debug_on = dbg && *dbg && strcmp(dbg, "0");
}

int log_debugging(void)
{
	return log_debug_on;
}

void log_debug(const char *what, const struct buf *why)
{
	if (log_debug_on)
		log_msg("async-shell: %s: %s", what, why->len ? (char *)why->data : "?");
}
