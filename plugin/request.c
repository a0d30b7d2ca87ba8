/*
 * request.c - what a make function needs before it queues a command
 * (request.h): the configuration, found in the contract's order, make's
 * situation and slots, make's shell and directory, and the job message.
 * Make's thread only.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/proto.h"
#include "lib/startdir.h"
#include "plugin/engine.h"
#include "plugin/guard.h"
#include "plugin/log.h"
#include "plugin/mk.h"
#include "plugin/request.h"

static struct config cfg;
static int cfg_loaded;
static int cfg_at_load;  /* found at load time; the makefile may still name another */
/* the jobserver make handed us in the environment, as it was at load time */
static struct js_auth env_js;
static int env_js_state;  /* 0 unknown, 1 usable, -1 not usable */
static struct request_hooks request_hooks;
static int disabled;      /* ASYNC_COMPILE_DISABLE: no pool, no tracer, no store */

/* ---- configuration discovery ---- */

/*
 * A variable's value, "" if it is not defined: expanding an undefined
 * one would make `make --warn-undefined-variables` warn about a name
 * the makefile never mentions (ASYNC_COMPILE_CONFIG, or @ outside a
 * recipe).  make expands only the branch of $(if) it takes.
 */
static char *request_var(const char *name)
{
	struct buf b = BUF_INIT;
	char *v;

	buf_addf(&b, "$(if $(filter undefined,$(origin %s)),,$(%s))", name, name);
	v = mk_expand((char *)b.data);
	buf_release(&b);
	return v;
}

/*
 * The build's starting directory (lib/startdir.h).  This make's own is
 * the one it had before its -C options: make keeps it in
 * directory_before_chdir (main.c, in 4.3 and 4.4.1 alike, exported with
 * the rest of make's symbols); without it, what /proc says.
 */
static const char *request_start_dir(void)
{
	static char *dir;

	if (!dir) {
		char **before = dlsym(RTLD_DEFAULT, "directory_before_chdir");
		char *self = before && *before ? NULL : startdir_of_make(getpid());

		dir = startdir_find(before && *before ? *before : self);
		free(self);
	}
	return dir;
}

const char *request_start(void)
{
	return request_start_dir();
}

/* With fn == NULL (at load time) a bad file is left for the first call to report. */
static int request_load_config(const char *fn, const char *path)
{
	struct config c;
	struct buf err = BUF_INIT;

	if (config_load_file(path, &c, &err) < 0) {
		config_release(&c);
		if (!fn) {
			buf_release(&err);
			return -1;
		}
		mk_fail(fn, (char *)err.data);
	}
	buf_release(&err);
	/* a relative trace goes where the build started, never into a tree -C named */
	if (c.trace[0] && c.trace[0] != '/') {
		struct buf t = BUF_INIT;

		buf_addf(&t, "%s/%s", request_start_dir(), c.trace);
		free(c.trace);
		c.trace = buf_detach(&t, NULL);
	}
	if (cfg_loaded)
		config_release(&cfg);
	cfg = c;
	cfg_loaded = 1;
	return 0;
}

/*
 * The contract's lookup order after $(async-config) (config.h, "Finding
 * the file"): the make variable, the environment variable,
 * asynccompile.yaml where make started, the user's, the system's,
 * built-in defaults.  Returns like request_load_config (fn == NULL:
 * quiet, at load time).
 */
static int request_discover(const char *fn)
{
	char *v = request_var("ASYNC_COMPILE_CONFIG");
	struct config_search s = { v, CONFIG_MAKE_VAR, request_start_dir };
	struct config_origin o;
	int r = 0;

	config_find(&s, &o);
	if (o.path)
		r = request_load_config(fn, o.path);
	else {
		config_defaults(&cfg);
		cfg_loaded = 1;
	}
	config_origin_release(&o);
	free(v);
	return r;
}

/* The configuration in force, found in the contract's order. */
static void request_config_find(const char *fn)
{
	char *v;

	if (cfg_loaded && cfg_at_load) {
		/* the makefile may have set ASYNC_COMPILE_CONFIG since load */
		cfg_at_load = 0;
		v = request_var("ASYNC_COMPILE_CONFIG");
		if (*v && strcmp(v, cfg.source)) {
			if (engine_started() && (!engine_submitted() || request_hooks.drop_speculation()))
				engine_shutdown();
			request_load_config(fn, v);
		}
		free(v);
		return;
	}
	if (!cfg_loaded)
		request_discover(fn);
}

