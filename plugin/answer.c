/*
 * answer.c - the store, the answer cache and the tracer (answer.h).
 * Make's thread only.
 */
#include <errno.h>
#include <stdlib.h>

#include "answer/cache.h"
#include "answer/readset_check.h"
#include "answer/stats.h"
#include "lib/launch.h"
#include "lib/readset.h"
#include "lib/store.h"
#include "plugin/answer.h"
#include "plugin/log.h"
#include "plugin/request.h"
#include "plugin/spawn.h"

static struct {
	int store;              /* store directory, or -1 */
	int store_tried;
	int cache;              /* its cache/ directory, or -1 */
	int cache_tried;
	int written;            /* this run added entries or a record: evict at exit */
	char *tracer;           /* the preload, or NULL: nothing is reused */
	int tracer_tried;
	unsigned long hits, misses;
	unsigned long shell_misses; /* of misses, async-shell's (job_internal) */
	struct stats tally;     /* what this make adds to the stats file */
	int64_t saved_ns;
	struct rs_table *table; /* identities seen: for one check, or one stretch */
	int table_open;         /* answer_table_open() holds */
	unsigned long looked, reused; /* of tables cleared */
} A = { .store = -1, .cache = -1 };

/* The identity table checks go through (empty unless a stretch is open). */
static struct rs_table *answer_table(void)
{
	if (!A.table)
		A.table = readset_table_new();
	return A.table;
}

/* Forget what the table saw, unless a stretch holds it. */
static void answer_table_done(void)
{
	unsigned long looked, reused;

	if (A.table_open || !A.table)
		return;
	readset_table_counts(A.table, &looked, &reused);
	A.looked += looked;
	A.reused += reused;
	readset_table_free(A.table);
	A.table = NULL;
}

void answer_table_open(void)
{
	answer_table_done();
	A.table_open = 1;
}

void answer_table_close(void)
{
	A.table_open = 0;
	answer_table_done();
}

/*
 * The digest of the environment a pool job started now would get (make's
 * environ as the pool copied it, and the config env): async-try's.
 */
static uint64_t answer_env_digest(const struct config *c)
{
	char **envp = launch_environ(c->env, 0);
	uint64_t d;

	if (!envp)
		abort();
	d = launch_env_digest(envp);
	free(envp);
	return d;
}

const char *answer_tracer(void)
{
	struct buf err = BUF_INIT;

	if (!A.tracer_tried++) {
		A.tracer = spawn_find_tracer(&err);
		if (!A.tracer)
			log_debug("answers are not reused", &err);
	}
	buf_release(&err);
	return A.tracer;
}

/* May an answer with read set rs stand for a call now? */
int answer_holds(const struct buf *rs, uint64_t env, const char *what)
{
	struct buf why = BUF_INIT;
	int ok = 0;

	if (!rs->len) {
		buf_addstr(&why, "the run it came from could not vouch for it (not pure)");
	} else {
		ok = readset_check_in(rs->data, rs->len, env, answer_table(), &why) == RS_PURE;
		answer_table_done();
	}

	if (!ok)
		log_debug(what, &why);
	buf_release(&why);
	return ok;
}

/*
 * The per-user store, opened once per process (or -1).  Without `create`
 * (reading the record at load) a store that does not exist yet is left
 * for a later call to create: nothing is made for a make that keeps
 * nothing.
 */
int answer_store(const struct config *c, int create)
{
	struct buf why = BUF_INIT;

	if (!A.store_tried) {
		A.store = store_open(c->cache_dir, create, &why);
		if (A.store >= 0 || create || errno != ENOENT)
			A.store_tried = 1;
		if (A.store < 0)
			log_debug("no store", &why);
	}
	buf_release(&why);
	return A.store;
}

/* The cache directory when the config turns the cache on (or -1). */
static int answer_cache(const struct config *c)
{
	struct buf why = BUF_INIT;

	if (!c->cache || answer_store(c, 1) < 0)
		return -1;
	if (!A.cache_tried++) {
		A.cache = cache_open(A.store, &why);
		if (A.cache < 0)
			log_debug("no cache", &why);
	}
	buf_release(&why);
	return A.cache;
}

