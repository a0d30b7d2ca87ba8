/*
 * output.h - turning captured output into make words and shell words.
 */
#ifndef ASYNC_OUTPUT_H
#define ASYNC_OUTPUT_H

#include <stddef.h>

#include "../worker/buf.h"

/* $(shell)-style folding of captured output (malloc'd). */
char *output_fold(const void *p, size_t n);
/* Single-quote a word for /bin/sh if it needs it (appended to b). */
void output_shell_quote(struct buf *b, const char *word);

#endif
