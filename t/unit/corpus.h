/*
 * corpus.h - the seed corpora of fuzz/ are written by the unit tests
 * that know the encoders (`test-proto.t --write-corpus DIR` and
 * test-collect.t's): one file per seed, its first byte the fuzzer's
 * chunking seed, then the stream.  Exits 1 when the file cannot be
 * written (a test program's edge).
 */
#ifndef ASYNC_T_CORPUS_H
#define ASYNC_T_CORPUS_H

#include <stdio.h>
#include <stdlib.h>

#include "lib/buf.h"

static void corpus_file(const char *dir, const char *name, unsigned char chunk,
			const struct buf *stream)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	f = fopen(path, "wbe");
	if (!f) {
		perror(path);
		exit(1);
	}
	fputc(chunk, f);
	fwrite(stream->data, 1, stream->len, f);
	fclose(f);
}

#endif
