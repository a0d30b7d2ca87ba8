/*
 * msg.c - the protocol's message encoders and decoders, one of each per
 * message in PROTOCOL.md's order, so the spec and the code read side by
 * side.  PROTOCOL.md is the normative wire description; msg.h the C
 * manual.  The fields they are made of are wire.c's; framing is frame.c's.
 */
#include "lib/msg.h"
#include "lib/proto.h"
#include "lib/err.h"
#include "lib/readset.h"
#include "lib/strv.h"
#include "lib/wire.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void msg_put_text(struct buf *out, uint8_t type, const char *text)
{
	wire_put_u8(out, type);
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
static const char *msg_finish(const struct wire_reader *r, const char *short_why,
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
	wire_put_u8(out, MSG_HELLO);
	wire_put_u32(out, m->version);
	wire_put_u32(out, m->workers);
	wire_put_u32(out, (uint32_t)m->pid);
}

int msg_get_hello(const void *p, size_t n, struct hello_msg *m, struct buf *err)
{
	struct wire_reader r;
	const char *bad;

	memset(m, 0, sizeof *m);
	if (msg_type(p, n) != MSG_HELLO)
		return err_fail(err, "HELLO: wrong message type");
	wire_reader_init(&r, p, n);
	wire_get_u8(&r);
	m->version = wire_get_u32(&r);
	m->workers = wire_get_u32(&r);
	m->pid = (int32_t)wire_get_u32(&r);
	bad = msg_finish(&r, "HELLO: message too short",
			 "HELLO: trailing bytes after the message");
	if (bad) {
		memset(m, 0, sizeof *m);
		return err_fail(err, "%s", bad);
	}
	return 0;
}

int msg_hello_answer(int64_t id, const void *p, size_t n, uint32_t workers, struct buf *reply,
		     struct buf *err)
{
	struct hello_msg peer, me = { PROTO_VERSION, workers, (int32_t)getpid() };

	if (id != PROTO_ID_CONTROL || msg_get_hello(p, n, &peer, NULL) < 0)
		return err_fail(err, "expected HELLO as the first frame");
	if (peer.version != PROTO_VERSION)
		return err_fail(err, "protocol version mismatch: peer speaks %" PRIu32 ", I speak %d",
				peer.version, PROTO_VERSION);
	msg_put_hello(reply, &me);
	return 0;
}

void msg_put_workers(struct buf *out, uint32_t workers)
{
	wire_put_u8(out, MSG_WORKERS);
	wire_put_u32(out, workers);
}

int msg_get_workers(const void *p, size_t n, uint32_t *workers, struct buf *err)
{
	struct wire_reader r;
	const char *bad;

	*workers = 0;
	if (msg_type(p, n) != MSG_WORKERS)
		return err_fail(err, "WORKERS: wrong message type");
	wire_reader_init(&r, p, n);
	wire_get_u8(&r);
	*workers = wire_get_u32(&r);
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
	wire_put_u8(out, MSG_JOB);
	/* the head (MSG_JOB_HEAD): what msg_get_job_head() reads */
	wire_put_u32(out, m->retries);
	wire_put_i64(out, m->timeout_ms);
	wire_put_str(out, m->shell);
	wire_put_strv(out, m->shellflags);
	wire_put_str(out, m->command);
	wire_put_str(out, m->cwd);
	wire_put_strv(out, m->env);
	wire_put_u8(out, m->has_input ? 1 : 0);
	if (m->has_input)
		wire_put_bytes(out, m->input, m->input_len);
	else
		wire_put_bytes(out, NULL, 0);
	wire_put_i64(out, m->kill_grace_ms);
	wire_put_i64(out, m->max_output);
	wire_put_strv(out, m->fds);
	wire_put_u8(out, m->kill_daemons);
	wire_put_str(out, m->tracer);
	wire_put_u8(out, m->env_full);
	wire_put_u8(out, m->ahead);
}

static const char *job_check(struct wire_reader *r, const struct job_msg *m,
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
	if (m->ahead > 1)
		return "JOB: ahead is neither 0 nor 1";
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
	struct wire_reader r;
	const void *input;
	const char *bad;
	uint8_t has_input;

	memset(m, 0, sizeof *m);
	if (msg_type(p, n) != MSG_JOB)
		return err_fail(err, "JOB: wrong message type");
	wire_reader_init(&r, p, n);
	wire_get_u8(&r);
	m->retries = wire_get_u32(&r);
	m->timeout_ms = wire_get_i64(&r);
	m->shell = wire_get_str(&r);
	m->shellflags = wire_get_strv(&r);
	m->command = wire_get_str(&r);
	m->cwd = wire_get_str(&r);
	m->env = wire_get_strv(&r);
	has_input = wire_get_u8(&r);
	input = wire_get_bytes(&r, &m->input_len);
	m->kill_grace_ms = wire_get_i64(&r);
	m->max_output = wire_get_i64(&r);
	m->fds = wire_get_strv(&r);
	m->kill_daemons = wire_get_u8(&r);
	m->tracer = wire_get_str(&r);
	m->env_full = wire_get_u8(&r);
	m->ahead = wire_get_u8(&r);
	bad = job_check(&r, m, has_input);
	if (bad) {
		msg_job_release(m);
		return err_fail(err, "%s", bad);
	}
	if (has_input) {
		m->input = malloc(m->input_len ? m->input_len : 1);
		if (!m->input) {
			msg_job_release(m);
			return err_fail(err, "JOB: out of memory");
		}
		if (m->input_len)
			memcpy(m->input, input, m->input_len);
		m->has_input = 1;
	}
	return 0;
}

int msg_get_job_head(const void *p, size_t n, struct job_head *h, struct buf *err)
{
	struct wire_reader r;

	memset(h, 0, sizeof *h);
	if (msg_type(p, n) != MSG_JOB)
		return err_fail(err, "JOB: wrong message type");
	wire_reader_init(&r, p, n < MSG_JOB_HEAD ? n : MSG_JOB_HEAD);
	wire_get_u8(&r);
	h->retries = wire_get_u32(&r);
	h->timeout_ms = wire_get_i64(&r);
	if (r.failed) {
		memset(h, 0, sizeof *h);
		return err_fail(err, "JOB: message too short for its head");
	}
	/* the same bounds msg_get_job() checks */
	if (h->timeout_ms < 0 || h->timeout_ms > PROTO_MAX_TIMEOUT_MS) {
		memset(h, 0, sizeof *h);
		return err_fail(err, "JOB: timeout out of range");
	}
	return 0;
}

void msg_job_release(struct job_msg *m)
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
	wire_put_u8(out, MSG_STARTED);
	wire_put_u32(out, (uint32_t)m->pid);
	wire_put_u32(out, (uint32_t)m->worker);
	wire_put_u32(out, m->running);
}

