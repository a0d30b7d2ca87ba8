/*
 * fuzz-record.c - libFuzzer target for the async-shell record decoder, the
 * reader of a file that makes the plugin run commands.
 *
 * The input is decoded twice: as it is (the checksum then rejects almost
 * everything), and with its last 8 bytes replaced by the right checksum,
 * so the structure behind the checksum is reached.  Beyond "no crash, no
 * leak, no UB" it checks that an accepted record lists only well-formed
 * command identities and encodes back to exactly the same bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "answer/record.h"
#include "fixsum.h"
#include "lib/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_one(const uint8_t *p, size_t n)
{
	struct record_entry *ids;
	char **made;
	struct buf again = BUF_INIT;
	size_t count;
	struct buf why = BUF_INIT;
	struct wire_reader r;
	char *key;

	if (record_decode(p, n, NULL, &made, &ids, &count, &why) < 0) {
		if (!why.len)
			abort(); /* a refusal says why */
		buf_release(&why);
		return;
	}
	for (size_t i = 0; i < count; i++) {
		struct cmdid id;
		if (cmdid_get(ids[i].id.data, ids[i].id.len, &id) < 0)
			abort(); /* decode promised well-formed entries */
		cmdid_release(&id);
	}
	wire_reader_init(&r, p + 8 + 4, n - 8 - 4);
	key = wire_get_str(&r);
	if (!key)
		abort();
	record_encode(&again, key, made, ids, count);
	strv_free(made);
	if (again.len != n || memcmp(again.data, p, n))
		abort(); /* one encoding per record */
	record_free(ids, count);
	/* and it is accepted for its own key */
	if (record_decode(p, n, key, NULL, &ids, &count, NULL) < 0)
		abort();
	record_free(ids, count);
	free(key);
	buf_release(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_fixsum(data, size, fuzz_one);
	return 0;
}
