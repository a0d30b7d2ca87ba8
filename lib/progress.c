/* The status line of a wait: see progress.h. */
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "lib/progress.h"

int progress_width(int fd)
{
	struct winsize ws;

	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return PROGRESS_WIDTH;
}

/* Skip UTF-8 continuation bytes: a cut never starts inside a character. */
static const char *progress_char_start(const char *s, const char *end)
{
	while (s < end && ((unsigned char)*s & 0xc0) == 0x80)
		s++;
	return s;
}

/* The last byte to keep of s[0..n-1] so that no character is split. */
static size_t progress_char_cut(const char *s, size_t n)
{
	while (n && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return n;
}

void progress_format(struct buf *out, const struct progress *p, int width)
{
	char head[160];
	size_t max = width > 1 ? (size_t)width - 1 : 1, len, queued;
	int64_t ds = p->elapsed_ns > 0 ? p->elapsed_ns / 100000000 : 0; /* tenths */

	queued = p->total - p->done - p->running;
	if (p->done + p->running > p->total)
		queued = 0;
	if (ds < 600)
		snprintf(head, sizeof head, "asynccompile: %zu/%zu done, %zu running, %zu queued, %d.%ds",
			 p->done, p->total, p->running, queued, (int)(ds / 10), (int)(ds % 10));
	else
		snprintf(head, sizeof head, "asynccompile: %zu/%zu done, %zu running, %zu queued, %lldm%02ds",
			 p->done, p->total, p->running, queued, (long long)(ds / 600),
			 (int)(ds / 10 % 60));
	buf_addstr(out, PROGRESS_ERASE);
	len = strlen(head);
	if (len >= max) {
		buf_add(out, head, progress_char_cut(head, max));
		return;
	}
	buf_addstr(out, head);
	if (!p->oldest || !*p->oldest || max - len < 2 + 4)
		return;
	size_t room = max - len - 2, nl = strlen(p->oldest);

	buf_addstr(out, ": ");
	if (nl <= room) {
		buf_addstr(out, p->oldest);
		return;
	}
	/* a path's two ends say most: its first part and the file */
	size_t front = (room - 3) / 2, back = room - 3 - front;
	const char *end = p->oldest + nl, *tail = progress_char_start(end - back, end);

	buf_add(out, p->oldest, progress_char_cut(p->oldest, front));
	buf_addstr(out, "...");
	buf_add(out, tail, (size_t)(end - tail));
}
