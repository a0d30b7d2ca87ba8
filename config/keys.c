/*
 * keys.c - the configuration keys: the table (keys.h says what a row
 * holds), and for each kind of value how it is checked and stored, its
 * default, release and comparison, with the wording of every message
 * about a value.  config.c walks the table to load; config_dump.c to dump.
 */
#include "config/keys.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/proto.h"

/* ---- scalars ---- */

static int cfg_word(const yaml_node_t *n, const char *w)
{
	return n->data.scalar.length == strlen(w) &&
		!strcasecmp((const char *)n->data.scalar.value, w);
}

/* 1 true, 0 false, -1 neither (YAML 1.1 spellings, any case). */
static int cfg_bool(const yaml_node_t *n)
{
	static const char *const yes[] = { "true", "yes", "on" };
	static const char *const no[] = { "false", "no", "off" };

	for (size_t i = 0; i < 3; i++) {
		if (cfg_word(n, yes[i]))
			return 1;
		if (cfg_word(n, no[i]))
			return 0;
	}
	return -1;
}

/*
 * Leading decimal digits of s[0..n) into *v, saturating just above any
 * limit we care about so huge inputs are "out of range", never UB.
 * Returns the number of digits consumed.
 */
static size_t cfg_digits(const char *s, size_t n, uint64_t *v)
{
	const uint64_t cap = (uint64_t)1 << 62;
	size_t i = 0;

	*v = 0;
	while (i < n && s[i] >= '0' && s[i] <= '9') {
		*v = *v > (cap - 9) / 10 ? cap : *v * 10 + (uint64_t)(s[i] - '0');
		i++;
	}
	return i;
}

/*
 * The units a number may be written with.  A plain count takes none; a
 * duration is milliseconds (no unit: seconds), an age a duration that
 * may use days; a size is bytes in binary multiples.
 */
static const struct cfg_unit cfg_plain_units[] = {
	{ "", 1, 1 }, { NULL, 0, 0 },
};

static const struct cfg_unit cfg_duration_units[] = {
	{ "", 1000, 0 }, { "ms", 1, 1 }, { "s", 1000, 1 }, { "m", 60000, 1 },
	{ "h", 3600000, 1 }, { NULL, 0, 0 },
};

static const struct cfg_unit cfg_age_units[] = {
	{ "", 1000, 0 }, { "ms", 1, 1 }, { "s", 1000, 1 }, { "m", 60000, 1 },
	{ "h", 3600000, 1 }, { "d", 86400000, 1 }, { NULL, 0, 0 },
};

static const struct cfg_unit cfg_size_units[] = {
	{ "", 1, 1 }, { "B", 1, 0 },
	{ "K", 1 << 10, 0 }, { "KB", 1 << 10, 0 }, { "KiB", 1 << 10, 1 },
	{ "M", 1 << 20, 0 }, { "MB", 1 << 20, 0 }, { "MiB", 1 << 20, 1 },
	{ "G", 1 << 30, 0 }, { "GB", 1 << 30, 0 }, { "GiB", 1 << 30, 1 },
	{ NULL, 0, 0 },
};

/*
 * Digits followed by one of `units`.  0 with *v set (saturated on
 * overflow), or -1 when the text is not of that shape at all.
 */
static int cfg_number(const yaml_node_t *n, const struct cfg_unit *units, uint64_t *v)
{
	const char *s = (const char *)n->data.scalar.value;
	size_t len = n->data.scalar.length;
	size_t d = cfg_digits(s, len, v);

	if (!d)
		return -1;
	for (; units->suffix; units++) {
		if (len - d == strlen(units->suffix) && !memcmp(s + d, units->suffix, len - d)) {
			const uint64_t cap = (uint64_t)1 << 62;
			*v = *v > cap / units->mult ? cap : *v * units->mult;
			return 0;
		}
	}
	return -1;
}

/* Does the scalar n say the word w?  true and false as cfg_bool() reads them. */
static int cfg_says(const yaml_node_t *n, const char *w)
{
	if (!strcmp(w, "true"))
		return cfg_bool(n) == 1;
	if (!strcmp(w, "false"))
		return cfg_bool(n) == 0;
	return cfg_word(n, w);
}

/* ---- messages ---- */

