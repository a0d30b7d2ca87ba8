#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "wordstat.h"

/* Open addressing; the table doubles when it is half full, so probes
 * stay short. */
struct freq {
	struct freq_entry *slot;
	size_t cap;
	size_t used;
};

static size_t freq_hash(const char *s, size_t len)
{
	size_t h = 2166136261u;	/* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

struct freq *freq_new(void)
{
	struct freq *f = calloc(1, sizeof *f);

	if (!f)
		return NULL;
	f->cap = 64;
	f->slot = calloc(f->cap, sizeof *f->slot);
	if (!f->slot) {
		free(f);
		return NULL;
	}
	return f;
}

void freq_free(struct freq *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->cap; i++)
		free((char *)f->slot[i].word);
	free(f->slot);
	free(f);
}

static struct freq_entry *freq_find(struct freq_entry *slot, size_t cap,
				    const char *w, size_t len)
{
	size_t i = freq_hash(w, len) & (cap - 1);

	while (slot[i].word && (strlen(slot[i].word) != len || memcmp(slot[i].word, w, len)))
		i = (i + 1) & (cap - 1);
	return &slot[i];
}

static int freq_grow(struct freq *f)
{
	size_t cap = f->cap * 2;
	struct freq_entry *slot = calloc(cap, sizeof *slot);

	if (!slot)
		return -1;
	for (size_t i = 0; i < f->cap; i++) {
		const char *w = f->slot[i].word;
		if (w)
			*freq_find(slot, cap, w, strlen(w)) = f->slot[i];
	}
	free(f->slot);
	f->slot = slot;
	f->cap = cap;
	return 0;
}

static int freq_add(struct freq *f, const char *w, size_t len)
{
	struct freq_entry *e;
	char *copy;

	if (2 * (f->used + 1) > f->cap && freq_grow(f) < 0)
		return -1;
	e = freq_find(f->slot, f->cap, w, len);
	if (!e->word) {
		if (!(copy = malloc(len + 1)))
			return -1;
		memcpy(copy, w, len);
		copy[len] = 0;
		e->word = copy;
		f->used++;
	}
	e->n++;
	return 0;
}

int freq_add_words(struct freq *f, const char *buf, size_t len)
{
	char word[64];
	size_t n = 0;

	/* one extra round with i == len flushes the last word */
	for (size_t i = 0; i <= len; i++) {
		if (i < len && count_is_word_char(buf[i])) {
			if (n < sizeof word)	/* longer words are cut */
				word[n++] = (char)tolower((unsigned char)buf[i]);
		} else if (n) {
			if (freq_add(f, word, n) < 0)
				return -1;
			n = 0;
		}
	}
	return 0;
}

static int freq_cmp(const void *a, const void *b)
{
	const struct freq_entry *x = a, *y = b;

	if (x->n != y->n)
		return x->n < y->n ? 1 : -1;
	return strcmp(x->word, y->word);
}

struct freq_entry *freq_sorted(const struct freq *f, size_t *n)
{
	struct freq_entry *v;
	size_t k = 0;

	*n = 0;
	if (!f->used || !(v = malloc(f->used * sizeof *v)))
		return NULL;
	for (size_t i = 0; i < f->cap; i++)
		if (f->slot[i].word)
			v[k++] = f->slot[i];
	qsort(v, k, sizeof *v, freq_cmp);
	*n = k;
	return v;
}
