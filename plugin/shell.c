/*
 * $(async-shell COMMAND): a $(shell) whose commands run ahead of need.
 *
 * Three layers, each unable to change an answer:
 *  - memo: the same command identity (record.h: shell, flags, directory,
 *    text) twice in one make process runs once;
 *  - speculation: the commands one run asked for while it read its
 *    makefiles are recorded in the per-user store (store.h) under a key
 *    naming the makefiles, goals and command-line variables; the next run
 *    with that key queues them all at load, within -jN, and a call whose
 *    identity equals a speculated job's takes that job's answer;
 *  - everything else runs when asked, through the same pool.
 * Speculated jobs nobody asked for are cancelled once the makefiles have
 * been read: make expands $(GNUMAKEFLAGS) right after reading them (both
 * 4.3 and 4.4.1, main.c), so at load that variable gets a call to an
 * internal function appended; a recipe-time call or exit also ends it.
 * Make's thread only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../worker/cache.h"
#include "../worker/record.h"
#include "../worker/run.h"
#include "../worker/store.h"
#include "funcs.h"
#include "mk.h"
#include "output.h"
#include "shell.h"
#include "engine.h"
#include "job.h"

#define MEMO_SIZE 1024

struct memo {
	struct buf id;
	uint64_t h;
	int status;
	char *value;            /* the folded result */
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
	int debug;              /* ASYNC_COMPILE_DEBUG: say why the store is unused */
	int store;              /* store directory, or -1 */
	int store_tried;
	int cache;              /* its cache/ directory, or -1 */
	int cache_tried;
	int cache_written;      /* this run added entries: evict at exit */
	char *key;
	char file[32];
	struct buf *prev;       /* the record read at load */
	size_t nprev;
	struct spec *spec;
	size_t nspec;
	struct buf *seen;       /* identities asked for while makefiles were read */
	size_t nseen, capseen;
	struct memo *memo[MEMO_SIZE];
	unsigned long speculated, hits, misses, unused, memo_hits;
	unsigned long cache_hits, cache_misses;
	unsigned long names;
} S = { .store = -1, .cache = -1 };

static void shell_debug(const char *what, const struct buf *why)
{
	if (S.debug)
		engine_log("async-shell: %s: %s", what, why->len ? (char *)why->data : "?");
}

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

	funcs_make_shell(&sh, &flags);
	cmdid_put(id, sh, flags, funcs_cwd(), command);
	*h = store_hash(id->data, id->len, STORE_HASH_INIT);
	strv_free(flags);
	free(sh);
}

static struct job *shell_new_job(enum job_kind kind, const struct cmdid *c)
{
	struct job *j = calloc(1, sizeof *j);
	char name[48];

	snprintf(name, sizeof name, "async-shell:%lu", ++S.names);
	if (!j || !(j->name = strdup(name)) || !(j->command = strdup(c->command)))
		abort();
	j->kind = kind;
	j->worker = -1;
	funcs_put_job(&j->payload, c->shell, c->flags, c->cwd, c->command, NULL);
	return j;
}

/*
 * What names "the same makefiles": directory, the makefiles read so far,
 * goals and command-line variables (a Kbuild sub-make's obj=DIR).  Read
 * through $(origin) so --warn-undefined-variables stays quiet (loaded by
 * --eval, before any makefile, even MAKEFILE_LIST is undefined).
 */
static char *shell_run_key(void)
{
	char *v = mk_expand(
		"$(MAKE_VERSION)"
		"|$(if $(filter undefined,$(origin MAKEFILE_LIST)),,$(MAKEFILE_LIST))"
		"|$(if $(filter undefined,$(origin MAKECMDGOALS)),,$(MAKECMDGOALS))"
		"|$(if $(filter undefined,$(origin -*-command-variables-*-)),,"
		"$(-*-command-variables-*-))");
	struct buf k = BUF_INIT;

	buf_addf(&k, "%s|%s", funcs_cwd(), v);
	free(v);
	return buf_detach(&k, NULL);
}

