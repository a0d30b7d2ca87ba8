/*
 * mk.h - talking to make through its loaded-object API (gnumake.h), in
 * mk.c.  make's thread only: these and the registration of the make
 * functions (setup.c, kbuild.c) are the only calls of gmk_*.  This is the
 * edge where a reason (lib/err.h) reaches the user inside make:
 * mk_error() stops make with it, mk_print() shows it.
 */
#ifndef ASYNC_MK_H
#define ASYNC_MK_H

#include <stddef.h>

/*
 * At load: register the internal function the others hand text to make
 * through, and give $(async-wait) and $(async-stats), which make reads as
 * variable references, values that call the functions.
 */
void mk_setup(void);
/* Define NAME<suffix> as a simple variable holding `value` verbatim. */
void mk_set_var(const char *name, const char *suffix, const char *value);
/*
 * The expansion of $(call NAME,ARG...) with each ARG taken verbatim (not
 * expanded again), malloc'd.
 */
char *mk_call(const char *name, unsigned argc, char *const *argv);
/* $(error msg) at the current location; does not return. */
void mk_error(const char *msg) __attribute__((noreturn));
/* Did mk_error() stop make (it is exiting with status 2)? */
int mk_stopped(void);
/* $(error fn: msg): a make function's failure, worded as every one is. */
void mk_fail(const char *fn, const char *msg) __attribute__((noreturn));
/* gmk_eval text (make parses it as a makefile line). */
void mk_eval(const char *text);
/* gmk_expand into a malloc'd string. */
char *mk_expand(const char *text);
/* A function result (gmk_alloc'd copy). */
char *mk_result(const char *s);
/*
 * After the makefiles are read: warn if one redefined a variable that
 * stands for a function ($(async-wait) is a variable reference for make).
 */
void mk_check_aliases(void);
/* make echoes no command: -s, or `.SILENT:` with no prerequisites. */
int mk_run_silent(void);
/* Tell make a command ran for the target being updated (no "up to date"). */
void mk_count_command(void);
/*
 * The environment make's $(shell) would give a command started now: a
 * NULL-terminated array of malloc'd "K=V" strings, the caller's (free it
 * with strv_free).
 */
char **mk_shell_environ(void);
/*
 * "FILE:LINE" of the makefile line make is reading or the recipe line it
 * is expanding (what $(error) would name), malloc'd; NULL when make says
 * none (a command-line --eval) or its global is not there.
 */
char *mk_where(void);
/* Write to fd 1 or 2 after flushing make's stdio. */
void mk_print(int fd, const void *p, size_t n);

#endif
