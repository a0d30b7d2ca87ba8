/*
 * fuzz-syscan.c - libFuzzer target for lib/syscan.c's two readers of
 * untrusted bytes: an ELF object a traced command mapped (any file the
 * command could write), and a cached result read back from the store.
 * The first byte picks the reader (even: the object, odd: the entry);
 * neither may fault, and an entry that decodes must say RAW or CLEAN.
 */
#include <stdint.h>
#include <stdlib.h>

#include "lib/syscan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tl_event id = { .dev = 1 };
	struct buf why = BUF_INIT;
	int result;

	if (!size)
		return 0;
	if (!(data[0] & 1)) {
		if (syscan_image(data + 1, size - 1, &why) == SYSCAN_RAW && !why.len)
			abort(); /* a raw verdict says why */
	} else if (syscan_entry_decode(data + 1, size - 1, &id, &result, &why) == 0 &&
		   result != SYSCAN_RAW && result != SYSCAN_CLEAN) {
		abort();
	}
	buf_release(&why);
	return 0;
}
