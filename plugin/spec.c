/*
 * spec.c - async-shell's speculation and the record it reads and writes
 * (spec.h).  Make's thread only.
 *
 * Speculated jobs nobody asked for are cancelled once the makefiles have
 * been read (spec_end, from shell_makefiles_read()); a call whose
 * identity equals a speculated job's takes that job's answer if the
 * job's own read set holds at that moment.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "answer/cache.h"
#include "answer/record.h"
#include "answer/stats.h"
#include "lib/launch.h"
#include "lib/proto.h"
#include "lib/readset.h"
#include "lib/store.h"
#include "lib/strv.h"
#include "plugin/answer.h"
#include "plugin/engine.h"
#include "plugin/log.h"
#include "plugin/mk.h"
#include "plugin/request.h"
#include "plugin/spec.h"

struct spec {
	struct buf id;
	uint64_t h;
	struct job *job;        /* NULL once used or cancelled */
	char **envp;            /* the environment it ran with (a debug line names a difference) */
	uint64_t env;           /* its digest (launch_env_digest) */
};

static struct {
	int done;               /* makefiles read: no more recording */
	char *key;
	char file[32];
	struct record_entry *prev; /* the record read at load */
	size_t nprev;
	char **environ;         /* make's own at load, recorded for the next run */
	char **was;             /* ... and as the last run recorded it */
	int environ_same;       /* the two are the same */
	struct spec *spec;
	size_t nspec;
	struct record_entry *seen; /* commands asked for while makefiles were read */
	size_t nseen, capseen;
	unsigned long speculated, hits, unused, unproven, rejected, cached;
	unsigned long names;
} spec_state;

static struct job *spec_new_job(enum job_kind kind, const struct cmdid *c, char **env)
{
	struct job *j;
	struct job_msg m;
	char name[48], ppid[64];
	size_t n = 0;
	char **v;

	snprintf(name, sizeof name, "async-shell:%lu", ++spec_state.names);
	j = request_job(name, kind, c->command);
	request_job_msg(&m, c->shell, c->flags, c->cwd, c->command, NULL);
	m.tracer = (char *)answer_tracer();
	/* $PPID is make's under $(shell): the worker's runner says so (launch.h) */
	while (env[n])
		n++;
	if (!(v = malloc((n + 2) * sizeof *v)))
		abort();
	memcpy(v, env, n * sizeof *v);
	snprintf(ppid, sizeof ppid, "%s=%ld", LAUNCH_PPID, (long)getpid());
	v[n] = ppid;
	v[n + 1] = NULL;
	m.env = v;
	m.env_full = 1;
	/* nobody asked for it yet: its tracer refuses what would act outside it */
	m.ahead = 1;
	job_encode(j, &m);
	free(v);
	return j;
}

/*
 * The makefiles named by -f on this make's command line: MAKEFILE_LIST
 * at load holds only what was read before the load, which under
 * MAKEFILES (asynccompile-kbuild.mk) is the same for every make of a
 * build.  Short options run together with f (-sf FILE) are not parsed;
 * such makes share a record, which costs hits, never answers.
 */
static void spec_makefile_args(struct buf *k)
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

/*
 * What names "the same makefiles": directory, the makefiles read so far,
 * goals and command-line variables (a Kbuild sub-make's obj=DIR).  Read
 * through $(origin) so --warn-undefined-variables stays quiet (loaded by
 * --eval, before any makefile, even MAKEFILE_LIST is undefined).
 */
static char *spec_run_key(void)
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
	spec_makefile_args(&k);
	return buf_detach(&k, NULL);
}

/*
 * The jobserver MAKEFLAGS and MFLAGS name changes from run to run (make
 * 4.4's fifo is named after the top make's pid): in the environment the
 * last run's call had, name this run's, taken from the MAKEFLAGS this make
 * got.  Only a guess of the call's environment, checked at the call like
 * any other (its digest must be the call's).
 */
static void spec_env_refresh(char **envp)
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

