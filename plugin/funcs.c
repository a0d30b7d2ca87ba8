/*
 * The make functions but async-shell: argument checks and error wording,
 * queueing, waiting and turning results into variables, output and
 * errors.  What a job needs from make and the configuration is
 * request.c's, what a build step gets from make and a recipe wait's
 * collector line recipe.c's, printing output.c's.  Make's thread only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugin/answer.h"
#include "plugin/funcs.h"
#include "plugin/mk.h"
#include "plugin/output.h"
#include "plugin/recipe.h"
#include "plugin/request.h"
#include "plugin/shell.h"
#include "plugin/engine.h"
#include "plugin/job.h"

/* ---- queueing ---- */

static char *funcs_trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t' || *s == '\n')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n'))
		*--e = 0;
	return s;
}

static const char *funcs_bad_name(const char *name)
{
	if (!*name)
		return "an empty NAME";
	if (name[strcspn(name, " \t\n:#=$,()")])
		return "a NAME with a character that is not allowed (blank : # = $ , ( ))";
	return NULL;
}

static char *funcs_queue(const char *fn, enum job_kind kind, unsigned int argc, char **argv)
{
	struct situation sit;
	struct job *j;
	struct buf cmd = BUF_INIT;
	char *name = funcs_trim(argv[0]);
	const char *bad = funcs_bad_name(name);
	char *shell, **flags;
	const struct config *cfg;
	int question;

	if (bad) {
		struct buf b = BUF_INIT;
		buf_addf(&b, "%s: got %s: '%s'", fn, bad, name);
		mk_error((char *)b.data);
	}
	if (engine_find(name)) {
		struct buf b = BUF_INIT;
		buf_addf(&b, "%s: a job named '%s' is already queued and not yet waited for",
			 fn, name);
		mk_error((char *)b.data);
	}
	cfg = request_prepare(fn, &sit, 1);

	for (char **w = cfg->launcher; *w; w++) {
		output_shell_quote(&cmd, *w);
		buf_addch(&cmd, ' ');
	}
	buf_addstr(&cmd, argv[1]);

	j = request_job(name, kind, argv[1]);
	j->retries = (uint32_t)cfg->retries;
	if (kind == JOB_COMPILE && sit.in_recipe) {
		int echo = cfg->echo == TRI_TRUE ||
			   (cfg->echo == TRI_AUTO && !sit.flags.silent && !mk_run_silent());
		/* -q expands recipes too, but prints none of them */
		if ((echo || sit.flags.dry_run) && !sit.flags.question) {
			buf_addch(&cmd, '\n');
			mk_print(1, cmd.data, cmd.len);
			cmd.data[--cmd.len] = 0;
		}
		j->dry = sit.flags.dry_run;
	}

	request_make_shell(&shell, &flags);
	if (kind == JOB_COMPILE && sit.in_recipe) {
		struct job_msg m;
		char **env, **fds;
		int recursive;

		request_job_msg(&m, shell, flags, request_cwd(), (char *)cmd.data,
			      argc > 2 ? argv[2] : NULL);
		recursive = recipe_context(argv[1], cfg, &env, &fds);
		m.env = env;
		m.fds = fds;
		msg_put_job(&j->payload, &m);
		strv_free(env);
		strv_free(fds);
		/* make runs a recursive line even under -n and -q; so do we */
		if (recursive)
			j->dry = 0;
	} else {
		struct job_msg m;

		request_job_msg(&m, shell, flags, request_cwd(), (char *)cmd.data,
			      argc > 2 ? argv[2] : NULL);
		/* a probe whose answer may be kept runs traced (answer.h) */
		if (kind == JOB_TRY && cfg->cache)
			m.tracer = (char *)answer_tracer();
		msg_put_job(&j->payload, &m);
	}
	/* build steps are ccache's business; probes' answers may be kept */
	if (kind == JOB_TRY)
		answer_lookup(cfg, j, shell, flags, argv[1], argc > 2 ? argv[2] : NULL,
				   cfg->launcher);
	strv_free(flags);
	free(shell);
	buf_release(&cmd);
	/*
	 * make -q expands a recipe and, if every line comes out empty, takes
	 * the target for up to date.  A build step is a command: let make see
	 * one (it runs none under -q).
	 */
	question = j->dry && sit.flags.question;
	engine_submit(j);
	return question ? mk_result(":") : NULL;
}

char *funcs_config(const char *nm, unsigned int argc, char **argv)
{
	char *path = argc ? argv[0] : "";

	while (*path == ' ' || *path == '\t')
		path++;
	if (!*path)
		mk_fail(nm, "needs a file name");
	path[strcspn(path, " \t")] = 0;
	request_config_use(nm, path);
	return NULL;
}

char *funcs_compile(const char *nm, unsigned int argc, char **argv)
{
	return funcs_queue(nm, JOB_COMPILE, argc, argv);
}

char *funcs_try(const char *nm, unsigned int argc, char **argv)
{
	return funcs_queue(nm, JOB_TRY, argc, argv);
}

/* ---- waiting ---- */

/* progress: always, or auto on a terminal unless make runs with -s */
static int funcs_progress(void)
{
	const struct config *cfg = request_config();
	struct make_flags f;
	char *mf;

	if (!cfg || cfg->progress == PROGRESS_NEVER)
		return 0;
	if (cfg->progress == PROGRESS_ALWAYS)
		return 1;
	if (!isatty(2))
		return 0;
	mf = mk_expand("$(MAKEFLAGS)");
	js_parse_flags(mf, &f);
	free(mf);
	return !f.silent;
}

