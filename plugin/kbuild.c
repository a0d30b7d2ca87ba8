/*
 * kbuild.c - Kbuild's probe macros through $(async-shell), with no file of
 * the tree edited.  Make's thread only.
 *
 * asynccompile-kbuild.mk loads the plugin through MAKEFILES, so into every
 * make of a build (sub-makes read MAKEFILES too), before any makefile of
 * the tree is read.  Kbuild defines try-run only later
 * (scripts/Makefile.compiler; scripts/Kbuild.include in older trees,
 * BusyBox and U-Boot), again in every sub-make, and make runs no loaded
 * code when a file is included: nothing can be rewritten at load.  What
 * make does offer: $(call NAME,ARGS) invokes a FUNCTION named NAME, if one
 * exists, instead of the variable (function.c, func_call; loaded functions
 * are in the same table as make's own).  So a function is registered for
 * each name below, and each call decides from the variable's value at
 * that moment:
 *
 *  - fast: a makefile named scripts/Kbuild.include has been read (Linux,
 *    its out-of-tree modules, BusyBox and U-Boot include it in every make
 *    of their builds) and the value is one $(shell COMMAND) and nothing
 *    else: the value with `$(shell` replaced by `$(async-shell` is
 *    expanded with the arguments bound as call binds them.  async-shell
 *    answers exactly what $(shell) would (asynccompile(7), "The answer model"), so
 *    the result is the macro's own.
 *  - exact: anything else (a makefile that is not Kbuild, one of Linux's
 *    macros that calls try-run rather than $(shell), a value of another
 *    shape): the variable is expanded as call would expand it.
 *
 * Arguments reach us expanded, as call expands them, and are handed on
 * verbatim (mk_call), as many as were given.  $(0) is the macro's name
 * through $(foreach 0,NAME,...), whose variable is of the same kind as
 * call's (automatic, simple).  The value with async-shell is held in a
 * variable of ours, defined with `define` (verbatim) whenever the macro's
 * value changes and read back to check it.
 *
 * Limits (asynccompile(7), "KBUILD: ZERO EDITS THROUGH MAKEFILES"): $(NAME args), with a blank, now calls
 * the function (it was a reference to a variable named "NAME args"); a
 * macro of one of these names that calls itself through $(call) stops
 * with make's "Recursive variable references itself" (make lets a
 * variable recurse through call, not through a plain reference).
 */
#include <stdlib.h>
#include <string.h>

#include <gnumake.h>

#include "lib/buf.h"
#include "plugin/kbuild.h"
#include "plugin/mk.h"

#define KBUILD_VAR "async-compile-internal-"

struct kbuild_macro {
	const char *name;
	int helpers;            /* call- and fast- helpers defined */
	char *fast_for;         /* the value the text- variable was made from */
};

/* Linux's try-run family goes through try-run; BusyBox's macros are each a $(shell). */
static struct kbuild_macro kbuild_macros[] = {
	{ "try-run", 0, NULL },
	{ "cc-option", 0, NULL },
	{ "cc-option-yn", 0, NULL },
	{ "cc-disable-warning", 0, NULL },
	{ "as-option", 0, NULL },
	{ "as-instr", 0, NULL },
	{ "ld-option", 0, NULL },
	{ "hostcc-option", 0, NULL },
};

#define KBUILD_NMACROS (sizeof kbuild_macros / sizeof *kbuild_macros)

/* Has a makefile named scripts/Kbuild.include been read?  Once yes, always. */
static int kbuild_tree(void)
{
	static int yes;
	char *v;

	if (yes)
		return 1;
	v = mk_expand("$(if $(filter undefined,$(origin MAKEFILE_LIST)),,"
		      "$(filter %/scripts/Kbuild.include scripts/Kbuild.include,$(MAKEFILE_LIST)))");
	yes = *v != 0;
	free(v);
	return yes;
}

/*
 * Is v exactly "$(shell COMMAND)"?  Parentheses are matched as make
 * matches a function's: every '(' and ')' counts.
 */
static int kbuild_one_shell(const char *v)
{
	size_t n = strlen(v);
	int depth = 0;

	if (strncmp(v, "$(shell", 7) || (v[7] != ' ' && v[7] != '\t') || strchr(v, '\n'))
		return 0;
	for (size_t i = 1; i < n; i++) {
		if (v[i] == '(')
			depth++;
		else if (v[i] == ')' && --depth == 0)
			return i == n - 1;
	}
	return 0;
}

static void kbuild_helpers(struct kbuild_macro *m)
{
	struct buf b = BUF_INIT;

	if (m->helpers++)
		return;
	buf_addf(&b, KBUILD_VAR "call-%s = $(foreach 0,%s,$(%s))", m->name, m->name, m->name);
	mk_eval((char *)b.data);
	buf_reset(&b);
	buf_addf(&b, KBUILD_VAR "fast-%s = $(foreach 0,%s,$(" KBUILD_VAR "text-%s))",
		 m->name, m->name, m->name);
	mk_eval((char *)b.data);
	buf_release(&b);
}

/* Make text-NAME the value v with async-shell; 0 if it did not come out whole. */
static int kbuild_fast_text(struct kbuild_macro *m, const char *v)
{
	struct buf want = BUF_INIT, b = BUF_INIT;
	char *back;
	int ok;

	if (m->fast_for && !strcmp(m->fast_for, v))
		return 1;
	free(m->fast_for);
	m->fast_for = NULL;
	buf_addf(&want, "$(async-shell%s", v + 7);
	/*
	 * One line that starts "$(async-shell " and ends with ")": nothing in
	 * it that define could take for its own (endef, a continuation)
	 */
	buf_addf(&b, "define " KBUILD_VAR "text-%s\n%s\nendef", m->name, (char *)want.data);
	mk_eval((char *)b.data);
	buf_reset(&b);
	buf_addf(&b, "$(value " KBUILD_VAR "text-%s)", m->name);
	back = mk_expand((char *)b.data);
	ok = !strcmp(back, (char *)want.data);
	if (ok && !(m->fast_for = strdup(v)))
		abort();
	free(back);
	buf_release(&b);
	buf_release(&want);
	return ok;
}

static char *kbuild_func(const char *nm, unsigned int argc, char **argv)
{
	struct kbuild_macro *m = NULL;
	struct buf b = BUF_INIT;
	char *v, *r, *res;

	for (size_t i = 0; i < KBUILD_NMACROS && !m; i++)
		if (!strcmp(kbuild_macros[i].name, nm))
			m = &kbuild_macros[i];
	if (!m)
		abort(); /* only registered names reach us */
	kbuild_helpers(m);
	buf_addf(&b, "$(value %s)", m->name);
	v = mk_expand((char *)b.data);
	buf_reset(&b);
	if (kbuild_tree() && kbuild_one_shell(v) && kbuild_fast_text(m, v))
		buf_addf(&b, KBUILD_VAR "fast-%s", m->name);
	else
		buf_addf(&b, KBUILD_VAR "call-%s", m->name);
	r = mk_call((char *)b.data, argc, argv);
	res = mk_result(r);
	free(r);
	free(v);
	buf_release(&b);
	return res;
}

void kbuild_setup(void)
{
	/* make keeps its own copy of each name (strcache) */
	for (size_t i = 0; i < KBUILD_NMACROS; i++)
		gmk_add_function(kbuild_macros[i].name, kbuild_func, 0, 0, GMK_FUNC_DEFAULT);
}
