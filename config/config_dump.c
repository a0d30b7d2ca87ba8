/*
 * config_dump.c - the effective configuration as YAML that
 * config_load_mem() reads back to the same values (the round trip is
 * tested and fuzzed): a walk of the key table, one writer per kind of
 * value.
 */
#include "config/config.h"
#include "config/keys.h"

#include <inttypes.h>
#include <string.h>

/*
 * Decode one UTF-8 sequence at s; returns its length, or 0 when the bytes
 * are not valid UTF-8 (possible only for values set outside the loader).
 */
static size_t dump_utf8(const unsigned char *s, uint32_t *cp)
{
	size_t n, i;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if ((s[0] & 0xe0) == 0xc0) {
		*cp = s[0] & 0x1f;
		n = 2;
	} else if ((s[0] & 0xf0) == 0xe0) {
		*cp = s[0] & 0x0f;
		n = 3;
	} else if ((s[0] & 0xf8) == 0xf0) {
		*cp = s[0] & 0x07;
		n = 4;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		*cp = *cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 2 && *cp < 0x80) || (n == 3 && *cp < 0x800) ||
	    (n == 4 && (*cp < 0x10000 || *cp > 0x10ffff)) ||
	    (*cp >= 0xd800 && *cp <= 0xdfff))
		return 0;
	return n;
}

/*
 * Characters a double-quoted scalar may hold literally.  Everything else is
 * escaped, including what YAML 1.1 folds as a line break (NEL, LS, PS) and
 * the BOM, so the reader gives back exactly the same string.
 */
static int dump_literal(uint32_t cp)
{
	return (cp >= 0x20 && cp <= 0x7e && cp != '"' && cp != '\\') ||
		(cp >= 0xa0 && cp <= 0xd7ff && cp != 0x2028 && cp != 0x2029) ||
		(cp >= 0xe000 && cp <= 0xfffd && cp != 0xfeff) ||
		(cp >= 0x10000 && cp <= 0x10ffff);
}

static void dump_quoted(struct buf *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	buf_addch(out, '"');
	while (*s) {
		uint32_t cp;
		size_t n = dump_utf8(s, &cp);

		if (!n) {
			buf_addf(out, "\\x%02x", *s++);
			continue;
		}
		if (dump_literal(cp))
			buf_add(out, s, n);
		else if (cp == '"' || cp == '\\')
			buf_addf(out, "\\%c", (int)cp);
		else if (cp == '\n')
			buf_addstr(out, "\\n");
		else if (cp == '\t')
			buf_addstr(out, "\\t");
		else if (cp < 0x100)
			buf_addf(out, "\\x%02x", (unsigned)cp);
		else if (cp < 0x10000)
			buf_addf(out, "\\u%04x", (unsigned)cp);
		else
			buf_addf(out, "\\U%08x", (unsigned)cp);
		s += n;
	}
	buf_addch(out, '"');
}

/* The largest unit the key shows that represents the value exactly. */
static void dump_number(struct buf *out, const struct cfg_unit *units, int64_t v)
{
	const struct cfg_unit *best = NULL;

	for (const struct cfg_unit *u = units; v > 0 && u->suffix; u++)
		if (u->shown && (uint64_t)v % u->mult == 0 && (!best || u->mult > best->mult))
			best = u;
	if (best)
		buf_addf(out, "%" PRIu64 "%s", (uint64_t)v / best->mult, best->suffix);
	else
		buf_addf(out, "%" PRId64, v);
}

static void dump_word(struct buf *out, const char *const *words, int v)
{
	int n = 0;

	while (words[n])
		n++;
	buf_addstr(out, v >= 0 && v < n ? words[v] : "unknown");
}

/* The source on one line: a comment ends at a line break. */
static void dump_source(struct buf *out, const struct config *c)
{
	for (const char *p = c->source ? c->source : ""; *p; p++)
		buf_addch(out, (unsigned char)*p < 0x20 || *p == 0x7f ? '?' : *p);
}

/* One key, "NAME: VALUE\n" or a mapping's lines; `origin` ends its first line. */
static void dump_key(struct buf *out, const struct config *c, size_t i, int origin)
{
	const struct cfg_key *k = &keys_table[i];
	char *const *v;

	/* a mapping's entries go on the lines after its key */
	buf_addf(out, "%s:%s", k->name, k->type == CFG_ENV ? "" : " ");
	switch (k->type) {
	case CFG_WORD:
		dump_word(out, k->words, *CFG_CFIELD(c, k, int));
		break;
	case CFG_INT:
		if ((k->flags & CFG_AUTO) && *CFG_CFIELD(c, k, int) <= 0)
			buf_addstr(out, "auto");
		else
			dump_number(out, k->units, *CFG_CFIELD(c, k, int));
		break;
	case CFG_INT64:
		dump_number(out, k->units, *CFG_CFIELD(c, k, int64_t));
		break;
	case CFG_STRING:
		dump_quoted(out, *CFG_CFIELD(c, k, char *) ? *CFG_CFIELD(c, k, char *) : "");
		break;
	case CFG_ARGV:
		buf_addch(out, '[');
		for (v = *CFG_CFIELD(c, k, char **); v && *v; v++) {
			if (v != *CFG_CFIELD(c, k, char **))
				buf_addstr(out, ", ");
			dump_quoted(out, *v);
		}
		buf_addch(out, ']');
		break;
	case CFG_ENV:
		v = *CFG_CFIELD(c, k, char **);
		if (!v || !*v)
			buf_addstr(out, " {}");
		break;
	}
	if (origin && c->key_line[i]) {
		buf_addstr(out, "  # ");
		dump_source(out, c);
		buf_addf(out, ":%u", (unsigned)c->key_line[i]);
	} else if (origin) {
		buf_addstr(out, "  # default");
	}
	buf_addch(out, '\n');
	if (k->type != CFG_ENV)
		return;
	for (v = *CFG_CFIELD(c, k, char **); v && *v; v++) {
		const char *eq = strchr(*v, '=');
		size_t n = eq ? (size_t)(eq - *v) : strlen(*v);

		/* Loaded names are [A-Za-z_][A-Za-z0-9_]*, safe as plain keys. */
		buf_addstr(out, "  ");
		buf_add(out, *v, n);
		buf_addstr(out, ": ");
		dump_quoted(out, eq ? eq + 1 : "");
		buf_addch(out, '\n');
	}
}

static void dump_all(const struct config *c, struct buf *out, int origins)
{
	buf_addstr(out, "# from: ");
	dump_source(out, c);
	buf_addch(out, '\n');
	for (size_t i = 0; i < keys_count; i++)
		dump_key(out, c, i, origins);
}

void config_dump(const struct config *c, struct buf *out)
{
	dump_all(c, out, 0);
}

void config_dump_origins(const struct config *c, struct buf *out)
{
	dump_all(c, out, 1);
}
