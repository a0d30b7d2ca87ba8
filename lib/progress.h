/*
 * progress.h - the status line a wait draws on a terminal (config
 * `progress`), as ninja draws its own: how many of the wait's steps are
 * done out of how many, how many run and wait in the queue, how long the
 * wait has lasted, and the name of the step that has run longest.  One
 * line, redrawn in place ("\r", the line, erase to its end) and cut to
 * the terminal's width so it never wraps.
 *
 * Drawn by make's thread in a wait while makefiles are read
 * (plugin/engine.c) and by a recipe wait's collector (worker/collect.c);
 * the rules for when (a terminal, not -s, nothing that could wipe what
 * a recipe printed) are theirs.  Pure: nothing here prints, keeps state
 * or exits.
 */
#ifndef ASYNC_PROGRESS_H
#define ASYNC_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"

/* The width the line is cut to when the terminal's is unknown. */
#define PROGRESS_WIDTH 80

struct progress {
	size_t done, total, running;
	const char *oldest;     /* the running step that started first, or NULL */
	int64_t elapsed_ns;     /* since the wait began */
};

/* The columns of the terminal on fd (TIOCGWINSZ), else PROGRESS_WIDTH. */
int progress_width(int fd);
/*
 * Append the line to out: "\r\033[K" then "asynccompile: D/N done, R
 * running, Q queued, 1.5s: NAME", at most width - 1 columns (the last
 * one would wrap on some terminals): a long name loses its middle to
 * "...", and what still does not fit is cut.
 */
void progress_format(struct buf *out, const struct progress *p, int width);
/* What erases a drawn line. */
#define PROGRESS_ERASE "\r\033[K"

#endif
