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
	struct job_head jh;
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
	if (msg_get_job_head(p, n, &jh, &why) == 0) {
		/* the head reads what the whole decode reads, when that succeeds */
		if (msg_get_job(p, n, &j, NULL) == 0) {
			if (j.retries != jh.retries || j.timeout_ms != jh.timeout_ms)
				abort();
			msg_job_release(&j);
		}
	} else if (!why.len || jh.retries || jh.timeout_ms) {
		abort();
	}
	buf_reset(&why);
	if (msg_get_result(p, n, &r, &why) == 0) {
		struct result_head rh = { 1, 2, 3 };
		struct buf as = BUF_INIT;

		if (!r.out.data || !r.err.data)
			abort();
		msg_result_release(&r);
		/* checking accepts exactly what decoding accepts; a new head keeps it valid */
		if (msg_check_result(p, n, &why) < 0)
			abort();
		msg_put_result_as(&as, &rh, p, n);
		if (as.len != n || memcmp(as.data + MSG_RESULT_HEAD, p + MSG_RESULT_HEAD, n - MSG_RESULT_HEAD) ||
		    msg_get_result(as.data, as.len, &r, &why) < 0 ||
		    r.worker != 1 || r.attempts != 2 || r.running != 3)
			abort();
		msg_result_release(&r);
		buf_release(&as);
	} else if (r.out.data || r.err.data) {
		abort();
	} else if (msg_check_result(p, n, NULL) == 0) {
		abort(); /* it would pass on bytes decoding rejects */
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
