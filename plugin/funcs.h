/*
 * funcs.h - the make functions and the make-side helpers they use.
 * Everything here runs on make's thread only.
 */
#ifndef ASYNC_FUNCS_H
#define ASYNC_FUNCS_H

#include <stddef.h>

#include "../config/config.h"
#include "jobserver.h"

/* gmk function callbacks (setup.c registers them). */
char *funcs_compile(const char *nm, unsigned int argc, char **argv);
char *funcs_try(const char *nm, unsigned int argc, char **argv);
char *funcs_wait(const char *nm, unsigned int argc, char **argv);
char *funcs_config(const char *nm, unsigned int argc, char **argv);
char *funcs_stats(const char *nm, unsigned int argc, char **argv);
/* setup: start the pool now if the configuration found says warm: true */
void funcs_warm_at_load(void);

/* What every function that runs commands does first. */
struct situation {
	int in_recipe;            /* $@ is set: make is expanding a recipe */
	struct make_flags flags;
};
/*
 * Find the configuration, set the slots (jobserver or -jN) from make's
 * flags, end speculation if a recipe is being expanded, start the pool.
 * With fn == NULL (at load) nothing is reported and NULL is returned on
 * a bad configuration or a pool that cannot start; otherwise those stop
 * make with an error naming fn.  Returns the configuration in force.
 */
const struct config *funcs_prepare(const char *fn, struct situation *sit);
/*
 * At load: the configuration found so far (the makefile may still name
 * another before the first call), or NULL on a bad file.
 */
const struct config *funcs_config_at_load(void);
/* make's current directory (as when makefiles were read). */
const char *funcs_cwd(void);
/* $(SHELL) and $(.SHELLFLAGS) split as make splits them (malloc'd). */
void funcs_make_shell(char **shell, char ***flags);
/*
 * A job as the pool would run it: the configuration's env, timeout and
 * limits (fields borrowed from the arguments and the configuration).
 */
struct job_msg;
void funcs_job_msg(struct job_msg *m, const char *shell, char **flags, const char *cwd,
		   const char *command, const char *input);
/* Encode a MSG_JOB with the configuration's env, timeout and limits. */
void funcs_put_job(struct buf *payload, const char *shell, char **flags, const char *cwd,
		   const char *command, const char *input);

/* shell.c: $(async-shell), speculation and memoization. */
char *shell_func(const char *nm, unsigned int argc, char **argv);
/* At load: set the end-of-parse hook, start the recorded commands. */
void shell_load(void);
/* The end-of-parse hook's function: calls shell_makefiles_read(). */
char *shell_read_func(const char *nm, unsigned int argc, char **argv);
/*
 * The makefiles have been read (or a recipe is being expanded): cancel
 * speculated jobs nobody asked for, write this run's record, and tell the
 * engine (engine_makefiles_read).  Idempotent.
 */
void shell_makefiles_read(void);
/*
 * The answer cache (config `cache`, worker/cache.h).  Lookup: with the
 * cache on, compute j's key (the command as written, before the
 * launcher, which is part of the key) and, on a hit, fill j->res and set
 * j->cached.  Keep: store a
 * finished job's answer under its key if it ran to completion.
 */
struct job;
void shell_cache_lookup(const struct config *c, struct job *j, const char *shell, char **flags,
			const char *command, const char *input, char **launcher);
void shell_cache_keep(const struct job *j);
/* atexit: end speculation, keep the cache within its bounds. */
void shell_exit(void);
/* Append the async-shell counters to $(async-stats). */
void shell_stats(struct buf *b);

/* setup.c: talking to make */
/* Define NAME<suffix> as a simple variable holding `value` verbatim. */
void mk_set_var(const char *name, const char *suffix, const char *value);
/* $(error msg) at the current location; does not return. */
void mk_error(const char *msg) __attribute__((noreturn));
/* gmk_eval text (make parses it as a makefile line). */
void mk_eval(const char *text);
/* gmk_expand into a malloc'd string. */
char *mk_expand(const char *text);
/* A function result (gmk_alloc'd copy). */
char *mk_result(const char *s);
/* Write to fd 1 or 2 after flushing make's stdio. */
void mk_print(int fd, const void *p, size_t n);

/* output.c: $(shell)-style folding of captured output (malloc'd). */
char *output_fold(const void *p, size_t n);
/* Single-quote a word for /bin/sh if it needs it (appended to b). */
struct buf;
void output_shell_quote(struct buf *b, const char *word);

#endif
