/*
 * answer.h - where async-shell's and async-try's answers are kept and
 * vouched for: the per-user store (lib/store.h), the answer cache in it
 * (answer/cache.h, config `cache`), and the tracer that makes an answer
 * reusable (lib/readset.h: the read set a traced run leaves, checked
 * before reuse by answer/readset_check.h).  Make's thread only.
 *
 * Nothing here fails loudly: a store, cache or tracer that cannot be had
 * means answers are not reused, and ASYNC_COMPILE_DEBUG says why
 * (log_debug).
 */
#ifndef ASYNC_ANSWER_H
#define ASYNC_ANSWER_H

#include <stdint.h>

#include "config/config.h"
#include "lib/buf.h"
#include "plugin/job.h"

/*
 * The tracer to preload into a command whose answer may be reused, found
 * once; NULL when there is none, and then no answer is ever reused.
 */
const char *answer_tracer(void);
/*
 * May an answer with read set rs stand for a call whose environment
 * digest is env now?  If not, `what` and the reason go to log_debug.
 * Each path is looked at once per check, or once per stretch while
 * answer_table_open() holds.
 */
int answer_holds(const struct buf *rs, uint64_t env, const char *what);
/*
 * Open and close the identity table (lib/readset.h) that answer_holds()
 * and the cache's lookups check through: in between, each path is
 * stat'ed once, however many read sets hold it.  Bracket only one
 * uninterrupted stretch of the plugin's own work, in which no make code
 * runs and no command the plugin runs or waits for can write (spec.c's
 * load pass: answer/README, "Identity table", says why no longer).
 */
void answer_table_open(void);
void answer_table_close(void);
/*
 * The per-user store's directory descriptor, opened once per process (or
 * -1).  Without `create` (reading the record at load) a store that does
 * not exist yet is left for a later call to create.
 */
int answer_store(const struct config *c, int create);
/*
 * Cache lookup: with the cache on, compute j's key (the command as
 * written, before the launcher, which is part of the key) and, on a hit,
 * fill j->res and set j->cached.  answer_fill() takes the environment
 * digest and counts nothing, 1 on a hit; answer_count() counts a hit, or
 * a miss of a command the cache could keep; answer_lookup() is
 * answer_count() with the digest of the environment a pool job started
 * now would get (async-try's).
 */
int answer_fill(const struct config *c, struct job *j, const char *shell, char **flags,
		const char *command, const char *input, char **launcher, uint64_t env);
void answer_count(const struct config *c, struct job *j, const char *shell, char **flags,
		  const char *command, const char *input, char **launcher, uint64_t env);
void answer_lookup(const struct config *c, struct job *j, const char *shell, char **flags,
		   const char *command, const char *input, char **launcher);
/* Count a hit of a job answer_fill() filled, taken by a call. */
void answer_hit(const struct job *j);
/* Count a miss found late: a speculated job looked up, missed, and was used. */
void answer_miss(const struct job *j);
/* Store a finished job's answer under its key if it ran to completion. */
void answer_keep(const struct job *j);
/* A record was written to the store (spec.c): answer_exit() evicts. */
void answer_written(void);
/*
 * atexit: add this make's counts to the store's stats file; if this run
 * wrote to the store (a cache entry, a record), keep it within
 * cache_max_age and cache_max_size (cache_evict()).
 */
void answer_exit(void);

struct answer_stats {
	unsigned long hits, misses;
	unsigned long shell_misses; /* of misses, async-shell's own lookups */
	unsigned long looked, reused; /* paths stat'ed by checks; answered by the table */
};
void answer_stats(struct answer_stats *st);

/*
 * The counts this make adds to the store's stats file at exit
 * (answer/stats.h, `asynccompile -s`): a hit of kind `which`
 * (STATS_CACHE_HITS, STATS_SPEC_HITS, STATS_MEMO_HITS) that saved
 * saved_ns of running; a command that ran when asked for (answer_ran:
 * its read set's verdict counted too when `traced`, an untraced
 * async-shell run being opaque).  answer_exit() adds them to the file.
 */
void answer_tally_hit(int which, int64_t saved_ns);
void answer_ran(const struct job *j, int traced);
/* How long j's answer took to make: its run, or the cached run's. */
int64_t answer_run_ns(const struct job *j);

#endif