/* The entry NAME=... of env (`kv` is any "NAME=..." string), or NULL. */
static const char *spec_env_find(char *const *env, const char *kv)
{
	size_t n = strcspn(kv, "=") + 1;

	for (; env && *env; env++)
		if (!strncmp(*env, kv, n))
			return *env;
	return NULL;
}

static int spec_same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/*
 * Carry what changed in make's own environment since the last run into
 * the environment a recorded call had: a variable the call had as make
 * had it then takes the value make has now (or goes, if make has it no
 * more); one the makefiles set stays theirs.  A cd (OLDPWD), a new
 * terminal's variable, bash's $_ under `time make`: most likely the
 * call's environment now.  Only a guess: checked at the call like any
 * other (its digest must be the call's).
 */
static char **spec_env_carry(char **call, char *const *was, char *const *now)
{
	struct buf out = BUF_INIT;
	size_t n = 0;
	char **v;

	for (char **e = call; *e; e++) {
		const char *w = spec_env_find(was, *e), *c = spec_env_find(now, *e);
		const char *keep = spec_same(w, *e) ? c : *e;

		if (keep) {
			char *d = strdup(keep);

			if (!d)
				abort();
			buf_add(&out, &d, sizeof d);
			n++;
		}
	}
	for (char *const *e = now; e && *e; e++) {
		if (spec_env_find(call, *e) || spec_env_find(was, *e))
			continue;
		char *d = strdup(*e);

		if (!d)
			abort();
		buf_add(&out, &d, sizeof d);
		n++;
	}
	v = malloc((n + 1) * sizeof *v);
	if (!v)
		abort();
	if (n)
		memcpy(v, out.data, n * sizeof *v);
	v[n] = NULL;
	buf_release(&out);
	strv_free(call);
	return v;
}

static int spec_same_strv(char *const *a, char *const *b)
{
	for (; a && *a && b && *b; a++, b++)
		if (strcmp(*a, *b))
			return 0;
	return !(a && *a) && !(b && *b);
}

