/*
 * shell.h - $(async-shell): memoization, speculation from the last run's
 * record (spec.h) and the answer cache (answer.h).
 * Everything here runs on make's thread only.
 */
#ifndef ASYNC_SHELL_H
#define ASYNC_SHELL_H

#include "lib/buf.h"

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
/* atexit: end speculation, keep the cache within its bounds. */
void shell_exit(void);
/* Append the async-shell counters to $(async-stats). */
void shell_stats(struct buf *b);
/*
 * Run a command in make's process as make's $(shell) runs one (in make's
 * group, known to make's fatal-signal handler), to completion; *res as
 * run_job() fills it.  async-shell's own runs and, under
 * ASYNC_COMPILE_DISABLE, every job (request.h).
 */
struct job_msg;
struct result_msg;
void shell_run_direct(const struct job_msg *msg, struct result_msg *res);

#endif
