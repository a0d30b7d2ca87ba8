/*
 * funcs.h - the make functions and the make-side helpers they use.
 * Everything here runs on make's thread only.
 */
#ifndef ASYNC_FUNCS_H
#define ASYNC_FUNCS_H

#include <stddef.h>

/* gmk function callbacks (setup.c registers them). */
char *funcs_compile(const char *nm, unsigned int argc, char **argv);
char *funcs_try(const char *nm, unsigned int argc, char **argv);
char *funcs_wait(const char *nm, unsigned int argc, char **argv);
char *funcs_config(const char *nm, unsigned int argc, char **argv);
char *funcs_stats(const char *nm, unsigned int argc, char **argv);
/* setup: start the pool now if the configuration found says warm: true */
void funcs_warm_at_load(void);

/* setup.c: talking to make */
/* Define NAME<suffix> as a simple variable holding `value` verbatim. */
void mk_set_var(const char *name, const char *suffix, const char *value);
/* $(error msg) at the current location; does not return. */
void mk_error(const char *msg) __attribute__((noreturn));
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
