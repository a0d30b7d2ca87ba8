/* NULL-terminated string vectors: see strv.h. */
#include <stdlib.h>
#include <string.h>

#include "lib/strv.h"

void strv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

char **strv_dup(char *const *v)
{
	size_t n = 0;
	char **d;

	while (v && v[n])
		n++;
	d = malloc((n + 1) * sizeof *d);
	if (!d)
		abort();
	for (size_t i = 0; i < n; i++)
		if (!(d[i] = strdup(v[i])))
			abort();
	d[n] = NULL;
	return d;
}
