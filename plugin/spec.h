/*
 * spec.h - async-shell's speculation: the commands one run asked for
 * while it read its makefiles are recorded, with their read sets, in the
 * per-user store under a key naming the makefiles, goals and
 * command-line variables; the next run with that key queues, at load and
 * within -jN, those whose recorded run was pure and whose read set still
 * holds.  Make's thread only.
 *
 * A command's identity is record.h's cmdid as a buffer (id) and its
 * store_hash (h).
 */
#ifndef ASYNC_SPEC_H
#define ASYNC_SPEC_H

#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"
#include "plugin/job.h"

/* At load: read the record for this run and queue what it lists. */
void spec_start(void);
/*
 * The pool runs only what speculation started (no make function has
 * queued a job yet): cancel it and return 1, so that the configuration
 * may still change (the pool is then restarted with it); else 0.
 */
int spec_drop(void);
/*
 * The makefiles have been read: cancel speculated jobs nobody asked for
 * and write this run's record.  Idempotent.
 */
void spec_end(void);
/* The speculated job for this identity, now the caller's; NULL if none. */
struct job *spec_take(const struct buf *id, uint64_t h);
/*
 * A taken job's answer, if it still is the answer for a call whose
 * environment digest is env (waiting for it if it still runs); else it
 * is freed and NULL returned.
 */
struct job *spec_answer(struct job *j, uint64_t env);
/*
 * Remember that the makefiles asked for id, with what its answer
 * depended on (rs, empty if not traced) and the call's environment:
 * seen is what the last call for id returned (0 the first time); returns
 * the value to pass next time.  Does nothing once the makefiles are read.
 */
size_t spec_note(size_t seen, const struct buf *id, const struct buf *rs, char **envp);

struct spec_stats {
	unsigned long speculated, hits, unused, unproven, rejected;
};
void spec_stats(struct spec_stats *st);

#endif
