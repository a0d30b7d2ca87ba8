/*
 * test-proto.c - the frame codec (frame.h), field primitives (wire.h) and
 * messages (proto.h).
 *
 * Run with --write-corpus DIR to write the fuzzer's seed corpus (each file
 * is one chunk-size byte followed by a frame stream) instead of testing.
 *
 * Over 600 lines: one group of cases per message and per decoder check,
 * each small; the corpus writer must see every message, so they share a file.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/proto.h"
#include "lib/readset.h"
#include "corpus.h"
#include "tap.h"

/* ---- helpers ---- */

static void put_header(struct buf *b, int64_t id, int64_t len)
{
	buf_add(b, &id, sizeof id);
	buf_add(b, &len, sizeof len);
}

/* Feed everything in `step`-sized pieces; collect frames into `frames`. */
static int feed_all(struct frame_decoder *d, const struct buf *in, size_t step,
		    struct buf *ids, struct buf *payloads, int *nframes)
{
	size_t off = 0, used;
	int r = FRAME_MORE;

	*nframes = 0;
	while (off < in->len) {
		size_t n = in->len - off < step ? in->len - off : step;

		r = frame_feed(d, in->data + off, n, &used);
		off += used;
		if (r == FRAME_ERROR)
			return r;
		if (r == FRAME_READY) {
			buf_add(ids, &d->id, sizeof d->id);
			wire_put_bytes(payloads, d->payload.data, d->payload.len);
			(*nframes)++;
			frame_next(d);
		}
	}
	return r;
}

static int has(const char *s, const char *needle)
{
	return s && strstr(s, needle) != NULL;
}

/* Decode a header-only stream and return the decoder's verdict. */
static int decode_header(int64_t id, int64_t len, char *err, size_t errsz)
{
	struct frame_decoder d;
	struct buf in = BUF_INIT;
	size_t used;
	int r;

	frame_decoder_init(&d);
	put_header(&in, id, len);
	r = frame_feed(&d, in.data, in.len, &used);
	snprintf(err, errsz, "%s", d.err.len ? (char *)d.err.data : "");
	frame_decoder_release(&d);
	buf_release(&in);
	return r;
}

static void sample_job(struct job_msg *j, char **flags, char **env)
{
	static unsigned char input[] = { 'a', 0, 'b', 0xff, 0 };

	memset(j, 0, sizeof *j);
	j->shell = "/bin/sh";
	j->shellflags = flags;
	j->command = "cc -c 'x y.c' -o \"x y.o\"\n\techo \xc3\xa9";
	j->cwd = "";
	j->env = env;
	j->input = input;
	j->input_len = sizeof input;
	j->has_input = 1;
	j->timeout_ms = 90000;
	j->kill_grace_ms = 5000;
	j->max_output = PROTO_MAX_OUTPUT;
	j->retries = 3;
}

static int strv_eq(char **a, char **b)
{
	size_t i;

	for (i = 0; a[i] && b[i]; i++)
		if (strcmp(a[i], b[i]))
			return 0;
	return !a[i] && !b[i];
}

/* ---- field primitives ---- */

static void test_fields(void)
{
	struct buf b = BUF_INIT;
	struct wire_reader r;
	char *s1, *s2, **v;
	const void *p;
	size_t n;
	char *vec[] = { "a", "", "c d", NULL };

	wire_put_u8(&b, 0xab);
	wire_put_u32(&b, 0xdeadbeef);
	wire_put_i64(&b, INT64_MIN);
	wire_put_bytes(&b, "x\0y", 3);
	wire_put_str(&b, NULL);
	wire_put_str(&b, "");
	wire_put_strv(&b, vec);
	wire_put_strv(&b, NULL);
	wire_reader_init(&r, b.data, b.len);
	ok(wire_get_u8(&r) == 0xab, "u8 round-trips");
	ok(wire_get_u32(&r) == 0xdeadbeef, "u32 round-trips");
	ok(wire_get_i64(&r) == INT64_MIN, "i64 round-trips INT64_MIN");
	p = wire_get_bytes(&r, &n);
	ok(p && n == 3 && !memcmp(p, "x\0y", 3), "bytes with a NUL round-trip");
	s1 = wire_get_str(&r);
	ok(!s1 && !r.failed, "NULL string decodes as NULL without failing");
	s2 = wire_get_str(&r);
	ok(s2 && !strcmp(s2, ""), "empty string decodes as \"\", not NULL");
	v = wire_get_strv(&r);
	ok(v && strv_eq(v, vec), "string vector round-trips (with an empty entry)");
	strv_free(v);
	v = wire_get_strv(&r);
	ok(v && !v[0], "NULL vector decodes as an empty vector");
	strv_free(v);
	ok(!r.failed && r.left == 0, "reader consumed exactly what was written");
	ok(wire_get_u8(&r) == 0 && r.failed, "reading past the end fails");
	ok(wire_get_i64(&r) == 0 && r.failed, "failure is sticky");
	free(s2);

	/* A string with an embedded NUL cannot be a C string. */
	buf_reset(&b);
	wire_put_bytes(&b, "a\0b", 3);
	wire_reader_init(&r, b.data, b.len);
	s1 = wire_get_str(&r);
	ok(!s1 && r.failed, "string with an embedded NUL is rejected");

	/* Length claims more than there is. */
	buf_reset(&b);
	wire_put_u32(&b, 0); /* half a u64 length */
	wire_reader_init(&r, b.data, b.len);
	ok(!wire_get_bytes(&r, &n) && r.failed && n == 0, "short length field fails");
	buf_reset(&b);
	wire_put_i64(&b, 100);
	buf_add(&b, "abc", 3);
	wire_reader_init(&r, b.data, b.len);
	ok(!wire_get_bytes(&r, &n) && r.failed, "bytes longer than the rest fail");
	wire_reader_init(&r, b.data, b.len);
	ok(!wire_get_str(&r) && r.failed, "string longer than the rest fails");

	/* Vector counts the rest of the payload could not possibly hold. */
	buf_reset(&b);
	wire_put_u32(&b, 1000);
	wire_put_str(&b, "only one");
	wire_reader_init(&r, b.data, b.len);
	ok(!wire_get_strv(&r) && r.failed, "strv count larger than the payload fails");
	buf_reset(&b);
	wire_put_u32(&b, UINT32_MAX);
	wire_reader_init(&r, b.data, b.len);
	ok(!wire_get_strv(&r) && r.failed, "strv count 2^32-1 fails without allocating");
	buf_reset(&b);
	wire_put_u32(&b, 2);
	wire_put_str(&b, "one");
	wire_put_str(&b, NULL);
	wire_reader_init(&r, b.data, b.len);
	ok(!wire_get_strv(&r) && r.failed, "NULL inside a vector fails (nothing leaks)");
	buf_reset(&b);
	wire_put_u32(&b, 2);
	wire_put_str(&b, "one");
	wire_put_i64(&b, 5);
	wire_reader_init(&r, b.data, b.len);
	ok(!wire_get_strv(&r) && r.failed, "truncated second string fails");
	buf_release(&b);
}

