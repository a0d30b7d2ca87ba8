/*
 * The make functions: argument checks, building job messages, waiting and
 * turning results into variables, output and errors.  Make's thread only.
 *
 * Just over 600 lines: it is every make function's argument checks and
 * error wording, which must stay alike and so stay together; what a
 * build step gets from make, and a recipe wait's collector line, are
 * recipe.c's, printing output.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin/funcs.h"
#include "plugin/mk.h"
#include "plugin/output.h"
#include "plugin/recipe.h"
#include "plugin/shell.h"
#include "plugin/engine.h"
#include "plugin/job.h"
#include "plugin/log.h"

static struct config cfg;
static int cfg_loaded;
static int cfg_at_load;  /* found at load time; the makefile may still name another */
/* the jobserver make handed us in the environment, as it was at load time */
static struct js_auth env_js;
static int env_js_state;  /* 0 unknown, 1 usable, -1 not usable */

/* ---- configuration discovery ---- */

/*
 * A variable's value, "" if it is not defined: expanding an undefined
 * one would make `make --warn-undefined-variables` warn about a name
 * the makefile never mentions (ASYNC_COMPILE_CONFIG, or @ outside a
 * recipe).  make expands only the branch of $(if) it takes.
 */
static char *funcs_var(const char *name)
{
	struct buf b = BUF_INIT;
	char *v;

	buf_addf(&b, "$(if $(filter undefined,$(origin %s)),,$(%s))", name, name);
	v = mk_expand((char *)b.data);
	buf_release(&b);
	return v;
}

static void funcs_fail(const char *fn, const char *msg)
{
	struct buf b = BUF_INIT;

	buf_addf(&b, "%s: %s", fn, msg);
	mk_error((char *)b.data);
}

/* With fn == NULL (at load time) a bad file is left for the first call to report. */
static int funcs_load_config(const char *fn, const char *path)
{
	struct config c;
	struct buf err = BUF_INIT;

	if (config_load_file(path, &c, &err) < 0) {
		config_release(&c);
		if (!fn) {
			buf_release(&err);
			return -1;
		}
		funcs_fail(fn, (char *)err.data);
	}
	buf_release(&err);
	if (cfg_loaded)
		config_release(&cfg);
	cfg = c;
	cfg_loaded = 1;
	return 0;
}

/*
 * The contract's lookup order after $(async-config): the make variable,
 * the environment variable, ./asynccompile.yaml, built-in defaults.
 * Returns like funcs_load_config (fn == NULL: quiet, at load time).
 */
static int funcs_discover(const char *fn)
{
	char *v = funcs_var("ASYNC_COMPILE_CONFIG");
	const char *env = getenv("ASYNC_COMPILE_CONFIG");
	struct stat st;
	int r = 0;

	if (*v)
		r = funcs_load_config(fn, v);
	else if (env && *env)
		r = funcs_load_config(fn, env);
	else if (lstat("asynccompile.yaml", &st) == 0 || errno != ENOENT)
		/* there, if only as a dangling link or a loop: say what is wrong */
		r = funcs_load_config(fn, "asynccompile.yaml");
	else {
		config_defaults(&cfg);
		cfg_loaded = 1;
	}
	free(v);
	return r;
}

/* The configuration in force, found in the contract's order. */
static void funcs_config_find(const char *fn)
{
	char *v;

	if (cfg_loaded && cfg_at_load) {
		/* the makefile may have set ASYNC_COMPILE_CONFIG since load */
		cfg_at_load = 0;
		v = funcs_var("ASYNC_COMPILE_CONFIG");
		if (*v && strcmp(v, cfg.source)) {
			if (engine_started() && (!engine_submitted() || shell_drop_speculation()))
				engine_shutdown();
			funcs_load_config(fn, v);
		}
		free(v);
		return;
	}
	if (!cfg_loaded)
		funcs_discover(fn);
}

char *funcs_config(const char *nm, unsigned int argc, char **argv)
{
	char *path = argc ? argv[0] : "";

	while (*path == ' ' || *path == '\t')
		path++;
	if (!*path)
		funcs_fail(nm, "needs a file name");
	path[strcspn(path, " \t")] = 0;
	if (cfg_loaded && !strcmp(path, cfg.source))
		return NULL; /* in force already (speculation started with it) */
	if (engine_started() && (!engine_submitted() || shell_drop_speculation())) {
		/*
		 * only the warm pool started at load time, perhaps running what
		 * speculation started with the configuration found then (its
		 * answers would not be taken: another env is another answer):
		 * start it again later
		 */
		engine_shutdown();
	}
	if (engine_started()) {
		struct buf b = BUF_INIT;
		buf_addf(&b, "the pool already runs with the configuration from %s; "
			 "call async-config before the first job", cfg.source);
		funcs_fail(nm, (char *)b.data);
	}
	cfg_at_load = 0;
	funcs_load_config(nm, path);
	return NULL;
}

