#include "greet.h"
#include "util.h"
#include <stdio.h>

void greet(const char *name)
{
	printf("hello, %.*s\n", (int)util_trimmed_len(name), name);
}