/* ---- messages ---- */

static void test_hello_started(void)
{
	struct buf b = BUF_INIT;
	struct hello_msg h = { PROTO_VERSION, 8, 12345 }, h2;
	struct started_msg s = { 4242, 7, 3 }, s2;

	msg_put_hello(&b, &h);
	ok(msg_type(b.data, b.len) == MSG_HELLO, "HELLO payload starts with its type");
	ok(msg_get_hello(b.data, b.len, &h2, fresh_why()) == 0 &&
	   h2.version == PROTO_VERSION && h2.workers == 8 && h2.pid == 12345,
	   "HELLO round-trips");
	ok(msg_get_hello(b.data, b.len - 1, &h2, fresh_why()) < 0 &&
	   has(why_text(), "too short") && h2.version == 0, "short HELLO fails, *m left empty");
	buf_addch(&b, 0);
	ok(msg_get_hello(b.data, b.len, &h2, fresh_why()) < 0 && has(why_text(), "trailing"),
	   "HELLO with a trailing byte fails");
	ok(msg_get_started(b.data, b.len, &s2, fresh_why()) < 0 && has(why_text(), "wrong message type"),
	   "HELLO is not a STARTED");

	buf_reset(&b);
	msg_put_started(&b, &s);
	ok(msg_get_started(b.data, b.len, &s2, fresh_why()) == 0 &&
	   s2.pid == 4242 && s2.worker == 7 && s2.running == 3, "STARTED round-trips");
	ok(msg_get_started(b.data, 5, &s2, fresh_why()) < 0 && has(why_text(), "too short"),
	   "short STARTED fails");

	uint32_t w = 7;

	buf_reset(&b);
	msg_put_workers(&b, 12);
	ok(msg_type(b.data, b.len) == MSG_WORKERS && b.len == 5 &&
	   msg_get_workers(b.data, b.len, &w, fresh_why()) == 0 && w == 12, "WORKERS round-trips");
	ok(msg_get_workers(b.data, b.len - 1, &w, fresh_why()) < 0 && has(why_text(), "too short") && w == 0,
	   "short WORKERS fails, count left 0");
	buf_addch(&b, 0);
	ok(msg_get_workers(b.data, b.len, &w, fresh_why()) < 0 && has(why_text(), "trailing"),
	   "WORKERS with a trailing byte fails");
	buf_reset(&b);
	msg_put_workers(&b, 0);
	ok(msg_get_workers(b.data, b.len, &w, fresh_why()) < 0 && has(why_text(), "out of range"),
	   "WORKERS 0 is out of range");
	buf_reset(&b);
	msg_put_workers(&b, PROTO_MAX_WORKERS + 1);
	ok(msg_get_workers(b.data, b.len, &w, fresh_why()) < 0 && has(why_text(), "out of range"),
	   "WORKERS above PROTO_MAX_WORKERS is out of range");
	buf_reset(&b);
	msg_put_hello(&b, &h);
	ok(msg_get_workers(b.data, b.len, &w, fresh_why()) < 0 && has(why_text(), "wrong message type"),
	   "HELLO is not a WORKERS");
	buf_reset(&b);
	s.pid = 0;
	msg_put_started(&b, &s);
	ok(msg_get_started(b.data, b.len, &s2, fresh_why()) < 0 && has(why_text(), "pid"),
	   "STARTED with pid 0 fails (would signal our own group)");
	buf_reset(&b);
	s.pid = -1;
	msg_put_started(&b, &s);
	ok(msg_get_started(b.data, b.len, &s2, fresh_why()) < 0, "STARTED with pid -1 fails");
	buf_release(&b);
}

