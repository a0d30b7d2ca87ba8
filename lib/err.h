/*
 * err.h - the one way a failure is reported, in every process of the
 * tree (plugin, supervisor, workers, tests).
 *
 * The rules, for the callee:
 *  1. A function that can fail returns -1 (or NULL, or a value its header
 *     names as failure) and, when it has words for why, takes
 *     `struct buf *err` as its last parameter.
 *  2. It appends exactly one reason there with err_fail(), no newline, no
 *     "asynccompile:" prefix: whoever reports it adds those.
 *  3. A format that ends in ':' gets " " and strerror(errno) appended, the
 *     trailing-colon rule of samurai: nobody appends errno by hand
 *     (plugin/log.h and worker/diag.h keep the rule too).  strerror()
 *     is written out only where errno's text is not the end of the
 *     line: inside parentheses, or handed on as a reason of its own.
 *  4. A leaf that wraps one system call may instead return -1 with errno
 *     set, exactly as the call does; its caller words it with
 *     err_fail(err, "...:").
 *
 * For the caller:
 *  1. Pass a buffer it owns (a zeroed struct buf is empty); the callee
 *     only appends, never resets or frees it.
 *  2. Report it once, at the edge: inside make through plugin/mk.h, in a
 *     process of its own through worker/diag.h, in a frame as MSG_ERROR.
 *  3. Release it with buf_release().
 *
 * Allocation failure aborts (buf.h), so err_fail() itself cannot fail.
 */
#ifndef ASYNC_ERR_H
#define ASYNC_ERR_H

#include <stdarg.h>

#include "lib/buf.h"

/* Append fmt's text to err (a NULL err drops it) and return -1. */
int err_fail(struct buf *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int err_failv(struct buf *err, const char *fmt, va_list ap);

#endif
