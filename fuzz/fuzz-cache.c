/*
 * fuzz-cache.c - libFuzzer target for the answer cache's entry decoder,
 * the reader of files that answer for commands.
 *
 * As fuzz-record.c: the input is decoded as it is and with a correct
 * checksum in its last 8 bytes.  An accepted entry must encode back to the
 * same bytes, and must never carry a status the cache does not keep.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "answer/cache.h"
#include "fixsum.h"
#include "lib/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_one(const uint8_t *p, size_t n)
{
	struct cache_answer a;
	struct buf key = BUF_INIT, again = BUF_INIT;
	int64_t created;
	struct wire_reader r;
	const void *k;
	size_t klen;

	if (cache_entry_decode(p, n, NULL, &created, &a) < 0)
		return;
	if (!cache_cacheable(a.status, 0))
		abort();
	wire_reader_init(&r, p + 8 + 4, n - 8 - 4);
	k = wire_get_bytes(&r, &klen);
	if (!k)
		abort();
	buf_add(&key, k, klen);
	cache_entry_encode(&again, &key, created, a.status, a.run_ns, &a.out, &a.err, &a.readset);
	if (again.len != n || memcmp(again.data, p, n))
		abort(); /* one encoding per entry */
	cache_answer_release(&a);
	if (cache_entry_decode(p, n, &key, &created, &a) < 0)
		abort(); /* accepted for its own key */
	cache_answer_release(&a);
	buf_release(&key);
	buf_release(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_fixsum(data, size, fuzz_one);
	return 0;
}