/*
 * At load: note the jobserver make handed us in the environment, before
 * we open anything that could take the same numbers.  Nothing else: the
 * configuration is found when something needs it (speculation at load,
 * else the first call), and the pool starts with the first job.
 */
void funcs_load(void)
{
	if (!env_js_state && js_parse_auth(getenv("MAKEFLAGS"), &env_js)) {
		env_js_state = env_js.style != JS_PIPE || js_identify(&env_js) == 0 ? 1 : -1;
		if (env_js.style != JS_PIPE)
			js_auth_release(&env_js);
	}
}

/* ---- the make process's situation ---- */

static void funcs_situation(const char *fn, struct situation *s)
{
	char *mf = mk_expand("$(MAKEFLAGS)");
	char *at = funcs_var("@");
	const char *envmf = getenv("MAKEFLAGS");
	struct js_auth a;
	struct buf warn = BUF_INIT;
	int have;
	static int warned;

	s->in_recipe = *at != 0;
	js_parse_flags(mf, &s->flags);
	/* a sub-make reading its makefiles finds the jobserver in its environment */
	have = js_parse_auth(mf, &a);
	if (!have && (have = js_parse_auth(envmf, &a)) && a.style == JS_PIPE) {
		if (env_js_state == 1 && env_js.rfd == a.rfd && env_js.wfd == a.wfd) {
			a.ident = 1;
			a.dev = env_js.dev;
			a.ino = env_js.ino;
		} else if (env_js_state == -1) {
			a.ident = 1; /* matches nothing: reported as not open */
			a.dev = (dev_t)-1;
		}
	}
	if (have) {
		if (engine_set_slots(&a, 1, &warn) < 0 && !warned++)
			log_msg("%s: %s", fn, (char *)warn.data);
		js_auth_release(&a);
	} else {
		int jobs = s->flags.jobs;
		if (!jobs) {
			/* make 4.3 shows neither in $(MAKEFLAGS) while it reads makefiles */
			struct make_flags ef;
			js_parse_flags(envmf, &ef);
			jobs = ef.jobs;
			if (!jobs) {
				js_parse_flags(getenv("GNUMAKEFLAGS"), &ef);
				jobs = ef.jobs;
			}
		}
		if (!jobs)
			jobs = js_cmdline_jobs();
		if (jobs < 0)
			jobs = config_workers(&cfg);
		engine_set_slots(NULL, jobs ? jobs : 1, &warn);
	}
	buf_release(&warn);
	free(mf);
	free(at);
}

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

