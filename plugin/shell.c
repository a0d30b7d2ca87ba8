/*
 * $(async-shell COMMAND): a $(shell) whose commands run ahead of need.
 *
 * Every command runs traced (lib/readset.h): what it read, listed,
 * looked up in vain, ran and wrote.  An answer stands for a later call
 * only if its run was pure, the call's environment digest is the run's,
 * and every path of its read set still has the identity the run saw
 * (readset_check(), on every reuse).  Three layers, each bound by that:
 *  - memo: the same command identity (record.h: shell, flags, directory,
 *    text) asked again in one make process;
 *  - speculation: the commands one run asked for while it read its
 *    makefiles are recorded, with their read sets, in the per-user store
 *    (store.h) under a key naming the makefiles, goals and command-line
 *    variables; the next run with that key queues, at load and within
 *    -jN, those whose recorded run was pure and whose read set still
 *    holds, and a call whose identity equals a speculated job's takes
 *    that job's answer if the job's own read set holds at that moment;
 *  - everything else runs when asked, in make's process.
 * Speculated jobs nobody asked for are cancelled once the makefiles have
 * been read: make expands $(GNUMAKEFLAGS) right after reading them (both
 * 4.3 and 4.4.1, main.c), so at load that variable gets a call to an
 * internal function appended; a recipe-time call or exit also ends it.
 * Make's thread only.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/cache.h"
#include "lib/launch.h"
#include "lib/readset.h"
#include "lib/record.h"
#include "lib/run.h"
#include "lib/store.h"
#include "plugin/mk.h"
#include "plugin/output.h"
#include "plugin/request.h"
#include "plugin/shell.h"
#include "plugin/spawn.h"
#include "plugin/engine.h"
#include "plugin/fatal.h"
#include "plugin/job.h"
#include "plugin/log.h"

#define MEMO_SIZE 1024

struct memo {
	struct buf id;
	uint64_t h;
	int status;
	char *value;            /* the folded result */
	struct buf rs;          /* its read set: checked on every hit */
	size_t seen;            /* 1 + its index in S.seen, or 0 */
	struct memo *next;
};

struct spec {
	struct buf id;
	uint64_t h;
	struct job *job;        /* NULL once used or cancelled */
};

static struct {
	int loaded;             /* shell_load ran */
	int done;               /* makefiles read: no more recording */
	int store;              /* store directory, or -1 */
	int store_tried;
	int cache;              /* its cache/ directory, or -1 */
	int cache_tried;
	int cache_written;      /* this run added entries: evict at exit */
	char *key;
	char file[32];
	struct record_entry *prev; /* the record read at load */
	size_t nprev;
	struct spec *spec;
	size_t nspec;
	struct record_entry *seen; /* commands asked for while makefiles were read */
	size_t nseen, capseen;
	struct memo *memo[MEMO_SIZE];
	char *tracer;           /* the preload, or NULL: nothing is reused */
	int tracer_tried;
	unsigned long speculated, hits, misses, unused, memo_hits;
	unsigned long unproven, rejected, stale;
	unsigned long cache_hits, cache_misses;
	unsigned long names;
} S = { .store = -1, .cache = -1 };

static struct memo *shell_memo_find(const struct buf *id, uint64_t h)
{
	for (struct memo *m = S.memo[h % MEMO_SIZE]; m; m = m->next)
		if (m->h == h && m->id.len == id->len && !memcmp(m->id.data, id->data, id->len))
			return m;
	return NULL;
}

/* The identity of COMMAND as make would run it now. */
static void shell_identity(const char *command, struct buf *id, uint64_t *h)
{
	char *sh, **flags;

	request_make_shell(&sh, &flags);
	cmdid_put(id, sh, flags, request_cwd(), command);
	*h = store_hash(id->data, id->len, STORE_HASH_INIT);
	strv_free(flags);
	free(sh);
}

