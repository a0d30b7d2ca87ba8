/*
 * config.h - the YAML configuration (libyaml), shared by plugin and worker.
 *
 * config_defaults() fills the built-in defaults.  config_load_file() parses
 * one YAML file into an output-only struct (never read, never freed first):
 * on any error it holds exactly config_defaults(), nothing half-applied, and
 * `err` holds one line (no newline) of the form
 *     FILE:LINE:COLUMN: message
 * (LINE and COLUMN 1-based) naming the key and, for bad values, the value.
 * Unknown keys are errors that suggest the nearest valid key.  Nothing here
 * calls exit() or prints.
 *
 * The file is a single YAML mapping at the top level (an empty file or an
 * empty document means "all defaults").  Its keys are the rows of the key
 * table (config/keys.c: each key's name, kind of value, field below,
 * default and range); man/asynccompile.yaml.5 is the user's reference,
 * and t/t0003 checks that it documents the table.  The fields of struct
 * config below say what each value means to its readers.
 *
 * trace: a relative path is relative to the build's starting directory
 * (lib/startdir.h); the plugin resolves it, this module keeps the text.
 *
 * A duration is a non-negative integer with an optional unit: ms, s, m, h
 * (no unit = seconds), e.g. 90s, 5m, 1500ms; at most 24h.
 * A size is a positive integer with an optional unit: B, K/KB/KiB, M/MB/MiB,
 * G/GB/GiB (all binary multiples; no unit = bytes).
 */
#ifndef ASYNC_CONFIG_H
#define ASYNC_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "lib/buf.h"

#define CONFIG_MAX_KEYS 32
#define CONFIG_FILE_NAME "asynccompile.yaml"
#define CONFIG_SYSTEM_FILE "/etc/asynccompile.yaml"

enum start_method { START_SUBPROCESS, START_SPAWN, START_FORK };
enum tristate { TRI_AUTO, TRI_TRUE, TRI_FALSE };
enum progress_mode { PROGRESS_AUTO, PROGRESS_ALWAYS, PROGRESS_NEVER };

/* One field per key of the table (its key named where the names differ). */
struct config {
	int workers;              /* 0 = auto (resolve with config_workers()) */
	enum start_method start_method;
	int warm;                 /* start every worker when the pool starts */
	int64_t timeout_ms;       /* timeout: per job; 0 = none */
	int64_t kill_grace_ms;    /* kill_grace: SIGTERM, then SIGKILL after this */
	int kill_daemons;         /* daemons: kill (else keep until the pool ends) */
	int retries;              /* re-runs after a worker crash */
	char **launcher;          /* argv prefix, NULL-terminated, malloc'd; never NULL */
	char **env;               /* "K=V" NULL-terminated, malloc'd; never NULL */
	enum tristate echo;       /* build steps echoed when queued in a recipe */
	enum progress_mode progress; /* the stderr line on a terminal */
	char *trace;              /* malloc'd; "" = none */
	int64_t max_output;       /* bytes per stream */
	int speculate;            /* async-shell runs last run's commands ahead */
	int cache;                /* keep async-shell/async-try answers between runs */
	int64_t cache_max_age_ms; /* cache_max_age: entries older than this are misses */
	int64_t cache_max_size;   /* bytes the store's entries and records may take */
	int cache_content;        /* cache_check: content (identify programs by their
				     bytes), else mtime (by mtime and size) */
	char *cache_dir;          /* malloc'd; "" = $XDG_CACHE_HOME/asynccompile or
				     ~/.cache/asynccompile */
	char *source;             /* malloc'd: file it came from, or "built-in defaults" */
	/* the line of `source` that set each key (index: the key table's row), 0: default */
	uint32_t key_line[CONFIG_MAX_KEYS];
};

/* Fill *c with the built-in defaults (allocates; release with config_release). */
void config_defaults(struct config *c);
/*
 * Make `cache: true` the default of this process (for keys no file sets):
 * what asynccompile-kbuild.mk's load asks for.  Call before any config is
 * filled.
 */
void config_default_cache(int on);
void config_release(struct config *c);
/* 1 when a and b hold the same value for every key (not source nor key_line). */
int config_same(const struct config *a, const struct config *b);
/*
 * Parse `path` into *c (which receives defaults for keys the file omits).
 * Returns 0, or -1 with one line in *err and *c left as config_defaults().
 * Anything but a regular file (a FIFO, a directory, a device) is refused
 * without blocking, and so is a file config_trusted() refuses.
 */