/* Read the record for this run and queue what it lists. */
void spec_start(void)
{
	struct situation sit;
	struct buf data = BUF_INIT, why = BUF_INIT;
	const char *off = getenv("ASYNC_COMPILE_SPECULATE");
	const struct config *c = request_config_at_load();
	uint64_t env;
	int store;

	if (!c || !c->speculate || (off && !strcmp(off, "0")) || request_disabled())
		return;
	/* named now, while MAKEFILE_LIST lists the makefiles read before the load */
	spec_state.key = spec_run_key();
	spec_state.environ = strv_dup(environ);
	snprintf(spec_state.file, sizeof spec_state.file, RECORD_PREFIX "%016llx",
		 (unsigned long long)store_hash(spec_state.key, strlen(spec_state.key), STORE_HASH_INIT));
	store = answer_store(c, 0);
	if (store < 0)
		goto out;
	/* missing, or unused for cache_max_age (cache_evict() removes it later): not read */
	if (cache_expired(store, spec_state.file, c->cache_max_age_ms)) {
		buf_addf(&why, "%s: does not exist, or unused for longer than cache_max_age",
			 spec_state.file);
		log_debug("no record", &why);
		goto out;
	}
	if (store_read(store, spec_state.file, &data, &why) < 0) {
		log_debug("no record", &why);
		goto out;
	}
	buf_addf(&why, "%s: ", spec_state.file);
	if (record_decode(data.data, data.len, spec_state.key, &spec_state.was, &spec_state.prev,
			  &spec_state.nprev, &why) < 0) {
		log_debug("record ignored", &why);
		goto out;
	}
	spec_state.environ_same = spec_same_strv(spec_state.was, spec_state.environ);
	if (!spec_state.nprev || !answer_tracer())
		goto out;
	spec_state.spec = calloc(spec_state.nprev, sizeof *spec_state.spec);
	if (!spec_state.spec)
		abort();
	/*
	 * One stretch of the plugin's own work: the record's read sets and
	 * the cache's share their paths (a compiler's closure), so each is
	 * stat'ed once here.  What this pass lets through is checked again,
	 * path by path, when a call takes it (spec_answer).
	 */
	answer_table_open();
	for (size_t i = 0; i < spec_state.nprev; i++) {
		struct record_entry *e = &spec_state.prev[i];
		struct cmdid id;
		struct spec *s;
		/* the environment its last call had: the next call's, most likely */
		char **envp = record_env_get(e->env.data, e->env.len);

		if (!envp)
			abort(); /* record_decode checked every entry */
		/* only what its last run proved pure, and still would be */
		if (!answer_holds(&e->rs, launch_env_digest(envp), "not run ahead of need")) {
			spec_state.unproven++;
			strv_free(envp);
			continue;
		}
		envp = spec_env_carry(envp, spec_state.was, spec_state.environ);
		spec_env_refresh(envp);
		env = launch_env_digest(envp);
		s = &spec_state.spec[spec_state.nspec++];
		if (cmdid_get(e->id.data, e->id.len, &id) < 0)
			abort();
		buf_add(&s->id, e->id.data, e->id.len);
		s->h = store_hash(s->id.data, s->id.len, STORE_HASH_INIT);
		s->job = spec_new_job(JOB_SPEC, &id, envp);
		/*
		 * An answer the cache holds needs no job: kept, filled, for the
		 * call (no second read of the entry), which checks it again.
		 */
		s->env = env;
		if (answer_fill(c, s->job, id.shell, id.flags, id.command, NULL, NULL, env)) {
			s->envp = envp;
			envp = NULL;
		} else if (!engine_started() && !request_prepare(NULL, &sit, 1)) {
			/* the pool starts for the first job it gets, or not at all */
			job_free(s->job);
			s->job = NULL;
			cmdid_release(&id);
			strv_free(envp);
			break;
		} else {
			engine_submit(s->job);
			spec_state.speculated++;
			s->envp = envp;
			envp = NULL;
		}
		cmdid_release(&id);
		strv_free(envp);
	}
out:
	answer_table_close();
	strv_free(spec_state.was);
	spec_state.was = NULL;
	buf_release(&data);
	buf_release(&why);
}

/* Cancel every speculated job not yet taken. */
static void spec_cancel_all(void)
{
	for (size_t i = 0; i < spec_state.nspec; i++) {
		if (spec_state.spec[i].job) {
			if (spec_state.spec[i].job->cached)
				job_free(spec_state.spec[i].job); /* filled from the cache: never queued */
			else
				engine_cancel(spec_state.spec[i].job);
			spec_state.spec[i].job = NULL;
			spec_state.unused++;
		}
		strv_free(spec_state.spec[i].envp);
		spec_state.spec[i].envp = NULL;
	}
}

int spec_drop(void)
{
	if (!spec_state.speculated || engine_submitted() != spec_state.speculated)
		return 0;
	spec_cancel_all();
	return 1;
}

static int spec_same_record(void)
{
	if (spec_state.nseen != spec_state.nprev || !spec_state.environ_same)
		return 0;
	for (size_t i = 0; i < spec_state.nseen; i++) {
		const struct record_entry *a = &spec_state.seen[i], *b = &spec_state.prev[i];

		if (a->id.len != b->id.len || memcmp(a->id.data, b->id.data, a->id.len) ||
		    a->rs.len != b->rs.len || memcmp(a->rs.data, b->rs.data, a->rs.len) ||
		    a->env.len != b->env.len || memcmp(a->env.data, b->env.data, a->env.len))
			return 0;
	}
	return 1;
}
void spec_end(void)
{
	struct buf rec = BUF_INIT, why = BUF_INIT;
	int store;

	if (spec_state.done)
		return;
	spec_state.done = 1;
	spec_cancel_all();
	if (spec_state.key && !spec_same_record() && (spec_state.nseen || spec_state.nprev) &&
	    (store = answer_store(request_config_at_load(), 1)) >= 0) {
		record_encode(&rec, spec_state.key, spec_state.environ, spec_state.seen, spec_state.nseen);
		if (store_write(store, spec_state.file, rec.data, rec.len, &why) < 0)
			log_debug("cannot write the record", &why);
		else
			answer_written();
	}
	strv_free(spec_state.environ);
	spec_state.environ = NULL;
	buf_release(&rec);
	buf_release(&why);
}