/*
 * The digest of the environment a pool job started now would get (make's
 * environ as the pool copied it, and the config env): async-try's.
 */
static uint64_t shell_env_digest(const struct config *c)
{
	char **envp = launch_environ(c->env, 0);
	uint64_t d;

	if (!envp)
		abort();
	d = launch_env_digest(envp);
	free(envp);
	return d;
}

/*
 * The environment of an async-shell command asked for now: what make's
 * $(shell) would give it (mk_shell_environ(): make 4.4 adds the
 * makefile's exports, MAKELEVEL and MAKEFLAGS), then the config env on
 * top.  Malloc'd strings; strv_free it.
 */
static char **shell_call_env(const struct config *c)
{
	char **v = mk_shell_environ();
	size_t n = 0, m = 0;

	while (v[n])
		n++;
	while (c->env && c->env[m])
		m++;
	v = realloc(v, (n + m + 1) * sizeof *v);
	if (!v)
		abort();
	for (size_t k = 0; k < m; k++) {
		const char *e = c->env[k];
		size_t len = strcspn(e, "="), i;

		for (i = 0; i < n; i++)
			if (!strncmp(v[i], e, len) && v[i][len] == '=')
				break;
		if (!e[len]) { /* "K": unset K */
			if (i < n) {
				free(v[i]);
				memmove(v + i, v + i + 1, (n-- - i) * sizeof *v);
			}
			continue;
		}
		if (i < n)
			free(v[i]);
		else
			n++;
		if (!(v[i] = strdup(e)))
			abort();
	}
	v[n] = NULL;
	return v;
}

const char *shell_tracer(void)
{
	struct buf why = BUF_INIT;

	if (!S.tracer_tried++) {
		S.tracer = spawn_find_tracer(&why);
		if (!S.tracer)
			log_debug("answers are not reused", &why);
	}
	buf_release(&why);
	return S.tracer;
}

/* May an answer with read set rs stand for a call now? */
static int shell_holds(const struct buf *rs, uint64_t env, const char *what)
{
	struct buf why = BUF_INIT;
	int ok = rs->len && readset_check(rs->data, rs->len, env, &why) == RS_PURE;

	if (!ok)
		log_debug(what, &why);
	buf_release(&why);
	return ok;
}

static struct job *shell_new_job(enum job_kind kind, const struct cmdid *c, char **env)
{
	struct job *j;
	struct job_msg m;
	char name[48];

	snprintf(name, sizeof name, "async-shell:%lu", ++S.names);
	j = request_job(name, kind, c->command);
	request_job_msg(&m, c->shell, c->flags, c->cwd, c->command, NULL);
	m.tracer = (char *)shell_tracer();
	m.env = env;
	m.env_full = 1;
	msg_put_job(&j->payload, &m);
	return j;
}

/*
 * What names "the same makefiles": directory, the makefiles read so far,
 * goals and command-line variables (a Kbuild sub-make's obj=DIR).  Read
 * through $(origin) so --warn-undefined-variables stays quiet (loaded by
 * --eval, before any makefile, even MAKEFILE_LIST is undefined).
 */
/*
 * The makefiles named by -f on this make's command line: MAKEFILE_LIST
 * at load holds only what was read before the load, which under
 * MAKEFILES (asynccompile-kbuild.mk) is the same for every make of a
 * build.  Short options run together with f (-sf FILE) are not parsed;
 * such makes share a record, which costs hits, never answers.
 */