static int cfg_bad(struct cfg_ctx *x, const struct cfg_key *k, const yaml_node_t *val)
{
	char shown[256];

	if (val->type != YAML_SCALAR_NODE)
		return cfg_fail(x, &val->start_mark, "%s: expected %s, got %s",
				k->name, k->expect, cfg_kind(val));
	return cfg_fail(x, &val->start_mark, "%s: expected %s, got '%s'", k->name,
			k->expect, cfg_show(shown, sizeof(shown),
					    (const char *)val->data.scalar.value,
					    val->data.scalar.length));
}

static int cfg_range(struct cfg_ctx *x, const struct cfg_key *k, const yaml_node_t *val)
{
	char shown[256];

	return cfg_fail(x, &val->start_mark, "%s: %s is out of range (%s)", k->name,
			cfg_show(shown, sizeof(shown), (const char *)val->data.scalar.value,
				 val->data.scalar.length), k->range);
}

/* Reject NUL bytes (a "\0" escape) where the value becomes a C string. */
static int cfg_has_nul(const yaml_node_t *n)
{
	return strlen((const char *)n->data.scalar.value) != n->data.scalar.length;
}

/* ---- one parser per kind of value ---- */

static int cfg_words(struct cfg_ctx *x, const struct cfg_key *k, yaml_node_t *val,
		     struct config *c)
{
	if (val->type == YAML_SCALAR_NODE)
		for (int i = 0; k->words[i]; i++)
			if (cfg_says(val, k->words[i])) {
				*CFG_FIELD(c, k, int) = i;
				return 0;
			}
	return cfg_bad(x, k, val);
}

static int cfg_count(struct cfg_ctx *x, const struct cfg_key *k, yaml_node_t *val,
		     struct config *c)
{
	uint64_t v;

	if (val->type != YAML_SCALAR_NODE)
		return cfg_bad(x, k, val);
	if ((k->flags & CFG_AUTO) && cfg_word(val, "auto"))
		v = 0;
	else if (cfg_number(val, k->units, &v))
		return cfg_bad(x, k, val);
	else if (v < k->min || v > k->max)
		return cfg_range(x, k, val);
	if (k->type == CFG_INT)
		*CFG_FIELD(c, k, int) = (int)v;
	else
		*CFG_FIELD(c, k, int64_t) = (int64_t)v;
	return 0;
}

/* Relative to what?  make's directory differs between sub-makes and -C. */
static int cfg_string(struct cfg_ctx *x, const struct cfg_key *k, yaml_node_t *val,
		      struct config *c)
{
	char **dst = CFG_FIELD(c, k, char *);
	char shown[256];

	if (val->type != YAML_SCALAR_NODE)
		return cfg_bad(x, k, val);
	if (cfg_has_nul(val))
		return cfg_fail(x, &val->start_mark, "%s: contains a NUL byte", k->name);
	free(*dst);
	*dst = cfg_strdup((const char *)val->data.scalar.value);
	if ((k->flags & CFG_ABSOLUTE) && (*dst)[0] && (*dst)[0] != '/')
		return cfg_fail(x, &val->start_mark,
				"%s: expected an absolute path (or \"\" for the default), got '%s'",
				k->name, cfg_show(shown, sizeof(shown), *dst, strlen(*dst)));
	return 0;
}

static int cfg_argv(struct cfg_ctx *x, const struct cfg_key *k, yaml_node_t *val,
		    struct config *c)
{
	char ***dst = CFG_FIELD(c, k, char **);
	yaml_node_item_t *it;
	size_t n, i = 0;
	char **v;

	if (val->type != YAML_SEQUENCE_NODE)
		return cfg_bad(x, k, val);
	n = (size_t)(val->data.sequence.items.top - val->data.sequence.items.start);
	for (it = val->data.sequence.items.start; it < val->data.sequence.items.top; it++) {
		yaml_node_t *item = yaml_document_get_node(x->doc, *it);
		char shown[256];

		i++;
		if (item->type != YAML_SCALAR_NODE || cfg_is_null(item))
			return cfg_fail(x, &item->start_mark,
					"%s: item %zu: expected a non-empty string, got %s",
					k->name, i, cfg_kind(item));
		if (!item->data.scalar.length)
			return cfg_fail(x, &item->start_mark,
					"%s: item %zu: expected a non-empty string, got ''",
					k->name, i);
		if (cfg_has_nul(item))
			return cfg_fail(x, &item->start_mark,
					"%s: item %zu: '%s' contains a NUL byte", k->name, i,
					cfg_show(shown, sizeof(shown),
						 (const char *)item->data.scalar.value,
						 item->data.scalar.length));
	}
	v = cfg_calloc(n + 1, sizeof(*v));
	i = 0;
	for (it = val->data.sequence.items.start; it < val->data.sequence.items.top; it++) {
		yaml_node_t *item = yaml_document_get_node(x->doc, *it);
		v[i++] = cfg_strdup((const char *)item->data.scalar.value);
	}
	strv_free(*dst);
	*dst = v;
	return 0;
}

