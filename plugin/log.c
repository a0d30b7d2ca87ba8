/*
 * log.c - the plugin's lines on stderr (log.h).  Make's thread and the
 * engine's I/O thread both call it; it keeps no state but the debug flag,
 * which make's thread sets once at load before any other thread exists.
 */
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
	struct buf text = BUF_INIT, b = BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	err_failv(&text, fmt, ap);	/* the trailing-colon rule (lib/err.h) */
	va_end(ap);
	buf_addf(&b, "asynccompile: %.*s\n", text.len > 1023 ? 1023 : (int)text.len,
		 text.len ? (char *)text.data : "");
	(void)!write(2, b.data, b.len);
	buf_release(&text);
	buf_release(&b);
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
