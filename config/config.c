/*
 * config.c - load the YAML configuration (see config.h for the contract).
 *
 * The whole file is parsed into a libyaml document first and then walked
 * into a private struct config that only replaces the caller's on success,
 * which is what makes "nothing half-applied" hold by construction.  Every
 * rejection goes through cfg_fail() so each message is one line that starts
 * with FILE:LINE:COLUMN.
 */
#include "config/config.h"
#include "lib/err.h"
#include "lib/proto.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "config/keys.h"

/* ---- defaults, release, comparison: walks of the key table ---- */

static int cfg_cache_default;

void config_default_cache(int on)
{
	cfg_cache_default = !!on;
}

void config_defaults(struct config *c)
{
	for (size_t i = 0; i < keys_count; i++)
		cfg_key_default(&keys_table[i], c);
	c->cache = cfg_cache_default; /* the one default a process may change */
	c->source = cfg_strdup("built-in defaults");
	memset(c->key_line, 0, sizeof c->key_line);
}

void config_release(struct config *c)
{
	for (size_t i = 0; i < keys_count; i++)
		cfg_key_release(&keys_table[i], c);
	free(c->source);
	c->source = NULL;
}

int config_same(const struct config *a, const struct config *b)
{
	for (size_t i = 0; i < keys_count; i++)
		if (!cfg_key_same(&keys_table[i], a, b))
			return 0;
	return 1;
}

int config_workers_max(const struct config *c)
{
	return c->workers > 0 ? c->workers : CONFIG_MAX_WORKERS;
}

int config_workers(const struct config *c)
{
	long n;

	if (c->workers > 0)
		return c->workers;
	n = sysconf(_SC_NPROCESSORS_ONLN);
	if (n < 1)
		return 1;
	return n > CONFIG_MAX_WORKERS ? CONFIG_MAX_WORKERS : (int)n;
}

/* ---- unknown keys ---- */

/*
 * Optimal string alignment distance (edits plus adjacent swaps) between a
 * user's key, compared case-blind, and a valid key (all lower case).
 */
static size_t cfg_distance(const char *key, size_t n, const char *valid)
{
	size_t m = strlen(valid), rows[3][32];
	size_t *prev2 = rows[0], *prev = rows[1], *cur = rows[2], *t;
	char a[32];

	if (n >= sizeof(a) || m >= sizeof(a))
		return SIZE_MAX;
	for (size_t i = 0; i < n; i++)
		a[i] = key[i] >= 'A' && key[i] <= 'Z' ? (char)(key[i] - 'A' + 'a') : key[i];
	for (size_t j = 0; j <= m; j++)
		prev[j] = j;
	for (size_t i = 1; i <= n; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= m; j++) {
			size_t best = prev[j - 1] + (a[i - 1] != valid[j - 1]);

			if (prev[j] + 1 < best)
				best = prev[j] + 1;
			if (cur[j - 1] + 1 < best)
				best = cur[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == valid[j - 2] &&
			    a[i - 2] == valid[j - 1] && prev2[j - 2] + 1 < best)
				best = prev2[j - 2] + 1;
			cur[j] = best;
		}
		t = prev2;
		prev2 = prev;
		prev = cur;
		cur = t;
	}
	return prev[m];
}

static int cfg_unknown(struct cfg_ctx *x, const yaml_node_t *key)
{
	const char *s = (const char *)key->data.scalar.value;
	size_t n = key->data.scalar.length, best = SIZE_MAX;
	const char *near = NULL;
	char shown[256];
	struct buf all = BUF_INIT;
	int r;

	for (size_t i = 0; i < keys_count; i++) {
		size_t d = cfg_distance(s, n, keys_table[i].name);
		/* Close enough to be a typo, not just a short unrelated word. */
		size_t slack = strlen(keys_table[i].name) / 3;

		slack = slack < 1 ? 1 : slack > 3 ? 3 : slack;

		if (d <= slack && d < best) {
			best = d;
			near = keys_table[i].name;
		}
	}
	cfg_show(shown, sizeof(shown), s, n);
	if (near)
		return cfg_fail(x, &key->start_mark, "unknown key '%s' (did you mean '%s'?)",
				shown, near);
	/* a buffer that grows: the table grows too */
	for (size_t i = 0; i < keys_count; i++)
		buf_addf(&all, "%s%s", i ? ", " : "", keys_table[i].name);
	r = cfg_fail(x, &key->start_mark, "unknown key '%s' (valid keys: %s)", shown,
		     (char *)all.data);
	buf_release(&all);
	return r;
}

/* ---- the document walk ---- */

