/*
 * spec.h - async-shell's speculation: the commands one run asked for
 * while it read its makefiles are recorded, with their read sets, in the
 * per-user store under a key naming the makefiles, goals and
 * command-line variables; the next run with that key queues, at load and
 * within -jN, those whose recorded run was pure and whose read set still
 * holds.  Make's thread only.
 *
 * A command's identity is answer/cmdid.h's cmdid as a buffer (id) and
 * its store_hash (h); the record's format is answer/record.h.
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
/*
 * The speculated job for this identity, now the caller's, with the
 * environment it was started with (*envp, also the caller's, for
 * spec_answer) and that environment's digest (*env); NULL if none.  A
 * job the cache answered at load comes filled (j->cached).
 */
struct job *spec_take(const struct buf *id, uint64_t h, char ***envp, uint64_t *env);
/*
 * A taken job's answer, if it still is the answer for a call whose
 * environment is call (digest env; ran_env is ran's, from spec_take),
 * waiting for it if it still runs.
 * Else the job is cancelled or freed, NULL returned, and with
 * ASYNC_COMPILE_DEBUG the debug line names a variable by which ran (the
 * job's environment, freed here) and call differ, if that was why.
 */
struct job *spec_answer(struct job *j, char **ran, uint64_t ran_env, char **call, uint64_t env);
/*
 * Remember that the makefiles asked for id, with what its answer
 * depended on (rs, empty if not traced) and the call's environment:
 * seen is what the last call for id returned (0 the first time); returns
 * the value to pass next time.  Does nothing once the makefiles are read.
 */
size_t spec_note(size_t seen, const struct buf *id, const struct buf *rs, char **envp);

struct spec_stats {
	unsigned long speculated, hits, unused, unproven, rejected;
	unsigned long cached; /* calls answered by a cache entry found at load */
};
void spec_stats(struct spec_stats *st);

#endif
