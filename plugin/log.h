/*
 * log.h - the plugin's own lines on stderr, "asynccompile: " and one line
 * of text, and async-shell's debug output (ASYNC_COMPILE_DEBUG).
 *
 * Any thread may call log_msg(), make's or the engine's I/O thread, with
 * or without the_engine.lock: each line goes out in one write(2), past make's
 * stdio, so lines of the two threads never mix within a line.  The debug
 * calls are async-shell's: make's thread only.
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
 * At load, on make's thread: read ASYNC_COMPILE_DEBUG.  Unset, empty or
 * "0": off.  "1" (or any other text): each make ends with one summary
 * line (log_debug_summary).  "2" or more: also a line for each event, as
 * it happens.
 */
void log_debug_init(void);
/* Is it on (level 1 or more)?  Lets a caller skip working out a reason nobody will see. */
int log_debugging(void);
/* The level: 0, 1 or 2. */
int log_debug_level(void);
/*
 * Why async-shell did not use a store, a record or an answer: counted
 * for the summary by `what` and the kind of `why` (its text without the
 * paths and names that vary: "a path changed", "env OLDPWD"); at level 2
 * also said at once, "asynccompile: async-shell: <what>: <why>" ("?" if
 * empty).
 */
void log_debug(const char *what, const struct buf *why);
/*
 * With debug on, and anything to say (calls != 0, or events counted),
 * the one summary line: "asynccompile: async-shell: <counts>; misses: N
 * what (kind), ..." (most frequent first), or "; no misses".  At exit.
 */
void log_debug_summary(unsigned long calls, const char *counts);

#endif