static int funcs_by_id(const void *a, const void *b)
{
	const struct job *x = *(struct job *const *)a, *y = *(struct job *const *)b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static void funcs_publish(struct job *j)
{
	char num[16], *v;

	snprintf(num, sizeof num, "%d", j->res.status);
	mk_set_var(j->name, ".status", num);
	v = output_fold(j->res.out.data, j->res.out.len);
	mk_set_var(j->name, ".out", v);
	free(v);
	v = output_fold(j->res.err.data, j->res.err.len);
	mk_set_var(j->name, ".err", v);
	free(v);
	if (j->kind == JOB_COMPILE)
		output_print_result(&j->res);
}

char *funcs_wait(const char *nm, unsigned int argc, char **argv)
{
	struct job **jobs = NULL;
	size_t n = 0;
	struct buf fail = BUF_INIT;
	int nfail = 0, first_status = 0, in_recipe;
	size_t steps = 0;
	char *line = NULL;

	if (argc && *funcs_trim(argv[0])) {
		char **names = request_split(argv[0]);
		size_t cnt = 0;

		while (names[cnt])
			cnt++;
		jobs = calloc(cnt, sizeof *jobs);
		if (!jobs)
			abort();
		for (size_t i = 0; i < cnt; i++) {
			struct job *j = engine_find(names[i]);
			if (!j) {
				struct buf b = BUF_INIT;
				buf_addf(&b, "%s: no job named '%s' is waiting "
					 "(never queued, or already waited for)", nm, names[i]);
				mk_error((char *)b.data);
			}
			int dup = 0;
			for (size_t k = 0; k < n; k++)
				dup |= jobs[k] == j;
			if (!dup)
				jobs[n++] = j;
		}
		strv_free(names);
		qsort(jobs, n, sizeof *jobs, funcs_by_id);
	} else {
		if (!engine_started())
			return NULL;
		engine_pending(&jobs, &n);
	}
	in_recipe = request_in_recipe();
	if (in_recipe)
		line = recipe_collect(jobs, &n);
	if (n) {
		engine_wait(&jobs, &n, funcs_progress());
		engine_write_trace();
	}

	for (size_t i = 0; i < n; i++) {
		struct job *j = jobs[i];

		answer_keep(j);
		/* a probe that ran (its cache lookup, if any, missed) */
		if (j->kind == JOB_TRY && !j->cached)
			answer_ran(j, j->cache_key.len != 0);
		funcs_publish(j);
		steps += j->kind == JOB_COMPILE;
		if (j->kind == JOB_COMPILE && j->res.status) {
			if (!nfail++)
				first_status = j->res.status;
			buf_addf(&fail, "%s  %s (status %d): %s", nfail > 1 ? "\n" : "",
				 j->name, j->res.status, j->command);
		}
		job_free(j);
	}
	free(jobs);
	if (line) {
		/* a collector line of make's: no failure here, and make counts it */
		char *r = mk_result(line);

		free(line);
		return r;
	}
	/* build steps ran (or were echoed under -n) for this target */
	if (in_recipe && steps)
		mk_count_command();
	if (!nfail)
		return NULL;
	if (!in_recipe) {
		struct buf b = BUF_INIT;
		buf_addf(&b, "%s: %d build step%s failed:\n%s", nm, nfail,
			 nfail == 1 ? "" : "s", (char *)fail.data);
		mk_error((char *)b.data);
	}
	/*
	 * Inside a recipe, when no collector could be had: a failing
	 * command, so -k, -i and .DELETE_ON_ERROR apply.  make ends a
	 * command at every newline of an expanded line, even inside quotes,
	 * and reads the @-+ prefixes of each piece anew: the newlines make
	 * `exit N` a command of its own wherever the wait sits on the line
	 * (after arguments, inside quotes, after ||).  The blank keeps a
	 * backslash before the wait from joining the lines.
	 */
	{
		struct buf b = BUF_INIT;
		char *r;

		buf_addf(&b, "asynccompile: %d build step%s failed:\n%s\n", nfail,
			 nfail == 1 ? "" : "s", (char *)fail.data);
		mk_print(2, b.data, b.len);
		buf_reset(&b);
		buf_addf(&b, " \n@exit %d\n", first_status > 0 && first_status < 256 ? first_status : 1);
		r = mk_result((char *)b.data);
		buf_release(&b);
		buf_release(&fail);
		return r;
	}
}

/* ---- statistics ---- */

char *funcs_stats(const char *nm, unsigned int argc, char **argv)
{
	const struct config *cfg = request_config();
	struct engine_stats st;
	struct buf b = BUF_INIT;
	char *r;

	(void)nm;
	(void)argc;
	(void)argv;
	engine_get_stats(&st);
	buf_addf(&b, "submitted=%llu completed=%llu failed=%llu retried=%llu timed_out=%llu "
		 "running=%d queued=%d max_running=%d token_waits=%llu token_wait_ms=%llu "
		 "bytes_in=%llu bytes_out=%llu slots=%s pool_size=%d",
		 (unsigned long long)st.submitted, (unsigned long long)st.completed,
		 (unsigned long long)st.failed, (unsigned long long)st.retried,
		 (unsigned long long)st.timed_out, st.running, st.queued, st.max_running,
		 (unsigned long long)st.token_waits,
		 (unsigned long long)(st.token_wait_ns / 1000000),
		 (unsigned long long)st.bytes_in, (unsigned long long)st.bytes_out, st.mode,
		 st.workers);
	if (cfg) {
		buf_addf(&b, " workers=%d start_method=%s config=", config_workers(cfg),
			 config_start_method_name(cfg->start_method));
		/* one word: the file the configuration came from */
		for (const char *c = cfg->source; *c; c++)
			buf_addch(&b, *c == ' ' ? '-' : *c);
	}
	shell_stats(&b);
	r = mk_result((char *)b.data);
	buf_release(&b);
	return r;
}
