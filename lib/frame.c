/*
 * frame.c - the framing layer: the incremental decoder and frame output.
 * PROTOCOL.md is the normative wire description; frame.h the C manual.
 */
#include "lib/frame.h"
#include "lib/err.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/*
 * A payload buffer bigger than this is given back to malloc between frames,
 * so one huge result does not pin its memory for the connection's life.
 */
#define DECODER_KEEP ((size_t)1 << 20)

/* ---- frame decoder ---- */

void frame_decoder_init(struct frame_decoder *d)
{
	memset(d, 0, sizeof *d);
}

void frame_decoder_release(struct frame_decoder *d)
{
	buf_release(&d->payload);
	buf_release(&d->err);
	memset(d, 0, sizeof *d);
}

/* The decoder is dead once `err` holds a message. */
static int frame_failed(const struct frame_decoder *d)
{
	return d->err.len != 0;
}

/* The decoder dies: no frame is ready, `err` says why. */
static int frame_unready(struct frame_decoder *d)
{
	d->ready = 0;
	return FRAME_ERROR;
}
#define frame_fail(d, ...) (err_fail(&(d)->err, __VA_ARGS__), frame_unready(d))

static int frame_check_header(struct frame_decoder *d)
{
	int64_t id, len;

	memcpy(&id, d->hdr, sizeof id);
	memcpy(&len, d->hdr + sizeof id, sizeof len);
	d->id = id;
	d->len = len;
	if (len < 0)
		return frame_fail(d, "frame header: payload length %" PRId64
				  " is negative", len);
	if (len > (d->max_len ? d->max_len : PROTO_MAX_PAYLOAD))
		return frame_fail(d, "frame header: payload length %" PRId64
				  " exceeds the maximum %" PRId64, len,
				  d->max_len ? d->max_len : PROTO_MAX_PAYLOAD);
	if (id < PROTO_ID_SHUTDOWN)
		return frame_fail(d, "frame header: job id %" PRId64
				  " is invalid (below -1)", id);
	if (id == PROTO_ID_SHUTDOWN && len != 0)
		return frame_fail(d, "frame header: shutdown frame carries %"
				  PRId64 " payload bytes", len);
	return FRAME_MORE;
}

int frame_feed(struct frame_decoder *d, const void *p, size_t n, size_t *used)
{
	const unsigned char *in = p;
	size_t off = 0, take;

	*used = 0;
	if (frame_failed(d))
		return FRAME_ERROR;
	if (d->ready)
		return FRAME_READY;
	if (d->hdr_got < PROTO_HEADER_SIZE) {
		take = PROTO_HEADER_SIZE - d->hdr_got;
		if (take > n)
			take = n;
		if (take)
			memcpy(d->hdr + d->hdr_got, in, take);
		d->hdr_got += take;
		off = take;
		*used = off;
		if (d->hdr_got < PROTO_HEADER_SIZE)
			return FRAME_MORE;
		if (frame_check_header(d) == FRAME_ERROR)
			return FRAME_ERROR;
	}
	/* Only what has arrived is stored: a hostile length costs nothing. */
	take = (size_t)d->len - d->payload.len;
	if (take > n - off)
		take = n - off;
	if (take)
		buf_add(&d->payload, in + off, take);
	off += take;
	*used = off;
	if (d->payload.len < (size_t)d->len)
		return FRAME_MORE;
	d->ready = 1;
	return FRAME_READY;
}

void frame_next(struct frame_decoder *d)
{
	if (frame_failed(d))
		return;
	if (d->payload.cap > DECODER_KEEP)
		buf_release(&d->payload);
	else
		buf_reset(&d->payload);
	d->hdr_got = 0;
	d->id = 0;
	d->len = 0;
	d->ready = 0;
}

int frame_eof(struct frame_decoder *d)
{
	if (frame_failed(d))
		return -1;
	if (d->ready || d->hdr_got == 0)
		return 0;
	if (d->hdr_got < PROTO_HEADER_SIZE)
		frame_fail(d, "truncated frame: got %zu of %d header bytes",
			   d->hdr_got, PROTO_HEADER_SIZE);
	else
		frame_fail(d, "truncated frame: got %zu of %" PRId64
			   " payload bytes for job %" PRId64,
			   d->payload.len, d->len, d->id);
	return -1;
}

/* ---- output ---- */

static void frame_header(unsigned char hdr[PROTO_HEADER_SIZE], int64_t id,
			 size_t len)
{
	int64_t l = (int64_t)len;

	memcpy(hdr, &id, sizeof id);
	memcpy(hdr + sizeof id, &l, sizeof l);
}

void frame_put_head(struct buf *out, int64_t id, size_t len)
{
	unsigned char hdr[PROTO_HEADER_SIZE];

	frame_header(hdr, id, len);
	buf_grow(out, sizeof hdr + len);
	buf_add(out, hdr, sizeof hdr);
}

void frame_put(struct buf *out, int64_t id, const void *payload, size_t len)
{
	frame_put_head(out, id, len);
	buf_add(out, payload, len);
}

int frame_outq_flush(int fd, struct frame_outq *q)
{
	int ret = 0;

	while (q->off < q->buf.len) {
		ssize_t n = write(fd, q->buf.data + q->off, q->buf.len - q->off);

		if (n > 0) {
			q->off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n == 0)
			errno = EIO;
		ret = -1;
		break;
	}
	if (q->off == q->buf.len) {
		buf_reset(&q->buf);
		q->off = 0;
	} else if (q->off > q->buf.len / 2) {
		int saved = errno;

		buf_consume(&q->buf, q->off);
		q->off = 0;
		errno = saved;
	}
	return ret;
}

