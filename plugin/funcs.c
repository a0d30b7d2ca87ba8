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

/*
 * The job's payload for the pool; under ASYNC_COMPILE_DISABLE the run
 * itself, now, in make's process (a job make echoes and does not run
 * under -n stays unrun): it is done before it is queued.
 */
static void funcs_payload(struct job *j, const struct job_msg *m)
{
	if (!request_disabled()) {
		job_encode(j, m);
		return;
	}
	if (!j->dry)
		shell_run_direct(m, &j->res);
	j->cached = 1;
}

static const char *const funcs_suffixes[] = { ".status", ".out", ".err" };

/*
 * A job's variables until a wait gives them values: reading one is an
 * error at that line (funcs_unwaited), so a wait that is missing or
 * misspelled (`$(async-wiat)`, which make reads as an empty variable)
 * never hands a makefile empty answers.  `set` 0: undefine them (the
 * job is a recipe wait's collector's, or dropped).
 */
static void funcs_placeholders(const char *name, int set)
{
	struct buf line = BUF_INIT;

	for (size_t i = 0; i < sizeof funcs_suffixes / sizeof *funcs_suffixes; i++) {
		buf_reset(&line);
		if (set)
			buf_addf(&line, "%s%s = $(async-compile-internal-unwaited %s)", name,
				 funcs_suffixes[i], name);
		else
			buf_addf(&line, "undefine %s%s", name, funcs_suffixes[i]);
		mk_eval((char *)line.data);
	}
	buf_release(&line);
}

static const char *funcs_kind_word(const struct job *j)
{
	return j->kind == JOB_COMPILE ? "build step" : "probe";
}

char *funcs_unwaited(const char *nm, unsigned int argc, char **argv)
{
	struct job *j = argc ? engine_find(funcs_trim(argv[0])) : NULL;
	struct buf b = BUF_INIT;

	(void)nm;
	if (!j || job_internal(j))
		return NULL;
	buf_addf(&b, "asynccompile: the results of %s '%s'%s%s%s are read before any "
		 "$(async-wait) waited for it (is the wait missing or misspelled?)",
		 funcs_kind_word(j), j->name, j->where ? " (queued at " : "",
		 j->where ? j->where : "", j->where ? ")" : "");
	mk_error((char *)b.data);
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
	j->where = mk_where();
	j->in_recipe = sit.in_recipe;
	j->preview = sit.flags.dry_run;
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
		funcs_payload(j, &m);
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
		if (kind == JOB_TRY && cfg->cache && !request_disabled())
			m.tracer = (char *)answer_tracer();
		funcs_payload(j, &m);
	}
	/* build steps are ccache's business; probes' answers may be kept */
	if (kind == JOB_TRY && !request_disabled())
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
	funcs_placeholders(name, 1);
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

/* The job `name` not yet waited for, or an error naming function fn. */
static struct job *funcs_waiting(const char *fn, const char *name)
{
	struct job *j = engine_find(name);
	struct buf b = BUF_INIT;

	if (j)
		return j;
	buf_addf(&b, "%s: no job named '%s' is waiting (never queued, or already waited for)",
		 fn, name);
	mk_error((char *)b.data);
}

/*
 * The status line (config `progress`, asynccompile(7) PROGRESS): 0 none,
 * 1 when stderr is a terminal, 2 always.  auto draws nothing under -s.
 * A recipe wait's collector draws it only while make runs one recipe at
 * a time: under -jN (N > 1, or -j alone) make may start another target
 * at any moment, whose output, or another wait's line, would meet it.
 */
static int funcs_progress(int recipe)
{
	const struct config *cfg = request_config();
	struct make_flags f;
	struct js_auth a;
	char *mf;
	int parallel;

	if (!cfg || cfg->progress == PROGRESS_NEVER)
		return 0;
	mf = mk_expand("$(MAKEFLAGS)");
	js_parse_flags(mf, &f);
	parallel = f.jobs > 1 || f.jobs < 0;
	if (js_parse_auth(mf, &a)) {
		parallel = 1;
		js_auth_release(&a);
	}
	free(mf);
	if (recipe && parallel)
		return 0;
	if (cfg->progress == PROGRESS_ALWAYS)
		return 2;
	return f.silent ? 0 : 1;
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
			struct job *j = funcs_waiting(nm, names[i]);
			int dup = 0;

			for (size_t k = 0; k < n; k++)
				dup |= jobs[k] == j;
			if (!dup)
				jobs[n++] = j;
		}
		strv_free(names);
		qsort(jobs, n, sizeof *jobs, funcs_by_id);
	} else {
		if (!engine_started() && !request_disabled())
			return NULL;
		engine_pending(&jobs, &n);
	}
	in_recipe = request_in_recipe();
	/* disabled, every job is done: its output is printed here, as make's would be */
	if (in_recipe && !request_disabled()) {
		/* a collector reports the build steps: they get no variables */
		for (size_t i = 0; i < n; i++)
			if (jobs[i]->kind == JOB_COMPILE)
				funcs_placeholders(jobs[i]->name, 0);
		line = recipe_collect(jobs, &n, funcs_progress(1));
	}
	if (n) {
		int p = funcs_progress(0);

		engine_wait(&jobs, &n, p == 2 || (p == 1 && isatty(2)));
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

char *funcs_drop(const char *nm, unsigned int argc, char **argv)
{
	char **names = request_split(argc ? argv[0] : "");

	if (!names[0])
		mk_fail(nm, "needs the NAME of a job");
	for (char **w = names; *w; w++) {
		struct job *j = funcs_waiting(nm, *w);

		funcs_placeholders(j->name, 0);
		engine_cancel(j);
	}
	strv_free(names);
	return NULL;
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
