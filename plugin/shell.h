/*
 * shell.h - $(async-shell): memoization, speculation from the last run's
 * record (lib/record.h) and the answer cache (lib/cache.h).
 * Everything here runs on make's thread only.
 */
#ifndef ASYNC_SHELL_H
#define ASYNC_SHELL_H

#include "config/config.h"
#include "lib/buf.h"
#include "plugin/job.h"

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
 * The answer cache (config `cache`, lib/cache.h).  Lookup: with the
 * cache on, compute j's key (the command as written, before the
 * launcher, which is part of the key) and, on a hit, fill j->res and set
 * j->cached.  Keep: store a
 * finished job's answer under its key if it ran to completion.
 */
void shell_cache_lookup(const struct config *c, struct job *j, const char *shell, char **flags,
			const char *command, const char *input, char **launcher);
void shell_cache_keep(const struct job *j);
/*
 * The tracer to preload into a command whose answer may be reused
 * (lib/readset.h), found once; NULL when there is none, and then no
 * answer is ever reused.
 */
const char *shell_tracer(void);
/*
 * The pool runs only what speculation started (no make function has
 * queued a job yet): cancel it and return 1, so that the configuration
 * may still change (the pool is then restarted with it); else 0.
 */
int shell_drop_speculation(void);
/* atexit: end speculation, keep the cache within its bounds. */
void shell_exit(void);
/* Append the async-shell counters to $(async-stats). */
void shell_stats(struct buf *b);

#endif