/* The per-user store, opened once per process (or -1). */
static int shell_store(const struct config *c)
{
	struct buf why = BUF_INIT;

	if (!S.store_tried++) {
		S.store = store_open(c->cache_dir, &why);
		if (S.store < 0)
			shell_debug("no store", &why);
	}
	buf_release(&why);
	return S.store;
}

/* The cache directory when the config turns the cache on (or -1). */
static int shell_cache(const struct config *c)
{
	struct buf why = BUF_INIT;

	if (!c->cache || shell_store(c) < 0)
		return -1;
	if (!S.cache_tried++) {
		S.cache = cache_open(S.store, &why);
		if (S.cache < 0)
			shell_debug("no cache", &why);
	}
	buf_release(&why);
	return S.cache;
}

/* Key j, and answer it from the cache if it can be: 1 on a hit. */
static int shell_cache_fill(const struct config *c, struct job *j, const char *shell,
			    char **flags, const char *command, const char *input, char **launcher)
{
	struct cache_answer a;
	int dir = shell_cache(c);

	if (dir < 0)
		return 0;
	cache_key(&j->cache_key, shell, flags, funcs_cwd(), command, input, c->env, launcher,
		  c->cache_content);
	if (!cache_get(dir, &j->cache_key, c->cache_max_age_ms, &a))
		return 0;
	j->cached = 1;
	j->res.status = a.status;
	j->res.out = a.out;
	j->res.err = a.err;
	return 1;
}

void shell_cache_lookup(const struct config *c, struct job *j, const char *shell, char **flags,
			const char *command, const char *input, char **launcher)
{
	if (shell_cache_fill(c, j, shell, flags, command, input, launcher))
		S.cache_hits++;
	else if (j->cache_key.len)
		S.cache_misses++;
}

void shell_cache_keep(const struct job *j)
{
	struct buf why = BUF_INIT;

	if (!j->cache_key.len || j->cached || S.cache < 0 ||
	    !cache_cacheable(j->res.status, j->res.flags))
		return;
	if (cache_put(S.cache, &j->cache_key, j->res.status, &j->res.out, &j->res.err, &why) < 0)
		shell_debug("cannot keep an answer", &why);
	else
		S.cache_written = 1;
	buf_release(&why);
}

/* Read the record for this run and queue what it lists. */
static void shell_speculate(void)
{
	struct situation sit;
	struct buf data = BUF_INIT, why = BUF_INIT;
	const char *bad;
	const char *off = getenv("ASYNC_COMPILE_SPECULATE");
	const struct config *c = funcs_config_at_load();

	if (!c || !c->speculate || (off && !strcmp(off, "0")) || shell_store(c) < 0)
		return;
	S.key = shell_run_key();
	snprintf(S.file, sizeof S.file, "rec-%016llx",
		 (unsigned long long)store_hash(S.key, strlen(S.key), STORE_HASH_INIT));
	if (store_read(S.store, S.file, &data, &why) < 0) {
		shell_debug("no record", &why);
		goto out;
	}
	if (record_decode(data.data, data.len, S.key, &S.prev, &S.nprev, &bad) < 0) {
		buf_addf(&why, "%s: %s", S.file, bad);
		shell_debug("record ignored", &why);
		goto out;
	}
	if (!S.nprev || !funcs_prepare(NULL, &sit))
		goto out;
	S.spec = calloc(S.nprev, sizeof *S.spec);
	if (!S.spec)
		abort();
	for (size_t i = 0; i < S.nprev; i++) {
		struct cmdid id;
		struct spec *s = &S.spec[S.nspec++];

		if (cmdid_get(S.prev[i].data, S.prev[i].len, &id) < 0)
			abort(); /* record_decode checked every entry */
		buf_add(&s->id, S.prev[i].data, S.prev[i].len);
		s->h = store_hash(s->id.data, s->id.len, STORE_HASH_INIT);
		s->job = shell_new_job(JOB_SPEC, &id);
		/* an answer the cache holds needs no job */
		if (shell_cache_fill(c, s->job, id.shell, id.flags, id.command, NULL, NULL)) {
			job_free(s->job);
			s->job = NULL;
		} else {
			engine_submit(s->job);
			S.speculated++;
		}
		cmdid_release(&id);
	}
out:
	buf_release(&data);
	buf_release(&why);
}

