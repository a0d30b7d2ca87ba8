/*
 * funcs.h - the make functions and the make-side helpers they use.
 * Everything here runs on make's thread only.
 */
#ifndef ASYNC_FUNCS_H
#define ASYNC_FUNCS_H

#include <stddef.h>

#include "config/config.h"
#include "lib/buf.h"
#include "plugin/js.h"

/* gmk function callbacks (setup.c registers them). */
char *funcs_compile(const char *nm, unsigned int argc, char **argv);
char *funcs_try(const char *nm, unsigned int argc, char **argv);
char *funcs_wait(const char *nm, unsigned int argc, char **argv);
char *funcs_config(const char *nm, unsigned int argc, char **argv);
char *funcs_stats(const char *nm, unsigned int argc, char **argv);
/* setup: note the jobserver in the environment; nothing is started */
void funcs_load(void);

/* What every function that runs commands does first. */
struct situation {
	int in_recipe;            /* $@ is set: make is expanding a recipe */
	struct make_flags flags;
};
/*
 * Find the configuration, end speculation if a recipe is being expanded,
 * and with `start` set the slots (jobserver or -jN) from make's flags and
 * start the pool (without it sit->flags stay zero: a command run in
 * make's own process needs neither).  With fn == NULL (at load) nothing
 * is reported and NULL is returned on a bad configuration or a pool that
 * cannot start; otherwise those stop make with an error naming fn.
 * Returns the configuration in force.
 */
const struct config *funcs_prepare(const char *fn, struct situation *sit, int start);
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

#endif
