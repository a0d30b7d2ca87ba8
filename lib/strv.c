/* NULL-terminated string vectors: see strv.h. */
#include <stdlib.h>

#include "lib/strv.h"

void strv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}