int msg_get_started(const void *p, size_t n, struct started_msg *m, struct buf *err)
{
	struct wire_reader r;
	const char *bad;

	memset(m, 0, sizeof *m);
	if (msg_type(p, n) != MSG_STARTED)
		return err_fail(err, "STARTED: wrong message type");
	wire_reader_init(&r, p, n);
	wire_get_u8(&r);
	m->pid = (int32_t)wire_get_u32(&r);
	m->worker = (int32_t)wire_get_u32(&r);
	m->running = wire_get_u32(&r);
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

/* RESULT's type byte and head (MSG_RESULT_HEAD bytes). */
static void result_put_head(struct buf *out, int32_t worker, uint32_t attempts, uint32_t running)
{
	wire_put_u8(out, MSG_RESULT);
	wire_put_u32(out, (uint32_t)worker);
	wire_put_u32(out, attempts);
	wire_put_u32(out, running);
}

void msg_put_result(struct buf *out, const struct result_msg *m)
{
	result_put_head(out, m->worker, m->attempts, m->running);
	wire_put_u32(out, (uint32_t)m->status);
	wire_put_u32(out, m->flags);
	wire_put_bytes(out, m->out.data, m->out.len);
	wire_put_bytes(out, m->err.data, m->err.len);
	wire_put_i64(out, m->start_ns);
	wire_put_i64(out, m->end_ns);
	wire_put_i64(out, m->utime_us);
	wire_put_i64(out, m->stime_us);
	wire_put_i64(out, m->maxrss_kb);
	wire_put_bytes(out, m->order.data, m->order.len);
	wire_put_bytes(out, m->readset.data, m->readset.len);
}

void msg_put_result_as(struct buf *out, const struct result_head *h, const void *p, size_t n)
{
	result_put_head(out, h->worker, h->attempts, h->running);
	buf_add(out, (const unsigned char *)p + MSG_RESULT_HEAD, n - MSG_RESULT_HEAD);
}

void msg_result_order_add(struct buf *order, int stream, size_t n)
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
	struct wire_reader r;
	const char *bad;
	int verdict;

	memset(m, 0, sizeof *m);
	if (msg_type(p, n) != MSG_RESULT)
		return err_fail(err, "RESULT: wrong message type");
	wire_reader_init(&r, p, n);
	wire_get_u8(&r);
	m->worker = (int32_t)wire_get_u32(&r);
	m->attempts = wire_get_u32(&r);
	m->running = wire_get_u32(&r);
	m->status = (int32_t)wire_get_u32(&r);
	m->flags = wire_get_u32(&r);
	*out = wire_get_bytes(&r, out_len);
	*errs = wire_get_bytes(&r, errs_len);
	m->start_ns = wire_get_i64(&r);
	m->end_ns = wire_get_i64(&r);
	m->utime_us = wire_get_i64(&r);
	m->stime_us = wire_get_i64(&r);
	m->maxrss_kb = wire_get_i64(&r);
	*ord = wire_get_bytes(&r, ord_len);
	*rs = wire_get_bytes(&r, rs_len);
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

int msg_check_result(const void *p, size_t n, struct buf *err)
{
	struct result_msg m;
	const void *out, *errs, *ord, *rs;
	size_t out_len, errs_len, ord_len, rs_len;

	return result_parse(p, n, &m, &out, &out_len, &errs, &errs_len, &ord, &ord_len, &rs,
			    &rs_len, err);
}

void msg_result_fail(struct result_msg *m, int32_t status, uint32_t flags, const char *fmt, ...)
{
	char line[300];
	va_list ap;

	memset(m, 0, sizeof *m);
	m->status = status;
	m->flags = flags;
	m->worker = -1;
	m->start_ns = m->end_ns = proto_now_ns();
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	buf_addf(&m->err, "asynccompile: %s\n", line);
}

void msg_result_release(struct result_msg *m)
{
	buf_release(&m->out);
	buf_release(&m->err);
	buf_release(&m->order);
	buf_release(&m->readset);
	memset(m, 0, sizeof *m);
}
