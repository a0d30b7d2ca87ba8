/*
 * proto.c - frame codec, field primitives and message encoders/decoders.
 * PROTOCOL.md is the normative wire description; proto.h the C manual.
 */
#include "proto.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* A NULL string on the wire: a length no real payload can have. */
#define STR_NULL UINT64_MAX
/* Cap on strings in one vector; far beyond any argv or environment. */
#define STRV_MAX ((uint32_t)1 << 20)
/*
 * A payload buffer bigger than this is given back to malloc between frames,
 * so one huge result does not pin its memory for the connection's life.
 */
#define DECODER_KEEP ((size_t)1 << 20)
/* Largest single read() of frame_read_one(). */
#define READ_CHUNK ((size_t)64 << 10)

/* ---- frame decoder ---- */

void frame_decoder_init(struct frame_decoder *d)
{
	memset(d, 0, sizeof *d);
}

void frame_decoder_release(struct frame_decoder *d)
{
	buf_release(&d->payload);
	memset(d, 0, sizeof *d);
}

/* The decoder is dead once `err` holds a message. */
static int frame_failed(const struct frame_decoder *d)
{
	return d->err[0] != 0;
}

__attribute__((format(printf, 2, 3)))
static int frame_fail(struct frame_decoder *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->err, sizeof d->err, fmt, ap);
	va_end(ap);
	if (!d->err[0])
		snprintf(d->err, sizeof d->err, "frame error");
	d->ready = 0;
	return FRAME_ERROR;
}

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
	if (len > PROTO_MAX_PAYLOAD)
		return frame_fail(d, "frame header: payload length %" PRId64
				  " exceeds the maximum %" PRId64, len,
				  PROTO_MAX_PAYLOAD);
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

void frame_put(struct buf *out, int64_t id, const void *payload, size_t len)
{
	unsigned char hdr[PROTO_HEADER_SIZE];

	frame_header(hdr, id, len);
	buf_grow(out, sizeof hdr + len);
	buf_add(out, hdr, sizeof hdr);
	buf_add(out, payload, len);
}

