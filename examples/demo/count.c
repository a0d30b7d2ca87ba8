#include <ctype.h>

#include "wordstat.h"

int count_is_word_char(int ch)
{
	return isalnum((unsigned char)ch) || ch == '\'';
}

void count_buffer(struct counts *c, const char *buf, size_t len)
{
	size_t run = 0;

	for (size_t i = 0; i < len; i++) {
		if (buf[i] == '\n')
			c->lines++;
		if (count_is_word_char(buf[i])) {
			if (!run++)
				c->words++;
		} else {
			run = 0;
		}
		if (run > c->longest)
			c->longest = run;
	}
	c->bytes += len;
}
