/* The recipe wait's messages: see msg_collect.h and PROTOCOL.md. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/msg_collect.h"
#include "lib/err.h"

static int msg_collect_hex(const char *s, size_t n)
{
	return strspn(s, "0123456789abcdef") == n && !s[n];
}

void msg_put_collect(struct buf *out, const struct collect_msg *m)
{
	wire_put_u8(out, MSG_COLLECT);
	wire_put_u32(out, m->version);
	wire_put_i64(out, m->wait);
	wire_put_str(out, m->cookie);
}

int msg_get_collect(const void *p, size_t n, struct collect_msg *m, struct buf *err)
{
	struct wire_reader r;
	char *cookie;

	memset(m, 0, sizeof *m);
	if (msg_type(p, n) != MSG_COLLECT)
		return err_fail(err, "COLLECT: wrong message type");
	wire_reader_init(&r, p, n);
	wire_get_u8(&r);
	m->version = wire_get_u32(&r);
	m->wait = wire_get_i64(&r);
	cookie = wire_get_str(&r);
	if (r.failed || !cookie) {
		free(cookie);
		memset(m, 0, sizeof *m);
		return err_fail(err, "COLLECT: message too short or malformed field");
	}
	if (r.left) {
		free(cookie);
		memset(m, 0, sizeof *m);
		return err_fail(err, "COLLECT: trailing bytes after the message");
	}
	if (m->wait <= 0 || !msg_collect_hex(cookie, COLLECT_COOKIE_HEX)) {
		free(cookie);
		memset(m, 0, sizeof *m);
		return err_fail(err, "COLLECT: not a wait number and cookie");
	}
	memcpy(m->cookie, cookie, COLLECT_COOKIE_HEX + 1);
	free(cookie);
	return 0;
}

void msg_put_step(struct buf *out, const char *name, const char *command,
		  const struct result_msg *res)
{
	struct buf r = BUF_INIT;

	wire_put_u8(out, MSG_STEP);
	wire_put_str(out, name);
	wire_put_str(out, command);
	msg_put_result(&r, res);
	wire_put_bytes(out, r.data, r.len);
	buf_release(&r);
}

int msg_get_step(const void *p, size_t n, struct step_msg *m, struct buf *err)
{
	struct wire_reader r;
	const void *res;
	size_t len = 0;

	memset(m, 0, sizeof *m);
	if (msg_type(p, n) != MSG_STEP)
		return err_fail(err, "STEP: wrong message type");
	wire_reader_init(&r, p, n);
	wire_get_u8(&r);
	m->name = wire_get_str(&r);
	m->command = wire_get_str(&r);
	res = wire_get_bytes(&r, &len);
	if (r.failed || !m->name || !m->command) {
		msg_step_release(m);
		return err_fail(err, "STEP: message too short or malformed field");
	}
	if (r.left) {
		msg_step_release(m);
		return err_fail(err, "STEP: trailing bytes after the message");
	}
	if (msg_get_result(res, len, &m->res, err) < 0) {
		msg_step_release(m);
		return -1;
	}
	return 0;
}

void msg_step_release(struct step_msg *m)
{
	free(m->name);
	free(m->command);
	msg_result_release(&m->res);
	memset(m, 0, sizeof *m);
}

void msg_put_progress(struct buf *out, const struct progress_msg *m)
{
	wire_put_u8(out, MSG_PROGRESS);
	wire_put_u32(out, m->total);
	wire_put_u32(out, m->done);
	wire_put_u32(out, m->running);
	wire_put_u8(out, m->always);
	wire_put_str(out, m->oldest ? m->oldest : "");
}

int msg_get_progress(const void *p, size_t n, struct progress_msg *m, struct buf *err)
{
	struct wire_reader r;

	memset(m, 0, sizeof *m);
	if (msg_type(p, n) != MSG_PROGRESS)
		return err_fail(err, "PROGRESS: wrong message type");
	wire_reader_init(&r, p, n);
	wire_get_u8(&r);
	m->total = wire_get_u32(&r);
	m->done = wire_get_u32(&r);
	m->running = wire_get_u32(&r);
	m->always = wire_get_u8(&r);
	m->oldest = wire_get_str(&r);
	if (r.failed || !m->oldest || r.left || m->always > 1 ||
	    m->done > m->total || m->running > m->total - m->done) {
		free(m->oldest);
		memset(m, 0, sizeof *m);
		return err_fail(err, "PROGRESS: malformed message");
	}
	return 0;
}

int msg_collect_parse_arg(const char *arg, struct collect_msg *m)
{
	char *end;
	long long w;

	memset(m, 0, sizeof *m);
	if (*arg < '1' || *arg > '9')
		return -1;
	errno = 0;
	w = strtoll(arg, &end, 10);
	if (errno || *end != ':' || !msg_collect_hex(end + 1, COLLECT_COOKIE_HEX))
		return -1;
	m->version = PROTO_VERSION;
	m->wait = w;
	memcpy(m->cookie, end + 1, COLLECT_COOKIE_HEX + 1);
	return 0;
}

void msg_result_emit(const struct result_msg *r, void (*emit)(int fd, const void *p, size_t n))
{
	size_t off[3] = { 0, 0, 0 };
	const struct buf *b[3] = { NULL, &r->out, &r->err };

	for (size_t i = 0; i + 5 <= r->order.len; i += 5) {
		int s = r->order.data[i];
		uint32_t len;

		memcpy(&len, r->order.data + i + 1, 4);
		/* msg_get_result checked every run against its stream */
		emit(s, b[s]->data + off[s], len);
		off[s] += len;
	}
	for (int s = RES_OUT; s <= RES_ERR; s++)
		if (b[s]->len > off[s])
			emit(s, b[s]->data + off[s], b[s]->len - off[s]);
}
