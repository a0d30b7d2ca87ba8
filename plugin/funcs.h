/*
 * funcs.h - the make functions but async-shell (shell.h): what setup.c
 * registers with make.  Everything here runs on make's thread only.
 */
#ifndef ASYNC_FUNCS_H
#define ASYNC_FUNCS_H

/* gmk function callbacks (setup.c registers them). */
char *funcs_compile(const char *nm, unsigned int argc, char **argv);
char *funcs_try(const char *nm, unsigned int argc, char **argv);
char *funcs_wait(const char *nm, unsigned int argc, char **argv);
char *funcs_config(const char *nm, unsigned int argc, char **argv);
char *funcs_stats(const char *nm, unsigned int argc, char **argv);
/* $(async-drop NAME ...): let jobs go unwaited (stopped, no error at exit). */
char *funcs_drop(const char *nm, unsigned int argc, char **argv);
/*
 * async-compile-internal-unwaited NAME: what a job's NAME.status, .out
 * and .err stand for until a wait sets them: an error at the line that
 * reads one.
 */
char *funcs_unwaited(const char *nm, unsigned int argc, char **argv);

#endif
