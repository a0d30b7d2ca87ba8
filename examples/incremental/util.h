/* util.h - helpers greet.c and count.c share. */
#ifndef UTIL_H
#define UTIL_H
#include <stddef.h>

/* The length of s without trailing blanks. */
size_t util_trimmed_len(const char *s);

#endif