void request_config_use(const char *fn, const char *path)
{
	if (cfg_loaded && !strcmp(path, cfg.source))
		return; /* in force already (speculation started with it) */
	if (engine_started() && (!engine_submitted() || request_hooks.drop_speculation())) {
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
		mk_fail(fn, (char *)b.data);
	}
	cfg_at_load = 0;
	request_load_config(fn, path);
}

/*
 * At load: note the jobserver make handed us in the environment, before
 * we open anything that could take the same numbers.  Nothing else: the
 * configuration is found when something needs it (speculation at load,
 * else the first call), and the pool starts with the first job.
 */
void request_load(const struct request_hooks *hooks)
{
	const char *off = getenv("ASYNC_COMPILE_DISABLE");

	disabled = off && *off && strcmp(off, "0");
	request_hooks = *hooks;
	if (!env_js_state && js_parse_auth(getenv("MAKEFLAGS"), &env_js)) {
		env_js_state = env_js.style != JS_PIPE || js_identify(&env_js) == 0 ? 1 : -1;
		if (env_js.style != JS_PIPE)
			js_auth_release(&env_js);
	}
}

/* ---- the make process's situation ---- */

static void request_situation(const char *fn, struct situation *s)
{
	char *mf = mk_expand("$(MAKEFLAGS)");
	char *at = request_var("@");
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

/* ---- what a job is made of ---- */

char **request_split(const char *s)
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

const struct config *request_config_at_load(void)
{
	if (!cfg_loaded && request_discover(NULL) == 0)
		cfg_at_load = 1;
	return cfg_loaded ? &cfg : NULL;
}

const struct config *request_prepare(const char *fn, struct situation *sit, int start)
{
	struct buf err = BUF_INIT;

	/* at load the makefile may still name another file: keep looking later */
	if (fn)
		request_config_find(fn);
	if (!cfg_loaded)
		return NULL; /* a bad file at load: the first call reports it */
	if (!start || disabled) {
		memset(sit, 0, sizeof *sit);
		sit->in_recipe = request_in_recipe();
		if (start) {
			/* echo, -n, -q and -s still apply to build steps */
			char *mf = mk_expand("$(MAKEFLAGS)");

			js_parse_flags(mf, &sit->flags);
			free(mf);
			start = 0;
		}
	} else
		request_situation(fn ? fn : "async-shell", sit);
	if (sit->in_recipe)
		request_hooks.makefiles_read();
	/* a parent's tokens outlive this make: guard them (before the I/O thread runs) */
	if (start && env_js_state == 1)
		guard_prepare();
	if (start && engine_start(&cfg, &err) < 0) {
		if (fn)
			mk_fail(fn, (char *)err.data);
		buf_release(&err);
		return NULL;
	}
	buf_release(&err);
	return &cfg;
}

const char *request_cwd(void)
{
	static char cwd[4096];

	/* make changes directory (-C) only before it reads makefiles */
	if (!*cwd && !getcwd(cwd, sizeof cwd))
		strcpy(cwd, ".");
	return cwd;
}

void request_make_shell(char **shell, char ***flags)
{
	char *s = mk_expand("$(SHELL)");
	char *f = mk_expand("$(.SHELLFLAGS)");

	if (!*s) {
		free(s);
		if (!(s = strdup("/bin/sh")))
			abort();
	}
	*shell = s;
	*flags = request_split(*f ? f : "-c");
	free(f);
}

void request_job_msg(struct job_msg *m, const char *shell, char **flags, const char *cwd,
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

int request_disabled(void)
{
	return disabled;
}

const struct config *request_config(void)
{
	return cfg_loaded ? &cfg : NULL;
}

int request_in_recipe(void)
{
	char *at = request_var("@");
	int in = *at != 0;

	free(at);
	return in;
}

struct job *request_job(const char *name, enum job_kind kind, const char *command)
{
	struct job *j = calloc(1, sizeof *j);

	if (!j || !(j->name = strdup(name)) || !(j->command = strdup(command)))
		abort();
	j->kind = kind;
	j->worker = -1;
	return j;
}