static void test_job(void)
{
	char *flags[] = { "-e", "-c", NULL };
	char *env[] = { "CC=gcc", "EMPTY=", "WEIRD==x\n", NULL };
	struct job_msg j, g;
	struct buf b = BUF_INIT;
	size_t full;

	sample_job(&j, flags, env);
	msg_put_job(&b, &j);
	ok(msg_get_job(b.data, b.len, &g, fresh_why()) == 0, "JOB decodes");
	ok(g.shell && !strcmp(g.shell, j.shell) && !strcmp(g.command, j.command) &&
	   g.cwd && !strcmp(g.cwd, ""), "JOB strings round-trip (empty cwd stays \"\")");
	ok(strv_eq(g.shellflags, flags) && strv_eq(g.env, env), "JOB vectors round-trip");
	ok(g.has_input && g.input_len == j.input_len &&
	   !memcmp(g.input, j.input, j.input_len), "JOB binary input with NULs round-trips");
	ok(g.timeout_ms == 90000 && g.kill_grace_ms == 5000 &&
	   g.max_output == PROTO_MAX_OUTPUT && g.retries == 3, "JOB numbers round-trip");
	msg_job_release(&g);
	ok(!g.shell && !g.env, "msg_job_release leaves the message empty");

	/* A sub-make's jobserver descriptors, and entries that are not. */
	{
		static char *fds[] = { "3</proc/1/fd/3", "4>/proc/1/fd/4", NULL };
		static char *bad[][2] = { { "2</dev/null", NULL }, { "1024</x", NULL },
					  { "5<relative", NULL }, { "x</y", NULL },
					  { "6=/y", NULL } };

		j.fds = fds;
		buf_reset(&b);
		msg_put_job(&b, &j);
		ok(msg_get_job(b.data, b.len, &g, fresh_why()) == 0 && strv_eq(g.fds, fds),
		   "JOB descriptor entries round-trip");
		msg_job_release(&g);
		for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
			j.fds = bad[k];
			buf_reset(&b);
			msg_put_job(&b, &j);
			ok(msg_get_job(b.data, b.len, &g, fresh_why()) < 0 && has(why_text(), "descriptor entry"),
			   "JOB descriptor entry %s is refused", bad[k][0]);
		}
		j.fds = NULL;
		buf_reset(&b);
		msg_put_job(&b, &j);
	}
	/* A traced job with a whole environment. */
	{
		static char *whole[] = { "PATH=/bin", NULL };

		j.tracer = "/usr/lib/asynccompile-trace.so";
		j.env = whole;
		j.env_full = 1;
		buf_reset(&b);
		msg_put_job(&b, &j);
		ok(msg_get_job(b.data, b.len, &g, fresh_why()) == 0 && g.tracer &&
		   !strcmp(g.tracer, j.tracer) && g.env_full == 1 && strv_eq(g.env, whole),
		   "JOB tracer and whole environment round-trip");
		msg_job_release(&g);
		j.tracer = "relative.so";
		buf_reset(&b);
		msg_put_job(&b, &j);
		ok(msg_get_job(b.data, b.len, &g, fresh_why()) < 0 && has(why_text(), "tracer"),
		   "JOB with a relative tracer path is refused");
		j.tracer = NULL;
		j.env_full = 2;
		buf_reset(&b);
		msg_put_job(&b, &j);
		ok(msg_get_job(b.data, b.len, &g, fresh_why()) < 0 && has(why_text(), "env_full"),
		   "JOB env_full other than 0 or 1 is refused");
		j.env_full = 0;
		j.ahead = 1;
		buf_reset(&b);
		msg_put_job(&b, &j);
		ok(msg_get_job(b.data, b.len, &g, fresh_why()) == 0 && g.ahead == 1,
		   "JOB ahead of need round-trips");
		msg_job_release(&g);
		j.ahead = 2;
		buf_reset(&b);
		msg_put_job(&b, &j);
		ok(msg_get_job(b.data, b.len, &g, fresh_why()) < 0 && has(why_text(), "ahead"),
		   "JOB ahead other than 0 or 1 is refused");
		j.ahead = 0;
		j.env = NULL;
		buf_reset(&b);
		msg_put_job(&b, &j);
	}
	full = b.len;

	/* Every proper prefix is a short field. */
	{
		int all = 1;

		for (size_t n = 0; n < full; n++) {
			if (msg_get_job(b.data, n, &g, fresh_why()) == 0 || g.shell || g.env)
				all = 0;
		}
		ok(all, "every truncation of a JOB fails and leaves *m empty");
	}
	buf_addch(&b, 'x');
	ok(msg_get_job(b.data, b.len, &g, fresh_why()) < 0 && has(why_text(), "trailing"),
	   "JOB with trailing bytes fails");

	/* No input, empty vectors. */
	j.shellflags = NULL;
	j.env = NULL;
	j.has_input = 0;
	buf_reset(&b);
	msg_put_job(&b, &j);
	ok(msg_get_job(b.data, b.len, &g, fresh_why()) == 0 && g.shellflags && !g.shellflags[0] &&
	   g.env && !g.env[0] && !g.has_input && !g.input && g.input_len == 0,
	   "JOB without input or flags decodes to empty vectors, NULL input");
	msg_job_release(&g);

	/* Empty but present input differs from no input. */
	j.has_input = 1;
	j.input_len = 0;
	buf_reset(&b);
	msg_put_job(&b, &j);
	ok(msg_get_job(b.data, b.len, &g, fresh_why()) == 0 && g.has_input && g.input &&
	   g.input_len == 0, "JOB with empty stdin keeps has_input");
	msg_job_release(&g);

#define BAD_JOB(field, value, what) do { \
		struct job_msg bad; \
		int rc; \
		sample_job(&bad, flags, env); \
		bad.field = value; \
		buf_reset(&b); \
		msg_put_job(&b, &bad); \
		rc = msg_get_job(b.data, b.len, &g, fresh_why()); \
		ok(rc < 0 && !g.shell && !g.env && has(why_text(), what), \
		   "JOB with " #field " = " #value " fails: %s", why_text()); \
	} while (0)
	BAD_JOB(shell, NULL, "shell");
	BAD_JOB(command, NULL, "command");
	BAD_JOB(cwd, NULL, "directory");
	BAD_JOB(timeout_ms, -1, "timeout");
	BAD_JOB(kill_grace_ms, -5, "grace");
	BAD_JOB(timeout_ms, INT64_MAX, "timeout out of range");
	BAD_JOB(kill_grace_ms, PROTO_MAX_TIMEOUT_MS + 1, "kill grace out of range");
	BAD_JOB(max_output, -1, "max_output");
	BAD_JOB(max_output, PROTO_MAX_OUTPUT + 1, "max_output");