static int cfg_env_name_ok(const yaml_node_t *n)
{
	const unsigned char *s = n->data.scalar.value;
	size_t len = n->data.scalar.length;

	if (!len || (s[0] >= '0' && s[0] <= '9'))
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!(s[i] == '_' || (s[i] >= '0' && s[i] <= '9') ||
		      (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')))
			return 0;
	return 1;
}

struct cfg_env_ent {
	const char *name;
	const yaml_mark_t *mark;
	size_t order;
};

static int cfg_env_ent_cmp(const void *a, const void *b)
{
	const struct cfg_env_ent *ea = a, *eb = b;
	int r = strcmp(ea->name, eb->name);

	if (r)
		return r;
	return ea->order < eb->order ? -1 : ea->order > eb->order;
}

/* Duplicate names, found by sorting so a huge env stays O(n log n). */
static int cfg_env_dups(struct cfg_ctx *x, const struct cfg_key *k, yaml_node_t *val,
			size_t n)
{
	struct cfg_env_ent *e = cfg_calloc(n, sizeof(*e));
	const yaml_node_pair_t *p;
	size_t i = 0;
	int rc = 0;

	for (p = val->data.mapping.pairs.start; p < val->data.mapping.pairs.top; p++, i++) {
		yaml_node_t *kn = yaml_document_get_node(x->doc, p->key);
		e[i].name = (const char *)kn->data.scalar.value;
		e[i].mark = &kn->start_mark;
		e[i].order = i;
	}
	qsort(e, n, sizeof(*e), cfg_env_ent_cmp);
	for (i = 1; i < n && !rc; i++)
		if (!strcmp(e[i - 1].name, e[i].name))
			rc = cfg_fail(x, e[i].mark, "%s: duplicate variable '%s' (first at line %zu)",
				      k->name, e[i].name, e[i - 1].mark->line + 1);
	free(e);
	return rc;
}

static int cfg_env(struct cfg_ctx *x, const struct cfg_key *k, yaml_node_t *val,
		   struct config *c)
{
	char ***dst = CFG_FIELD(c, k, char **);
	yaml_node_pair_t *p;
	struct buf b = BUF_INIT;
	size_t n, i = 0;
	char **v;

	if (val->type != YAML_MAPPING_NODE)
		return cfg_bad(x, k, val);
	n = (size_t)(val->data.mapping.pairs.top - val->data.mapping.pairs.start);
	for (p = val->data.mapping.pairs.start; p < val->data.mapping.pairs.top; p++) {
		yaml_node_t *kn = yaml_document_get_node(x->doc, p->key);
		yaml_node_t *vn = yaml_document_get_node(x->doc, p->value);
		char shown[256];

		if (kn->type != YAML_SCALAR_NODE)
			return cfg_fail(x, &kn->start_mark,
					"%s: expected variable names as keys, got %s",
					k->name, cfg_kind(kn));
		if (!cfg_env_name_ok(kn))
			return cfg_fail(x, &kn->start_mark,
					"%s: '%s' is not a valid variable name", k->name,
					cfg_show(shown, sizeof(shown),
						 (const char *)kn->data.scalar.value,
						 kn->data.scalar.length));
		if (cfg_is_null(vn))
			return cfg_fail(x, &kn->start_mark,
					"%s: %s: missing value (use \"\" for empty)",
					k->name, kn->data.scalar.value);
		if (vn->type != YAML_SCALAR_NODE)
			return cfg_fail(x, &vn->start_mark, "%s: %s: expected a string, got %s",
					k->name, kn->data.scalar.value, cfg_kind(vn));
		if (cfg_has_nul(vn))
			return cfg_fail(x, &vn->start_mark, "%s: %s: contains a NUL byte",
					k->name, kn->data.scalar.value);
	}
	if (cfg_env_dups(x, k, val, n))
		return -1;
	v = cfg_calloc(n + 1, sizeof(*v));
	for (p = val->data.mapping.pairs.start; p < val->data.mapping.pairs.top; p++) {
		buf_addf(&b, "%s=%s",
			 yaml_document_get_node(x->doc, p->key)->data.scalar.value,
			 yaml_document_get_node(x->doc, p->value)->data.scalar.value);
		v[i++] = buf_detach(&b, NULL);
	}
	strv_free(*dst);
	*dst = v;
	return 0;
}

/* ---- what the walks do with one key ---- */

int cfg_key_parse(struct cfg_ctx *x, const struct cfg_key *k, yaml_node_t *val,
		  struct config *c)
{
	switch (k->type) {
	case CFG_WORD: return cfg_words(x, k, val, c);
	case CFG_INT:
	case CFG_INT64: return cfg_count(x, k, val, c);
	case CFG_STRING: return cfg_string(x, k, val, c);
	case CFG_ARGV: return cfg_argv(x, k, val, c);
	case CFG_ENV: return cfg_env(x, k, val, c);
	}
	abort();
}

void cfg_key_default(const struct cfg_key *k, struct config *c)
{
	switch (k->type) {
	case CFG_WORD:
	case CFG_INT: *CFG_FIELD(c, k, int) = (int)k->def; return;
	case CFG_INT64: *CFG_FIELD(c, k, int64_t) = k->def; return;
	case CFG_STRING: *CFG_FIELD(c, k, char *) = cfg_strdup(k->def_text ? k->def_text : "");
		return;
	case CFG_ARGV:
	case CFG_ENV: *CFG_FIELD(c, k, char **) = cfg_calloc(1, sizeof(char *)); return;
	}
}

void cfg_key_release(const struct cfg_key *k, struct config *c)
{
	switch (k->type) {
	case CFG_WORD:
	case CFG_INT:
	case CFG_INT64: return;
	case CFG_STRING: free(*CFG_FIELD(c, k, char *));
		*CFG_FIELD(c, k, char *) = NULL;
		return;
	case CFG_ARGV:
	case CFG_ENV: strv_free(*CFG_FIELD(c, k, char **));
		*CFG_FIELD(c, k, char **) = NULL;
		return;
	}
}

static int cfg_vec_same(char *const *a, char *const *b)
{
	for (; *a && *b; a++, b++)
		if (strcmp(*a, *b))
			return 0;
	return !*a && !*b;
}

int cfg_key_same(const struct cfg_key *k, const struct config *a, const struct config *b)
{
	switch (k->type) {
	case CFG_WORD:
	case CFG_INT: return *CFG_CFIELD(a, k, int) == *CFG_CFIELD(b, k, int);
	case CFG_INT64: return *CFG_CFIELD(a, k, int64_t) == *CFG_CFIELD(b, k, int64_t);
	case CFG_STRING: return !strcmp(*CFG_CFIELD(a, k, char *), *CFG_CFIELD(b, k, char *));
	case CFG_ARGV:
	case CFG_ENV: return cfg_vec_same(*CFG_CFIELD(a, k, char **),
					  *CFG_CFIELD(b, k, char **));
	}
	return 0;
}

/* ---- the table ---- */

/*
 * offsetof(struct config, f), refused at compile time unless the field
 * has the type the row's kind stores (a word's enum: the size of an int).
 */
#define CFG_OFF(f, type) _Generic(&((struct config *)0)->f, type *: offsetof(struct config, f))
#define CFG_ENUM_OFF(f) (offsetof(struct config, f) + \
	0 * sizeof(char[sizeof(((struct config *)0)->f) == sizeof(int) ? 1 : -1]))

#define WORD(f, w, d) .type = CFG_WORD, .offset = CFG_ENUM_OFF(f), .words = w, .def = d
#define INT(f, u, d, lo, hi, r) .type = CFG_INT, .offset = CFG_OFF(f, int), .units = u, \
	.def = d, .min = lo, .max = hi, .range = r
#define INT64(f, u, d, lo, hi, r) .type = CFG_INT64, .offset = CFG_OFF(f, int64_t), \
	.units = u, .def = d, .min = lo, .max = hi, .range = r
#define STRING(f, d) .type = CFG_STRING, .offset = CFG_OFF(f, char *), .def_text = d
#define VECTOR(t, f) .type = t, .offset = CFG_OFF(f, char **)

static const char *const cfg_booleans[] = { "false", "true", NULL };
/* in the order of enum start_method, enum progress_mode, enum tristate */
static const char *const cfg_start_methods[] = { "subprocess", "spawn", "fork", NULL };
static const char *const cfg_progress[] = { "auto", "always", "never", NULL };
static const char *const cfg_echo[] = { "auto", "true", "false", NULL };
static const char *const cfg_daemons[] = { "keep", "kill", NULL };
static const char *const cfg_cache_check[] = { "mtime", "content", NULL };

_Static_assert(START_SUBPROCESS == 0 && START_SPAWN == 1 && START_FORK == 2, "start_method");
_Static_assert(PROGRESS_AUTO == 0 && PROGRESS_ALWAYS == 1 && PROGRESS_NEVER == 2, "progress");
_Static_assert(TRI_AUTO == 0 && TRI_TRUE == 1 && TRI_FALSE == 2, "echo");

const char *config_start_method_name(enum start_method m)
{
	return (unsigned)m < 3 ? cfg_start_methods[m] : "unknown";
}

/*
 * Contract order: config_dump() and the unknown-key list follow it too.
 * The `cache` default is config_default_cache()'s (config.c).
 */
const struct cfg_key keys_table[] = {
	{ "workers", INT(workers, cfg_plain_units, 0, 1, CONFIG_MAX_WORKERS, "1..1024 or 'auto'"),
	  .flags = CFG_AUTO, .expect = "an integer >= 1 or 'auto'", .if_null = "" },
	{ "start_method", WORD(start_method, cfg_start_methods, START_SUBPROCESS),
	  .expect = "subprocess, spawn or fork", .if_null = "" },
	{ "warm", WORD(warm, cfg_booleans, 1), .expect = "true or false", .if_null = "" },
	{ "timeout", INT64(timeout_ms, cfg_duration_units, 0, 0, CONFIG_MAX_DURATION_MS, "0..24h"),
	  .expect = "a duration such as 0, 90s, 5m or 1500ms", .if_null = " (use 0 for none)" },
	{ "kill_grace",
	  INT64(kill_grace_ms, cfg_duration_units, 5000, 0, CONFIG_MAX_DURATION_MS, "0..24h"),
	  .expect = "a duration such as 5s or 500ms", .if_null = "" },
	{ "daemons", WORD(kill_daemons, cfg_daemons, 0), .expect = "keep or kill", .if_null = "" },
	{ "retries", INT(retries, cfg_plain_units, 1, 0, CONFIG_MAX_RETRIES, "0..100"),
	  .expect = "an integer 0..100", .if_null = "" },
	{ "launcher", VECTOR(CFG_ARGV, launcher),
	  .expect = "a sequence of strings", .if_null = " (use [] for none)" },
	{ "env", VECTOR(CFG_ENV, env), .expect = "a mapping", .if_null = " (use {} for none)" },
	{ "echo", WORD(echo, cfg_echo, TRI_AUTO), .expect = "auto, true or false", .if_null = "" },
	{ "progress", WORD(progress, cfg_progress, PROGRESS_AUTO),
	  .expect = "auto, always or never", .if_null = "" },
	{ "trace", STRING(trace, ""), .expect = "a file name", .if_null = " (use \"\" for none)" },
	{ "max_output", INT64(max_output, cfg_size_units, (int64_t)16 << 20, CONFIG_MIN_OUTPUT,
			      PROTO_MAX_OUTPUT, "1KiB..256MiB"),
	  .expect = "a size such as 16MiB, 512KiB or 1048576", .if_null = "" },
	{ "speculate", WORD(speculate, cfg_booleans, 1), .expect = "true or false", .if_null = "" },
	{ "cache_dir", STRING(cache_dir, ""), .flags = CFG_ABSOLUTE,
	  .expect = "a directory name", .if_null = " (use \"\" for the default)" },
	{ "cache", WORD(cache, cfg_booleans, 0), .expect = "true or false", .if_null = "" },
	{ "cache_max_age", INT64(cache_max_age_ms, cfg_age_units, (int64_t)7 * 86400000, 1000,
				 (uint64_t)3650 * 86400000, "1s..3650d"),
	  .expect = "an age such as 7d, 12h or 90m", .if_null = "" },
	{ "cache_max_size", INT64(cache_max_size, cfg_size_units, (int64_t)256 << 20,
				  CONFIG_MIN_STORE, CONFIG_MAX_STORE, "1MiB..1024GiB"),
	  .expect = "a size such as 256MiB or 2GiB", .if_null = "" },
	{ "cache_check", WORD(cache_content, cfg_cache_check, 0),
	  .expect = "mtime or content", .if_null = "" },
};
const size_t keys_count = sizeof(keys_table) / sizeof(keys_table[0]);
_Static_assert(sizeof(keys_table) / sizeof(keys_table[0]) <= CFG_MAX_KEYS, "CFG_MAX_KEYS");