static void shell_makefile_args(struct buf *k)
{
	struct buf cmd = BUF_INIT;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	char chunk[4096];
	ssize_t n;

	if (fd < 0)
		return;
	while ((n = read(fd, chunk, sizeof chunk)) > 0)
		buf_add(&cmd, chunk, (size_t)n);
	close(fd);
	for (size_t i = 0; i < cmd.len;) {
		const char *a = (const char *)cmd.data + i;
		size_t len = strnlen(a, cmd.len - i);
		const char *next = i + len + 1 < cmd.len ? a + len + 1 : NULL;

		if ((!strcmp(a, "-f") || !strcmp(a, "--file") || !strcmp(a, "--makefile")) && next)
			buf_addf(k, "|-f %s", next);
		else if (!strncmp(a, "-f", 2) && a[2])
			buf_addf(k, "|-f %s", a + 2);
		else if (!strncmp(a, "--file=", 7) || !strncmp(a, "--makefile=", 11))
			buf_addf(k, "|-f %s", strchr(a, '=') + 1);
		i += len + 1;
	}
	buf_release(&cmd);
}

static char *shell_run_key(void)
{
	char *v = mk_expand(
		"$(MAKE_VERSION)|$(MAKELEVEL)"
		"|$(if $(filter undefined,$(origin MAKEFILE_LIST)),,$(MAKEFILE_LIST))"
		"|$(if $(filter undefined,$(origin MAKECMDGOALS)),,$(MAKECMDGOALS))"
		"|$(if $(filter undefined,$(origin -*-command-variables-*-)),,"
		"$(-*-command-variables-*-))");
	struct buf k = BUF_INIT;

	buf_addf(&k, "%s|%s", request_cwd(), v);
	free(v);
	shell_makefile_args(&k);
	return buf_detach(&k, NULL);
}

/*
 * The per-user store, opened once per process (or -1).  Without `create`
 * (reading the record at load) a store that does not exist yet is left
 * for a later call to create: nothing is made for a make that keeps
 * nothing.
 */
static int shell_store(const struct config *c, int create)
{
	struct buf why = BUF_INIT;

	if (!S.store_tried) {
		S.store = store_open(c->cache_dir, create, &why);
		if (S.store >= 0 || create || errno != ENOENT)
			S.store_tried = 1;
		if (S.store < 0)
			log_debug("no store", &why);
	}
	buf_release(&why);
	return S.store;
}

/* The cache directory when the config turns the cache on (or -1). */
static int shell_cache(const struct config *c)
{
	struct buf why = BUF_INIT;

	if (!c->cache || shell_store(c, 1) < 0)
		return -1;
	if (!S.cache_tried++) {
		S.cache = cache_open(S.store, &why);
		if (S.cache < 0)
			log_debug("no cache", &why);
	}
	buf_release(&why);
	return S.cache;
}

/* Key j, and answer it from the cache if it can be: 1 on a hit. */
static int shell_cache_fill(const struct config *c, struct job *j, const char *shell,
			    char **flags, const char *command, const char *input, char **launcher,
			    uint64_t env)
{
	struct cache_answer a;
	int dir = shell_cache(c);

	if (dir < 0)
		return 0;
	struct buf why = BUF_INIT;
	int hit;

	cache_key(&j->cache_key, shell, flags, request_cwd(), command, input, c->env, launcher,
		  c->cache_content);
	hit = cache_get(dir, &j->cache_key, c->cache_max_age_ms, env, &a, &why);
	if (!hit) {
		if (why.len)
			log_debug("cached answer not used", &why);
		buf_release(&why);
		return 0;
	}
	buf_release(&why);
	j->cached = 1;
	j->res.status = a.status;
	j->res.out = a.out;
	j->res.err = a.err;
	j->res.readset = a.readset;
	return 1;
}

/* A lookup, counted: a hit, or a miss of a command the cache could keep. */
static void shell_cache_count(const struct config *c, struct job *j, const char *shell,
			      char **flags, const char *command, const char *input,
			      char **launcher, uint64_t env)
{
	if (shell_cache_fill(c, j, shell, flags, command, input, launcher, env))
		S.cache_hits++;
	else if (j->cache_key.len)
		S.cache_misses++;
}

void shell_cache_lookup(const struct config *c, struct job *j, const char *shell, char **flags,
			const char *command, const char *input, char **launcher)
{
	/* the digest costs a pass over the environment: only with a cache */
	if (shell_cache(c) >= 0)
		shell_cache_count(c, j, shell, flags, command, input, launcher,
				  shell_env_digest(c));
}

