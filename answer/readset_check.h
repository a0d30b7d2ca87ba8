/*
 * readset_check.h - may a stored answer stand for a run now?  A read set
 * (lib/readset.h: built by the runner, carried in a RESULT, kept by the
 * record and the cache) is checked against the file system and the
 * environment before its answer is reused: by the cache's lookup
 * (cache_get), the plugin's speculation and memo (plugin/answer.c,
 * spec.c, shell.c).  Nothing here keeps state between calls but a table
 * (below), which its owner passes.
 */
#ifndef ASYNC_READSET_CHECK_H
#define ASYNC_READSET_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"
#include "lib/readset.h"

/*
 * Check an encoded read set against the file system now, and against
 * `env`, the digest of the environment the command would get now.
 * Returns RS_PURE when it is pure, the environment is the same and
 * every entry still holds (and no file of it is open for writing);
 * otherwise the verdict that stops reuse, with a one-line reason appended to err (the
 * first entry that changed, or the stored reason).  A malformed encoding
 * is RS_OPAQUE.
 */
int readset_check(const void *p, size_t n, uint64_t env, struct buf *err);

/*
 * A table of identities: the read sets checked with one table
 * (readset_check_in) look at each path once (one stat, one probe for
 * writers) and read each VALUE input once, however many of them hold
 * it.  What a table holds is the file system as it was when each path
 * was first looked at, so a table may serve only while nothing can have
 * changed a path it holds; its owner decides how long that is (the
 * plugin: one uninterrupted stretch of its own work, answer/README
 * "Identity table").  An identity changed within RS_RACY_NS of the
 * moment it was looked at is never kept (readset_table.c): every check
 * looks at it again.  One thread at a time.
 */
struct rs_table;
struct rs_table *readset_table_new(void);
void readset_table_free(struct rs_table *t);
/* readset_check() through table t (NULL: readset_check() itself). */
int readset_check_in(const void *p, size_t n, uint64_t env, struct rs_table *t, struct buf *err);
/* Paths looked at (a stat each), and look-ups answered by the table. */
void readset_table_counts(const struct rs_table *t, unsigned long *looked, unsigned long *reused);

#endif
