/*
 * log.h - the plugin's own lines on stderr, "asynccompile: " and one line
 * of text, and async-shell's debug lines (ASYNC_COMPILE_DEBUG).
 *
 * Any thread may call these, make's or the engine's I/O thread, with or
 * without engine.lock: each line goes out in one write(2), past make's
 * stdio, so lines of the two threads never mix within a line.
 */
#ifndef ASYNC_LOG_H
#define ASYNC_LOG_H

#include "lib/buf.h"

/*
 * One line "asynccompile: <text>\n" (the text is cut at 1023 bytes).  A
 * format that ends in ':' gets strerror(errno), as err_fail() (lib/err.h).
 */
void log_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * At load, on make's thread: read ASYNC_COMPILE_DEBUG (set, and not "0":
 * say why async-shell did not use a store, a record or an answer).
 */
void log_debug_init(void);
/* Is it on?  Lets a caller skip working out a reason nobody will see. */
int log_debugging(void);
/* With debug on, "asynccompile: async-shell: <what>: <why>" ("?" if empty). */
void log_debug(const char *what, const struct buf *why);

#endif