void frame_outq_release(struct frame_outq *q)
{
	buf_release(&q->buf);
	q->off = 0;
}

int frame_outq_send(int fd, struct frame_outq *q, int64_t id, const void *payload, size_t len)
{
	unsigned char hdr[PROTO_HEADER_SIZE];
	struct iovec iov[2] = { { hdr, sizeof hdr }, { (void *)payload, len } };
	size_t done = 0;
	ssize_t n;
	int saved;

	if (frame_outq_pending(q)) {
		frame_put(&q->buf, id, payload, len);
		return frame_outq_flush(fd, q);
	}
	frame_header(hdr, id, len);
	do
		n = writev(fd, iov, len ? 2 : 1);
	while (n < 0 && errno == EINTR);
	saved = errno;
	if (n > 0)
		done = (size_t)n;
	if (done < sizeof hdr) {
		buf_add(&q->buf, hdr + done, sizeof hdr - done);
		done = 0;
	} else {
		done -= sizeof hdr;
	}
	if (len > done)
		buf_add(&q->buf, (const unsigned char *)payload + done, len - done);
	errno = saved;
	return n < 0 && errno != EAGAIN && errno != EWOULDBLOCK ? -1 : 0;
}

/* Wait until fd is ready for `events`; used when a "blocking" call meets
 * a descriptor somebody made non-blocking. */
static int proto_wait(int fd, short events)
{
	struct pollfd pfd = { .fd = fd, .events = events };

	for (;;) {
		int r = poll(&pfd, 1, -1);

		if (r >= 0)
			return 0;
		if (errno != EINTR)
			return -1;
	}
}

int frame_write_all(int fd, int64_t id, const void *payload, size_t len)
{
	unsigned char hdr[PROTO_HEADER_SIZE];
	struct iovec iov[2];
	int i = 0, cnt = 2;

	if (len > (size_t)PROTO_MAX_PAYLOAD) {
		errno = EMSGSIZE;
		return -1;
	}
	if (!payload && len) {
		errno = EINVAL;
		return -1;
	}
	frame_header(hdr, id, len);
	iov[0].iov_base = hdr;
	iov[0].iov_len = sizeof hdr;
	iov[1].iov_base = (void *)payload;
	iov[1].iov_len = len;
	while (i < cnt) {
		ssize_t n = writev(fd, iov + i, cnt - i);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				if (proto_wait(fd, POLLOUT) < 0)
					return -1;
				continue;
			}
			return -1;
		}
		if (n == 0) {
			errno = EIO;
			return -1;
		}
		while (i < cnt && (size_t)n >= iov[i].iov_len) {
			n -= (ssize_t)iov[i].iov_len;
			i++;
		}
		if (i < cnt) {
			iov[i].iov_base = (char *)iov[i].iov_base + n;
			iov[i].iov_len -= (size_t)n;
		}
	}
	return 0;
}

/* Bytes up to the end of the current frame (0 once it is complete). */
static size_t frame_want(const struct frame_decoder *d)
{
	if (d->hdr_got < PROTO_HEADER_SIZE)
		return PROTO_HEADER_SIZE - d->hdr_got;
	return (size_t)d->len - d->payload.len;
}

int frame_read(int fd, struct frame_decoder *d, unsigned flags, frame_fn *fn, void *ctx,
	       size_t *nread)
{
	unsigned char tmp[FRAME_READ_MAX];
	size_t want = sizeof tmp, off = 0, used;
	ssize_t n;

	if (nread)
		*nread = 0;
	if (frame_failed(d))
		return FRAME_R_BAD;
	if (flags & FRAME_READ_ONE) {
		want = frame_want(d);
		if (want > sizeof tmp)
			want = sizeof tmp;
	}
	n = want ? read(fd, tmp, want) : 0;
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ?
			FRAME_R_AGAIN : FRAME_R_ERRNO;
	if (n == 0 && want)
		return frame_eof(d) < 0 ? FRAME_R_BAD : FRAME_R_EOF;
	if (nread)
		*nread = (size_t)n;
	do {
		int r = frame_feed(d, tmp + off, (size_t)n - off, &used);

		off += used;
		if (r == FRAME_ERROR)
			return FRAME_R_BAD;
		if (r == FRAME_MORE || !fn)
			break;
		if (fn(ctx, d))
			return FRAME_R_STOP;
		frame_next(d);
	} while (off < (size_t)n);
	return FRAME_R_OK;
}

/*
 * Reads never go past the end of the current frame, so whatever follows
 * it stays in the pipe for the next call (or for another reader).
 */
int frame_read_one(int fd, struct frame_decoder *d)
{
	if (d->ready)
		frame_next(d);
	for (;;) {
		switch (frame_read(fd, d, FRAME_READ_ONE, NULL, NULL, NULL)) {
		case FRAME_R_OK:
			if (d->ready)
				return 1;
			break;
		case FRAME_R_AGAIN:
			if (errno == EINTR)
				break;
			if (proto_wait(fd, POLLIN) < 0)
				return -1;
			break;
		case FRAME_R_EOF:
			return 0;
		case FRAME_R_ERRNO:
			if (!frame_failed(d)) {
				int saved = errno;

				frame_fail(d, "read:");
				errno = saved;
			}
			return -1;
		default: /* FRAME_R_BAD */
			errno = EPROTO;
			return -1;
		}
	}
}
