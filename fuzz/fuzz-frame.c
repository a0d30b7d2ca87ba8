/*
 * fuzz-frame.c - drive the frame decoder, every message decoder and the
 * dispatch by type (lib/msgtab.h) with arbitrary bytes, cut into chunks
 * as frames.h says.  Seeds come
 * from `t/unit/test-proto.t --write-corpus fuzz/corpus/frame`.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/msgtab.h"
#include "lib/proto.h"
#include "frames.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Decoding must not care whether the bytes were a valid message. */
static void fuzz_messages(const unsigned char *p, size_t n)
{
	struct buf why = BUF_INIT; /* reset before each check of a reason */
	struct hello_msg h;
	struct job_msg j;
	struct started_msg s;
	struct result_msg r;
	uint32_t w;

	if (msg_get_hello(p, n, &h, &why) < 0 && !why.len)
		abort();
	buf_reset(&why);
	if (msg_get_job(p, n, &j, &why) == 0) {
		/* A decoded job is usable as documented. */
		if (!j.shell || !j.command || !j.cwd || !j.shellflags || !j.env)
			abort();
		if (j.has_input && !j.input)
			abort();
		msg_job_release(&j);
	} else if (!why.len || j.shell || j.env || j.input) {
		abort();
	}
	if (msg_get_started(p, n, &s, &why) == 0 && s.pid <= 0)
		abort();
	buf_reset(&why);
	if (msg_get_workers(p, n, &w, &why) == 0 ? w < 1 || w > PROTO_MAX_WORKERS : !why.len || w)
		abort();
	if (msg_get_result(p, n, &r, &why) == 0) {
		int ok_before = 1;

		if (!r.out.data || !r.err.data)
			abort();
		msg_result_release(&r);
		/* restamping accepts exactly what decoding accepts, and keeps it valid */
		if (n <= 1 << 20) {
			unsigned char *copy = malloc(n);

			if (!copy)
				abort();
			memcpy(copy, p, n);
			if (msg_restamp_result(copy, n, 1, 2, 3, &why) < 0 ||
			    memcmp(copy, p, n - 12) ||
			    msg_get_result(copy, n, &r, &why) < 0 ||
			    r.worker != 1 || r.attempts != 2 || r.running != 3)
				ok_before = 0;
			msg_result_release(&r);
			free(copy);
		}
		if (!ok_before)
			abort();
	} else if (r.out.data || r.err.data) {
		abort();
	} else if (msg_restamp_result((void *)p, n, 1, 2, 3, &why) == 0) {
		abort(); /* it would have written into bytes decoding rejects */
	}
	buf_release(&why);
}

/* A role's table (lib/msgtab.h): some types on some ids. */
static int fuzz_route(void *ctx, const struct msg_in *m)
{
	int want = m->id > 0 ? MSG_JOB : m->id == 0 ? MSG_STATS : -2;

	if (ctx || msg_type(m->p, m->n) != want || m->type != want ||
	    m->text != (const char *)m->p + 1 || (size_t)m->text_len != m->n - 1)
		abort(); /* only JOB on a job id and STATS on id 0 come here */
	return 3;
}

static const struct msg_route fuzz_routes[] = {
	{ MSG_JOB, MSG_ON_JOB, fuzz_route },
	{ MSG_STATS, MSG_ON_CONTROL, fuzz_route },
};
static const struct msg_table fuzz_table = MSG_TABLE("fuzzer", fuzz_routes);

/* Every frame is handled or the one error, whatever its bytes. */
static void fuzz_dispatch(const struct frame_decoder *d)
{
	struct buf why = BUF_INIT;
	int r = msg_dispatch(&fuzz_table, NULL, d->id, d->payload.data, d->payload.len, &why);

	if (r == -1 ? !why.len || strncmp((char *)why.data, "unexpected message ", 19) : r != 3 || why.len)
		abort();
	buf_release(&why);
}

/* every frame as the decoder hands it over, then its messages */
static void fuzz_frame(struct frame_decoder *d)
{
	if (d->payload.len != (size_t)d->len || d->id < -1 || (d->id == -1 && d->len))
		abort();
	fuzz_messages(d->payload.data, d->payload.len);
	fuzz_dispatch(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct frame_decoder d;

	if (size < 1)
		return 0;
	frame_decoder_init(&d);
	fuzz_frames(&d, data, size, fuzz_frame);
	if (frame_eof(&d) < 0 && !d.err.len)
		abort();
	frame_decoder_release(&d);
	return 0;
}