#undef BAD_JOB

	/* has_input must be 0 or 1; flip it in an encoded message. */
	sample_job(&j, NULL, NULL);
	j.has_input = 0;
	buf_reset(&b);
	msg_put_job(&b, &j);
	{
		/* type, head, shell, strv, command, cwd, strv: find the flag byte. */
		size_t off = MSG_JOB_HEAD + 8 + strlen(j.shell) + 4 + 8 + strlen(j.command) + 8 + 4;

		b.data[off] = 2;
		ok(msg_get_job(b.data, b.len, &g, fresh_why()) < 0 && has(why_text(), "has_input"),
		   "JOB with has_input 2 fails");
		b.data[off] = 0;
		ok(msg_get_job(b.data, b.len, &g, fresh_why()) == 0, "(and 0 at that offset decodes)");
		msg_job_release(&g);
	}

	/* The head: retries and timeout, read without the rest. */
	{
		struct job_head h;

		ok(msg_get_job_head(b.data, b.len, &h, fresh_why()) == 0 && h.retries == 3 &&
		   h.timeout_ms == 90000, "msg_get_job_head reads retries and timeout_ms");
		ok(msg_get_job_head(b.data, MSG_JOB_HEAD, &h, fresh_why()) == 0 && h.retries == 3 &&
		   h.timeout_ms == 90000, "the head is a JOB's first 13 bytes: nothing after is read");
		ok(msg_get_job_head(b.data, MSG_JOB_HEAD - 1, &h, fresh_why()) < 0 &&
		   has(why_text(), "JOB: message too short") && !h.retries && !h.timeout_ms,
		   "a JOB cut inside its head has none");
		j.timeout_ms = PROTO_MAX_TIMEOUT_MS + 1;
		buf_reset(&b);
		msg_put_job(&b, &j);
		ok(msg_get_job_head(b.data, b.len, &h, fresh_why()) < 0 &&
		   has(why_text(), "timeout out of range"), "the head's timeout is range-checked as msg_get_job's");
		b.data[0] = MSG_RESULT;
		ok(msg_get_job_head(b.data, b.len, &h, fresh_why()) < 0 && has(why_text(), "wrong message type"),
		   "a RESULT has no JOB head");
	}
	buf_release(&b);
}

