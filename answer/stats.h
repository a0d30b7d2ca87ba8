/*
 * stats.h - the counts `asynccompile -s` shows, kept across make runs in
 * the per-user store (lib/store.h: the same ownership, mode and atomicity
 * rules), in its file `stats`.
 *
 * Each make that reused or ran an answer (async-shell, async-try) adds
 * its own counts at exit: stats_add() takes the lock file `stats.lock`
 * (flock, waited for at most STATS_LOCK_MS), reads the file, adds, and
 * replaces it whole (store_write: tmp + rename).  Concurrent makes are
 * serialised by the lock; a reader (stats_load) takes no lock, since a
 * rename shows it a whole old file or a whole new one.
 *
 * The file is text, one counter a line, and is untrusted when read back:
 * stats_decode() accepts only exactly this shape (fuzzed:
 * fuzz/fuzz-stats.c):
 *
 *   asynccompile-stats 1
 *   NAME VALUE            (for each counter, any order, each at most once)
 *
 * NAME one of stats_name()'s, VALUE 1 to 20 decimal digits no larger
 * than UINT64_MAX, no leading zero but in "0", every line ending in a
 * newline, at most STATS_MAX_FILE bytes.  A counter missing is 0.
 * Anything else refuses the whole file: `asynccompile -s` says so and
 * shows zeros, and the next make's stats_add() starts it again from its
 * own counts.
 *
 * Make's thread only (at exit), and the asynccompile command.
 */
#ifndef ASYNC_STATS_H
#define ASYNC_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"

#define STATS_VERSION 1
#define STATS_MAX_FILE 4096
#define STATS_LOCK_MS 2000

enum stats_counter {
	STATS_CACHE_HITS,   /* answers taken from the answer cache */
	STATS_SPEC_HITS,    /* ... from a job run ahead of need (speculation) */
	STATS_MEMO_HITS,    /* ... from the same command earlier in one make */
	STATS_MISSES,       /* commands that ran when they were asked for */
	STATS_OPAQUE,       /* ... of which the trace could not vouch for */
	STATS_IMPURE,       /* ... of which changed something that outlived them */
	STATS_SAVED_MS,     /* wall time of the runs the hits replaced */
	STATS_UPDATED,      /* when a make last added counts (Unix seconds) */
	STATS_ZEROED,       /* when -z last zeroed them (Unix seconds; 0: never) */
	STATS_COUNT
};

struct stats {
	uint64_t v[STATS_COUNT];
};

/* The counter's name in the file ("cache_hits", ...). */
const char *stats_name(enum stats_counter c);

/* Encode the file's text (appended to out). */
void stats_encode(const struct stats *st, struct buf *out);
/*
 * Decode a file's bytes into *st: 0, or -1 with one reason appended to
 * err (lib/err.h) and *st all zeros.
 */
int stats_decode(const void *p, size_t n, struct stats *st, struct buf *err);

/*
 * The store's counts into *st: 0 (no file yet: zeros), or -1 with err (a
 * refused or malformed file; *st zeros).
 */
int stats_load(int store, struct stats *st, struct buf *err);
/*
 * Add delta's counters (not UPDATED and ZEROED) to the store's file,
 * saturating, and set UPDATED to now.  A file that cannot be decoded is
 * replaced by delta's counts.  0, or -1 with err (the lock not had in
 * STATS_LOCK_MS, a read-only store...).
 */
int stats_add(int store, const struct stats *delta, struct buf *err);
/* Zero every counter and set ZEROED to now.  0, or -1 with err. */
int stats_zero(int store, struct buf *err);

#endif