void shell_cache_keep(const struct job *j)
{
	struct buf why = BUF_INIT;

	if (!j->cache_key.len || j->cached || S.cache < 0 ||
	    !cache_cacheable(j->res.status, j->res.flags))
		return;
	if (readset_verdict(j->res.readset.data, j->res.readset.len) != RS_PURE) {
		/* the stored reason: why a cache that never hits does not */
		if (log_debugging()) {
			readset_check(j->res.readset.data, j->res.readset.len, 0, &why);
			buf_addf(&why, " (command: %.200s)", j->command ? j->command : "?");
			log_debug("answer not kept", &why);
			buf_release(&why);
		}
		return;
	}
	if (cache_put(S.cache, &j->cache_key, j->res.status, &j->res.out, &j->res.err,
		      &j->res.readset, &why) < 0)
		log_debug("cannot keep an answer", &why);
	else
		S.cache_written = 1;
	buf_release(&why);
}

/*
 * The jobserver MAKEFLAGS and MFLAGS name changes from run to run (make
 * 4.4's fifo is named after the top make's pid): in the environment the
 * last run's call had, name this run's, taken from the MAKEFLAGS this make
 * got.  Only a guess of the call's environment, checked at the call like
 * any other (its digest must be the call's).
 */
static void shell_env_refresh(char **envp)
{
	static const char opt[] = "--jobserver-auth=";
	const char *now = getenv("MAKEFLAGS"), *cur = now ? strstr(now, opt) : NULL;

	for (; cur && *envp; envp++) {
		char *old;
		struct buf b = BUF_INIT;

		if ((strncmp(*envp, "MAKEFLAGS=", 10) && strncmp(*envp, "MFLAGS=", 7)) ||
		    !(old = strstr(*envp, opt)))
			continue;
		buf_add(&b, *envp, (size_t)(old - *envp));
		buf_add(&b, cur, strcspn(cur, " "));
		buf_addstr(&b, old + strcspn(old, " "));
		free(*envp);
		*envp = buf_detach(&b, NULL);
	}
}

/* Read the record for this run and queue what it lists. */
static void shell_speculate(void)
{
	struct situation sit;
	struct buf data = BUF_INIT, why = BUF_INIT;
	const char *bad;
	const char *off = getenv("ASYNC_COMPILE_SPECULATE");
	const struct config *c = request_config_at_load();
	uint64_t env;

	if (!c || !c->speculate || (off && !strcmp(off, "0")))
		return;
	/* named now, while MAKEFILE_LIST lists the makefiles read before the load */
	S.key = shell_run_key();
	snprintf(S.file, sizeof S.file, "rec-%016llx",
		 (unsigned long long)store_hash(S.key, strlen(S.key), STORE_HASH_INIT));
	if (shell_store(c, 0) < 0)
		goto out;
	if (store_read(S.store, S.file, &data, &why) < 0) {
		log_debug("no record", &why);
		goto out;
	}
	if (record_decode(data.data, data.len, S.key, &S.prev, &S.nprev, &bad) < 0) {
		buf_addf(&why, "%s: %s", S.file, bad);
		log_debug("record ignored", &why);
		goto out;
	}
	if (!S.nprev || !shell_tracer())
		goto out;
	S.spec = calloc(S.nprev, sizeof *S.spec);
	if (!S.spec)
		abort();
	for (size_t i = 0; i < S.nprev; i++) {
		struct record_entry *e = &S.prev[i];
		struct cmdid id;
		struct spec *s;
		/* the environment its last call had: the next call's, most likely */
		char **envp = record_env_get(e->env.data, e->env.len);

		if (!envp)
			abort(); /* record_decode checked every entry */
		/* only what its last run proved pure, and still would be */
		if (!shell_holds(&e->rs, launch_env_digest(envp), "not run ahead of need")) {
			S.unproven++;
			strv_free(envp);
			continue;
		}
		shell_env_refresh(envp);
		env = launch_env_digest(envp);
		s = &S.spec[S.nspec++];
		if (cmdid_get(e->id.data, e->id.len, &id) < 0)
			abort();
		buf_add(&s->id, e->id.data, e->id.len);
		s->h = store_hash(s->id.data, s->id.len, STORE_HASH_INIT);
		s->job = shell_new_job(JOB_SPEC, &id, envp);
		/* an answer the cache holds needs no job */
		if (shell_cache_fill(c, s->job, id.shell, id.flags, id.command, NULL, NULL, env)) {
			job_free(s->job);
			s->job = NULL;
		} else if (!engine_started() && !request_prepare(NULL, &sit, 1)) {
			/* the pool starts for the first job it gets, or not at all */
			job_free(s->job);
			s->job = NULL;
			cmdid_release(&id);
			strv_free(envp);
			break;
		} else {
			engine_submit(s->job);
			S.speculated++;
		}
		cmdid_release(&id);
		strv_free(envp);
	}
out:
	buf_release(&data);
	buf_release(&why);
}

