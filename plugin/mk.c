/*
 * mk.c - talking to make through gnumake.h: variables, expansion, errors,
 * printing, and the few globals of make's we read (mk.h).  Make's thread
 * only: these are the plugin's only calls of gmk_*, but for setup.c's
 * registration of the make functions.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gnumake.h>

#include "lib/buf.h"
#include "lib/strv.h"
#include "plugin/mk.h"

/*
 * Text handed to make verbatim: make parses what gmk_eval gets, so instead
 * of escaping `$`, `#`, newlines and leading blanks we eval a reference to
 * this function, which returns the stashed text as it is:
 * $(async-compile-internal-value ) the one text, $(async-compile-internal-
 * value N) the Nth of a list (mk_call's arguments).
 */
static const char *mk_stash;
static size_t mk_stash_len;
static char *const *mk_stash_v;
static unsigned mk_stash_n;

static char *mk_value_func(const char *nm, unsigned int argc, char **argv)
{
	const char *v = mk_stash;
	size_t n = mk_stash_len;
	char *r;

	(void)nm;
	if (argc && *argv[0]) {
		unsigned long i = strtoul(argv[0], NULL, 10);

		v = i < mk_stash_n ? mk_stash_v[i] : "";
		n = strlen(v);
	}
	r = gmk_alloc((unsigned)n + 1);
	if (n)
		memcpy(r, v, n);
	r[n] = 0;
	return r;
}

#define MK_VALUE "$(async-compile-internal-value )"

void mk_set_var(const char *name, const char *suffix, const char *value)
{
	struct buf line = BUF_INIT;

	mk_stash = value;
	mk_stash_len = strlen(value);
	buf_addf(&line, "%s%s := " MK_VALUE, name, suffix);
	gmk_eval((char *)line.data, NULL);
	buf_release(&line);
	mk_stash = NULL;
	mk_stash_len = 0;
}

char *mk_call(const char *name, unsigned argc, char *const *argv)
{
	struct buf e = BUF_INIT;
	char *const *old_v = mk_stash_v;
	unsigned old_n = mk_stash_n;
	char *r;

	buf_addf(&e, "$(call %s", name);
	for (unsigned i = 0; i < argc; i++)
		buf_addf(&e, ",$(async-compile-internal-value %u)", i);
	buf_addstr(&e, ")");
	/* call expands its arguments before the body, which may call us again */
	mk_stash_v = argv;
	mk_stash_n = argc;
	r = mk_expand((char *)e.data);
	mk_stash_v = old_v;
	mk_stash_n = old_n;
	buf_release(&e);
	return r;
}

static int mk_stopping;

int mk_stopped(void)
{
	return mk_stopping;
}

void mk_error(const char *msg)
{
	mk_stopping = 1;
	mk_stash = msg;
	mk_stash_len = strlen(msg);
	/* never returns: make prints the location and exits 2 */
	gmk_eval("$(error " MK_VALUE ")", NULL);
	abort();
}

void mk_fail(const char *fn, const char *msg)
{
	struct buf b = BUF_INIT;

	buf_addf(&b, "%s: %s", fn, msg);
	mk_error((char *)b.data);
}

void mk_eval(const char *text)
{
	gmk_eval(text, NULL);
}

char *mk_expand(const char *text)
{
	char *v = gmk_expand(text);
	char *r = strdup(v ? v : "");

	gmk_free(v);
	if (!r)
		abort();
	return r;
}

char *mk_result(const char *s)
{
	size_t n = strlen(s);
	char *r = gmk_alloc((unsigned)n + 1);

	memcpy(r, s, n + 1);
	return r;
}

static void mk_write(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);
		if (w <= 0)
			return;
		c += w;
		n -= (size_t)w;
	}
}

void mk_print(int fd, const void *p, size_t n)
{
	/* make's own stdio buffer goes first so lines stay in order */
	fflush(stdout);
	fflush(stderr);
	mk_write(fd, p, n);
}

/* Functions whose spelling without arguments is a variable (see setup). */
static const char *const mk_aliases[] = { "async-wait", "async-stats" };