static void test_result(void)
{
	struct result_msg m, g;
	struct buf b = BUF_INIT;
	size_t big = (size_t)1 << 20;

	memset(&m, 0, sizeof m);
	m.status = -1;
	m.flags = RES_TIMED_OUT | RES_TRUNCATED;
	buf_grow(&m.out, big);
	for (size_t i = 0; i < big; i++)
		m.out.data[i] = (unsigned char)(i * 7);
	m.out.len = big;
	m.start_ns = INT64_MAX;
	m.end_ns = -3;
	m.utime_us = 1;
	m.stime_us = 2;
	m.maxrss_kb = 3;
	m.worker = 9;
	m.attempts = 2;
	m.running = 5;
	msg_put_result(&b, &m);
	ok(msg_get_result(b.data, b.len, &g, fresh_why()) == 0, "1 MiB RESULT decodes");
	ok(g.out.len == big && !memcmp(g.out.data, m.out.data, big),
	   "RESULT binary stdout round-trips");
	ok(g.err.len == 0 && g.err.data && g.err.data[0] == 0,
	   "empty stderr decodes as an empty C string");
	ok(g.status == -1 && g.flags == m.flags && g.start_ns == INT64_MAX &&
	   g.end_ns == -3 && g.utime_us == 1 && g.stime_us == 2 && g.maxrss_kb == 3 &&
	   g.worker == 9 && g.attempts == 2 &&
	   g.running == 5, "RESULT numbers round-trip");
	msg_result_release(&g);
	ok(!g.out.data && !g.err.data, "msg_result_release leaves the message empty");

	{
		struct result_head h = { 4, 3, 2 };
		struct buf as = BUF_INIT;
		size_t was = b.len;
		unsigned char *before = malloc(b.len);

		if (!before)
			abort();
		memcpy(before, b.data, b.len);
		ok(msg_check_result(b.data, b.len, fresh_why()) == 0, "msg_check_result takes a good RESULT");
		msg_put_result_as(&as, &h, b.data, b.len);
		ok(as.len == b.len && msg_get_result(as.data, as.len, &g, fresh_why()) == 0 &&
		   g.worker == 4 && g.attempts == 3 && g.running == 2 && g.status == -1 &&
		   g.flags == m.flags && g.start_ns == INT64_MAX && g.end_ns == -3 &&
		   g.utime_us == 1 && g.stime_us == 2 && g.maxrss_kb == 3 && g.err.len == 0 &&
		   g.out.len == big && !memcmp(g.out.data, m.out.data, big),
		   "msg_put_result_as sets worker, attempts and running, nothing else");
		ok(b.len == was && !memcmp(before, b.data, b.len), "msg_put_result_as leaves its input as it was");
		ok(!memcmp(as.data + MSG_RESULT_HEAD, b.data + MSG_RESULT_HEAD, b.len - MSG_RESULT_HEAD),
		   "the head is the RESULT's first 13 bytes: what follows is copied as it is");
		msg_result_release(&g);
		buf_release(&as);
		free(before);
	}
	ok(msg_check_result(b.data, b.len - 1, fresh_why()) < 0 && has(why_text(), "too short"),
	   "msg_check_result rejects what msg_get_result rejects");

	ok(msg_get_result(b.data, b.len - 1, &g, fresh_why()) < 0 && has(why_text(), "too short") &&
	   !g.out.data, "RESULT missing its last byte fails");
	ok(msg_get_result(b.data, 20, &g, fresh_why()) < 0 && !g.out.data,
	   "RESULT cut inside stdout fails");
	buf_addch(&b, 0);
	ok(msg_get_result(b.data, b.len, &g, fresh_why()) < 0 && has(why_text(), "trailing"),
	   "RESULT with trailing bytes fails");

	buf_reset(&b);
	buf_release(&m.out);
	buf_addstr(&m.err, "line\0");
	buf_add(&m.err, "\0\x01", 2);
	m.flags = 1u << 20;
	msg_put_result(&b, &m);
	ok(msg_get_result(b.data, b.len, &g, fresh_why()) < 0 && has(why_text(), "flag"),
	   "RESULT with unknown flag bits fails");
	buf_reset(&b);
	m.flags = RES_CRASHED | RES_SPAWN_FAILED | RES_CANCELLED;
	msg_put_result(&b, &m);
	ok(msg_get_result(b.data, b.len, &g, fresh_why()) == 0 && g.err.len == 6 &&
	   !memcmp(g.err.data, "line\0\x01", 6) && g.out.len == 0,
	   "RESULT with NULs in stderr and empty stdout round-trips");
	msg_result_release(&g);

	/* The order of stdout and stderr runs. */
	buf_reset(&b);
	buf_addstr(&m.out, "o1o2");
	msg_result_order_add(&m.order, RES_OUT, 2);
	msg_result_order_add(&m.order, RES_ERR, 3);
	msg_result_order_add(&m.order, RES_ERR, 1);
	msg_result_order_add(&m.order, RES_OUT, 2);
	ok(m.order.len == 15, "msg_result_order_add merges a run with the one before it");
	msg_put_result(&b, &m);
	ok(msg_get_result(b.data, b.len, &g, fresh_why()) == 0 && g.order.len == 15 &&
	   !memcmp(g.order.data, m.order.data, 15), "RESULT order round-trips");
	msg_result_release(&g);
	{
		static const struct { size_t at; unsigned char v; const char *what; } bad[] = {
			{ 0, 3, "unknown stream" }, { 1, 9, "covers more" },
		};
		for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
			struct result_msg t;

			memset(&t, 0, sizeof t);
			buf_add(&t.out, m.out.data, m.out.len);
			buf_add(&t.err, m.err.data, m.err.len);
			buf_add(&t.order, m.order.data, m.order.len);
			t.order.data[bad[k].at] = bad[k].v;
			buf_reset(&b);
			msg_put_result(&b, &t);
			ok(msg_get_result(b.data, b.len, &g, fresh_why()) < 0 && has(why_text(), bad[k].what),
			   "RESULT order: %s is refused", bad[k].what);
			msg_result_release(&t);
		}
		struct result_msg t;

		memset(&t, 0, sizeof t);
		buf_add(&t.order, m.order.data, 4);
		buf_reset(&b);
		msg_put_result(&b, &t);
		ok(msg_get_result(b.data, b.len, &g, fresh_why()) < 0 && has(why_text(), "whole number"),
		   "RESULT order: a cut run is refused");
		msg_result_release(&t);
	}
	/* A read set travels with a traced job's result, checked. */
	readset_opaque(&m.readset, "wrote /x");
	buf_reset(&b);
	msg_put_result(&b, &m);
	ok(msg_get_result(b.data, b.len, &g, fresh_why()) == 0 && g.readset.len == m.readset.len &&
	   !memcmp(g.readset.data, m.readset.data, m.readset.len), "RESULT read set round-trips");
	msg_result_release(&g);
	m.readset.data[0] ^= 0xff;
	buf_reset(&b);
	msg_put_result(&b, &m);
	ok(msg_get_result(b.data, b.len, &g, fresh_why()) < 0 && has(why_text(), "read set"),
	   "RESULT with a malformed read set is refused");
	msg_result_release(&m);
	buf_release(&b);
}

static void test_msg_type(void)
{
	unsigned char unknown[] = { 99, 0, 0, 0, 0 };
	struct hello_msg h;
	struct job_msg j;
	struct started_msg s;
	struct result_msg r;
	uint32_t w;

	ok(msg_type("", 0) == -1, "empty payload has no type");
	ok(msg_type(unknown, 1) == 99, "msg_type reports the raw type byte");
	ok(msg_get_hello(unknown, sizeof unknown, &h, fresh_why()) < 0 &&
	   msg_get_job(unknown, sizeof unknown, &j, fresh_why()) < 0 &&
	   msg_get_started(unknown, sizeof unknown, &s, fresh_why()) < 0 &&
	   msg_get_result(unknown, sizeof unknown, &r, fresh_why()) < 0 &&
	   msg_get_workers(unknown, sizeof unknown, &w, fresh_why()) < 0 &&
	   has(why_text(), "wrong message type"), "unknown type is rejected by every decoder");
	ok(msg_get_hello("", 0, &h, fresh_why()) < 0 && msg_get_job("", 0, &j, fresh_why()) < 0 &&
	   msg_get_started("", 0, &s, fresh_why()) < 0 && msg_get_result("", 0, &r, fresh_why()) < 0 &&
	   msg_get_workers("", 0, &w, fresh_why()) < 0,
	   "empty payload is rejected by every decoder");
	ok(msg_get_hello(unknown, sizeof unknown, &h, NULL) < 0, "why_text() may be NULL");
}

/* ---- frame decoder ---- */

static void three_frames(struct buf *in)
{
	struct hello_msg h = { PROTO_VERSION, 0, 1 };
	struct buf p = BUF_INIT;

	msg_put_hello(&p, &h);
	frame_put(in, PROTO_ID_CONTROL, p.data, p.len);
	frame_put(in, 7, "\x05", 1);
	frame_put(in, PROTO_ID_SHUTDOWN, NULL, 0);
	buf_release(&p);
}

