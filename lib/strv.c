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

static size_t strv_name_len(const char *e)
{
	const char *eq = strchr(e, '=');

	return eq ? (size_t)(eq - e) : strlen(e);
}

/* The first variable of a that b lacks or has with another value. */
static const char *strv_env_missing(char *const *a, char *const *b, size_t *len)
{
	for (size_t i = 0; a && a[i]; i++) {
		size_t n = strv_name_len(a[i]);
		size_t k = 0;

		while (b && b[k] && (strv_name_len(b[k]) != n || memcmp(a[i], b[k], n)))
			k++;
		if (!b || !b[k] || strcmp(a[i], b[k])) {
			*len = n;
			return a[i];
		}
	}
	return NULL;
}

const char *strv_env_differs(char *const *a, char *const *b, size_t *len)
{
	const char *d = strv_env_missing(a, b, len);

	return d ? d : strv_env_missing(b, a, len);
}
