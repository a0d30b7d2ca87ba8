/*
 * cfg.c - what the loader (config.c), the key parsers (keys.c) and the
 * dumper (config_dump.c) share: allocation that aborts, messages that say
 * where in the file, user text made safe to show.  cfg.h is the manual.
 */
#include "config/cfg.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/err.h"

/* ---- memory ---- */

char *cfg_strdup(const char *s)
{
	struct buf b = BUF_INIT;

	buf_addstr(&b, s);
	return buf_detach(&b, NULL);
}

/* Same policy as buf.c: a malloc failure is not recoverable here. */
void *cfg_calloc(size_t n, size_t size)
{
	static const char msg[] = "asynccompile: out of memory\n";
	void *p = calloc(n ? n : 1, size);

	if (!p) {
		(void)!write(2, msg, sizeof(msg) - 1);
		abort();
	}
	return p;
}

/* ---- messages ---- */

int cfg_fail(struct cfg_ctx *x, const yaml_mark_t *m, const char *fmt, ...)
{
	struct buf msg = BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	buf_vaddf(&msg, fmt, ap);
	va_end(ap);
	/* env names reach here unclipped: one message stays under 1 KiB */
	err_fail(x->err, "%s:%zu:%zu: %.1023s", x->name, m->line + 1, m->column + 1,
		 msg.len ? (char *)msg.data : "");
	buf_release(&msg);
	return -1;
}

/*
 * Render user text for a message: one line, bounded, control bytes escaped.
 * UTF-8 passes through (libyaml guarantees it is valid) and is never cut
 * inside a sequence.
 */
const char *cfg_show(char *out, size_t size, const char *s, size_t n)
{
	size_t o = 0, i = 0;
	const size_t limit = 48;

	while (i < n && o + 8 < size) {
		unsigned char ch = (unsigned char)s[i];
		size_t seq = ch < 0x80 ? 1 : ch >= 0xf0 ? 4 : ch >= 0xe0 ? 3 : 2;

		if (i >= limit) {
			memcpy(out + o, "...", 3);
			o += 3;
			break;
		}
		if (ch == '\n') {
			out[o++] = '\\';
			out[o++] = 'n';
		} else if (ch == '\t') {
			out[o++] = '\\';
			out[o++] = 't';
		} else if (ch < 0x20 || ch == 0x7f) {
			o += (size_t)snprintf(out + o, size - o, "\\x%02x", ch);
		} else {
			if (seq > n - i)
				seq = n - i;
			memcpy(out + o, s + i, seq);
			o += seq;
			i += seq;
			continue;
		}
		i++;
	}
	out[o] = 0;
	return out;
}

const char *cfg_kind(const yaml_node_t *n)
{
	switch (n->type) {
	case YAML_SEQUENCE_NODE: return "a sequence";
	case YAML_MAPPING_NODE: return "a mapping";
	default: return "nothing";
	}
}

int cfg_is_null(const yaml_node_t *n)
{
	static const char *const nulls[] = { "", "~", "null", "Null", "NULL" };
	const char *s = (const char *)n->data.scalar.value;

	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	for (size_t i = 0; i < sizeof(nulls) / sizeof(nulls[0]); i++)
		if (n->data.scalar.length == strlen(nulls[i]) && !strcmp(s, nulls[i]))
			return 1;
	return 0;
}
