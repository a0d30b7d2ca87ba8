/*
 * record.h - the async-shell record: which commands one make run asked for
 * while it read its makefiles, so the next run of the same makefiles can
 * start them ahead of need.  The file is read back from the per-user store
 * (lib/store.h) and is untrusted: record_decode() checks every byte, and is
 * fuzzed (fuzz/fuzz-record.c).
 *
 * An entry names its command by identity (cmdid.h).
 *
 * File layout (native byte order, like the protocol; a record written on
 * another machine is simply not recognised):
 *   8 bytes  "ACRECORD"
 *   u32      RECORD_VERSION
 *   str      the run key (which makefiles, goals, variables:
 *            plugin/spec.c, spec_run_key)
 *   bytes    the environment make was started with (a wire_put_strv):
 *            what changed in it since is carried into each entry's
 *            environment when the next run speculates (plugin/spec.c)
 *   u32      count (<= RECORD_MAX_ENTRIES)
 *   count x  bytes: one cmdid, bytes: its last run's read set
 *            (lib/readset.h), bytes: the environment it ran with (a wire_put_strv: the
 *            store is the user's own, 0700, so the values may be kept)
 *   u64      FNV-1a 64 of every byte before it
 */
#ifndef ASYNC_RECORD_H
#define ASYNC_RECORD_H

#include <stddef.h>

#include "answer/cmdid.h"
#include "lib/buf.h"

#define RECORD_VERSION 3
/* A record's file in the store: RECORD_PREFIX and 16 hex digits of the key's hash. */
#define RECORD_PREFIX "rec-"
#define RECORD_MAX_ENTRIES 65536

/* One command a run asked for, and what its answer depended on. */
struct record_entry {
	struct buf id;  /* a cmdid */
	struct buf rs;  /* its read set: only a pure one is run ahead of need */
	struct buf env; /* its whole environment, wire_put_strv-encoded */
};

/* An entry's environment decoded (malloc'd, strv_free it), or NULL. */
char **record_env_get(const void *p, size_t n);

/* Encode a record of `count` entries; `environ` is make's own (may be NULL). */
void record_encode(struct buf *out, const char *key, char *const *environ,
		   const struct record_entry *e, size_t count);
/*
 * Decode a record.  With key != NULL, a record for another key is
 * refused.  On success *ents is a malloc'd array of *count entries (each a
 * well-formed cmdid, read set and environment; free with record_free),
 * *environ (if not NULL) make's environment as recorded (malloc'd,
 * strv_free it), and 0 is returned; otherwise -1 with one reason appended
 * to err (lib/err.h), and nothing to free.
 */
int record_decode(const void *p, size_t n, const char *key, char ***environ,
		  struct record_entry **ents, size_t *count, struct buf *err);
void record_free(struct record_entry *ents, size_t count);

#endif
