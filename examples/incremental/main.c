#include "count.h"
#include "greet.h"
#include <stdio.h>

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "world  ";

	greet(name);
	printf("%zu letters\n", count_letters(name));
	return 0;
}