int shell_drop_speculation(void)
{
	if (!S.speculated || engine_submitted() != S.speculated)
		return 0;
	for (size_t i = 0; i < S.nspec; i++) {
		if (S.spec[i].job) {
			engine_cancel(S.spec[i].job);
			S.spec[i].job = NULL;
			S.unused++;
		}
	}
	return 1;
}

void shell_load(void)
{
	char *old;

	if (S.loaded++)
		return;
	log_debug_init();
	/*
	 * The end-of-parse hook.  The value make decodes is unchanged (the
	 * function expands to nothing); make sets the variable to "" itself
	 * right afterwards.  A makefile that assigns GNUMAKEFLAGS with = or
	 * := after the load drops the hook: speculation then ends at the
	 * first recipe-time call or at exit.
	 */
	old = mk_expand("$(if $(filter undefined,$(origin GNUMAKEFLAGS)),,$(value GNUMAKEFLAGS))");
	if (!old[strcspn(old, "#\\\n")]) {
		struct buf line = BUF_INIT;

		buf_addf(&line, "GNUMAKEFLAGS = %s$(async-compile-internal-read )", old);
		mk_eval((char *)line.data);
		buf_release(&line);
	}
	free(old);
	shell_speculate();
}

char *shell_read_func(const char *nm, unsigned int argc, char **argv)
{
	(void)nm;
	(void)argc;
	(void)argv;
	mk_check_aliases();
	shell_makefiles_read();
	return NULL;
}

static int shell_same_record(void)
{
	if (S.nseen != S.nprev)
		return 0;
	for (size_t i = 0; i < S.nseen; i++) {
		const struct record_entry *a = &S.seen[i], *b = &S.prev[i];

		if (a->id.len != b->id.len || memcmp(a->id.data, b->id.data, a->id.len) ||
		    a->rs.len != b->rs.len || memcmp(a->rs.data, b->rs.data, a->rs.len) ||
		    a->env.len != b->env.len || memcmp(a->env.data, b->env.data, a->env.len))
			return 0;
	}
	return 1;
}

void shell_makefiles_read(void)
{
	struct buf rec = BUF_INIT, why = BUF_INIT;

	engine_makefiles_read();
	if (S.done)
		return;
	S.done = 1;
	for (size_t i = 0; i < S.nspec; i++) {
		if (S.spec[i].job) {
			engine_cancel(S.spec[i].job);
			S.spec[i].job = NULL;
			S.unused++;
		}
	}
	if (S.key && !shell_same_record() && (S.nseen || S.nprev) &&
	    shell_store(request_config_at_load(), 1) >= 0) {
		record_encode(&rec, S.key, S.seen, S.nseen);
		if (store_write(S.store, S.file, rec.data, rec.len, &why) < 0)
			log_debug("cannot write the record", &why);
	}
	buf_release(&rec);
	buf_release(&why);
}

