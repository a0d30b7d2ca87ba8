/*
 * request.h - what every make function that runs a command needs before
 * it can queue one: the configuration in force, make's situation (in a
 * recipe? which jobserver or -jN?), make's shell and directory, and the
 * job message the pool runs.  Shared by the functions of funcs.c and
 * async-shell (shell.c, spec.c), which call it and never each other for
 * it.  Everything here runs on make's thread only.
 *
 * Errors: with a function name `fn` a bad configuration or a pool that
 * cannot start stops make (mk.h) with "fn: <reason>"; with fn == NULL (at
 * load) nothing is reported and the call says so by its result.
 */
#ifndef ASYNC_REQUEST_H
#define ASYNC_REQUEST_H

#include <stdint.h>

#include "config/config.h"
#include "lib/buf.h"
#include "plugin/job.h"
#include "plugin/js.h"

/*
 * What async-shell does at the moments only request.c sees (it is above
 * this file, so it is called back instead of called).
 */
struct request_hooks {
	/* A recipe is being expanded: the makefiles have been read. */
	void (*makefiles_read)(void);
	/*
	 * The configuration is about to change while the pool may run only
	 * what speculation started: cancel that and return 1, else 0.
	 */
	int (*drop_speculation)(void);
};

/*
 * At load, before any other call: keep `hooks` (copied) and note the
 * jobserver make handed us in the environment; nothing is started.
 */
void request_load(const struct request_hooks *hooks);

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
const struct config *request_prepare(const char *fn, struct situation *sit, int start);
/*
 * $(async-config PATH): use the file at path from now on.  Stops make
 * with an error naming fn if it is bad or the pool already runs with
 * another configuration.
 */
void request_config_use(const char *fn, const char *path);
/*
 * At load: the configuration found so far (the makefile may still name
 * another before the first call), or NULL on a bad file.
 */
const struct config *request_config_at_load(void);
/* The configuration found so far, or NULL before any was looked for. */
const struct config *request_config(void);
/*
 * ASYNC_COMPILE_DISABLE (any value but empty or 0, read at load): the
 * functions run each command at once in make's process, as $(shell)
 * would; no pool, no tracer, nothing read from or written to the store.
 * request_prepare() then fills the situation but starts nothing.
 */
int request_disabled(void);
/*
 * The build's starting directory (lib/startdir.h: where the top-level
 * make was started, before any -C), found once.
 */
const char *request_start(void);
/* Is make expanding a recipe ($@ is set)? */
int request_in_recipe(void);
/* make's current directory (as when makefiles were read). */
const char *request_cwd(void);
/* $(SHELL) and $(.SHELLFLAGS) split as make splits them (malloc'd). */
void request_make_shell(char **shell, char ***flags);
/* s split at blanks: a NULL-terminated malloc'd array (strv_free it). */
char **request_split(const char *s);
/*
 * A new job of `kind` named `name` for `command` (both copied), not yet
 * submitted: the caller fills its payload and owns it.
 */
struct job *request_job(const char *name, enum job_kind kind, const char *command);
/*
 * A job as the pool would run it: the configuration's env, timeout and
 * limits (fields borrowed from the arguments and the configuration).
 */
struct job_msg;
void request_job_msg(struct job_msg *m, const char *shell, char **flags, const char *cwd,
		     const char *command, const char *input);

#endif
