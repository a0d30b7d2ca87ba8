/*
 * fuzz-collect.c - drive the recipe waits' decoders (lib/msg_collect.h)
 * with arbitrary bytes, as both ends of the channel decode them: frames
 * cut at every offset (frames.h: the first input byte picks the chunk
 * size), then COLLECT (the plugin's side), STEP, PROGRESS and ERROR
 * (the collector's side) on every payload, and the collector's argument
 * parser on the raw input.  Seeds: fuzz/corpus/collect, written by
 * `t/unit/test-collect.t --write-corpus fuzz/corpus/collect`.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/msg_collect.h"
#include "frames.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_payload(const unsigned char *p, size_t n)
{
	struct collect_msg c;
	struct step_msg s;
	struct progress_msg pm;
	struct buf why = BUF_INIT; /* reset before each decoder: none inherits a reason */
	const char *text;
	int len;

	if (msg_get_collect(p, n, &c, &why) == 0) {
		/* what the plugin looks a wait up by is as documented */
		if (c.wait <= 0 || strlen(c.cookie) != COLLECT_COOKIE_HEX)
			abort();
	} else if (!why.len) {
		abort();
	}
	buf_reset(&why);
	if (msg_get_step(p, n, &s, &why) == 0) {
		if (!s.name || !s.command || !s.res.out.data || !s.res.err.data)
			abort();
		msg_step_release(&s);
	} else if (!why.len || s.name || s.command || s.res.out.data) {
		abort();
	}
	buf_reset(&why);
	if (msg_get_progress(p, n, &pm, &why) == 0) {
		/* what the collector draws from it adds up */
		if (!pm.oldest || pm.done > pm.total || pm.running > pm.total - pm.done)
			abort();
		free(pm.oldest);
	} else if (!why.len || pm.oldest) {
		abort();
	}
	buf_release(&why);
	if (msg_get_text(p, n, MSG_ERROR, &text, &len) == 0 && (len < 0 || (size_t)len >= n))
		abort();
}

static void fuzz_arg(const uint8_t *data, size_t size)
{
	struct collect_msg c;
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = 0;
	if (msg_collect_parse_arg(s, &c) == 0 &&
	    (c.wait <= 0 || strlen(c.cookie) != COLLECT_COOKIE_HEX || c.version != PROTO_VERSION))
		abort();
	free(s);
}

static void fuzz_frame(struct frame_decoder *d)
{
	fuzz_payload(d->payload.data, d->payload.len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct frame_decoder d;

	if (size < 1)
		return 0;
	fuzz_arg(data, size);
	frame_decoder_init(&d);
	fuzz_frames(&d, data, size, fuzz_frame);
	frame_decoder_release(&d);
	return 0;
}