static void test_decoder_streams(void)
{
	static const size_t steps[] = { 1, 3, 16, 17, 1 << 20 };
	struct buf in = BUF_INIT;

	three_frames(&in);
	for (size_t k = 0; k < sizeof steps / sizeof *steps; k++) {
		struct frame_decoder d;
		struct buf ids = BUF_INIT, pl = BUF_INIT;
		int n, r;
		int64_t id[3];

		frame_decoder_init(&d);
		r = feed_all(&d, &in, steps[k], &ids, &pl, &n);
		memcpy(id, ids.data, n == 3 ? sizeof id : 0);
		ok(r == FRAME_READY && n == 3 && id[0] == 0 && id[1] == 7 && id[2] == -1,
		   "three frames fed %zu byte(s) at a time decode in order", steps[k]);
		ok(frame_eof(&d) == 0, "...and EOF after them is clean");
		frame_decoder_release(&d);
		buf_release(&ids);
		buf_release(&pl);
	}

	/* One chunk holding all three: READY stops after each frame. */
	{
		struct frame_decoder d;
		size_t used, off = 0;
		int r;

		frame_decoder_init(&d);
		r = frame_feed(&d, in.data, in.len, &used);
		ok(r == FRAME_READY && used == 16 + 13 && d.id == 0 &&
		   msg_type(d.payload.data, d.payload.len) == MSG_HELLO,
		   "first frame of a 3-frame chunk, rest not consumed");
		off += used;
		r = frame_feed(&d, in.data + off, in.len - off, &used);
		ok(r == FRAME_READY && used == 0, "feeding before frame_next consumes nothing");
		frame_next(&d);
		r = frame_feed(&d, in.data + off, in.len - off, &used);
		off += used;
		ok(r == FRAME_READY && d.id == 7 && d.len == 1 && d.payload.data[0] == 5,
		   "second frame: job 7, CANCEL");
		frame_next(&d);
		r = frame_feed(&d, in.data + off, in.len - off, &used);
		off += used;
		ok(r == FRAME_READY && d.id == -1 && d.len == 0 && off == in.len,
		   "third frame: shutdown, everything consumed");
		frame_next(&d);
		ok(frame_feed(&d, "", 0, &used) == FRAME_MORE && frame_eof(&d) == 0,
		   "empty feed between frames is MORE, EOF is clean");
		frame_decoder_release(&d);
	}
	buf_release(&in);
}

static void test_decoder_errors(void)
{
	char err[160];
	struct frame_decoder d;
	struct buf in = BUF_INIT;
	size_t used;
	int r;

	r = decode_header(1, -5, err, sizeof err);
	ok(r == FRAME_ERROR && has(err, "payload length -5 is negative"),
	   "negative length: %s", err);
	r = decode_header(1, PROTO_MAX_PAYLOAD + 1, err, sizeof err);
	ok(r == FRAME_ERROR && has(err, "exceeds the maximum"), "oversize length: %s", err);
	r = decode_header(1, INT64_MAX, err, sizeof err);
	ok(r == FRAME_ERROR, "INT64_MAX length is an error");
	r = decode_header(-2, 0, err, sizeof err);
	ok(r == FRAME_ERROR && has(err, "job id -2"), "id -2: %s", err);
	r = decode_header(INT64_MIN, 0, err, sizeof err);
	ok(r == FRAME_ERROR, "id INT64_MIN is an error");
	r = decode_header(-1, 1, err, sizeof err);
	ok(r == FRAME_ERROR && has(err, "shutdown"), "shutdown with payload: %s", err);
	r = decode_header(0, 0, err, sizeof err);
	ok(r == FRAME_READY && !err[0], "empty control frame is fine at the frame level");
	r = decode_header(INT64_MAX, PROTO_MAX_PAYLOAD, err, sizeof err);
	ok(r == FRAME_MORE && !err[0], "largest id and length are accepted");

	/* Hostile length: memory follows the bytes that arrived, not the claim. */
	frame_decoder_init(&d);
	put_header(&in, 3, PROTO_MAX_PAYLOAD);
	buf_add(&in, "0123456789", 10);
	r = frame_feed(&d, in.data, in.len, &used);
	ok(r == FRAME_MORE && used == in.len && d.payload.len == 10 &&
	   d.payload.cap < 4096, "520 MiB claim with 10 bytes holds %zu bytes", d.payload.cap);
	ok(frame_eof(&d) < 0 &&
	   has((char *)d.err.data, "truncated frame: got 10 of 545259520 payload bytes for job 3"),
	   "truncated payload at EOF: %s", (char *)d.err.data);
	ok(frame_feed(&d, "x", 1, &used) == FRAME_ERROR && used == 0,
	   "decoder stays failed after an error");
	frame_next(&d);
	ok(frame_feed(&d, "x", 1, &used) == FRAME_ERROR && frame_eof(&d) < 0,
	   "frame_next does not revive a failed decoder");
	frame_decoder_release(&d);

	frame_decoder_init(&d);
	r = frame_feed(&d, in.data, 10, &used);
	ok(r == FRAME_MORE && frame_eof(&d) < 0 &&
	   has((char *)d.err.data, "truncated frame: got 10 of 16 header bytes"),
	   "truncated header at EOF: %s", (char *)d.err.data);
	frame_decoder_release(&d);

	/* Error mid-stream: a good frame, then a bad header. */
	frame_decoder_init(&d);
	buf_reset(&in);
	frame_put(&in, 1, "\x03", 1);
	put_header(&in, -7, 0);
	r = frame_feed(&d, in.data, in.len, &used);
	ok(r == FRAME_READY && used == 17, "good frame before a bad one is delivered");
	frame_next(&d);
	r = frame_feed(&d, in.data + used, in.len - used, &used);
	ok(r == FRAME_ERROR && has((char *)d.err.data, "-7"), "then the bad header fails: %s", (char *)d.err.data);
	frame_decoder_release(&d);
	buf_release(&in);
}

