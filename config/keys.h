/*
 * keys.h - private to config/: the table of configuration keys (keys.c)
 * that the loader (config.c) and the dumper (config_dump.c) walk, and the
 * limits of their values.  Not part of the module's API; include
 * config.h instead.
 */
#ifndef ASYNC_CONFIG_KEYS_H
#define ASYNC_CONFIG_KEYS_H

#include <stddef.h>
#include <yaml.h>

#include "config/cfg.h"
#include "config/config.h"

#define CONFIG_MAX_FILE ((size_t)1 << 20)
#define CONFIG_MAX_WORKERS 1024
#define CONFIG_MAX_RETRIES 100
#define CONFIG_MAX_DURATION_MS ((int64_t)24 * 3600 * 1000)
#define CONFIG_MIN_OUTPUT ((int64_t)1 << 10)
#define CONFIG_MIN_STORE ((uint64_t)1 << 20)
#define CONFIG_MAX_STORE ((uint64_t)1 << 40)

struct cfg_key {
	const char *name;
	const char *expect;   /* what a valid value looks like, for "expected ..." */
	const char *if_null;  /* hint appended to "KEY: missing value" */
	/* Store a non-null value into *c, or fail via cfg_fail() and return -1. */
	int (*parse)(struct cfg_ctx *x, const struct cfg_key *k,
		     yaml_node_t *val, struct config *c);
};

/* In contract order (the order config.h and config_dump() use). */
#define CFG_MAX_KEYS CONFIG_MAX_KEYS
extern const struct cfg_key keys_table[];
extern const size_t keys_count;

#endif
