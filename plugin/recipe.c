/* What a build step gets from make in place of a recipe line: see recipe.h. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/proto.h"
#include "plugin/collect.h"
#include "plugin/engine.h"
#include "plugin/js.h"
#include "plugin/mk.h"
#include "plugin/job.h"
#include "plugin/output.h"
#include "plugin/recipe.h"
#include "plugin/spawn.h"
#include "plugin/log.h"

/* Is `word` a word of `cmd`, as the shell splits a simple command list? */
static int recipe_has_word(const char *cmd, const char *word)
{
	size_t n = strlen(word);

	if (!n)
		return 0;
	for (const char *p = strstr(cmd, word); p; p = strstr(p + 1, word))
		if ((p == cmd || strchr(" \t\n;&|(`", p[-1])) && strchr(" \t\n;&|)`", p[n]))
			return 1;
	return 0;
}

static char **recipe_strv_add(char **v, size_t *n, char *s)
{
	char **nv = realloc(v, (*n + 2) * sizeof *nv);

	if (!nv || !s)
		abort();
	nv[(*n)++] = s;
	nv[*n] = NULL;
	return nv;
}

int recipe_context(const char *command, const struct config *cfg, char ***env, char ***fds)
{
	char *mf = mk_expand("$(MAKEFLAGS)"), *mfl = mk_expand("$(MFLAGS)");
	char *lvl = mk_expand("$(MAKELEVEL)"), *make = mk_expand("$(MAKE)");
	int recursive = recipe_has_word(command, make);
	size_t n = 0, nf = 0;
	struct buf b = BUF_INIT;
	struct js_auth a;

	*env = NULL;
	*fds = NULL;
	buf_addf(&b, "MAKEFLAGS=%s", mf);
	*env = recipe_strv_add(*env, &n, strdup((char *)b.data));
	buf_reset(&b);
	buf_addf(&b, "MFLAGS=%s", mfl);
	*env = recipe_strv_add(*env, &n, strdup((char *)b.data));
	buf_reset(&b);
	buf_addf(&b, "MAKELEVEL=%ld", strtol(lvl, NULL, 10) + 1);
	*env = recipe_strv_add(*env, &n, strdup((char *)b.data));
	for (char **e = cfg->env; e && *e; e++)
		*env = recipe_strv_add(*env, &n, strdup(*e));
	if (recursive && js_parse_auth(mf, &a) && a.style == JS_PIPE) {
		if (fcntl(a.rfd, F_GETFD) >= 0 && fcntl(a.wfd, F_GETFD) >= 0) {
			buf_reset(&b);
			buf_addf(&b, "%d</proc/%d/fd/%d", a.rfd, (int)getpid(), a.rfd);
			*fds = recipe_strv_add(*fds, &nf, strdup((char *)b.data));
			buf_reset(&b);
			buf_addf(&b, "%d>/proc/%d/fd/%d", a.wfd, (int)getpid(), a.wfd);
			*fds = recipe_strv_add(*fds, &nf, strdup((char *)b.data));
		}
		js_auth_release(&a);
	}
	buf_release(&b);
	free(mf);
	free(mfl);
	free(lvl);
	free(make);
	return recursive;
}

char *recipe_wait_line(struct job **steps, size_t n, int dry_run, int progress, struct buf *err)
{
	static char *exe;
	char cookie[COLLECT_COOKIE_HEX + 1];
	struct buf line = BUF_INIT;
	int64_t id;
	int runs = 0;

	if (!exe && !(exe = spawn_find_worker(err)))
		return NULL;
	for (size_t i = 0; i < n; i++)
		runs |= !steps[i]->dry;
	if (engine_collect(steps, n, progress, &id, cookie, err) < 0)
		return NULL;
	/*
	 * make ends a command at every newline of an expanded line and reads
	 * the @-+ prefixes of each piece anew: the collector is a command of
	 * its own wherever the wait sits.  The blank keeps a backslash before
	 * the wait from joining the lines.
	 */
	buf_addstr(&line, dry_run && runs ? " \n@+" : " \n@");
	output_shell_quote(&line, exe);
	buf_addstr(&line, " --collect ");
	output_shell_quote(&line, collect_socket());
	/* under .ONESHELL the line is one of a script's: a failure ends it */
	buf_addf(&line, " %lld:%s || exit $?\n", (long long)id, cookie);
	return buf_detach(&line, NULL);
}

char *recipe_collect(struct job **jobs, size_t *n, int progress)
{
	struct job **steps = calloc(*n + 1, sizeof *steps);
	size_t ns = 0, keep = 0;
	struct make_flags f;
	struct buf err = BUF_INIT;
	static int warned;
	char *mf, *line;

	if (!steps)
		abort();
	for (size_t i = 0; i < *n; i++)
		if (jobs[i]->kind == JOB_COMPILE)
			steps[ns++] = jobs[i];
	if (!ns) {
		free(steps);
		return NULL;
	}
	mf = mk_expand("$(MAKEFLAGS)");
	js_parse_flags(mf, &f);
	free(mf);
	line = recipe_wait_line(steps, ns, f.dry_run, progress, &err);
	if (!line) {
		if (!warned++)
			log_msg("warning: recipe waits block make: %s", (char *)err.data);
	} else {
		for (size_t i = 0; i < *n; i++)
			if (jobs[i]->kind != JOB_COMPILE)
				jobs[keep++] = jobs[i];
		*n = keep;
	}
	buf_release(&err);
	free(steps);
	return line;
}
