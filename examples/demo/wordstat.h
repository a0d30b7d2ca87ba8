/* wordstat - count lines, words and bytes of text files and list the
 * most frequent words.  The demo program for asynccompile: small, but a
 * real program split over a few files so that there is something to
 * compile in parallel. */
#ifndef WORDSTAT_H
#define WORDSTAT_H

#include <stddef.h>

struct counts {
	size_t lines;
	size_t words;
	size_t bytes;
	size_t longest;		/* length of the longest word */
};

/* Adds the lines, words and bytes of buf[0..len) to c.  A word is a run
 * of letters, digits and apostrophes; everything else separates words. */
void count_buffer(struct counts *c, const char *buf, size_t len);
int count_is_word_char(int ch);

struct freq;

struct freq_entry {
	const char *word;
	size_t n;
};

/* A table of word frequencies; words are folded to lower case. */
struct freq *freq_new(void);
void freq_free(struct freq *f);
/* Returns -1 when out of memory. */
int freq_add_words(struct freq *f, const char *buf, size_t len);
/* The distinct words, most frequent first, ties in alphabetical order.
 * *n receives the count; the array is the caller's to free (the words
 * still belong to f).  NULL with *n == 0 when f is empty or out of memory. */
struct freq_entry *freq_sorted(const struct freq *f, size_t *n);

/* Prints the summary for one input (name) and the top words. */
void report_counts(const char *name, const struct counts *c);
void report_top(const struct freq_entry *e, size_t n, size_t top);

#endif