/* ---- over real pipes ---- */

static void test_pipe_blocking(void)
{
	struct frame_decoder d;
	int fds[2];
	int r1, r2, r3;

	if (pipe2(fds, O_CLOEXEC) < 0) {
		ok(0, "pipe2: %s", strerror(errno));
		return;
	}
	ok(frame_write_all(fds[1], 5, "\x02hello", 6) == 0 &&
	   frame_write_all(fds[1], 6, "\x04", 1) == 0 &&
	   frame_write_all(fds[1], -1, NULL, 0) == 0, "three frames written back to back");
	errno = 0;
	ok(frame_write_all(fds[1], 5, "", (size_t)PROTO_MAX_PAYLOAD + 1) == -1 &&
	   errno == EMSGSIZE, "frame_write_all refuses an oversize payload, writes nothing");
	close(fds[1]);
	frame_decoder_init(&d);
	r1 = frame_read_one(fds[0], &d);
	ok(r1 == 1 && d.id == 5 && d.len == 6 && !memcmp(d.payload.data, "\x02hello", 6),
	   "first frame read");
	r2 = frame_read_one(fds[0], &d);
	ok(r2 == 1 && d.id == 6 && d.len == 1 && d.payload.data[0] == 4,
	   "second frame not lost");
	r3 = frame_read_one(fds[0], &d);
	ok(r3 == 1 && d.id == -1, "shutdown frame read");
	ok(frame_read_one(fds[0], &d) == 0, "clean EOF returns 0");
	frame_decoder_release(&d);
	close(fds[0]);

	/* Truncated stream over a pipe. */
	if (pipe2(fds, O_CLOEXEC) < 0)
		return;
	{
		int64_t hdr[2] = { 9, 40 };

		ok(write(fds[1], hdr, sizeof hdr) == sizeof hdr && write(fds[1], "abc", 3) == 3,
		   "wrote a frame cut after 3 payload bytes");
	}
	close(fds[1]);
	frame_decoder_init(&d);
	errno = 0;
	ok(frame_read_one(fds[0], &d) == -1 && errno == EPROTO &&
	   has((char *)d.err.data, "truncated frame: got 3 of 40 payload bytes for job 9"),
	   "truncated stream: %s", (char *)d.err.data);
	frame_decoder_release(&d);
	close(fds[0]);
}

/* A 4 MiB frame needs a concurrent writer: it is bigger than any pipe. */
static void test_pipe_big(void)
{
	size_t big = (size_t)4 << 20;
	unsigned char *p = malloc(big);
	struct frame_decoder d;
	int fds[2], st = -1, r1, r2;
	pid_t pid;

	for (size_t i = 0; i < big; i++)
		p[i] = (unsigned char)(i % 251);
	if (pipe2(fds, O_CLOEXEC) < 0)
		return;
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		int rc = frame_write_all(fds[1], 11, p, big) == 0 &&
			 frame_write_all(fds[1], 12, "\x06", 1) == 0 ? 0 : 1;

		free(p);
		_exit(rc);
	}
	errno = 0;
	ok(frame_write_all(fds[1], 5, "", (size_t)PROTO_MAX_PAYLOAD + 1) == -1 &&
	   errno == EMSGSIZE, "frame_write_all refuses an oversize payload, writes nothing");
	close(fds[1]);
	frame_decoder_init(&d);
	r1 = frame_read_one(fds[0], &d);
	ok(r1 == 1 && d.id == 11 && d.payload.len == big && !memcmp(d.payload.data, p, big),
	   "4 MiB frame through a pipe");
	r2 = frame_read_one(fds[0], &d);
	ok(r2 == 1 && d.id == 12 && d.len == 1, "and the frame after it");
	ok(frame_read_one(fds[0], &d) == 0, "then EOF");
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "writer finished with partial writes");
	frame_decoder_release(&d);
	close(fds[0]);
	free(p);
}

/* Read everything currently in a non-blocking pipe into d. */
static void drain(int fd, struct frame_decoder *d, int *frames, size_t *bytes)
{
	unsigned char tmp[8192];
	ssize_t n;

	while ((n = read(fd, tmp, sizeof tmp)) > 0) {
		size_t off = 0, used;

		*bytes += (size_t)n;
		while (off < (size_t)n) {
			int r = frame_feed(d, tmp + off, (size_t)n - off, &used);

			off += used;
			if (r == FRAME_READY) {
				(*frames)++;
				frame_next(d);
			} else if (r == FRAME_ERROR) {
				return;
			}
		}
	}
}

