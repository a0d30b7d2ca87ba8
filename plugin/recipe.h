/*
 * recipe.h - the context make gives a recipe line, for a build step run
 * in its place.  make's thread only (it expands make variables).
 */
#ifndef ASYNC_RECIPE_H
#define ASYNC_RECIPE_H

#include "../config/config.h"

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

#endif