static char **funcs_split(const char *s)
{
	char **v = NULL, *copy = strdup(s), *tok, *save = NULL;
	size_t n = 0;

	if (!copy)
		abort();
	for (tok = strtok_r(copy, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
		v = realloc(v, (n + 2) * sizeof *v);
		if (!v || !(v[n++] = strdup(tok)))
			abort();
	}
	if (!v && !(v = malloc(sizeof *v)))
		abort();
	v[n] = NULL;
	free(copy);
	return v;
}

const struct config *funcs_config_at_load(void)
{
	if (!cfg_loaded && funcs_discover(NULL) == 0)
		cfg_at_load = 1;
	return cfg_loaded ? &cfg : NULL;
}

const struct config *funcs_prepare(const char *fn, struct situation *sit, int start)
{
	struct buf err = BUF_INIT;

	/* at load the makefile may still name another file: keep looking later */
	if (fn)
		funcs_config_find(fn);
	if (!cfg_loaded)
		return NULL; /* a bad file at load: the first call reports it */
	if (!start) {
		char *at = funcs_var("@");

		memset(sit, 0, sizeof *sit);
		sit->in_recipe = *at != 0;
		free(at);
	} else
		funcs_situation(fn ? fn : "async-shell", sit);
	if (sit->in_recipe)
		shell_makefiles_read();
	if (start && engine_start(&cfg, &err) < 0) {
		if (fn)
			funcs_fail(fn, (char *)err.data);
		buf_release(&err);
		return NULL;
	}
	buf_release(&err);
	return &cfg;
}

const char *funcs_cwd(void)
{
	static char cwd[4096];

	/* make changes directory (-C) only before it reads makefiles */
	if (!*cwd && !getcwd(cwd, sizeof cwd))
		strcpy(cwd, ".");
	return cwd;
}

void funcs_make_shell(char **shell, char ***flags)
{
	char *s = mk_expand("$(SHELL)");
	char *f = mk_expand("$(.SHELLFLAGS)");

	if (!*s) {
		free(s);
		if (!(s = strdup("/bin/sh")))
			abort();
	}
	*shell = s;
	*flags = funcs_split(*f ? f : "-c");
	free(f);
}

void funcs_job_msg(struct job_msg *m, const char *shell, char **flags, const char *cwd,
		   const char *command, const char *input)
{
	memset(m, 0, sizeof *m);
	m->shell = (char *)shell;
	m->shellflags = flags;
	m->command = (char *)command;
	m->cwd = (char *)cwd;
	m->env = cfg.env;
	if (input) {
		m->input = (unsigned char *)input;
		m->input_len = strlen(input);
		m->has_input = 1;
	}
	m->timeout_ms = cfg.timeout_ms;
	m->kill_grace_ms = cfg.kill_grace_ms;
	m->kill_daemons = (uint8_t)cfg.kill_daemons;
	m->max_output = cfg.max_output;
	m->retries = (uint32_t)cfg.retries;
}

void funcs_put_job(struct buf *payload, const char *shell, char **flags, const char *cwd,
		   const char *command, const char *input)
{
	struct job_msg m;

	funcs_job_msg(&m, shell, flags, cwd, command, input);
	msg_put_job(payload, &m);
}

static char *funcs_queue(const char *fn, enum job_kind kind, unsigned int argc, char **argv)
{
	struct situation sit;
	struct job *j;
	struct buf cmd = BUF_INIT;
	char *name = funcs_trim(argv[0]);
	const char *bad = funcs_bad_name(name);
	char *shell, **flags;
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
	funcs_prepare(fn, &sit, 1);

	for (char **w = cfg.launcher; *w; w++) {
		output_shell_quote(&cmd, *w);
		buf_addch(&cmd, ' ');
	}
	buf_addstr(&cmd, argv[1]);

	j = calloc(1, sizeof *j);
	if (!j || !(j->name = strdup(name)) || !(j->command = strdup(argv[1])))
		abort();
	j->kind = kind;
	j->retries = (uint32_t)cfg.retries;
	j->worker = -1;
	if (kind == JOB_COMPILE && sit.in_recipe) {
		int echo = cfg.echo == TRI_TRUE ||
			   (cfg.echo == TRI_AUTO && !sit.flags.silent && !mk_run_silent());
		/* -q expands recipes too, but prints none of them */
		if ((echo || sit.flags.dry_run) && !sit.flags.question) {
			buf_addch(&cmd, '\n');
			mk_print(1, cmd.data, cmd.len);
			cmd.data[--cmd.len] = 0;
		}
		j->dry = sit.flags.dry_run;
	}

	funcs_make_shell(&shell, &flags);
	if (kind == JOB_COMPILE && sit.in_recipe) {
		struct job_msg m;
		char **env, **fds;
		int recursive;

		funcs_job_msg(&m, shell, flags, funcs_cwd(), (char *)cmd.data,
			      argc > 2 ? argv[2] : NULL);
		recursive = recipe_context(argv[1], &cfg, &env, &fds);
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

		funcs_job_msg(&m, shell, flags, funcs_cwd(), (char *)cmd.data,
			      argc > 2 ? argv[2] : NULL);
		/* a probe whose answer may be kept runs traced (shell.h) */
		if (kind == JOB_TRY && cfg.cache)
			m.tracer = (char *)shell_tracer();
		msg_put_job(&j->payload, &m);
	}
	/* build steps are ccache's business; probes' answers may be kept */
	if (kind == JOB_TRY)
		shell_cache_lookup(&cfg, j, shell, flags, argv[1], argc > 2 ? argv[2] : NULL,
				   cfg.launcher);
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
	struct make_flags f;
	char *mf;

	if (!cfg_loaded || cfg.progress == PROGRESS_NEVER)
		return 0;
	if (cfg.progress == PROGRESS_ALWAYS)
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
	char *at, *line = NULL;

	if (argc && *funcs_trim(argv[0])) {
		char **names = funcs_split(argv[0]);
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
	at = funcs_var("@");
	in_recipe = *at != 0;
	free(at);
	if (in_recipe)
		line = recipe_collect(jobs, &n);
	if (n) {
		engine_wait(&jobs, &n, funcs_progress());
		engine_write_trace();
	}

	for (size_t i = 0; i < n; i++) {
		struct job *j = jobs[i];

		shell_cache_keep(j);
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
	if (cfg_loaded) {
		buf_addf(&b, " workers=%d start_method=%s config=", config_workers(&cfg),
			 config_start_method_name(cfg.start_method));
		/* one word: the file the configuration came from */
		for (const char *c = cfg.source; *c; c++)
			buf_addch(&b, *c == ' ' ? '-' : *c);
	}
	shell_stats(&b);
	r = mk_result((char *)b.data);
	buf_release(&b);
	return r;
}
