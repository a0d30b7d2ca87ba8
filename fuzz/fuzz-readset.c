/*
 * fuzz-readset.c - libFuzzer target for the two readers of what a traced
 * command leaves: the trace log (written by the command's own processes,
 * so as hostile as they are) and the encoded read set (read back from the
 * record and the cache, and from a RESULT).
 *
 * The input is taken as a log: whatever it holds, the read set built from
 * it must decode.  Then as an encoded read set: if it decodes, checking
 * it against the file system must end without a fault.
 */
#include <stdint.h>
#include <stdlib.h>

#include "lib/readset.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf rs = BUF_INIT, why = BUF_INIT;
	int verdict;

	readset_build(data, size, 1, 0, 0, &rs);
	if (readset_decode(rs.data, rs.len, &verdict, NULL) < 0)
		abort(); /* what we encode, we decode */
	buf_release(&rs);
	if (readset_decode(data, size, &verdict, &why) == 0)
		readset_check(data, size, 0, &why);
	else if (!why.len)
		abort(); /* a refusal says why */
	buf_release(&why);
	return 0;
}
