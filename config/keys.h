/*
 * keys.h - private to config/: the table of configuration keys and the
 * helpers the loader (config.c), the value parsers (keys.c) and the dumper
 * (dump.c) share.  Not part of the module's API; include config.h instead.
 */
#ifndef ASYNC_CONFIG_KEYS_H
#define ASYNC_CONFIG_KEYS_H

#include <stddef.h>
#include <yaml.h>

#include "config/config.h"

#define CONFIG_MAX_FILE ((size_t)1 << 20)
#define CONFIG_MAX_WORKERS 1024
#define CONFIG_MAX_RETRIES 100
#define CONFIG_MAX_DURATION_MS ((int64_t)24 * 3600 * 1000)
#define CONFIG_MIN_OUTPUT ((int64_t)1 << 10)

/* One load in progress: where messages go and what they are prefixed with. */
struct cfg_ctx {
	const char *name;
	struct buf *err;
	yaml_document_t *doc;
};

struct cfg_key {
	const char *name;
	const char *expect;   /* what a valid value looks like, for "expected ..." */
	const char *if_null;  /* hint appended to "KEY: missing value" */
	/* Store a non-null value into *c, or fail via cfg_fail() and return -1. */
	int (*parse)(struct cfg_ctx *x, const struct cfg_key *k,
		     yaml_node_t *val, struct config *c);
};

/* In contract order (the order config.h and config_dump() use). */
#define CFG_MAX_KEYS 32
extern const struct cfg_key cfg_keys[];
extern const size_t cfg_nkeys;

/* Append "NAME:LINE:COLUMN: message" (1-based) to x->err; returns -1. */
int cfg_fail(struct cfg_ctx *x, const yaml_mark_t *m, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* User text made safe for a one-line message (escaped, bounded); returns out. */
const char *cfg_show(char *out, size_t size, const char *s, size_t n);
/* "a sequence" / "a mapping" for messages about non-scalar nodes. */
const char *cfg_kind(const yaml_node_t *n);
/* A plain empty, ~ or null scalar: YAML's way of writing nothing. */
int cfg_is_null(const yaml_node_t *n);

/* Allocation that aborts on failure, like buf.c. */
void *cfg_calloc(size_t n, size_t size);
char *cfg_strdup(const char *s);

#endif
