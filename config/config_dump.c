/*
 * config_dump.c - the effective configuration as YAML that
 * config_load_mem() reads back to the same values (the round trip is
 * tested and fuzzed).
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

/* The largest unit that represents the value exactly. */
/* days only where the key accepts them (cache_max_age) */
static void dump_duration(struct buf *out, const char *key, int64_t ms, int days)
{
	static const struct { int64_t ms; const char *unit; } units[] = {
		{ 86400000, "d" }, { 3600000, "h" }, { 60000, "m" }, { 1000, "s" },
	};

	buf_addf(out, "%s: ", key);
	if (!ms) {
		buf_addstr(out, "0\n");
		return;
	}
	for (size_t i = days ? 0 : 1; i < sizeof(units) / sizeof(units[0]); i++)
		if (ms % units[i].ms == 0) {
			buf_addf(out, "%" PRId64 "%s\n", ms / units[i].ms, units[i].unit);
			return;
		}
	buf_addf(out, "%" PRId64 "ms\n", ms);
}

static void dump_size(struct buf *out, const char *key, int64_t n)
{
	static const struct { int shift; const char *unit; } units[] = {
		{ 30, "GiB" }, { 20, "MiB" }, { 10, "KiB" },
	};

	buf_addf(out, "%s: ", key);
	for (size_t i = 0; n > 0 && i < sizeof(units) / sizeof(units[0]); i++)
		if (n % ((int64_t)1 << units[i].shift) == 0) {
			buf_addf(out, "%" PRId64 "%s\n", n >> units[i].shift, units[i].unit);
			return;
		}
	buf_addf(out, "%" PRId64 "\n", n);
}

static const char *dump_tristate(enum tristate t)
{
	return t == TRI_TRUE ? "true" : t == TRI_FALSE ? "false" : "auto";
}

static const char *dump_progress(enum progress_mode p)
{
	return p == PROGRESS_ALWAYS ? "always" : p == PROGRESS_NEVER ? "never" : "auto";
}

void config_dump(const struct config *c, struct buf *out)
{
	buf_addstr(out, "# from: ");
	/* A comment ends at a line break, so the source must stay on one line. */
	for (const char *p = c->source ? c->source : ""; *p; p++)
		buf_addch(out, (unsigned char)*p < 0x20 || *p == 0x7f ? '?' : *p);
	buf_addch(out, '\n');

	if (c->workers > 0)
		buf_addf(out, "workers: %d\n", c->workers);
	else
		buf_addstr(out, "workers: auto\n");
	buf_addf(out, "start_method: %s\n", config_start_method_name(c->start_method));
	buf_addf(out, "warm: %s\n", c->warm ? "true" : "false");
	dump_duration(out, "timeout", c->timeout_ms, 0);
	dump_duration(out, "kill_grace", c->kill_grace_ms, 0);
	buf_addf(out, "daemons: %s\n", c->kill_daemons ? "kill" : "keep");
	buf_addf(out, "retries: %d\n", c->retries);

	buf_addstr(out, "launcher: [");
	for (char **p = c->launcher; p && *p; p++) {
		if (p != c->launcher)
			buf_addstr(out, ", ");
		dump_quoted(out, *p);
	}
	buf_addstr(out, "]\n");

	if (!c->env || !c->env[0])
		buf_addstr(out, "env: {}\n");
	else
		buf_addstr(out, "env:\n");
	for (char **p = c->env; p && *p; p++) {
		const char *eq = strchr(*p, '=');
		size_t n = eq ? (size_t)(eq - *p) : strlen(*p);

		/* Loaded names are [A-Za-z_][A-Za-z0-9_]*, safe as plain keys. */
		buf_addstr(out, "  ");
		buf_add(out, *p, n);
		buf_addstr(out, ": ");
		dump_quoted(out, eq ? eq + 1 : "");
		buf_addch(out, '\n');
	}

	buf_addf(out, "echo: %s\n", dump_tristate(c->echo));
	buf_addf(out, "progress: %s\n", dump_progress(c->progress));
	buf_addstr(out, "trace: ");
	dump_quoted(out, c->trace ? c->trace : "");
	buf_addch(out, '\n');
	dump_size(out, "max_output", c->max_output);
	buf_addf(out, "speculate: %s\n", c->speculate ? "true" : "false");
	buf_addstr(out, "cache_dir: ");
	dump_quoted(out, c->cache_dir ? c->cache_dir : "");
	buf_addch(out, '\n');
	buf_addf(out, "cache: %s\n", c->cache ? "true" : "false");
	dump_duration(out, "cache_max_age", c->cache_max_age_ms, 1);
	dump_size(out, "cache_max_size", c->cache_max_size);
	buf_addf(out, "cache_check: %s\n", c->cache_content ? "content" : "mtime");
}

void config_dump_origins(const struct config *c, struct buf *out)
{
	struct buf plain = BUF_INIT;
	const char *p, *end;

	config_dump(c, &plain);
	p = (const char *)plain.data;
	end = p + plain.len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		size_t key = strcspn(p, ":\n");
		size_t i = keys_count;

		buf_add(out, p, len);
		/* a key's first line: the others are indented or comments */
		if (p[0] != ' ' && p[0] != '#')
			for (i = 0; i < keys_count; i++)
				if (strlen(keys_table[i].name) == key &&
				    !memcmp(keys_table[i].name, p, key))
					break;
		if (i < keys_count && c->key_line[i]) {
			buf_addstr(out, "  # ");
			/* on one line, as the header's source */
			for (const char *s = c->source ? c->source : ""; *s; s++)
				buf_addch(out, (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s);
			buf_addf(out, ":%u", (unsigned)c->key_line[i]);
		} else if (i < keys_count) {
			buf_addstr(out, "  # default");
		}
		buf_addch(out, '\n');
		p += len + 1;
	}
	buf_release(&plain);
}
