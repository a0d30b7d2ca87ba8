#include <stdio.h>

#include "wordstat.h"

void report_counts(const char *name, const struct counts *c)
{
	printf("%s: %zu lines, %zu words, %zu bytes, longest word %zu letters\n",
	       name, c->lines, c->words, c->bytes, c->longest);
}

void report_top(const struct freq_entry *e, size_t n, size_t top)
{
	if (n > top)
		n = top;
	printf("top %zu words:", n);
	for (size_t i = 0; i < n; i++)
		printf(" %s(%zu)", e[i].word, e[i].n);
	putchar('\n');
}