void mk_check_aliases(void)
{
	for (size_t i = 0; i < sizeof mk_aliases / sizeof *mk_aliases; i++) {
		char ref[64], *v;

		snprintf(ref, sizeof ref, "$(value %s)", mk_aliases[i]);
		v = mk_expand(ref);
		snprintf(ref, sizeof ref, "$(%s )", mk_aliases[i]);
		if (strcmp(v, ref)) {
			struct buf b = BUF_INIT;

			buf_addf(&b, "asynccompile: warning: a makefile gave the variable '%s' "
				 "a value of its own, so $(%s) expands to that value and no longer "
				 "calls the function (a recipe line then runs it as a command, "
				 "a makefile line reports \"missing separator\"); call it as "
				 "$(%s ) with a blank, or rename the variable\n",
				 mk_aliases[i], mk_aliases[i], mk_aliases[i]);
			mk_print(2, b.data, b.len);
			buf_release(&b);
		}
		free(v);
	}
}

/*
 * make prints "'T' is up to date" (or "Nothing to be done for 'T'") when
 * it started no command while updating T; it counts in the global
 * commands_started (remake.c), which its own -t path bumps to say "work
 * was done" without running a command.  A recipe whose lines expand to
 * nothing but build steps started none of make's commands, so we bump it
 * too.  make links with --export-dynamic so that loaded objects find
 * gmk_*; its globals are in the dynamic symbol table with them (4.3 and
 * 4.4.1 both have `unsigned int commands_started`).  Without the symbol
 * the message stays, which is all that is lost.
 */
void mk_count_command(void)
{
	static unsigned int *started;
	static int looked;

	if (!looked++)
		started = dlsym(RTLD_DEFAULT, "commands_started");
	if (started)
		++*started;
}

/*
 * -s and a `.SILENT:` without prerequisites both end up in make's global
 * run_silent (main.c, file.c), exported like commands_started above.  A
 * `.SILENT: T` list and a line's `@` live in make's per-target and
 * per-line flags, which no function can see.
 */
int mk_run_silent(void)
{
	static int *silent;
	static int looked;

	if (!looked++)
		silent = dlsym(RTLD_DEFAULT, "run_silent");
	return silent && *silent;
}

/*
 * make's global `const floc *reading_file` (read.c, expand.c) is what its
 * error() names: the makefile line being read, or, while a recipe is
 * expanded, the recipe's first line with the line's index in `offset`
 * (job.c new_job).  floc is { filenm, lineno, offset } in 4.3, 4.4.1 and
 * master alike; exported like commands_started above.
 */
char *mk_where(void)
{
	struct mk_floc {
		const char *filenm;
		unsigned long lineno, offset;
	};
	static const struct mk_floc **rf;
	static int looked;
	struct buf b = BUF_INIT;

	if (!looked++)
		rf = dlsym(RTLD_DEFAULT, "reading_file");
	if (!rf || !*rf || !(*rf)->filenm)
		return NULL;
	buf_addf(&b, "%s:%lu", (*rf)->filenm, (*rf)->lineno + (*rf)->offset);
	return buf_detach(&b, NULL);
}

/*
 * The environment make's own $(shell) would give a command now.  make
 * 4.3's func_shell passes its environ as it is; 4.4 builds one with
 * target_environment(NULL, 0): the makefile's exported variables, this
 * make's MAKELEVEL + 1 and MAKEFLAGS (its expansion may run functions,
 * which is why it is called once per async-shell call, as $(shell) calls
 * it once).  Both are symbols make exports for loaded objects; 4.4's
 * two-argument form is told apart by env_recursion, its loop guard, which
 * 4.3 lacks (4.3's one-argument form must never be called: it is not what
 * its $(shell) uses and it can recurse without end).
 */
char **mk_shell_environ(void)
{
	typedef char **te44(void *file, int recursive);
	extern char **environ;
	static te44 *te;
	static int looked;

	if (!looked++ && dlsym(RTLD_DEFAULT, "env_recursion"))
		te = (te44 *)dlsym(RTLD_DEFAULT, "target_environment");
	if (te)
		return te(NULL, 0); /* malloc'd strings in a malloc'd array: ours */
	return strv_dup(environ);
}

void mk_setup(void)
{
	gmk_add_function("async-compile-internal-value", mk_value_func, 0, 1, GMK_FUNC_DEFAULT);
	/*
	 * `$(async-wait)` is a variable reference for make (a function call
	 * needs a blank after the name), so give those names values that
	 * call the functions.
	 */
	for (size_t i = 0; i < sizeof mk_aliases / sizeof *mk_aliases; i++) {
		char line[64];

		snprintf(line, sizeof line, "%s = $(%s )", mk_aliases[i], mk_aliases[i]);
		gmk_eval(line, NULL);
	}
}
