/*
 * fuzz-stats.c - libFuzzer target for the store's stats file decoder
 * (answer/stats.h): a file anyone who writes to the store may have shaped.
 *
 * Beyond "no crash, no leak, no UB": a refused file leaves all zeros, and
 * an accepted one encodes to a canonical file that decodes to the same
 * counts and encodes again to the same bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "answer/stats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct stats zero;
	struct stats st, again;
	struct buf one = BUF_INIT, two = BUF_INIT, why = BUF_INIT;

	if (stats_decode(data, size, &st, &why) < 0) {
		if (memcmp(&st, &zero, sizeof st) || !why.len)
			abort(); /* refused: zeros, and a reason */
		buf_release(&why);
		return 0;
	}
	stats_encode(&st, &one);
	if (one.len > STATS_MAX_FILE || stats_decode(one.data, one.len, &again, NULL) < 0 ||
	    memcmp(&st, &again, sizeof st))
		abort();
	stats_encode(&again, &two);
	if (one.len != two.len || memcmp(one.data, two.data, one.len))
		abort();
	buf_release(&one);
	buf_release(&two);
	return 0;
}
