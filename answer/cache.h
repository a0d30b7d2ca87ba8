/*
 * cache.h - answers of async-shell and async-try kept between make runs,
 * in the per-user store (lib/store.h: the same ownership, mode and atomicity
 * rules), in its subdirectory cache/.
 *
 * Kbuild's removed .cache.mk went stale when the compiler changed under
 * it and broke when root wrote it into the user's tree.  Here the key is
 * everything that can change an answer, including the identity of every
 * program the command names, and the store is per user.
 *
 * The key (cache_key()) holds: command text, INPUT, shell, shell flags,
 * directory, PATH, the config env and launcher, and for the shell, each
 * launcher word and each word of the command that names an executable
 * (through PATH, or as a path): its real path plus size and mtime, or a
 * hash of its bytes with check_content.  It cannot see what such a
 * program runs by itself (gcc's own `as`, `cc1`), nor other environment
 * variables; cache_max_age bounds how long that can last.
 *
 * An entry's file is named c-HASH, HASH mixing the key with the digest of
 * the environment its read set holds: one answer per command and
 * environment, so two terminals or `make` and `env make` in turn both hit.
 *
 * An entry file (native byte order; another machine's is just a miss):
 *   8 bytes  "ACCACHE1"
 *   u32      CACHE_VERSION
 *   bytes    the whole key (compared on lookup: a hash collision is a miss)
 *   i64      created, seconds since the epoch
 *   i32      status
 *   i64      how long the run that made the answer took, in ns (>= 0):
 *            the time a hit saves (`asynccompile -s`, stats.h)
 *   bytes    stdout, bytes stderr
 *   bytes    the read set (lib/readset.h), pure: a lookup checks it
 *   u64      FNV-1a 64 of every byte before it
 * Only answers of jobs that ran to completion are kept (the caller's
 * cache_cacheable()).  Entries are written whole and renamed into place;
 * no lock is ever held, so two makes filling it at once lose at most one
 * of two identical answers.  Eviction (cache_evict()) covers the whole
 * store, entries and async-shell's records (record.h) alike: files unused
 * for longer than cache_max_age and, beyond cache_max_size in all, the
 * least recently used (a hit, or a record read, renews the file's mtime),
 * at most once per hour per store (the stamp .evicted in the store).
 * Make's thread only (and the worker's --cache-* commands).
 */
#ifndef ASYNC_CACHE_H
#define ASYNC_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"

#define CACHE_VERSION 3

struct cache_answer {
	int32_t status;
	int64_t run_ns;     /* the wall time of the run that made it */
	struct buf out, err;
	struct buf readset; /* what the answer depended on (lib/readset.h) */
};

/* Append the key for a command (see above).  `env` is the config env. */
void cache_key(struct buf *key, const char *shell, char *const *flags, const char *cwd,
	       const char *command, const char *input, char *const *env,
	       char *const *launcher, int check_content);
/* Should this result be kept?  (ran to completion: not timed out, crashed, ...) */
int cache_cacheable(int status, uint32_t res_flags);

/* Open the cache directory inside the store (created 0700).  -1 + err. */
int cache_open(int store, struct buf *err);
/*
 * 1 on a hit (a filled), 0 on a miss (anything wrong is a miss).  A hit
 * needs the entry's read set to hold now, with `env` the digest of the
 * environment the command would get (readset_check_in(), through the
 * identity table t, NULL for none); err gets the reason when it does not
 * (lib/err.h).
 */
struct rs_table;
int cache_get(int dir, const struct buf *key, int64_t max_age_ms, uint64_t env,
	      struct rs_table *t, struct cache_answer *a, struct buf *err);
/*
 * Keep an answer with its read set, which must be pure (the caller's to
 * check): its stdout `out` and stderr `errout`, and run_ns, how long the
 * run that made it took.  0, or -1 with err (a full disk, a read-only
 * store).
 */
int cache_put(int dir, const struct buf *key, int32_t status, int64_t run_ns,
	      const struct buf *out, const struct buf *errout, const struct buf *rs,
	      struct buf *err);
/*
 * Drop the entries of the cache directory `cache` (-1: none) and the
 * records of the store `store` unused for longer than max_age_ms, then
 * the least recently used beyond max_bytes in all; at most once an hour.
 */
void cache_evict(int store, int cache, int64_t max_age_ms, uint64_t max_bytes);
/*
 * Is the file `name` in dir missing or unused for longer than max_age_ms
 * (by its mtime)?  1, or 0 after renewing its mtime: it is being used.
 */
int cache_expired(int dir, const char *name, int64_t max_age_ms);
/* Remove every async-shell record of the store; the number removed. */
long cache_clear_records(int store);
/* Entries and bytes, as "entries=N bytes=N". */
void cache_stats(int dir, struct buf *out);
/* The same for the async-shell records of the store (`asynccompile -s`). */
void cache_records_stats(int store, struct buf *out);
/* Remove every entry; the number removed. */
long cache_clear(int dir);
void cache_answer_release(struct cache_answer *a);

/* The entry codec (fuzzed: fuzz/fuzz-cache.c). */
void cache_entry_encode(struct buf *out, const struct buf *key, int64_t created,
			int32_t status, int64_t run_ns, const struct buf *o, const struct buf *e,
			const struct buf *rs);
/* 0 and *a filled, or -1.  key == NULL accepts any key. */
int cache_entry_decode(const void *p, size_t n, const struct buf *key, int64_t *created,
		       struct cache_answer *a);

#endif
