/* Turning captured output into make words, the way $(shell) does. */
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/msg_collect.h"
#include "plugin/mk.h"
#include "plugin/output.h"

/*
 * Like make's $(shell): "\r\n" and "\n" become one space, trailing
 * newlines are dropped (trailing blanks that were in the output stay), and
 * the text ends at the first NUL byte.
 */
char *output_fold(const void *p, size_t n)
{
	const char *s = p, *end;
	char *r, *d;
	size_t keep = 0;

	end = s ? memchr(s, 0, n) : NULL;
	if (end)
		n = (size_t)(end - s);
	r = malloc(n + 1);
	if (!r)
		abort();
	d = r;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\r' && i + 1 < n && s[i + 1] == '\n')
			continue;
		if (s[i] == '\n') {
			*d++ = ' ';
		} else {
			*d++ = s[i];
			keep = (size_t)(d - r);
		}
	}
	r[keep] = 0;
	return r;
}

void output_shell_quote(struct buf *b, const char *w)
{
	if (*w && strspn(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			   "0123456789_-+./:=,@%") == strlen(w)) {
		buf_addstr(b, w);
		return;
	}
	buf_addch(b, '\'');
	for (; *w; w++) {
		if (*w == '\'')
			buf_addstr(b, "'\\''");
		else
			buf_addch(b, *w);
	}
	buf_addch(b, '\'');
}

/*
 * A build step's output goes where a recipe line's would, stdout text to
 * fd 1 and stderr text to fd 2, in the order the step wrote it (the
 * collector of a recipe wait prints the same way: msg_result_emit).
 */
void output_print_result(const struct result_msg *r)
{
	msg_result_emit(r, mk_print);
}