int config_load_file(const char *path, struct config *c, struct buf *err);
/* Same, from memory; `name` is used in messages (the fuzz target uses this). */
int config_load_mem(const char *name, const void *data, size_t n,
		    struct config *c, struct buf *err);
/* Effective worker count: workers, or online CPUs for auto (>= 1). */
int config_workers(const struct config *c);
/*
 * The most workers the pool may grow to: an explicit count is a hard cap;
 * auto starts at config_workers() and may grow to the key's own limit,
 * 1024 (the plugin grows it only as far as -jN lets jobs run).
 */
int config_workers_max(const struct config *c);
/* Append the effective configuration as YAML (for --print-config / stats). */
void config_dump(const struct config *c, struct buf *out);
/*
 * The same, each key's first line ending in a comment that says where its
 * value came from: "  # FILE:LINE" for a key the file set, "  # default"
 * otherwise.  Loads back as config_dump()'s output does.
 */
void config_dump_origins(const struct config *c, struct buf *out);

/* ---- Finding the file ----
 *
 * The order (the first file found wins, whole: keys are never merged
 * from two files; a key a file leaves out has its built-in default):
 *   1. a file the caller names: $(async-config FILE), the make variable
 *      ASYNC_COMPILE_CONFIG, the FILE argument of a user's tool;
 *   2. the environment variable ASYNC_COMPILE_CONFIG;
 *   3. asynccompile.yaml in the directory make was started from
 *      (start_dir(): lib/startdir.h; under `make -C DIR` the directory
 *      before the -C), named relative to the current directory when it
 *      is that directory;
 *   4. $XDG_CONFIG_HOME/asynccompile/asynccompile.yaml, else
 *      ~/.config/asynccompile/asynccompile.yaml (store_user_path());
 *   5. /etc/asynccompile.yaml;
 *   6. the built-in defaults.
 * A step finds a file when something is at its path (lstat), even a
 * dangling link or a loop: loading it then reports what is wrong instead
 * of falling back in silence.  In step 3 a path this user may not search
 * counts too; in steps 4 and 5 it does not (a HOME kept by sudo).  Every file is a security boundary, as the
 * store is (config_trusted()).
 */
enum config_step {
	CONFIG_NAMED,           /* $(async-config FILE) or a tool's FILE */
	CONFIG_MAKE_VAR,        /* the make variable ASYNC_COMPILE_CONFIG */
	CONFIG_ENV,             /* the environment variable */
	CONFIG_START_DIR,       /* ./asynccompile.yaml where make started */
	CONFIG_USER,            /* $XDG_CONFIG_HOME/asynccompile/asynccompile.yaml */
	CONFIG_SYSTEM,          /* /etc/asynccompile.yaml */
	CONFIG_DEFAULTS,        /* no file */
};
struct config_search {
	const char *named;                /* step 1 (NULL or "": none) ... */
	enum config_step named_step;      /* ... and which (NAMED or MAKE_VAR) */
	const char *(*start_dir)(void);   /* step 3's directory; NULL: "." */
};
struct config_origin {
	enum config_step step;
	char *path;                       /* malloc'd; NULL with CONFIG_DEFAULTS */
};
/* Which file the search finds (nothing is read but names and lstat). */
void config_find(const struct config_search *s, struct config_origin *o);
/*
 * config_find(), then config_load_file() the file found (defaults when
 * none is).  0, or -1 with *err and *c as config_load_file() leaves them;
 * *o is filled either way (config_origin_release it).
 */
int config_find_load(const struct config_search *s, struct config *c,
		     struct config_origin *o, struct buf *err);
void config_origin_release(struct config_origin *o);
/* What a step is, for a reader: "the environment variable ASYNC_COMPILE_CONFIG". */
const char *config_step_name(enum config_step s);
/*
 * May the file at `path`, whose fstat is *st, configure this process?
 * Its owner must be the effective user (or root, for /etc/asynccompile.yaml
 * alone), and neither group nor others may write to it: a file someone
 * else can change would choose the commands make runs (launcher, env).
 * 0, or -1 with "PATH: refused: why" in err.
 */
int config_trusted(const char *path, const struct stat *st, struct buf *err);
const char *config_start_method_name(enum start_method m);

#endif
