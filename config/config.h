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
 * empty document means "all defaults").  Keys and accepted values:
 *
 *   workers: auto | integer 1..1024        (auto = online CPUs, growing to -jN)
 *   start_method: subprocess | spawn | fork
 *   warm: true | false                     (YAML 1.1 booleans: yes/no/on/off too)
 *   timeout: 0 | duration                  (0 = none)
 *   kill_grace: duration
 *   daemons: keep | kill                   (processes a job left in a session of their own)
 *   retries: integer 0..100
 *   launcher: sequence of strings          (argv prefix; [] = none)
 *   env: mapping string -> scalar          (extra job environment)
 *   echo: auto | true | false
 *   progress: auto | always | never
 *   trace: string                          ("" = no trace)
 *   max_output: size                       (1KiB .. 256MiB)
 *   speculate: true | false
 *   cache: true | false
 *   cache_max_age: age                     (a duration that may use d; 1s .. 3650d)
 *   cache_check: mtime | content
 *   cache_dir: absolute path               ("" = $XDG_CACHE_HOME/asynccompile
 *                                           or ~/.cache/asynccompile)
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

#include "lib/buf.h"

#define CONFIG_MAX_KEYS 32

enum start_method { START_SUBPROCESS, START_SPAWN, START_FORK };
enum tristate { TRI_AUTO, TRI_TRUE, TRI_FALSE };
enum progress_mode { PROGRESS_AUTO, PROGRESS_ALWAYS, PROGRESS_NEVER };

struct config {
	int workers;              /* 0 = auto (resolve with config_workers()) */
	enum start_method start_method;
	int warm;
	int64_t timeout_ms;       /* 0 = none */
	int64_t kill_grace_ms;
	int kill_daemons;         /* daemons: kill (else keep until the pool ends) */
	int retries;
	char **launcher;          /* NULL-terminated, malloc'd; never NULL */
	char **env;               /* "K=V" NULL-terminated, malloc'd; never NULL */
	enum tristate echo;
	enum progress_mode progress;
	char *trace;              /* malloc'd; "" = none */
	int64_t max_output;       /* bytes per stream */
	int speculate;            /* async-shell runs last run's commands ahead */
	int cache;                /* keep async-shell/async-try answers between runs */
	int64_t cache_max_age_ms; /* entries older than this are misses */
	int cache_content;        /* identify programs by content, not mtime+size */
	char *cache_dir;          /* malloc'd; "" = the per-user default */
	char *source;             /* malloc'd: file it came from, or "built-in defaults" */
	/* the line of `source` that set each key (keys in config_dump()'s order), 0: default */
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
/*
 * Parse `path` into *c (which receives defaults for keys the file omits).
 * Returns 0, or -1 with one line in *err and *c left as config_defaults().
 * Anything but a regular file (a FIFO, a directory, a device) is refused
 * without blocking.
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
const char *config_start_method_name(enum start_method m);

#endif
