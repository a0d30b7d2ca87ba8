/*
 * keys.h - private to config/: the table of configuration keys (keys.c).
 * Not part of the module's API; include config.h instead.
 *
 * One row per key says everything about it: its name, the kind of value
 * (cfg_type), where the value lives (offsetof into struct config), the
 * default, the accepted range and the words of its messages.  Everything
 * else walks the table: config_defaults(), config_release() and
 * config_same() (cfg_key_default/_release/_same), the loader
 * (cfg_key_parse, the unknown-key message with its "did you mean" and its
 * list of valid keys), config_dump() and config_dump_origins() (the order
 * of the rows is the order of the dump), and through the built worker's
 * --print-config, t/t0003's check of man/asynccompile.yaml.5.
 *
 * Adding a key is a field in struct config and a row here (plus its
 * tests and its entry in the man page); only a new kind of value needs
 * code, once per kind.  A key the workers need also travels in every JOB
 * message: plugin/request.c's request_job_msg() copies it into the
 * job_msg of lib/msg.h, whose layout PROTOCOL.md fixes.
 */
#ifndef ASYNC_CONFIG_KEYS_H
#define ASYNC_CONFIG_KEYS_H

#include <stddef.h>
#include <stdint.h>
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

/* The kinds of value; each has one parser, default, dump and comparison. */
enum cfg_type {
	CFG_WORD,    /* int or enum: the index in `words` of the word written */
	CFG_INT,     /* int: a number written with `units`, min..max */
	CFG_INT64,   /* int64_t: the same */
	CFG_STRING,  /* char *, malloc'd; no NUL byte */
	CFG_ARGV,    /* char **, NULL-terminated: a sequence of non-empty strings */
	CFG_ENV,     /* char **, "K=V" entries: a mapping of variable names */
};

enum cfg_flags {
	CFG_AUTO = 1 << 0,      /* CFG_INT: the word auto stores 0 */
	CFG_ABSOLUTE = 1 << 1,  /* CFG_STRING: "" or an absolute path */
};

/*
 * A unit a number may end with.  `shown` marks the spellings a dump
 * uses: the largest shown unit that divides the value exactly.
 */
struct cfg_unit {
	const char *suffix;
	uint64_t mult;
	int shown;
};

struct cfg_key {
	const char *name;
	enum cfg_type type;
	size_t offset;                  /* of the field in struct config */
	unsigned flags;                 /* enum cfg_flags */
	/* CFG_WORD: the words in the field's order, NULL-terminated ("true"
	 * and "false" also match YAML 1.1's other spellings) */
	const char *const *words;
	const struct cfg_unit *units;   /* CFG_INT, CFG_INT64 */
	int64_t def;                    /* the default: a number, a word's index */
	const char *def_text;           /* CFG_STRING's default (NULL: "") */
	uint64_t min, max;              /* CFG_INT, CFG_INT64: accepted range */
	const char *range;              /* ... as "KEY: V is out of range (RANGE)" says it */
	const char *expect;   /* what a valid value looks like, for "expected ..." */
	const char *if_null;  /* hint appended to "KEY: missing value" */
};

/* In contract order (the order of config_dump() and of the messages). */
#define CFG_MAX_KEYS CONFIG_MAX_KEYS
extern const struct cfg_key keys_table[];
extern const size_t keys_count;

/* The field a row describes, in *c. */
#define CFG_FIELD(c, k, type) ((type *)(void *)((char *)(c) + (k)->offset))
#define CFG_CFIELD(c, k, type) \
	((type const *)(const void *)((const char *)(c) + (k)->offset))

/* Store a non-null value into *c, or fail via cfg_fail() and return -1. */
int cfg_key_parse(struct cfg_ctx *x, const struct cfg_key *k, yaml_node_t *val,
		  struct config *c);
/* Fill the key's field of *c with its default (allocates for strings). */
void cfg_key_default(const struct cfg_key *k, struct config *c);
/* Free what the key's field holds and leave NULL there. */
void cfg_key_release(const struct cfg_key *k, struct config *c);
/* 1 when a and b hold the same value for the key. */
int cfg_key_same(const struct cfg_key *k, const struct config *a, const struct config *b);

#endif
