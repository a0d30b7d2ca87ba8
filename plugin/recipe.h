/*
 * recipe.h - the context make gives a recipe line, for a build step run
 * in its place.  make's thread only (it expands make variables).
 */
#ifndef ASYNC_RECIPE_H
#define ASYNC_RECIPE_H

#include <stddef.h>

#include "config/config.h"
#include "lib/buf.h"

/*
 * What a recipe line of make's gets besides the command, for a build step
 * run in its place: MAKEFLAGS (command-line variables included) and
 * MFLAGS as make exports them, MAKELEVEL one up, then the config's env.
 * A recursive step (the command names $(MAKE) as a word: make itself
 * decides on the unexpanded line, which a function never sees) under a
 * pipe jobserver also gets make's jobserver descriptors, opened by number
 * through /proc in the job alone; a fifo jobserver needs only MAKEFLAGS.
 * Returns whether the step is recursive; *env and *fds are malloc'd
 * vectors (strv_free), the config's env (cfg) last.
 */
int recipe_context(const char *command, const struct config *cfg, char ***env, char ***fds);

/*
 * A recipe wait (collect.h): steps[0..n-1], build steps in queue order,
 * go to a new wait of the engine, and the text the $(async-wait) expands
 * to is returned (malloc'd): a command line of its own, between
 * newlines, running the collector silently (and, under .ONESHELL,
 * ending the script when it fails).  Its `+` (when make runs
 * with -n or -q and a step runs anyway: a recursive one) has make run
 * it even then.  NULL with the reason in err when no wait can be made
 * (no worker executable, no private socket): the steps are untouched.
 * `progress` (0, 1: on a terminal, 2: always): the collector draws the
 * status line (collect_add).
 */
struct job;
char *recipe_wait_line(struct job **steps, size_t n, int dry_run, int progress, struct buf *err);

/*
 * A wait's set jobs[0..*n-1] (queue order), expanded inside a recipe:
 * its build steps go to a collector line (recipe_wait_line) instead of
 * being waited for at the expansion, so make goes on running other
 * targets; what stays in jobs[] (*n shrinks: probes, whose answers are
 * data the recipe may need now) is waited for as before.  Returns the
 * line (malloc'd), or NULL when the set has no step or no collector can
 * be had (then jobs[] is untouched and waited for whole, after one
 * warning).  `progress` as recipe_wait_line's.
 */
char *recipe_collect(struct job **jobs, size_t *n, int progress);

#endif
