/*
 * The job table: see jobtab.h.
 */
#include <stdlib.h>
#include <string.h>

#include "plugin/jobtab.h"

/* FNV-1a: names are short, and a wait looks each one up once */
static unsigned jobtab_hash(const char *s)
{
	unsigned h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h % JOBTAB_HASH;
}

void jobtab_add(struct jobtab *t, struct job *j)
{
	unsigned h = jobtab_hash(j->name);

	j->hnext = t->hash[h];
	t->hash[h] = j;
	j->prev_all = t->tail;
	j->next_all = NULL;
	if (t->tail)
		t->tail->next_all = j;
	else
		t->head = j;
	t->tail = j;
	if ((size_t)j->id >= t->capbyid) {
		size_t cap = t->capbyid ? t->capbyid * 2 : 1024;
		while (cap <= (size_t)j->id)
			cap *= 2;
		struct job **n = realloc(t->byid, cap * sizeof *n);
		if (!n)
			abort();
		memset(n + t->capbyid, 0, (cap - t->capbyid) * sizeof *n);
		t->byid = n;
		t->capbyid = cap;
	}
	t->byid[j->id] = j;
}

void jobtab_unlink(struct jobtab *t, struct job *j)
{
	struct job **pp = &t->hash[jobtab_hash(j->name)];

	while (*pp && *pp != j)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = j->hnext;
	if (j->prev_all)
		j->prev_all->next_all = j->next_all;
	else
		t->head = j->next_all;
	if (j->next_all)
		j->next_all->prev_all = j->prev_all;
	else
		t->tail = j->prev_all;
	j->prev_all = j->next_all = j->hnext = NULL;
}

void jobtab_drop_id(struct jobtab *t, int64_t id)
{
	if (id > 0 && (size_t)id < t->capbyid)
		t->byid[id] = NULL;
}

struct job *jobtab_find(const struct jobtab *t, const char *name)
{
	struct job *j;

	for (j = t->hash[jobtab_hash(name)]; j; j = j->hnext)
		if (!strcmp(j->name, name))
			break;
	return j;
}

struct job *jobtab_by_id(const struct jobtab *t, int64_t id)
{
	return id > 0 && (size_t)id < t->capbyid ? t->byid[id] : NULL;
}

size_t jobtab_count(const struct jobtab *t)
{
	size_t n = 0;

	for (struct job *j = t->head; j; j = j->next_all)
		n++;
	return n;
}