void shell_exit(void)
{
	shell_makefiles_read();
	/* a cache was written: the configuration is known */
	if (S.cache_written)
		cache_evict(S.cache, request_config_at_load()->cache_max_age_ms, CACHE_MAX_BYTES);
}

/* make's .SHELLSTATUS, with make's own origin for it */
static void shell_set_status(int status)
{
	char line[64];

	snprintf(line, sizeof line, "override .SHELLSTATUS := %d", status);
	mk_eval(line);
}

/* make before 4.4, whose $(shell) treats status 127 as a failed exec */
static int shell_make_43(void)
{
	static int old = -1;

	if (old < 0) {
		char *v = mk_expand("$(MAKE_VERSION)");
		int major = 0, minor = 0;

		sscanf(v, "%d.%d", &major, &minor);
		old = major < 4 || (major == 4 && minor < 4);
		free(v);
	}
	return old;
}

static void shell_direct_pid(void *ctx, pid_t pid)
{
	(void)ctx;
	fatal_child(pid);
}

/*
 * A command run in make's process runs as $(shell) runs one: in make's
 * process group, so that Ctrl-C or a signal to the group ends it, and
 * known to make's fatal-signal handler for a signal to make alone.
 */
static const struct run_hooks shell_direct_hooks = {
	.watch_fd = { -1, -1, -1, -1 },
	.job_pid = shell_direct_pid,
	.callers_group = 1,
};

static struct job *shell_take_spec(const struct buf *id, uint64_t h)
{
	for (size_t i = 0; i < S.nspec; i++) {
		struct spec *s = &S.spec[i];

		if (s->job && s->h == h && s->id.len == id->len &&
		    !memcmp(s->id.data, id->data, id->len)) {
			struct job *j = s->job;
			s->job = NULL;
			return j;
		}
	}
	return NULL;
}

/* The command now, in make's process, as $(shell) runs it, but traced. */
static struct job *shell_run_now(const struct config *cfg, const struct buf *id, char **envp,
				  uint64_t env)
{
	struct cmdid c;
	struct job *j = calloc(1, sizeof *j);

	if (!j || cmdid_get(id->data, id->len, &c) < 0)
		abort();
	j->kind = JOB_SHELL;
	shell_cache_count(cfg, j, c.shell, c.flags, c.command, NULL, NULL, env);
	if (!j->cached) {
		/*
		 * The pool would only add its hops to make's wait.  The
		 * runner is the workers' own, so the command gets what a
		 * pool job gets (launch.h, run.h).
		 */
		struct job_msg msg;

		request_job_msg(&msg, c.shell, c.flags, c.cwd, c.command, NULL);
		msg.tracer = (char *)shell_tracer();
		msg.env = envp;
		msg.env_full = 1;
		fatal_init(); /* a signal to make alone is passed on to it */
		run_job(&msg, &shell_direct_hooks, &j->res);
		shell_cache_keep(j);
		S.misses++;
		j->cached = 1; /* done: nothing to wait for */
	}
	cmdid_release(&c);
	return j;
}

/* A speculated job's answer, if it still is the answer now (else NULL). */
static struct job *shell_spec_answer(struct job *j, uint64_t env)
{
	if (!j->cached) {
		struct job **jobs = &j;
		size_t one = 1;

		engine_promote(j);
		engine_wait(&jobs, &one, 0);
		shell_cache_keep(j);
	}
	if (shell_holds(&j->res.readset, env, "speculated answer not used")) {
		S.hits++;
		if (j->cache_key.len && !j->cached)
			S.cache_misses++; /* looked up when it was speculated */
		return j;
	}
	S.rejected++;
	job_free(j);
	return NULL;
}

/*
 * Remember what this make asked for while reading makefiles, with what
 * its answer depended on: an impure or opaque run is kept too, so that
 * the next run knows not to start it ahead of need.
 */
