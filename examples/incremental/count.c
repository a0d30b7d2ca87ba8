#include "count.h"
#include "util.h"
#include <ctype.h>

size_t count_letters(const char *s)
{
	size_t n = util_trimmed_len(s), letters = 0;

	for (size_t i = 0; i < n; i++)
		if (isalpha((unsigned char)s[i]))
			letters++;
	return letters;
}
