/*
 * diag.h - how the worker executable (supervisor and workers) complains:
 * one line on stderr, "asynccompile-worker[ N]: message".  The edge where
 * a reason (err.h) is reported; like err_fail(), a format that ends in
 * ':' gets " " and strerror(errno) appended, so callers never format
 * errno themselves.
 *
 * Only for code that runs in a process of its own: code inside make
 * reports through make (plugin/mk.h), never here.
 */
#ifndef ASYNC_DIAG_H
#define ASYNC_DIAG_H

/* Worker N from now on (-1: the supervisor or a command-line tool). */
void diag_set_worker(int index);
void diag_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