/* Key j, and answer it from the cache if it can be: 1 on a hit. */
int answer_fill(const struct config *c, struct job *j, const char *shell, char **flags,
		const char *command, const char *input, char **launcher, uint64_t env)
{
	struct cache_answer a;
	int dir = answer_cache(c);

	if (dir < 0)
		return 0;
	struct buf why = BUF_INIT;
	int hit;

	cache_key(&j->cache_key, shell, flags, request_cwd(), command, input, c->env, launcher,
		  c->cache_content);
	hit = cache_get(dir, &j->cache_key, c->cache_max_age_ms, env, answer_table(), &a, &why);
	answer_table_done();
	if (!hit) {
		if (why.len)
			log_debug("cached answer not used", &why);
		buf_release(&why);
		return 0;
	}
	buf_release(&why);
	j->cached = 1;
	j->ran_ns = a.run_ns;
	j->res.status = a.status;
	j->res.out = a.out;
	j->res.err = a.err;
	j->res.readset = a.readset;
	return 1;
}

static void answer_count_miss(const struct job *j)
{
	A.misses++;
	if (job_internal(j))
		A.shell_misses++;
}

/* A lookup, counted: a hit, or a miss of a command the cache could keep. */
void answer_count(const struct config *c, struct job *j, const char *shell, char **flags,
		  const char *command, const char *input, char **launcher, uint64_t env)
{
	if (answer_fill(c, j, shell, flags, command, input, launcher, env))
		answer_hit(j);
	else if (j->cache_key.len)
		answer_count_miss(j);
}

void answer_lookup(const struct config *c, struct job *j, const char *shell, char **flags,
		   const char *command, const char *input, char **launcher)
{
	/* the digest costs a pass over the environment: only with a cache */
	if (answer_cache(c) >= 0)
		answer_count(c, j, shell, flags, command, input, launcher, answer_env_digest(c));
}

void answer_keep(const struct job *j)
{
	struct buf why = BUF_INIT;

	if (!j->cache_key.len || j->cached || A.cache < 0 ||
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
	if (cache_put(A.cache, &j->cache_key, j->res.status, answer_run_ns(j), &j->res.out,
		      &j->res.err, &j->res.readset, &why) < 0)
		log_debug("cannot keep an answer", &why);
	else
		A.written = 1;
	buf_release(&why);
}

void answer_hit(const struct job *j)
{
	A.hits++;
	answer_tally_hit(STATS_CACHE_HITS, j->ran_ns);
}

void answer_miss(const struct job *j)
{
	answer_count_miss(j);
}

void answer_written(void)
{
	A.written = 1;
}

int64_t answer_run_ns(const struct job *j)
{
	int64_t ns = j->cached ? j->ran_ns : j->res.end_ns - j->res.start_ns;

	return ns > 0 ? ns : 0;
}

void answer_tally_hit(int which, int64_t saved_ns)
{
	A.tally.v[which]++;
	if (saved_ns > 0)
		A.saved_ns += saved_ns;
}

void answer_ran(const struct job *j, int traced)
{
	A.tally.v[STATS_MISSES]++;
	if (!traced)
		return;
	switch (readset_verdict(j->res.readset.data, j->res.readset.len)) {
	case RS_IMPURE:
		A.tally.v[STATS_IMPURE]++;
		break;
	case RS_OPAQUE:
		A.tally.v[STATS_OPAQUE]++;
		break;
	}
}

/*
 * Add this make's counts to the store's stats file: only a make that
 * answered or ran something pays for the store and its lock.
 */
static void answer_stats_flush(void)
{
	struct buf why = BUF_INIT;
	const struct config *c;
	int any = 0, store;

	A.tally.v[STATS_SAVED_MS] = (uint64_t)(A.saved_ns / 1000000);
	for (int i = 0; i < STATS_COUNT; i++)
		any |= A.tally.v[i] != 0;
	/* counts mean a configuration was in force: nothing of make is asked at exit */
	if (!any || !(c = request_config()))
		return;
	store = answer_store(c, 1);
	if (store >= 0 && stats_add(store, &A.tally, &why) < 0)
		log_debug("stats not counted", &why);
	buf_release(&why);
}

void answer_exit(void)
{
	const struct config *c = request_config_at_load();

	answer_stats_flush();
	/* the store was written: the configuration is known */
	if (A.written && c && A.store >= 0)
		cache_evict(A.store, A.cache, c->cache_max_age_ms, (uint64_t)c->cache_max_size);
}

void answer_stats(struct answer_stats *st)
{
	unsigned long looked = 0, reused = 0;

	readset_table_counts(A.table, &looked, &reused);
	st->hits = A.hits;
	st->misses = A.misses;
	st->shell_misses = A.shell_misses;
	st->looked = A.looked + looked;
	st->reused = A.reused + reused;
}