struct job *spec_take(const struct buf *id, uint64_t h, char ***envp, uint64_t *env)
{
	for (size_t i = 0; i < spec_state.nspec; i++) {
		struct spec *s = &spec_state.spec[i];

		if (s->job && s->h == h && s->id.len == id->len &&
		    !memcmp(s->id.data, id->data, id->len)) {
			struct job *j = s->job;

			s->job = NULL;
			*envp = s->envp;
			*env = s->env;
			s->envp = NULL;
			return j;
		}
	}
	return NULL;
}

struct job *spec_answer(struct job *j, char **ran, uint64_t ran_env, char **call, uint64_t env)
{
	int64_t waited = 0;
	size_t n;
	const char *name = ran_env != env ? strv_env_differs(ran, call, &n) : NULL;

	if (name) {
		/* the one thing a user can act on: which variable moved */
		struct buf why = BUF_INIT;

		buf_addf(&why, "the environment differs in %.*s", (int)n, name);
		strv_free(ran);
		log_debug(j->cached ? "cached answer not used" : "speculated answer not used", &why);
		buf_release(&why);
		if (!j->cached) {
			engine_cancel(j);
			spec_state.rejected++;
		} else {
			job_free(j);
		}
		return NULL;
	}
	strv_free(ran);
	if (!j->cached) {
		struct job **jobs = &j;
		size_t one = 1;

		waited = proto_now_ns();
		engine_promote(j);
		engine_wait(&jobs, &one, 0);
		waited = proto_now_ns() - waited;
		answer_keep(j);
	}
	if (answer_holds(&j->res.readset, env,
			 j->cached ? "cached answer not used" : "speculated answer not used")) {
		if (j->cached) {
			answer_hit(j); /* filled from the cache at load */
			spec_state.cached++;
			return j;
		}
		spec_state.hits++;
		/* what make would have waited for, less what it did wait */
		answer_tally_hit(STATS_SPEC_HITS, answer_run_ns(j) - waited);
		if (j->cache_key.len)
			answer_miss(j); /* looked up when it was speculated */
		return j;
	}
	/* a cached answer out of date: the call looks the cache up again, and runs */
	if (!j->cached)
		spec_state.rejected++;
	job_free(j);
	return NULL;
}

/*
 * Remember what this make asked for while reading makefiles, with what
 * its answer depended on: an impure or opaque run is kept too, so that
 * the next run knows not to start it ahead of need.
 */
size_t spec_note(size_t seen, const struct buf *id, const struct buf *rs, char **envp)
{
	struct record_entry *e;

	if (spec_state.done)
		return seen;
	if (!seen) {
		if (spec_state.nseen == spec_state.capseen) {
			spec_state.capseen = spec_state.capseen ? 2 * spec_state.capseen : 64;
			spec_state.seen = realloc(spec_state.seen, spec_state.capseen * sizeof *spec_state.seen);
			if (!spec_state.seen)
				abort();
		}
		e = &spec_state.seen[spec_state.nseen++];
		memset(e, 0, sizeof *e);
		buf_add(&e->id, id->data, id->len);
		seen = spec_state.nseen;
	}
	e = &spec_state.seen[seen - 1];
	buf_reset(&e->env);
	wire_put_strv(&e->env, envp);
	buf_reset(&e->rs);
	if (rs->len)
		buf_add(&e->rs, rs->data, rs->len);
	else
		readset_opaque(&e->rs, "not traced");
	return seen;
}

void spec_stats(struct spec_stats *st)
{
	st->speculated = spec_state.speculated;
	st->hits = spec_state.hits;
	st->unused = spec_state.unused;
	st->unproven = spec_state.unproven;
	st->rejected = spec_state.rejected;
	st->cached = spec_state.cached;
}
