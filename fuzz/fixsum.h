/*
 * fixsum.h - for fuzz targets whose format ends in an FNV-1a 64 checksum
 * of everything before it (the async-shell record, cache entries): run
 * the decoder on the input as it is, then with the right checksum in its
 * last 8 bytes, so the fuzzer reaches the structure behind the checksum.
 */
#ifndef ASYNC_FUZZ_FIXSUM_H
#define ASYNC_FUZZ_FIXSUM_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/store.h"

static inline void fuzz_fixsum(const uint8_t *data, size_t size,
			       void (*one)(const uint8_t *, size_t))
{
	uint8_t *fixed;
	uint64_t sum;

	one(data, size);
	if (size < 16)
		return;
	fixed = malloc(size);
	if (!fixed)
		abort();
	memcpy(fixed, data, size);
	sum = store_hash(fixed, size - 8, STORE_HASH_INIT);
	memcpy(fixed + size - 8, &sum, 8);
	one(fixed, size);
	free(fixed);
}

#endif
