/*
 * output.h - turning captured output into make words and shell words.
 */
#ifndef ASYNC_OUTPUT_H
#define ASYNC_OUTPUT_H

#include <stddef.h>

#include "lib/buf.h"
#include "lib/proto.h"

/* $(shell)-style folding of captured output (malloc'd). */
char *output_fold(const void *p, size_t n);
/* Single-quote a word for /bin/sh if it needs it (appended to b). */
void output_shell_quote(struct buf *b, const char *word);
/* A build step's stdout and stderr to make's, in the order it wrote them. */
void output_print_result(const struct result_msg *r);

#endif
