/*
 * proto.c - field primitives and the message encoders/decoders.
 * PROTOCOL.md is the normative wire description; proto.h the C manual.
 * Framing (header, decoder, output) is in frame.c.
 *
 * Just over 600 lines because it holds one encoder and one decoder per
 * message, in PROTOCOL.md's order, so the spec and the code can be read
 * side by side; splitting by message would hide the shared primitives.
 */
#include "lib/proto.h"
#include "lib/err.h"
#include "lib/readset.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A NULL string on the wire: a length no real payload can have. */
#define STR_NULL UINT64_MAX
/* Cap on strings in one vector; far beyond any argv or environment. */
#define STRV_MAX ((uint32_t)1 << 20)

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

void msg_put_text(struct buf *out, uint8_t type, const char *text)
{
	put_u8(out, type);
	buf_addstr(out, text);
}

int msg_get_text(const void *p, size_t n, uint8_t type, const char **text, int *len)
{
	if (msg_type(p, n) != type)
		return -1;
	*text = (const char *)p + 1;
	*len = n - 1 > (size_t)INT32_MAX ? INT32_MAX : (int)(n - 1);
	return 0;
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

int msg_get_hello(const void *p, size_t n, struct hello_msg *m, struct buf *err)
{
	struct reader r;
	const char *bad;

	memset(m, 0, sizeof *m);
	if (msg_type(p, n) != MSG_HELLO)
		return err_fail(err, "HELLO: wrong message type");
	reader_init(&r, p, n);
	get_u8(&r);
	m->version = get_u32(&r);
	m->workers = get_u32(&r);
	m->pid = (int32_t)get_u32(&r);
	bad = msg_finish(&r, "HELLO: message too short",
			 "HELLO: trailing bytes after the message");
	if (bad) {
		memset(m, 0, sizeof *m);
		return err_fail(err, "%s", bad);
	}
	return 0;
}

void msg_put_workers(struct buf *out, uint32_t workers)
{
	put_u8(out, MSG_WORKERS);
	put_u32(out, workers);
}

int msg_get_workers(const void *p, size_t n, uint32_t *workers, struct buf *err)
{
	struct reader r;
	const char *bad;

	*workers = 0;
	if (msg_type(p, n) != MSG_WORKERS)
		return err_fail(err, "WORKERS: wrong message type");
	reader_init(&r, p, n);
	get_u8(&r);
	*workers = get_u32(&r);
	bad = msg_finish(&r, "WORKERS: message too short",
			 "WORKERS: trailing bytes after the message");
	if (!bad && (*workers < 1 || *workers > PROTO_MAX_WORKERS))
		bad = "WORKERS: workers out of range";
	if (bad) {
		*workers = 0;
		return err_fail(err, "%s", bad);
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
	put_strv(out, m->fds);
	put_u8(out, m->kill_daemons);
	put_str(out, m->tracer);
	put_u8(out, m->env_full);
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
	if (m->timeout_ms > PROTO_MAX_TIMEOUT_MS)
		return "JOB: timeout out of range";
	if (m->kill_grace_ms < 0)
		return "JOB: negative kill grace";
	if (m->kill_grace_ms > PROTO_MAX_TIMEOUT_MS)
		return "JOB: kill grace out of range";
	if (m->max_output < 0 || m->max_output > PROTO_MAX_OUTPUT)
		return "JOB: max_output out of range";
	if (m->kill_daemons > 1)
		return "JOB: kill_daemons is neither 0 nor 1";
	if (m->env_full > 1)
		return "JOB: env_full is neither 0 nor 1";
	if (m->tracer && m->tracer[0] != '/')
		return "JOB: the tracer is not an absolute path";
	for (char **f = m->fds; f && *f; f++) {
		char *end;
		long fd = strtol(*f, &end, 10);

		if (end == *f || fd < 3 || fd > 1023 || (*end != '<' && *end != '>') ||
		    end[1] != '/')
			return "JOB: a descriptor entry is not N<PATH or N>PATH with 3 <= N < 1024";
	}
	return NULL;
}

int msg_get_job(const void *p, size_t n, struct job_msg *m, struct buf *err)
{
	struct reader r;
	const void *input;
	const char *bad;
	uint8_t has_input;

	memset(m, 0, sizeof *m);
	if (msg_type(p, n) != MSG_JOB)
		return err_fail(err, "JOB: wrong message type");
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
	m->fds = get_strv(&r);
	m->kill_daemons = get_u8(&r);
	m->tracer = get_str(&r);
	m->env_full = get_u8(&r);
	bad = job_check(&r, m, has_input);
	if (bad) {
		job_msg_release(m);
		return err_fail(err, "%s", bad);
	}
	if (has_input) {
		m->input = malloc(m->input_len ? m->input_len : 1);
		if (!m->input) {
			job_msg_release(m);
			return err_fail(err, "JOB: out of memory");
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
	strv_free(m->fds);
	free(m->input);
	free(m->tracer);
	memset(m, 0, sizeof *m);
}

void msg_put_started(struct buf *out, const struct started_msg *m)
{
	put_u8(out, MSG_STARTED);
	put_u32(out, (uint32_t)m->pid);
	put_u32(out, (uint32_t)m->worker);
	put_u32(out, m->running);
}

int msg_get_started(const void *p, size_t n, struct started_msg *m, struct buf *err)
{
	struct reader r;
	const char *bad;

	memset(m, 0, sizeof *m);
	if (msg_type(p, n) != MSG_STARTED)
		return err_fail(err, "STARTED: wrong message type");
	reader_init(&r, p, n);
	get_u8(&r);
	m->pid = (int32_t)get_u32(&r);
	m->worker = (int32_t)get_u32(&r);
	m->running = get_u32(&r);
	bad = msg_finish(&r, "STARTED: message too short",
			 "STARTED: trailing bytes after the message");
	/* The pid is used as kill(-pid): 0 or negative would hit the wrong group. */
	if (!bad && m->pid <= 0)
		bad = "STARTED: pid is not positive";
	if (bad) {
		memset(m, 0, sizeof *m);
		return err_fail(err, "%s", bad);
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
	put_bytes(out, m->order.data, m->order.len);
	put_bytes(out, m->readset.data, m->readset.len);
	put_u32(out, (uint32_t)m->worker);
	put_u32(out, m->attempts);
	put_u32(out, m->running);
}

void result_order_add(struct buf *order, int stream, size_t n)
{
	uint32_t len;

	while (n) {
		size_t last = order->len >= 5 ? order->len - 5 : 0;

		if (order->len >= 5 && order->data[last] == stream) {
			memcpy(&len, order->data + last + 1, 4);
			if (len < UINT32_MAX) {
				size_t add = n < (size_t)(UINT32_MAX - len) ? n : UINT32_MAX - len;

				len = (uint32_t)(len + add);
				memcpy(order->data + last + 1, &len, 4);
				n -= add;
				continue;
			}
		}
		buf_addch(order, (unsigned char)stream);
		len = 0;
		buf_add(order, &len, 4);
	}
}

/* Runs well formed and within the streams they describe? */
static const char *result_order_check(const unsigned char *o, size_t n, size_t out_len,
				      size_t err_len)
{
	uint64_t sum[3] = { 0, 0, 0 };
	uint32_t len;

	if (n % 5)
		return "RESULT: order is not a whole number of runs";
	for (size_t i = 0; i < n; i += 5) {
		if (o[i] != RES_OUT && o[i] != RES_ERR)
			return "RESULT: order names an unknown stream";
		memcpy(&len, o + i + 1, 4);
		sum[o[i]] += len;
	}
	if (sum[RES_OUT] > out_len || sum[RES_ERR] > err_len)
		return "RESULT: order covers more than the output";
	return NULL;
}

/* Decode all but the two streams, which are left pointing into p. */
static int result_parse(const void *p, size_t n, struct result_msg *m, const void **out,
			size_t *out_len, const void **errs, size_t *errs_len,
			const void **ord, size_t *ord_len, const void **rs, size_t *rs_len,
			struct buf *err)
{
	struct reader r;
	const char *bad;
	int verdict;

	memset(m, 0, sizeof *m);
	if (msg_type(p, n) != MSG_RESULT)
		return err_fail(err, "RESULT: wrong message type");
	reader_init(&r, p, n);
	get_u8(&r);
	m->status = (int32_t)get_u32(&r);
	m->flags = get_u32(&r);
	*out = get_bytes(&r, out_len);
	*errs = get_bytes(&r, errs_len);
	m->start_ns = get_i64(&r);
	m->end_ns = get_i64(&r);
	m->utime_us = get_i64(&r);
	m->stime_us = get_i64(&r);
	m->maxrss_kb = get_i64(&r);
	*ord = get_bytes(&r, ord_len);
	*rs = get_bytes(&r, rs_len);
	m->worker = (int32_t)get_u32(&r);
	m->attempts = get_u32(&r);
	m->running = get_u32(&r);
	bad = msg_finish(&r, "RESULT: message too short or malformed field",
			 "RESULT: trailing bytes after the message");
	if (!bad && (m->flags & ~(uint32_t)RES_KNOWN_FLAGS))
		bad = "RESULT: unknown flag bits";
	if (!bad)
		bad = result_order_check(*ord, *ord_len, *out_len, *errs_len);
	if (!bad && *rs_len && readset_decode(*rs, *rs_len, &verdict, NULL) < 0)
		bad = "RESULT: a malformed read set";
	if (bad) {
		memset(m, 0, sizeof *m);
		return err_fail(err, "%s", bad);
	}
	return 0;
}

int msg_get_result(const void *p, size_t n, struct result_msg *m, struct buf *err)
{
	const void *out, *errs, *ord, *rs;
	size_t out_len, errs_len, ord_len, rs_len;

	if (result_parse(p, n, m, &out, &out_len, &errs, &errs_len, &ord, &ord_len, &rs, &rs_len,
			 err) < 0)
		return -1;
	/* Always allocated, so out.data/err.data are usable as C strings. */
	buf_add(&m->out, out, out_len);
	buf_add(&m->err, errs, errs_len);
	buf_add(&m->order, ord, ord_len);
	if (rs_len)
		buf_add(&m->readset, rs, rs_len);
	return 0;
}

int msg_restamp_result(void *p, size_t n, int32_t worker, uint32_t attempts,
		       uint32_t running, struct buf *err)
{
	struct result_msg m;
	const void *out, *errs, *ord, *rs;
	size_t out_len, errs_len, ord_len, rs_len;
	unsigned char *tail;

	if (result_parse(p, n, &m, &out, &out_len, &errs, &errs_len, &ord, &ord_len, &rs, &rs_len,
			 err) < 0)
		return -1;
	/* the last three fields, u32 each, as put_u32() writes them */
	tail = (unsigned char *)p + n - 12;
	memcpy(tail, &worker, 4);
	memcpy(tail + 4, &attempts, 4);
	memcpy(tail + 8, &running, 4);
	return 0;
}

void result_msg_release(struct result_msg *m)
{
	buf_release(&m->out);
	buf_release(&m->err);
	buf_release(&m->order);
	buf_release(&m->readset);
	memset(m, 0, sizeof *m);
}

int64_t proto_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