static void test_flush(void)
{
	size_t big = (size_t)1 << 20, bytes = 0, left0;
	unsigned char *p = calloc(1, big);
	struct frame_outq out = { BUF_INIT, 0 };
	struct frame_decoder d;
	int fds[2], frames = 0, rounds = 0, r;
	void (*old)(int) = signal(SIGPIPE, SIG_IGN);

	if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0)
		return;
	frame_put(&out.buf, 1, p, big);
	frame_put(&out.buf, 2, "\x03", 1);
	r = frame_outq_flush(fds[1], &out);
	left0 = frame_outq_pending(&out);
	ok(r == 0 && left0 > 0 && left0 < big, "flush into a full pipe returns 0 with %zu left",
	   left0);
	ok(frame_outq_flush(fds[1], &out) == 0 && frame_outq_pending(&out) == left0,
	   "flushing again while full makes no progress and no error");
	frame_decoder_init(&d);
	while (frame_outq_pending(&out) && rounds++ < 10000) {
		drain(fds[0], &d, &frames, &bytes);
		if (frame_outq_flush(fds[1], &out) < 0)
			break;
	}
	drain(fds[0], &d, &frames, &bytes);
	ok(frame_outq_pending(&out) == 0 && frames == 2 && bytes == big + 17 + 16 && !d.err.len,
	   "alternating read and flush drains both frames (%d rounds)", rounds);
	ok(frame_outq_flush(fds[1], &out) == 0, "flushing an empty buffer is a no-op");

	/* frame_outq_send: straight from the caller's bytes while nothing is queued */
	frame_outq_release(&out);
	frames = 0;
	bytes = 0;
	rounds = 0;
	ok(frame_outq_send(fds[1], &out, 7, "\x03", 1) == 0 && out.buf.len == 0 && !out.buf.data,
	   "a frame the pipe takes whole is written, nothing queued or allocated");
	drain(fds[0], &d, &frames, &bytes);
	ok(frames == 1 && bytes == 17, "and it arrives whole");
	r = frame_outq_send(fds[1], &out, 1, p, big);
	left0 = frame_outq_pending(&out);
	ok(r == 0 && left0 > 0 && left0 < big,
	   "a frame the pipe takes in part: only the rest is queued (%zu bytes)", left0);
	ok(frame_outq_send(fds[1], &out, 2, "\x03", 1) == 0 && frame_outq_pending(&out) == left0 + 17,
	   "a frame sent behind a queue waits its turn");
	while (frame_outq_pending(&out) && rounds++ < 10000) {
		drain(fds[0], &d, &frames, &bytes);
		if (frame_outq_flush(fds[1], &out) < 0)
			break;
	}
	drain(fds[0], &d, &frames, &bytes);
	ok(frames == 3 && bytes == 17 + big + 16 + 17 && !d.err.len, "all three arrive, in order");

	frame_put(&out.buf, 3, "\x03", 1);
	close(fds[0]);
	errno = 0;
	ok(frame_outq_flush(fds[1], &out) == -1 && errno == EPIPE && frame_outq_pending(&out) == 17,
	   "flush after the reader closed: EPIPE, data kept");
	errno = 0;
	ok(frame_outq_send(fds[1], &out, 4, "\x03", 1) == -1 && errno == EPIPE &&
	   frame_outq_pending(&out) == 34, "frame_outq_send behind it: EPIPE, the frame kept queued");
	errno = 0;
	ok(frame_write_all(fds[1], 3, "\x03", 1) == -1 && errno == EPIPE,
	   "frame_write_all after the reader closed: EPIPE");
	close(fds[1]);
	frame_decoder_release(&d);
	frame_outq_release(&out);
	free(p);
	signal(SIGPIPE, old);
}

static void test_clock(void)
{
	int64_t a = proto_now_ns(), b = proto_now_ns();

	ok(a > 0 && b >= a, "proto_now_ns is positive and monotonic");
}

/* ---- seed corpus for fuzz/fuzz-frame.c ---- */

static int write_corpus(const char *dir)
{
	char *flags[] = { "-c", NULL }, *env[] = { "A=1", NULL };
	struct hello_msg h = { PROTO_VERSION, 4, 100 };
	struct started_msg s = { 200, 1, 1 };
	struct result_msg res;
	struct job_msg j;
	struct buf p = BUF_INIT, st = BUF_INIT;

#define FRAME(id) (frame_put(&st, (id), p.data, p.len), buf_reset(&p))
	msg_put_hello(&p, &h);
	FRAME(0);
	corpus_file(dir, "hello", 0, &st);
	sample_job(&j, flags, env);
	msg_put_job(&p, &j);
	FRAME(1);
	corpus_file(dir, "hello-job", 3, &st);
	buf_reset(&st);
	msg_put_started(&p, &s);
	FRAME(1);
	memset(&res, 0, sizeof res);
	buf_addstr(&res.out, "out\n");
	buf_addstr(&res.err, "warning: x\n");
	res.flags = RES_TRUNCATED;
	res.attempts = 1;
	msg_put_result(&p, &res);
	FRAME(1);
	msg_result_release(&res);
	frame_put(&st, PROTO_ID_SHUTDOWN, NULL, 0);
	corpus_file(dir, "started-result-shutdown", 1, &st);
	buf_reset(&st);
	wire_put_u8(&p, MSG_CANCEL);
	FRAME(2);
	wire_put_u8(&p, MSG_STATS);
	FRAME(0);
	wire_put_u8(&p, MSG_ERROR);
	buf_addstr(&p, "protocol version mismatch");
	FRAME(0);
	msg_put_workers(&p, 3);
	FRAME(0);
	corpus_file(dir, "cancel-stats-error-workers", 16, &st);
	buf_reset(&st);
	put_header(&st, 1, -5);
	corpus_file(dir, "bad-negative-len", 0, &st);
	buf_reset(&st);
	put_header(&st, -2, 0);
	corpus_file(dir, "bad-id", 0, &st);
	buf_reset(&st);
	put_header(&st, 5, 1000);
	buf_add(&st, "\x02", 1);
	corpus_file(dir, "bad-truncated", 2, &st);
	buf_reset(&st);
	msg_put_hello(&p, &h);
	wire_put_u8(&p, 0);
	FRAME(0);
	corpus_file(dir, "bad-trailing", 0, &st);
	buf_reset(&st);
	wire_put_u8(&p, MSG_JOB);
	wire_put_u32(&p, 0);
	wire_put_i64(&p, 0);
	wire_put_str(&p, "/bin/sh");
	wire_put_u32(&p, 1000000);
	FRAME(3);
	corpus_file(dir, "bad-strv-count", 0, &st);
#undef FRAME
	buf_release(&p);
	buf_release(&st);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--write-corpus"))
		return write_corpus(argv[2]);
	test_fields();
	test_hello_started();
	test_job();
	test_result();
	test_msg_type();
	test_decoder_streams();
	test_decoder_errors();
	test_pipe_blocking();
	test_pipe_big();
	test_flush();
	test_clock();
	tap_why_release();
	return done_testing();
}
