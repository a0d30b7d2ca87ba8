/*
 * keys.c - the configuration keys: how each value is checked and stored,
 * and the wording of every message about a value.  The scalars a value
 * may be, one short function per key, and the table of keys.
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

/* Plain decimal only: no sign, no fraction, no 0x, not empty. */
static int cfg_uint(const yaml_node_t *n, uint64_t *v)
{
	size_t len = n->data.scalar.length;

	if (!len || cfg_digits((const char *)n->data.scalar.value, len, v) != len)
		return -1;
	return 0;
}

struct cfg_unit {
	const char *suffix;
	uint64_t mult;
};

static const struct cfg_unit cfg_duration_units[] = {
	{ "", 1000 }, { "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 },
	{ NULL, 0 },
};

static const struct cfg_unit cfg_age_units[] = {
	{ "", 1000 }, { "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 },
	{ "d", 86400000 }, { NULL, 0 },
};

static const struct cfg_unit cfg_size_units[] = {
	{ "", 1 }, { "B", 1 },
	{ "K", 1 << 10 }, { "KB", 1 << 10 }, { "KiB", 1 << 10 },
	{ "M", 1 << 20 }, { "MB", 1 << 20 }, { "MiB", 1 << 20 },
	{ "G", 1 << 30 }, { "GB", 1 << 30 }, { "GiB", 1 << 30 },
	{ NULL, 0 },
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

/* ---- key handlers ---- */

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

static int cfg_range(struct cfg_ctx *x, const struct cfg_key *k,
		     const yaml_node_t *val, const char *range)
{
	char shown[256];

	return cfg_fail(x, &val->start_mark, "%s: %s is out of range (%s)", k->name,
			cfg_show(shown, sizeof(shown), (const char *)val->data.scalar.value,
				 val->data.scalar.length), range);
}

/* Reject NUL bytes (a "\0" escape) where the value becomes a C string. */
static int cfg_has_nul(const yaml_node_t *n)
{
	return strlen((const char *)n->data.scalar.value) != n->data.scalar.length;
}

static int cfg_workers(struct cfg_ctx *x, const struct cfg_key *k,
		       yaml_node_t *val, struct config *c)
{
	uint64_t v;

	if (val->type != YAML_SCALAR_NODE)
		return cfg_bad(x, k, val);
	if (cfg_word(val, "auto")) {
		c->workers = 0;
		return 0;
	}
	if (cfg_uint(val, &v))
		return cfg_bad(x, k, val);
	if (v < 1 || v > CONFIG_MAX_WORKERS)
		return cfg_range(x, k, val, "1..1024 or 'auto'");
	c->workers = (int)v;
	return 0;
}

static int cfg_retries(struct cfg_ctx *x, const struct cfg_key *k,
		       yaml_node_t *val, struct config *c)
{
	uint64_t v;

	if (val->type != YAML_SCALAR_NODE || cfg_uint(val, &v))
		return cfg_bad(x, k, val);
	if (v > CONFIG_MAX_RETRIES)
		return cfg_range(x, k, val, "0..100");
	c->retries = (int)v;
	return 0;
}

static int cfg_start_method(struct cfg_ctx *x, const struct cfg_key *k,
			    yaml_node_t *val, struct config *c)
{
	static const enum start_method all[] = { START_SUBPROCESS, START_SPAWN, START_FORK };

	if (val->type == YAML_SCALAR_NODE)
		for (size_t i = 0; i < 3; i++)
			if (cfg_word(val, config_start_method_name(all[i]))) {
				c->start_method = all[i];
				return 0;
			}
	return cfg_bad(x, k, val);
}

/* A boolean key: warm, speculate, cache. */
static int cfg_boolean(struct cfg_ctx *x, const struct cfg_key *k, yaml_node_t *val, int *dst)
{
	int b = val->type == YAML_SCALAR_NODE ? cfg_bool(val) : -1;

	if (b < 0)
		return cfg_bad(x, k, val);
	*dst = b;
	return 0;
}

static int cfg_warm(struct cfg_ctx *x, const struct cfg_key *k,
		    yaml_node_t *val, struct config *c)
{
	return cfg_boolean(x, k, val, &c->warm);
}

static int cfg_speculate(struct cfg_ctx *x, const struct cfg_key *k,
			 yaml_node_t *val, struct config *c)
{
	return cfg_boolean(x, k, val, &c->speculate);
}

static int cfg_cache(struct cfg_ctx *x, const struct cfg_key *k,
		     yaml_node_t *val, struct config *c)
{
	return cfg_boolean(x, k, val, &c->cache);
}

static int cfg_cache_check(struct cfg_ctx *x, const struct cfg_key *k,
			   yaml_node_t *val, struct config *c)
{
	if (val->type == YAML_SCALAR_NODE && (cfg_word(val, "mtime") || cfg_word(val, "content"))) {
		c->cache_content = cfg_word(val, "content");
		return 0;
	}
	return cfg_bad(x, k, val);
}

static int cfg_echo(struct cfg_ctx *x, const struct cfg_key *k,
		    yaml_node_t *val, struct config *c)
{
	int b;

	if (val->type != YAML_SCALAR_NODE)
		return cfg_bad(x, k, val);
	if (cfg_word(val, "auto")) {
		c->echo = TRI_AUTO;
		return 0;
	}
	b = cfg_bool(val);
	if (b < 0)
		return cfg_bad(x, k, val);
	c->echo = b ? TRI_TRUE : TRI_FALSE;
	return 0;
}

static int cfg_daemons(struct cfg_ctx *x, const struct cfg_key *k,
		       yaml_node_t *val, struct config *c)
{
	if (val->type == YAML_SCALAR_NODE && cfg_word(val, "keep"))
		c->kill_daemons = 0;
	else if (val->type == YAML_SCALAR_NODE && cfg_word(val, "kill"))
		c->kill_daemons = 1;
	else
		return cfg_bad(x, k, val);
	return 0;
}

static int cfg_progress(struct cfg_ctx *x, const struct cfg_key *k,
			yaml_node_t *val, struct config *c)
{
	if (val->type == YAML_SCALAR_NODE) {
		if (cfg_word(val, "auto"))
			c->progress = PROGRESS_AUTO;
		else if (cfg_word(val, "always"))
			c->progress = PROGRESS_ALWAYS;
		else if (cfg_word(val, "never"))
			c->progress = PROGRESS_NEVER;
		else
			return cfg_bad(x, k, val);
		return 0;
	}
	return cfg_bad(x, k, val);
}

static int cfg_duration(struct cfg_ctx *x, const struct cfg_key *k,
			yaml_node_t *val, int64_t *out)
{
	uint64_t v;

	if (val->type != YAML_SCALAR_NODE || cfg_number(val, cfg_duration_units, &v))
		return cfg_bad(x, k, val);
	if (v > (uint64_t)CONFIG_MAX_DURATION_MS)
		return cfg_range(x, k, val, "0..24h");
	*out = (int64_t)v;
	return 0;
}

static int cfg_cache_max_age(struct cfg_ctx *x, const struct cfg_key *k,
			     yaml_node_t *val, struct config *c)
{
	uint64_t v;

	if (val->type != YAML_SCALAR_NODE || cfg_number(val, cfg_age_units, &v))
		return cfg_bad(x, k, val);
	if (v < 1000 || v > (uint64_t)3650 * 86400000)
		return cfg_range(x, k, val, "1s..3650d");
	c->cache_max_age_ms = (int64_t)v;
	return 0;
}

static int cfg_cache_max_size(struct cfg_ctx *x, const struct cfg_key *k,
			      yaml_node_t *val, struct config *c)
{
	uint64_t v;

	if (val->type != YAML_SCALAR_NODE || cfg_number(val, cfg_size_units, &v))
		return cfg_bad(x, k, val);
	if (v < CONFIG_MIN_STORE || v > CONFIG_MAX_STORE)
		return cfg_range(x, k, val, "1MiB..1024GiB");
	c->cache_max_size = (int64_t)v;
	return 0;
}

static int cfg_timeout(struct cfg_ctx *x, const struct cfg_key *k,
		       yaml_node_t *val, struct config *c)
{
	return cfg_duration(x, k, val, &c->timeout_ms);
}

static int cfg_kill_grace(struct cfg_ctx *x, const struct cfg_key *k,
			  yaml_node_t *val, struct config *c)
{
	return cfg_duration(x, k, val, &c->kill_grace_ms);
}

static int cfg_max_output(struct cfg_ctx *x, const struct cfg_key *k,
			  yaml_node_t *val, struct config *c)
{
	uint64_t v;

	if (val->type != YAML_SCALAR_NODE || cfg_number(val, cfg_size_units, &v))
		return cfg_bad(x, k, val);
	if (v < (uint64_t)CONFIG_MIN_OUTPUT || v > (uint64_t)PROTO_MAX_OUTPUT)
		return cfg_range(x, k, val, "1KiB..256MiB");
	c->max_output = (int64_t)v;
	return 0;
}

/* A plain string key: trace, cache_dir. */
static int cfg_string(struct cfg_ctx *x, const struct cfg_key *k,
		      yaml_node_t *val, char **dst)
{
	if (val->type != YAML_SCALAR_NODE)
		return cfg_bad(x, k, val);
	if (cfg_has_nul(val))
		return cfg_fail(x, &val->start_mark, "%s: contains a NUL byte", k->name);
	free(*dst);
	*dst = cfg_strdup((const char *)val->data.scalar.value);
	return 0;
}

static int cfg_trace(struct cfg_ctx *x, const struct cfg_key *k,
		     yaml_node_t *val, struct config *c)
{
	return cfg_string(x, k, val, &c->trace);
}

/* Relative to what?  make's directory differs between sub-makes and -C. */
static int cfg_cache_dir(struct cfg_ctx *x, const struct cfg_key *k,
			 yaml_node_t *val, struct config *c)
{
	char shown[256];

	if (cfg_string(x, k, val, &c->cache_dir) < 0)
		return -1;
	if (c->cache_dir[0] && c->cache_dir[0] != '/')
		return cfg_fail(x, &val->start_mark,
				"%s: expected an absolute path (or \"\" for the default), got '%s'",
				k->name, cfg_show(shown, sizeof(shown), c->cache_dir,
						  strlen(c->cache_dir)));
	return 0;
}

static int cfg_launcher(struct cfg_ctx *x, const struct cfg_key *k,
			yaml_node_t *val, struct config *c)
{
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
	strv_free(c->launcher);
	c->launcher = v;
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
static int cfg_env_dups(struct cfg_ctx *x, yaml_node_t *val, size_t n)
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
			rc = cfg_fail(x, e[i].mark, "env: duplicate variable '%s' (first at line %zu)",
				      e[i].name, e[i - 1].mark->line + 1);
	free(e);
	return rc;
}

static int cfg_env(struct cfg_ctx *x, const struct cfg_key *k,
		   yaml_node_t *val, struct config *c)
{
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
					"env: expected variable names as keys, got %s",
					cfg_kind(kn));
		if (!cfg_env_name_ok(kn))
			return cfg_fail(x, &kn->start_mark,
					"env: '%s' is not a valid variable name",
					cfg_show(shown, sizeof(shown),
						 (const char *)kn->data.scalar.value,
						 kn->data.scalar.length));
		if (cfg_is_null(vn))
			return cfg_fail(x, &kn->start_mark,
					"env: %s: missing value (use \"\" for empty)",
					kn->data.scalar.value);
		if (vn->type != YAML_SCALAR_NODE)
			return cfg_fail(x, &vn->start_mark, "env: %s: expected a string, got %s",
					kn->data.scalar.value, cfg_kind(vn));
		if (cfg_has_nul(vn))
			return cfg_fail(x, &vn->start_mark, "env: %s: contains a NUL byte",
					kn->data.scalar.value);
	}
	if (cfg_env_dups(x, val, n))
		return -1;
	v = cfg_calloc(n + 1, sizeof(*v));
	for (p = val->data.mapping.pairs.start; p < val->data.mapping.pairs.top; p++) {
		buf_addf(&b, "%s=%s",
			 yaml_document_get_node(x->doc, p->key)->data.scalar.value,
			 yaml_document_get_node(x->doc, p->value)->data.scalar.value);
		v[i++] = buf_detach(&b, NULL);
	}
	strv_free(c->env);
	c->env = v;
	return 0;
}

/* Contract order: config_dump() and the unknown-key list follow it too. */
const struct cfg_key keys_table[] = {
	{ "workers", "an integer >= 1 or 'auto'", "", cfg_workers },
	{ "start_method", "subprocess, spawn or fork", "", cfg_start_method },
	{ "warm", "true or false", "", cfg_warm },
	{ "timeout", "a duration such as 0, 90s, 5m or 1500ms", " (use 0 for none)", cfg_timeout },
	{ "kill_grace", "a duration such as 5s or 500ms", "", cfg_kill_grace },
	{ "daemons", "keep or kill", "", cfg_daemons },
	{ "retries", "an integer 0..100", "", cfg_retries },
	{ "launcher", "a sequence of strings", " (use [] for none)", cfg_launcher },
	{ "env", "a mapping", " (use {} for none)", cfg_env },
	{ "echo", "auto, true or false", "", cfg_echo },
	{ "progress", "auto, always or never", "", cfg_progress },
	{ "trace", "a file name", " (use \"\" for none)", cfg_trace },
	{ "max_output", "a size such as 16MiB, 512KiB or 1048576", "", cfg_max_output },
	{ "speculate", "true or false", "", cfg_speculate },
	{ "cache_dir", "a directory name", " (use \"\" for the default)", cfg_cache_dir },
	{ "cache", "true or false", "", cfg_cache },
	{ "cache_max_age", "an age such as 7d, 12h or 90m", "", cfg_cache_max_age },
	{ "cache_max_size", "a size such as 256MiB or 2GiB", "", cfg_cache_max_size },
	{ "cache_check", "mtime or content", "", cfg_cache_check },
};
const size_t keys_count = sizeof(keys_table) / sizeof(keys_table[0]);
_Static_assert(sizeof(keys_table) / sizeof(keys_table[0]) <= CFG_MAX_KEYS, "CFG_MAX_KEYS");
