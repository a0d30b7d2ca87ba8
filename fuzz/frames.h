/*
 * frames.h - for fuzz targets whose input is a stream of frames
 * (lib/proto.h): the first input byte picks how the rest is cut into
 * chunks (0: all at once; otherwise a size varying per feed), so frame
 * boundaries land at every offset of a feed.  `ready` gets the decoder
 * at every complete frame; the decoder is the caller's, initialised,
 * and left as the stream or its first error left it.
 */
#ifndef ASYNC_FUZZ_FRAMES_H
#define ASYNC_FUZZ_FRAMES_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "lib/proto.h"

static inline void fuzz_frames(struct frame_decoder *d, const uint8_t *data, size_t size,
			       void (*ready)(struct frame_decoder *))
{
	size_t off = 1, step, used;
	unsigned seed;

	if (size < 1)
		return;
	seed = data[0];
	while (off < size) {
		int r;

		step = seed ? 1 + (seed + off) % (seed + 1u) : size - off;
		if (step > size - off)
			step = size - off;
		r = frame_feed(d, data + off, step, &used);
		if (used > step)
			abort();
		off += used;
		if (r == FRAME_ERROR) {
			if (!d->err.len)
				abort();
			break;
		}
		if (r == FRAME_READY) {
			ready(d);
			frame_next(d);
		}
	}
}

#endif
