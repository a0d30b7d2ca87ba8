/* count.h - counting letters. */
#ifndef COUNT_H
#define COUNT_H
#include <stddef.h>

/* How many letters s has, trailing blanks left out. */
size_t count_letters(const char *s);

#endif
