/*
 * diag.h - how the worker executable (supervisor and workers) complains:
 * one line on stderr, "asynccompile-worker[ N]: message".  A format that
 * ends in ':' gets ": " and strerror(errno) appended (samurai's rule), so
 * callers never format errno themselves.
 *
 * Only for code that runs in a process of its own: code inside make
 * reports through make (plugin/mk.h), never here.
 */
#ifndef ASYNC_DIAG_H
#define ASYNC_DIAG_H

#include <stddef.h>

/* Worker N from now on (-1: the supervisor or a command-line tool). */
void diag_set_worker(int index);
void diag_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Write a failure's text into a caller's fixed buffer (a decoder's `err`,
 * a connection's `why`) for whoever reports it later, and return `ret`,
 * so a module's fail macro is one line: the text is never empty.  This
 * one prints nothing, and so also serves code inside make (frame.c).
 */
int diag_why(char *dst, size_t size, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
