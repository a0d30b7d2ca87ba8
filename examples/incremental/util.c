#include "util.h"
#include <string.h>

size_t util_trimmed_len(const char *s)
{
	size_t n = strlen(s);

	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	return n;
}
