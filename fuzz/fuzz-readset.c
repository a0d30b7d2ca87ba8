/*
 * fuzz-readset.c - libFuzzer target for the two readers of what a traced
 * command leaves: the trace log (written by the command's own processes,
 * so as hostile as they are) and the encoded read set (read back from the
 * record and the cache, and from a RESULT).
 *
 * The input is taken as a log: whatever it holds, the read set built from
 * it must decode.  Then as a shared log (lib/tracelog.h, struct tl_shm):
 * its header, then the events, read as the runner reads them (lib/run.c:
 * the header checked against a log of the size it says, then head bytes
 * of events, however they were left: torn, overflowed).  Then as an
 * encoded read set: if it decodes, checking it against the file system
 * must end without a fault.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "answer/readset_check.h"
#include "lib/readset.h"
#include "lib/tracelog.h"

/* The read set of `size` bytes of events: it must decode. */
static void build(const uint8_t *data, size_t size)
{
	struct buf rs = BUF_INIT;
	int verdict;

	readset_build(data, size, 1, 0, 0, &rs);
	if (readset_decode(rs.data, rs.len, &verdict, NULL) < 0)
		abort(); /* what we encode, we decode */
	buf_release(&rs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf why = BUF_INIT;
	struct tl_shm h;
	int verdict;

	build(data, size);
	if (size >= sizeof h) {
		const char *bad;

		memcpy(&h, data, sizeof h);
		bad = tl_shm_check(&h, TL_SHM_DATA + h.cap);
		if (!bad && h.head > h.cap)
			abort(); /* an overflow is never taken for a log */
		/* the runner reads head bytes, or finds the log too short */
		if (!bad && h.head <= size - sizeof h)
			build(data + sizeof h, (size_t)h.head);
	}
	if (readset_decode(data, size, &verdict, &why) == 0)
		readset_check(data, size, 0, &why);
	else if (!why.len)
		abort(); /* a refusal says why */
	buf_release(&why);
	return 0;
}