static void shell_note_seen(struct memo *m, const struct buf *rs, char **envp)
{
	struct record_entry *e;

	if (S.done)
		return;
	if (!m->seen) {
		if (S.nseen == S.capseen) {
			S.capseen = S.capseen ? 2 * S.capseen : 64;
			S.seen = realloc(S.seen, S.capseen * sizeof *S.seen);
			if (!S.seen)
				abort();
		}
		e = &S.seen[S.nseen++];
		memset(e, 0, sizeof *e);
		buf_add(&e->id, m->id.data, m->id.len);
		m->seen = S.nseen;
	}
	e = &S.seen[m->seen - 1];
	buf_reset(&e->env);
	put_strv(&e->env, envp);
	buf_reset(&e->rs);
	if (rs->len)
		buf_add(&e->rs, rs->data, rs->len);
	else
		readset_opaque(&e->rs, "not traced");
}

char *shell_func(const char *nm, unsigned int argc, char **argv)
{
	struct situation sit;
	struct buf id = BUF_INIT;
	struct memo *m;
	struct job *j;
	uint64_t h, env;
	char **envp;

	/* the pool is for speculation; a call runs in make's process */
	const struct config *cfg = request_prepare(nm, &sit, 0);

	shell_identity(argc ? argv[0] : "", &id, &h);
	/* once per call, as $(shell) builds it once: it can run functions */
	envp = shell_call_env(cfg);
	env = launch_env_digest(envp);
	m = shell_memo_find(&id, h);
	if (m && shell_holds(&m->rs, env, "memo not used")) {
		S.memo_hits++;
		buf_release(&id);
		strv_free(envp);
		shell_set_status(m->status);
		return mk_result(m->value);
	}
	if (m)
		S.stale++;
	j = shell_take_spec(&id, h);
	if (j)
		j = shell_spec_answer(j, env);
	if (!j)
		j = shell_run_now(cfg, &id, envp, env);
	if (!m) {
		m = calloc(1, sizeof *m);
		if (!m)
			abort();
		m->id = id;
		m->h = h;
		m->next = S.memo[h % MEMO_SIZE];
		S.memo[h % MEMO_SIZE] = m;
	} else {
		buf_release(&id);
		free(m->value);
	}
	m->status = j->res.status;
	/* an answer that cannot vouch for itself is used once, never again */
	buf_reset(&m->rs);
	if (readset_verdict(j->res.readset.data, j->res.readset.len) == RS_PURE)
		buf_add(&m->rs, j->res.readset.data, j->res.readset.len);
	/*
	 * make 4.3's $(shell) takes 127 from a shell that exited normally for
	 * a failed exec: what the command printed goes to stderr and the
	 * result is empty (4.4 dropped that).
	 */
	if (m->status == STATUS_CANNOT_RUN && !(j->res.flags & RES_CANCELLED) && shell_make_43()) {
		if (j->res.out.len)
			mk_print(2, j->res.out.data, j->res.out.len);
		m->value = strdup("");
		if (!m->value)
			abort();
	} else {
		m->value = output_fold(j->res.out.data, j->res.out.len);
	}
	if (j->res.err.len)
		mk_print(2, j->res.err.data, j->res.err.len);
	shell_note_seen(m, &j->res.readset, envp);
	strv_free(envp);
	job_free(j);
	shell_set_status(m->status);
	return mk_result(m->value);
}

void shell_stats(struct buf *b)
{
	buf_addf(b, " speculated=%lu spec_hits=%lu spec_misses=%lu spec_unused=%lu memo_hits=%lu"
		 " cache_hits=%lu cache_misses=%lu spec_unproven=%lu spec_rejected=%lu memo_stale=%lu",
		 S.speculated, S.hits, S.misses, S.unused, S.memo_hits, S.cache_hits, S.cache_misses,
		 S.unproven, S.rejected, S.stale);
}
