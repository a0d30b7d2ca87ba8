#include "lib/buf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void buf_oom(void)
{
	static const char msg[] = "asynccompile: out of memory\n";
	(void)!write(2, msg, sizeof msg - 1);
	abort();
}

void buf_grow(struct buf *b, size_t extra)
{
	size_t need, cap;
	unsigned char *p;

	if (extra > SIZE_MAX - b->len - 1)
		buf_oom();
	need = b->len + extra + 1;
	if (need <= b->cap)
		return;
	cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	p = realloc(b->data, cap);
	if (!p)
		buf_oom();
	b->data = p;
	b->cap = cap;
}

void buf_add(struct buf *b, const void *p, size_t n)
{
	buf_grow(b, n);
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = 0;
}

void buf_addstr(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

void buf_addch(struct buf *b, int c)
{
	unsigned char ch = (unsigned char)c;
	buf_add(b, &ch, 1);
}

void buf_vaddf(struct buf *b, const char *fmt, va_list ap)
{
	va_list again;
	int n;

	va_copy(again, ap);
	n = vsnprintf(NULL, 0, fmt, ap);
	if (n >= 0) {
		buf_grow(b, (size_t)n);
		vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, again);
		b->len += (size_t)n;
	}
	va_end(again);
}

void buf_addf(struct buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	buf_vaddf(b, fmt, ap);
	va_end(ap);
}

void buf_consume(struct buf *b, size_t n)
{
	if (n >= b->len) {
		buf_reset(b);
		return;
	}
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
	b->data[b->len] = 0;
}

void buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = 0;
}

void buf_release(struct buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

char *buf_detach(struct buf *b, size_t *len)
{
	char *p;

	if (!b->data)
		buf_grow(b, 0), b->data[0] = 0;
	p = (char *)b->data;
	if (len)
		*len = b->len;
	b->data = NULL;
	b->len = b->cap = 0;
	return p;
}

int buf_read_fd(struct buf *b, int fd, size_t max)
{
	for (;;) {
		ssize_t n;

		buf_grow(b, 4096);
		n = read(fd, b->data + b->len, 4096);
		if (n > 0) {
			b->len += (size_t)n;
			b->data[b->len] = 0;
			if (max && b->len >= max) {
				errno = EFBIG;
				return -1;
			}
		} else if (n == 0) {
			return 0;
		} else if (errno != EINTR) {
			return -1;
		}
	}
}
