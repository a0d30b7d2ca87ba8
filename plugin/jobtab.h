/*
 * jobtab.h - the engine's table of jobs not yet waited for: by name (for
 * $(async-wait NAME) and duplicate names), by id (for the pool's
 * STARTED/RESULT messages) and in submission order (for a bare
 * $(async-wait)).
 *
 * The table links jobs through their hnext/prev_all/next_all fields and
 * owns none of them.  Not thread-safe: the engine calls it with
 * the_engine.lock held.  Out of memory aborts: the plugin cannot report a
 * job it has lost.
 */
#ifndef ASYNC_JOBTAB_H
#define ASYNC_JOBTAB_H

#include <stddef.h>
#include <stdint.h>

#include "plugin/job.h"

#define JOBTAB_HASH 4096

struct jobtab {
	struct job *hash[JOBTAB_HASH];
	struct job **byid;      /* indexed by id; ids are small and dense */
	size_t capbyid;
	struct job *head, *tail; /* in submission order */
};

/* Add j (its id and name set) under its name, its id and at the tail. */
void jobtab_add(struct jobtab *t, struct job *j);
/* Out of the name hash and the list; still found by id (a running
 * cancelled job's RESULT must find it). */
void jobtab_unlink(struct jobtab *t, struct job *j);
/* No longer found by id either. */
void jobtab_drop_id(struct jobtab *t, int64_t id);
struct job *jobtab_find(const struct jobtab *t, const char *name);
/* NULL for an id never given or already dropped. */
struct job *jobtab_by_id(const struct jobtab *t, int64_t id);
/* Jobs in the list. */
size_t jobtab_count(const struct jobtab *t);

#endif