void shell_load(void)
{
	char *old;
	const char *dbg = getenv("ASYNC_COMPILE_DEBUG");

	if (S.loaded++)
		return;
	S.debug = dbg && *dbg && strcmp(dbg, "0");
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
	for (size_t i = 0; i < S.nseen; i++)
		if (S.seen[i].len != S.prev[i].len || memcmp(S.seen[i].data, S.prev[i].data, S.seen[i].len))
			return 0;
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
	if (S.store >= 0 && S.key && !shell_same_record() && (S.nseen || S.nprev)) {
		record_encode(&rec, S.key, S.seen, S.nseen);
		if (store_write(S.store, S.file, rec.data, rec.len, &why) < 0)
			shell_debug("cannot write the record", &why);
	}
	buf_release(&rec);
	buf_release(&why);
}

void shell_exit(void)
{
	const struct config *c = funcs_config_at_load();

	shell_makefiles_read();
	if (S.cache_written && c)
		cache_evict(S.cache, c->cache_max_age_ms, CACHE_MAX_BYTES);
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

static const struct run_hooks shell_no_hooks = { .watch_fd = { -1, -1, -1, -1 } };

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

char *shell_func(const char *nm, unsigned int argc, char **argv)
{
	struct situation sit;
	struct buf id = BUF_INIT;
	struct memo *m;
	struct job *j;
	size_t one = 1;
	uint64_t h;
	char *r;

	const struct config *cfg = funcs_prepare(nm, &sit);

	shell_identity(argc ? argv[0] : "", &id, &h);
	if ((m = shell_memo_find(&id, h))) {
		S.memo_hits++;
		buf_release(&id);
		shell_set_status(m->status);
		return mk_result(m->value);
	}
	if ((j = shell_take_spec(&id, h))) {
		S.hits++;
		if (j->cache_key.len)
			S.cache_misses++; /* looked up when it was speculated */
	} else {
		struct cmdid c;

		if (cmdid_get(id.data, id.len, &c) < 0)
			abort();
		j = calloc(1, sizeof *j);
		if (!j)
			abort();
		j->kind = JOB_SHELL;
		shell_cache_lookup(cfg, j, c.shell, c.flags, c.command, NULL, NULL);
		if (!j->cached) {
			/*
			 * Not speculated: run it now, here, as $(shell) does;
			 * the pool would only add its hops to make's wait.
			 * The runner is the workers' own, so the command gets
			 * what a pool job gets (launch.h, run.h).
			 */
			struct job_msg msg;

			funcs_job_msg(&msg, c.shell, c.flags, c.cwd, c.command, NULL);
			run_job(&msg, &shell_no_hooks, &j->res);
			shell_cache_keep(j);
			S.misses++;
			j->cached = 1; /* done: nothing to wait for */
		}
		cmdid_release(&c);
	}
	if (!j->cached) {
		struct job **jobs = &j;

		engine_promote(j);
		engine_wait(&jobs, &one, 0);
		shell_cache_keep(j);
	}
	m = calloc(1, sizeof *m);
	if (!m)
		abort();
	m->id = id;
	m->h = h;
	m->status = j->res.status;
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
	job_free(j);
	m->next = S.memo[h % MEMO_SIZE];
	S.memo[h % MEMO_SIZE] = m;
	if (!S.done) {
		if (S.nseen == S.capseen) {
			S.capseen = S.capseen ? 2 * S.capseen : 64;
			S.seen = realloc(S.seen, S.capseen * sizeof *S.seen);
			if (!S.seen)
				abort();
		}
		S.seen[S.nseen] = (struct buf)BUF_INIT;
		buf_add(&S.seen[S.nseen++], m->id.data, m->id.len);
	}
	shell_set_status(m->status);
	r = mk_result(m->value);
	return r;
}

void shell_stats(struct buf *b)
{
	buf_addf(b, " speculated=%lu spec_hits=%lu spec_misses=%lu spec_unused=%lu memo_hits=%lu"
		 " cache_hits=%lu cache_misses=%lu",
		 S.speculated, S.hits, S.misses, S.unused, S.memo_hits, S.cache_hits, S.cache_misses);
}