static int cfg_apply(struct cfg_ctx *x, yaml_node_t *root, struct config *c)
{
	const yaml_mark_t *seen[CFG_MAX_KEYS] = { NULL };
	yaml_node_pair_t *p;

	if (root->type == YAML_SCALAR_NODE && !root->data.scalar.length &&
	    root->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
		return 0; /* an empty document: all defaults */
	if (root->type != YAML_MAPPING_NODE)
		return cfg_fail(x, &root->start_mark, "top level must be a mapping of keys");
	for (p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
		yaml_node_t *key = yaml_document_get_node(x->doc, p->key);
		yaml_node_t *val = yaml_document_get_node(x->doc, p->value);
		const struct cfg_key *k = NULL;
		size_t i;

		if (key->type != YAML_SCALAR_NODE)
			return cfg_fail(x, &key->start_mark, "keys must be names, got %s",
					cfg_kind(key));
		for (i = 0; i < keys_count; i++)
			if (!strcmp((const char *)key->data.scalar.value, keys_table[i].name) &&
			    key->data.scalar.length == strlen(keys_table[i].name)) {
				k = &keys_table[i];
				break;
			}
		if (!k)
			return cfg_unknown(x, key);
		if (seen[i])
			return cfg_fail(x, &key->start_mark,
					"duplicate key '%s' (first at line %zu)", k->name,
					seen[i]->line + 1);
		seen[i] = &key->start_mark;
		c->key_line[i] = (uint32_t)key->start_mark.line + 1;
		if (cfg_is_null(val))
			return cfg_fail(x, &key->start_mark, "%s: missing value%s",
					k->name, k->if_null);
		if (cfg_key_parse(x, k, val, c))
			return -1;
	}
	return 0;
}

/* libyaml's reader reports a byte offset rather than a mark. */
static yaml_mark_t cfg_offset_mark(const unsigned char *data, size_t n, size_t off)
{
	yaml_mark_t m = { off, 0, 0 };

	for (size_t i = 0; i < off && i < n; i++) {
		if (data[i] == '\n') {
			m.line++;
			m.column = 0;
		} else if ((data[i] & 0xc0) != 0x80) {
			m.column++;
		}
	}
	return m;
}

static int cfg_syntax(struct cfg_ctx *x, const yaml_parser_t *ps,
		      const unsigned char *data, size_t n)
{
	yaml_mark_t m = ps->problem_mark;
	const char *problem = ps->problem ? ps->problem : "unknown error";

	if (ps->error == YAML_MEMORY_ERROR)
		return cfg_fail(x, &m, "out of memory while parsing");
	if (ps->error == YAML_READER_ERROR) {
		m = cfg_offset_mark(data, n, ps->problem_offset);
		return cfg_fail(x, &m, "YAML syntax error: %s", problem);
	}
	if (ps->context && (ps->context_mark.line != m.line ||
			    ps->context_mark.column != m.column))
		return cfg_fail(x, &m, "YAML syntax error: %s (%s at line %zu, column %zu)",
				problem, ps->context, ps->context_mark.line + 1,
				ps->context_mark.column + 1);
	return cfg_fail(x, &m, "YAML syntax error: %s", problem);
}

static int cfg_parse(struct cfg_ctx *x, const unsigned char *data, size_t n,
		     struct config *c)
{
	yaml_parser_t ps;
	yaml_document_t doc, extra;
	yaml_node_t *root;
	int rc = -1;

	if (!yaml_parser_initialize(&ps)) {
		yaml_mark_t m = { 0, 0, 0 };
		return cfg_fail(x, &m, "out of memory while parsing");
	}
	yaml_parser_set_input_string(&ps, data, n);
	if (!yaml_parser_load(&ps, &doc)) {
		cfg_syntax(x, &ps, data, n);
		yaml_parser_delete(&ps);
		return -1;
	}
	x->doc = &doc;
	root = yaml_document_get_root_node(&doc);
	if (!root || !cfg_apply(x, root, c)) {
		/* Anything after the first document is a mistake, even if valid. */
		if (!yaml_parser_load(&ps, &extra)) {
			cfg_syntax(x, &ps, data, n);
		} else {
			if (yaml_document_get_root_node(&extra))
				cfg_fail(x, &extra.start_mark,
					 "only one YAML document is allowed");
			else
				rc = 0;
			yaml_document_delete(&extra);
		}
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&ps);
	return rc;
}

int config_load_mem(const char *name, const void *data, size_t n,
		    struct config *c, struct buf *err)
{
	struct cfg_ctx x = { name ? name : "<config>", err, NULL };
	struct config tmp;

	if (!data)
		data = ""; /* libyaml asserts on a NULL input even when n is 0 */
	config_defaults(&tmp);
	if (cfg_parse(&x, data, n, &tmp)) {
		config_release(&tmp);
		config_defaults(c);
		return -1;
	}
	free(tmp.source);
	tmp.source = cfg_strdup(x.name);
	*c = tmp;
	return 0;
}

static const char *cfg_file_kind(mode_t m)
{
	return S_ISDIR(m) ? "not a regular file (a directory)" :
	       S_ISFIFO(m) ? "not a regular file (a FIFO)" :
	       S_ISCHR(m) ? "not a regular file (a character device)" :
	       S_ISBLK(m) ? "not a regular file (a block device)" :
	       S_ISSOCK(m) ? "not a regular file (a socket)" : "not a regular file";
}

int config_load_file(const char *path, struct config *c, struct buf *err)
{
	struct buf data = BUF_INIT;
	struct stat st;
	int fd, rc = 0;

	/*
	 * Without O_NONBLOCK, opening a FIFO waits for a writer: make
	 * would hang for ever inside its function call.
	 */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		err_fail(err, "%s: cannot open:", path);
		config_defaults(c);
		return -1;
	}
	if (fstat(fd, &st) < 0)
		rc = err_fail(err, "%s: cannot read:", path);
	else if (!S_ISREG(st.st_mode))
		rc = err_fail(err, "%s: cannot read: %s", path, cfg_file_kind(st.st_mode));
	else
		rc = config_trusted(path, &st, err);
	if (rc < 0) {
		close(fd);
		config_defaults(c);
		return -1;
	}
	(void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	for (;;) {
		ssize_t got;

		buf_grow(&data, 65536);
		got = read(fd, data.data + data.len, 65536);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			rc = err_fail(err, "%s: cannot read:", path);
			break;
		}
		if (!got)
			break;
		data.len += (size_t)got;
		if (data.len > CONFIG_MAX_FILE) {
			rc = err_fail(err, "%s: cannot read: larger than 1 MiB", path);
			break;
		}
	}
	close(fd);
	if (rc)
		config_defaults(c);
	else
		rc = config_load_mem(path, data.data, data.len, c, err);
	buf_release(&data);
	return rc;
}