int frame_flush(int fd, struct buf *out)
{
	size_t done = 0;
	ssize_t n;
	int ret = 0;

	while (done < out->len) {
		n = write(fd, out->data + done, out->len - done);
		if (n > 0) {
			done += (size_t)n;
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
	if (done) {
		int saved = errno;

		buf_consume(out, done);
		errno = saved;
	}
	return ret;
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

/*
 * Reads never go past the end of the current frame, so whatever follows
 * it stays in the pipe for the next call (or for another reader).
 */
int frame_read_one(int fd, struct frame_decoder *d)
{
	unsigned char tmp[READ_CHUNK];
	size_t want, used;
	ssize_t n;
	int r;

	if (d->ready)
		frame_next(d);
	for (;;) {
		if (frame_failed(d)) {
			errno = EPROTO;
			return -1;
		}
		if (d->hdr_got < PROTO_HEADER_SIZE)
			want = PROTO_HEADER_SIZE - d->hdr_got;
		else
			want = (size_t)d->len - d->payload.len;
		if (want > sizeof tmp)
			want = sizeof tmp;
		n = want ? read(fd, tmp, want) : 0;
		if (n < 0) {
			int saved = errno;

			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				if (proto_wait(fd, POLLIN) < 0)
					return -1;
				continue;
			}
			frame_fail(d, "read: %s", strerror(saved));
			errno = saved;
			return -1;
		}
		if (n == 0 && want) {
			if (frame_eof(d) < 0) {
				errno = EPROTO;
				return -1;
			}
			return 0;
		}
		r = frame_feed(d, tmp, (size_t)n, &used);
		if (r == FRAME_READY)
			return 1;
		if (r == FRAME_ERROR) {
			errno = EPROTO;
			return -1;
		}
	}
}

/* ---- field primitives ---- */

void put_u8(struct buf *b, uint8_t v)
{
	buf_add(b, &v, sizeof v);
}

void put_u32(struct buf *b, uint32_t v)
{
	buf_add(b, &v, sizeof v);
}

void put_i64(struct buf *b, int64_t v)
{
	buf_add(b, &v, sizeof v);
}

static void put_u64(struct buf *b, uint64_t v)
{
	buf_add(b, &v, sizeof v);
}

void put_bytes(struct buf *b, const void *p, size_t n)
{
	put_u64(b, n);
	if (n)
		buf_add(b, p, n);
}

void put_str(struct buf *b, const char *s)
{
	if (!s) {
		put_u64(b, STR_NULL);
		return;
	}
	put_bytes(b, s, strlen(s));
}

void put_strv(struct buf *b, char *const *v)
{
	uint32_t n = 0;

	while (v && v[n])
		n++;
	put_u32(b, n);
	for (uint32_t i = 0; i < n; i++)
		put_str(b, v[i]);
}

void reader_init(struct reader *r, const void *p, size_t n)
{
	r->p = p;
	r->left = n;
	r->failed = 0;
}

static int reader_take(struct reader *r, void *out, size_t n)
{
	if (r->failed || r->left < n) {
		r->failed = 1;
		memset(out, 0, n);
		return -1;
	}
	memcpy(out, r->p, n);
	r->p += n;
	r->left -= n;
	return 0;
}

uint8_t get_u8(struct reader *r)
{
	uint8_t v;

	reader_take(r, &v, sizeof v);
	return v;
}

uint32_t get_u32(struct reader *r)
{
	uint32_t v;

	reader_take(r, &v, sizeof v);
	return v;
}

int64_t get_i64(struct reader *r)
{
	int64_t v;

	reader_take(r, &v, sizeof v);
	return v;
}

static uint64_t get_u64(struct reader *r)
{
	uint64_t v;

	reader_take(r, &v, sizeof v);
	return v;
}

const void *get_bytes(struct reader *r, size_t *n)
{
	uint64_t len = get_u64(r);
	const void *p;

	*n = 0;
	if (r->failed)
		return NULL;
	if (len > r->left) {
		r->failed = 1;
		return NULL;
	}
	p = r->p;
	r->p += len;
	r->left -= len;
	*n = (size_t)len;
	return p;
}

char *get_str(struct reader *r)
{
	uint64_t len = get_u64(r);
	char *s;

	if (r->failed || len == STR_NULL)
		return NULL;
	/* An embedded NUL would silently shorten the string: reject it. */
	if (len > r->left || memchr(r->p, 0, (size_t)len)) {
		r->failed = 1;
		return NULL;
	}
	s = malloc((size_t)len + 1);
	if (!s) {
		r->failed = 1;
		return NULL;
	}
	memcpy(s, r->p, (size_t)len);
	s[len] = 0;
	r->p += len;
	r->left -= len;
	return s;
}

char **get_strv(struct reader *r)
{
	uint32_t n = get_u32(r);
	char **v;

	if (r->failed)
		return NULL;
	/* Each string costs at least its 8-byte length on the wire. */
	if (n > STRV_MAX || n > r->left / 8) {
		r->failed = 1;
		return NULL;
	}
	v = calloc((size_t)n + 1, sizeof *v);
	if (!v) {
		r->failed = 1;
		return NULL;
	}
	for (uint32_t i = 0; i < n; i++) {
		v[i] = get_str(r);
		if (!v[i]) {
			/* NULL cannot live inside a NULL-terminated vector. */
			r->failed = 1;
			strv_free(v);
			return NULL;
		}
	}
	return v;
}

void strv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

/* ---- messages ---- */

int msg_type(const void *payload, size_t len)
{
	if (!len)
		return -1;
	return *(const unsigned char *)payload;
}

static int msg_fail(const char **why, const char *reason)
{
	if (why)
		*why = reason;
	return -1;
}

/*
 * Common epilogue of every decoder: a short field or bytes left over mean
 * the peer and we disagree about the layout, which is fatal.
 */
static const char *msg_finish(const struct reader *r, const char *short_why,
			      const char *trailing_why)
{
	if (r->failed)
		return short_why;
	if (r->left)
		return trailing_why;
	return NULL;
}

void msg_put_hello(struct buf *out, const struct hello_msg *m)
{
	put_u8(out, MSG_HELLO);
	put_u32(out, m->version);
	put_u32(out, m->workers);
	put_u32(out, (uint32_t)m->pid);
}

int msg_get_hello(const void *p, size_t n, struct hello_msg *m, const char **why)
{
	struct reader r;
	const char *bad;

	memset(m, 0, sizeof *m);
	if (msg_type(p, n) != MSG_HELLO)
		return msg_fail(why, "HELLO: wrong message type");
	reader_init(&r, p, n);
	get_u8(&r);
	m->version = get_u32(&r);
	m->workers = get_u32(&r);
	m->pid = (int32_t)get_u32(&r);
	bad = msg_finish(&r, "HELLO: message too short",
			 "HELLO: trailing bytes after the message");
	if (bad) {
		memset(m, 0, sizeof *m);
		return msg_fail(why, bad);
	}
	return 0;
}

void msg_put_job(struct buf *out, const struct job_msg *m)
{
	put_u8(out, MSG_JOB);
	put_str(out, m->shell);
	put_strv(out, m->shellflags);
	put_str(out, m->command);
	put_str(out, m->cwd);
	put_strv(out, m->env);
	put_u8(out, m->has_input ? 1 : 0);
	if (m->has_input)
		put_bytes(out, m->input, m->input_len);
	else
		put_bytes(out, NULL, 0);
	put_i64(out, m->timeout_ms);
	put_i64(out, m->kill_grace_ms);
	put_i64(out, m->max_output);
	put_u32(out, m->retries);
}

static const char *job_check(struct reader *r, const struct job_msg *m,
			     uint8_t has_input)
{
	const char *bad = msg_finish(r, "JOB: message too short or malformed field",
				     "JOB: trailing bytes after the message");

	if (bad)
		return bad;
	if (!m->shell)
		return "JOB: shell is missing";
	if (!m->command)
		return "JOB: command is missing";
	if (!m->cwd)
		return "JOB: working directory is missing";
	if (has_input > 1)
		return "JOB: has_input is neither 0 nor 1";
	if (!has_input && m->input_len)
		return "JOB: input bytes without has_input";
	if (m->timeout_ms < 0)
		return "JOB: negative timeout";
	if (m->kill_grace_ms < 0)
		return "JOB: negative kill grace";
	if (m->max_output < 0 || m->max_output > PROTO_MAX_OUTPUT)
		return "JOB: max_output out of range";
	return NULL;
}

int msg_get_job(const void *p, size_t n, struct job_msg *m, const char **why)
{
	struct reader r;
	const void *input;
	const char *bad;
	uint8_t has_input;

	memset(m, 0, sizeof *m);
	if (msg_type(p, n) != MSG_JOB)
		return msg_fail(why, "JOB: wrong message type");
	reader_init(&r, p, n);
	get_u8(&r);
	m->shell = get_str(&r);
	m->shellflags = get_strv(&r);
	m->command = get_str(&r);
	m->cwd = get_str(&r);
	m->env = get_strv(&r);
	has_input = get_u8(&r);
	input = get_bytes(&r, &m->input_len);
	m->timeout_ms = get_i64(&r);
	m->kill_grace_ms = get_i64(&r);
	m->max_output = get_i64(&r);
	m->retries = get_u32(&r);
	bad = job_check(&r, m, has_input);
	if (bad) {
		job_msg_release(m);
		return msg_fail(why, bad);
	}
	if (has_input) {
		m->input = malloc(m->input_len ? m->input_len : 1);
		if (!m->input) {
			job_msg_release(m);
			return msg_fail(why, "JOB: out of memory");
		}
		if (m->input_len)
			memcpy(m->input, input, m->input_len);
		m->has_input = 1;
	}
	return 0;
}

void job_msg_release(struct job_msg *m)
{
	free(m->shell);
	strv_free(m->shellflags);
	free(m->command);
	free(m->cwd);
	strv_free(m->env);
	free(m->input);
	memset(m, 0, sizeof *m);
}

void msg_put_started(struct buf *out, const struct started_msg *m)
{
	put_u8(out, MSG_STARTED);
	put_u32(out, (uint32_t)m->pid);
	put_u32(out, (uint32_t)m->worker);
}

int msg_get_started(const void *p, size_t n, struct started_msg *m, const char **why)
{
	struct reader r;
	const char *bad;

	memset(m, 0, sizeof *m);
	if (msg_type(p, n) != MSG_STARTED)
		return msg_fail(why, "STARTED: wrong message type");
	reader_init(&r, p, n);
	get_u8(&r);
	m->pid = (int32_t)get_u32(&r);
	m->worker = (int32_t)get_u32(&r);
	bad = msg_finish(&r, "STARTED: message too short",
			 "STARTED: trailing bytes after the message");
	/* The pid is used as kill(-pid): 0 or negative would hit the wrong group. */
	if (!bad && m->pid <= 0)
		bad = "STARTED: pid is not positive";
	if (bad) {
		memset(m, 0, sizeof *m);
		return msg_fail(why, bad);
	}
	return 0;
}

#define RES_KNOWN_FLAGS (RES_TIMED_OUT | RES_CRASHED | RES_TRUNCATED | \
			 RES_SPAWN_FAILED | RES_CANCELLED)

void msg_put_result(struct buf *out, const struct result_msg *m)
{
	put_u8(out, MSG_RESULT);
	put_u32(out, (uint32_t)m->status);
	put_u32(out, m->flags);
	put_bytes(out, m->out.data, m->out.len);
	put_bytes(out, m->err.data, m->err.len);
	put_i64(out, m->start_ns);
	put_i64(out, m->end_ns);
	put_i64(out, m->utime_us);
	put_i64(out, m->stime_us);
	put_i64(out, m->maxrss_kb);
	put_u32(out, (uint32_t)m->worker);
	put_u32(out, m->attempts);
}

int msg_get_result(const void *p, size_t n, struct result_msg *m, const char **why)
{
	struct reader r;
	const void *out, *err;
	size_t out_len, err_len;
	const char *bad;

	memset(m, 0, sizeof *m);
	if (msg_type(p, n) != MSG_RESULT)
		return msg_fail(why, "RESULT: wrong message type");
	reader_init(&r, p, n);
	get_u8(&r);
	m->status = (int32_t)get_u32(&r);
	m->flags = get_u32(&r);
	out = get_bytes(&r, &out_len);
	err = get_bytes(&r, &err_len);
	m->start_ns = get_i64(&r);
	m->end_ns = get_i64(&r);
	m->utime_us = get_i64(&r);
	m->stime_us = get_i64(&r);
	m->maxrss_kb = get_i64(&r);
	m->worker = (int32_t)get_u32(&r);
	m->attempts = get_u32(&r);
	bad = msg_finish(&r, "RESULT: message too short or malformed field",
			 "RESULT: trailing bytes after the message");
	if (!bad && (m->flags & ~(uint32_t)RES_KNOWN_FLAGS))
		bad = "RESULT: unknown flag bits";
	if (bad) {
		memset(m, 0, sizeof *m);
		return msg_fail(why, bad);
	}
	/* Always allocated, so out.data/err.data are usable as C strings. */
	buf_add(&m->out, out, out_len);
	buf_add(&m->err, err, err_len);
	return 0;
}

void result_msg_release(struct result_msg *m)
{
	buf_release(&m->out);
	buf_release(&m->err);
	memset(m, 0, sizeof *m);
}

int64_t proto_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
