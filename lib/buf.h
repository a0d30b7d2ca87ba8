/*
 * buf.h - growable byte buffer (the project's strbuf).
 *
 * A struct buf owns its storage.  `data` is always NUL-terminated when
 * non-NULL (the NUL is not counted in `len`), so text can be used as a C
 * string; binary content may contain NULs.  A zeroed struct buf is a valid
 * empty buffer.  Allocation failure aborts the process (buf_* are used both
 * inside make and in the worker; a malloc failure is not recoverable in
 * either and silently truncating a job's output would be worse).
 */
#ifndef ASYNC_BUF_H
#define ASYNC_BUF_H

#include <stdarg.h>

#include <stddef.h>
#include <stdint.h>

struct buf {
	unsigned char *data;
	size_t len;
	size_t cap;
};

#define BUF_INIT { NULL, 0, 0 }

void buf_grow(struct buf *b, size_t extra);
void buf_add(struct buf *b, const void *p, size_t n);
void buf_addstr(struct buf *b, const char *s);
void buf_addch(struct buf *b, int c);
void buf_addf(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void buf_vaddf(struct buf *b, const char *fmt, va_list ap);
/* Drop the first n bytes (n <= len). */
void buf_consume(struct buf *b, size_t n);
void buf_reset(struct buf *b);
/* Free storage; the buffer is empty and reusable afterwards. */
void buf_release(struct buf *b);
/* Hand the storage to the caller (never NULL; "" when empty). */
char *buf_detach(struct buf *b, size_t *len);
/*
 * Append what fd reads until end-of-file, an error, or b->len reaching
 * max (0: no limit); EINTR is retried.  Returns 0 at end-of-file, else -1
 * (errno; EFBIG at max).  The descriptor stays the caller's, open.
 */
int buf_read_fd(struct buf *b, int fd, size_t max);

#endif
