/*
 * frame.h - the framing layer of the protocol (proto.h has the messages
 * a frame carries; PROTOCOL.md is the normative description).
 *
 * Framing: every frame is a 16-byte header of two native-endian int64_t,
 * job id then payload length, followed by `length` payload bytes.
 *   id  > 0   a job frame (JOB, STARTED, RESULT, CANCEL for that job)
 *   id == 0   a control frame (HELLO, STATS, ERROR, WORKERS...)
 *   id == -1  shutdown; payload length must be 0
 *   id < -1   malformed
 * A payload longer than PROTO_MAX_PAYLOAD, or a negative length, is
 * malformed.
 *
 * Nothing here blocks except frame_write_all() and frame_read_one();
 * nothing calls exit().  A malformed stream kills its decoder, whose
 * `err` then holds one reason (err.h); only that failure allocates it.
 * Single-threaded per object.
 */
#ifndef ASYNC_FRAME_H
#define ASYNC_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"

#define PROTO_ID_CONTROL 0
#define PROTO_ID_SHUTDOWN (-1)
#define PROTO_HEADER_SIZE 16
/* Two capped output streams of at most 256 MiB each plus fields. */
#define PROTO_MAX_PAYLOAD ((int64_t)520 << 20)

/* ---- incremental frame decoder (pure; this is what the fuzzer drives) ---- */

enum frame_status {
	FRAME_ERROR = -1, /* malformed input; `err` says why; decoder is dead */
	FRAME_MORE = 0,   /* all input consumed, no complete frame yet */
	FRAME_READY = 1,  /* a frame is complete: id/payload/len are valid */
};

struct frame_decoder {
	unsigned char hdr[PROTO_HEADER_SIZE];
	size_t hdr_got;
	int64_t id;
	int64_t len;         /* payload length of the frame being read */
	struct buf payload;  /* grows as bytes arrive, never by `len` at once */
	int ready;           /* a complete frame is held until frame_next() */
	int64_t max_len;     /* 0: PROTO_MAX_PAYLOAD; set after init to take less */
	struct buf err;     /* why it died; frame_decoder_release() frees it */
};

void frame_decoder_init(struct frame_decoder *d);
void frame_decoder_release(struct frame_decoder *d);
/*
 * Feed n bytes.  *used is set to how many were consumed.  Stops after one
 * complete frame (returns FRAME_READY; the rest of the input is not
 * consumed).  The frame stays valid until frame_next(), which must be called
 * before feeding more.
 */
int frame_feed(struct frame_decoder *d, const void *p, size_t n, size_t *used);
void frame_next(struct frame_decoder *d);
/*
 * At EOF on the stream: 0 when cleanly between frames, otherwise -1 with
 * `err` describing the truncation.
 */
int frame_eof(struct frame_decoder *d);

/* ---- output ---- */

/* Append one whole frame (header + payload) to `out`. */
void frame_put(struct buf *out, int64_t id, const void *payload, size_t len);
/* Append a frame's header alone: the caller appends its len payload bytes next. */
void frame_put_head(struct buf *out, int64_t id, size_t len);
/*
 * The one output queue for a non-blocking descriptor (plugin, pool,
 * supervisor): frame_put() into `buf`, frame_outq_flush() when poll says
 * POLLOUT.  The sent prefix is dropped only once it is most of the
 * buffer, so draining a 20 MiB result through a 64 KiB pipe stays
 * linear.  A zeroed struct is an empty queue; the owner releases it.
 */
struct frame_outq {
	struct buf buf;
	size_t off; /* bytes of buf already written */
};

static inline size_t frame_outq_pending(const struct frame_outq *q)
{
	return q->buf.len - q->off;
}
/*
 * Write what the fd takes: 0 (maybe with data left: poll for POLLOUT), or
 * -1 with errno (EPIPE when the peer is gone; the data stays queued).
 */
int frame_outq_flush(int fd, struct frame_outq *q);
/* Drop everything queued and free the storage. */
void frame_outq_release(struct frame_outq *q);
/*
 * Send one frame through q: with nothing queued before it, write(2) it
 * from `payload` at once and queue only what fd did not take (a payload
 * the pipe takes whole is never copied); else queue it behind the rest
 * and flush.  0, or -1 with errno as frame_outq_flush() (what was not
 * written stays queued).
 */
int frame_outq_send(int fd, struct frame_outq *q, int64_t id, const void *payload, size_t len);
/* ---- reading a descriptor (every role's one read loop) ---- */

/*
 * Called with each complete frame, in order.  Return 0 to go on (the
 * frame is then released with frame_next()), non-zero to stop: frame_read()
 * returns FRAME_R_STOP at once and does not touch the decoder again, which
 * the handler may have reset or released.  Bytes read after a stop are
 * dropped: a handler stops only when the stream no longer matters.
 */
typedef int frame_fn(void *ctx, struct frame_decoder *d);

enum frame_read_status {
	FRAME_R_AGAIN, /* nothing to read now (EAGAIN, EINTR): poll again */
	FRAME_R_OK,    /* bytes read, every complete frame handled */
	FRAME_R_STOP,  /* the handler returned non-zero */
	FRAME_R_EOF,   /* end of stream, cleanly between frames */
	FRAME_R_BAD,   /* malformed or truncated stream: d->err says why */
	FRAME_R_ERRNO, /* read(2) failed: errno */
};

/* The most one frame_read() reads. */
#define FRAME_READ_MAX ((size_t)64 << 10)

/* flags of frame_read() */
#define FRAME_READ_ONE 1 /* read no further than the end of the current frame */

/*
 * The one read of a non-blocking descriptor: one read(2) of at most 64 KiB
 * into the decoder, then fn for each frame that completes.  With
 * FRAME_READ_ONE whatever follows the current frame stays in the pipe, and
 * fn may be NULL: a completed frame is then left ready for the caller.
 * *nread (may be NULL) gets the bytes read.
 */
int frame_read(int fd, struct frame_decoder *d, unsigned flags, frame_fn *fn, void *ctx,
	       size_t *nread);

/* Blocking write of one frame, for simple clients and tests. */
int frame_write_all(int fd, int64_t id, const void *payload, size_t len);
/*
 * Blocking read of one frame into d (for simple clients and tests).
 * Returns 1 on a frame, 0 on clean EOF, -1 on error (d->err or errno).
 */
int frame_read_one(int fd, struct frame_decoder *d);

#endif
