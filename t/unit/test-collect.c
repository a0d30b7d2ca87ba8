/*
 * test-collect.c - the recipe waits' messages (lib/msg_collect.h):
 * COLLECT, STEP and PROGRESS round trips, what the decoders refuse, the
 * collector's argument, msg_result_emit()'s order, and the status line
 * PROGRESS draws (lib/progress.h).
 * Run with --write-corpus DIR to write the fuzzer's seed corpus
 * (fuzz/corpus/collect: a chunk-size byte, then frames).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/msg_collect.h"
#include "lib/progress.h"
#include "corpus.h"
#include "tap.h"

static const char cookie[] = "0123456789abcdef0123456789abcdef";

static void put_collect(struct buf *b, int64_t wait, const char *ck)
{
	struct collect_msg m = { PROTO_VERSION, wait, "" };

	snprintf(m.cookie, sizeof m.cookie, "%s", ck);
	msg_put_collect(b, &m);
}

static void test_collect(void)
{
	struct buf b = BUF_INIT;
	struct collect_msg m;

	put_collect(&b, 7, cookie);
	ok(msg_get_collect(b.data, b.len, &m, fresh_why()) == 0, "COLLECT round trip");
	is_int(m.wait, 7, "COLLECT: the wait");
	is_string(m.cookie, cookie, "COLLECT: the cookie");
	is_int(m.version, PROTO_VERSION, "COLLECT: the version");
	ok(msg_get_collect(b.data, b.len - 1, &m, fresh_why()) < 0 && why_text(), "COLLECT: truncated is refused");
	buf_addch(&b, 0);
	ok(msg_get_collect(b.data, b.len, &m, fresh_why()) < 0 && strstr(why_text(), "trailing"),
	   "COLLECT: trailing bytes are refused");
	buf_reset(&b);
	put_collect(&b, 0, cookie);
	ok(msg_get_collect(b.data, b.len, &m, fresh_why()) < 0, "COLLECT: wait 0 is refused");
	buf_reset(&b);
	put_collect(&b, 3, "0123456789ABCDEF0123456789ABCDEF");
	ok(msg_get_collect(b.data, b.len, &m, fresh_why()) < 0, "COLLECT: a cookie not in lower-case hex is refused");
	buf_reset(&b);
	put_collect(&b, 3, "0123");
	ok(msg_get_collect(b.data, b.len, &m, fresh_why()) < 0, "COLLECT: a short cookie is refused");
	buf_release(&b);
}

static void test_step(void)
{
	struct result_msg r;
	struct step_msg s;
	struct buf b = BUF_INIT;

	memset(&r, 0, sizeof r);
	r.status = 3;
	buf_addstr(&r.out, "out");
	buf_addstr(&r.err, "err");
	msg_result_order_add(&r.order, RES_ERR, 3);
	msg_result_order_add(&r.order, RES_OUT, 3);
	msg_put_step(&b, "n.o", "cc -c n.c", &r);
	ok(msg_get_step(b.data, b.len, &s, fresh_why()) == 0, "STEP round trip");
	is_string(s.name, "n.o", "STEP: the name");
	is_string(s.command, "cc -c n.c", "STEP: the command");
	is_int(s.res.status, 3, "STEP: the status");
	is_string((char *)s.res.out.data, "out", "STEP: stdout");
	msg_step_release(&s);
	ok(msg_get_step(b.data, b.len - 1, &s, fresh_why()) < 0 && !s.name, "STEP: truncated is refused");
	/* a RESULT whose order claims more than its output */
	buf_reset(&b);
	msg_result_order_add(&r.order, RES_OUT, 10);
	msg_put_step(&b, "n.o", "cc", &r);
	ok(msg_get_step(b.data, b.len, &s, fresh_why()) < 0 && strstr(why_text(), "order"),
	   "STEP: a RESULT the plugin could not have sent is refused");
	msg_result_release(&r);
	buf_release(&b);
}

static void test_arg(void)
{
	struct collect_msg m;
	char arg[128];

	snprintf(arg, sizeof arg, "42:%s", cookie);
	ok(msg_collect_parse_arg(arg, &m) == 0 && m.wait == 42 && !strcmp(m.cookie, cookie),
	   "the argument WAIT:COOKIE");
	ok(msg_collect_parse_arg("42", &m) < 0, "no cookie: refused");
	snprintf(arg, sizeof arg, "0:%s", cookie);
	ok(msg_collect_parse_arg(arg, &m) < 0, "wait 0: refused");
	snprintf(arg, sizeof arg, "99999999999999999999:%s", cookie);
	ok(msg_collect_parse_arg(arg, &m) < 0, "a wait too large: refused");
	snprintf(arg, sizeof arg, "4:%sx", cookie);
	ok(msg_collect_parse_arg(arg, &m) < 0, "a longer cookie: refused");
}

static struct buf emitted;
static void emit(int fd, const void *p, size_t n)
{
	buf_addch(&emitted, fd == 1 ? 'O' : 'E');
	buf_add(&emitted, p, n);
}

static void test_emit(void)
{
	struct result_msg r;

	memset(&r, 0, sizeof r);
	buf_addstr(&r.out, "ab");
	buf_addstr(&r.err, "xy!note");
	msg_result_order_add(&r.order, RES_OUT, 1);
	msg_result_order_add(&r.order, RES_ERR, 2);
	msg_result_order_add(&r.order, RES_OUT, 1);
	msg_result_emit(&r, emit);
	is_string((char *)emitted.data, "OaExyObE!note", "msg_result_emit: the order the step wrote in, then the notes");
	msg_result_release(&r);
	buf_release(&emitted);
	memset(&r, 0, sizeof r);
	buf_addstr(&r.err, "!note");
	msg_result_emit(&r, emit);
	is_string((char *)emitted.data, "E!note", "msg_result_emit: text no run covers comes last");
	msg_result_release(&r);
	buf_release(&emitted);
}

static void test_progress_msg(void)
{
	struct progress_msg m = { 5, 2, 3, 1, (char *)"dir/a.o" }, g;
	struct buf b = BUF_INIT;

	msg_put_progress(&b, &m);
	ok(msg_get_progress(b.data, b.len, &g, fresh_why()) == 0, "PROGRESS round trip");
	ok(g.total == 5 && g.done == 2 && g.running == 3 && g.always == 1, "PROGRESS: the counts");
	is_string(g.oldest, "dir/a.o", "PROGRESS: the oldest step");
	free(g.oldest);
	ok(msg_get_progress(b.data, b.len - 1, &g, fresh_why()) < 0 && !g.oldest,
	   "PROGRESS: truncated is refused");
	buf_reset(&b);
	m.running = 4;
	msg_put_progress(&b, &m);
	ok(msg_get_progress(b.data, b.len, &g, fresh_why()) < 0 && why_text(),
	   "PROGRESS: more done and running than steps is refused");
	buf_reset(&b);
	m.running = 0;
	m.always = 2;
	msg_put_progress(&b, &m);
	ok(msg_get_progress(b.data, b.len, &g, fresh_why()) < 0, "PROGRESS: a flag not 0 or 1 is refused");
	buf_release(&b);
}

static void test_progress_line(void)
{
	struct progress p = { 2, 5, 1, "s1", 1500000000LL };
	const char *full = "\r\033[Kasynccompile: 2/5 done, 1 running, 2 queued, 1.5s";
	struct buf b = BUF_INIT;
	char want[200];

	progress_format(&b, &p, 80);
	snprintf(want, sizeof want, "%s: s1", full);
	is_string((char *)b.data, want, "the line: counts, time, oldest step");
	buf_reset(&b);
	p.elapsed_ns = 754LL * 1000000000;
	progress_format(&b, &p, 80);
	ok(strstr((char *)b.data, " queued, 12m34s: s1") != NULL, "past a minute: minutes and seconds");
	buf_reset(&b);
	p.elapsed_ns = 1500000000LL;
	p.oldest = "drivers/net/ethernet/intel/e1000e/netdev.o";
	progress_format(&b, &p, 70);
	is_int((int)b.len - 4, 69, "a long name: the line fills width - 1 columns");
	ok(strstr((char *)b.data, ": drivers...netdev.o") != NULL, "... keeping the name's two ends");
	buf_reset(&b);
	progress_format(&b, &p, 30);
	is_int((int)b.len - 4, 29, "a terminal narrower than the counts: cut");
	ok(!strstr((char *)b.data, "drivers"), "... and the name left out");
	buf_reset(&b);
	p.oldest = NULL;
	progress_format(&b, &p, 80);
	is_string((char *)b.data, full, "nothing running long: no name");
	buf_release(&b);
	ok(progress_width(-1) == PROGRESS_WIDTH, "no terminal: the default width");
}

static int write_corpus(const char *dir)
{
	struct buf p = BUF_INIT, st = BUF_INIT;
	struct result_msg r;

	put_collect(&p, 1, cookie);
	frame_put(&st, 0, p.data, p.len);
	corpus_file(dir, "collect", 0, &st);
	buf_reset(&st);
	buf_reset(&p);
	memset(&r, 0, sizeof r);
	r.status = 1;
	buf_addstr(&r.out, "o");
	buf_addstr(&r.err, "e");
	msg_result_order_add(&r.order, RES_OUT, 1);
	msg_result_order_add(&r.order, RES_ERR, 1);
	msg_put_step(&p, "a.o", "cc -c a.c", &r);
	frame_put(&st, 1, p.data, p.len);
	frame_put(&st, 2, p.data, p.len);
	frame_put(&st, PROTO_ID_SHUTDOWN, NULL, 0);
	corpus_file(dir, "steps-shutdown", 7, &st);
	buf_reset(&st);
	buf_reset(&p);
	msg_put_text(&p, MSG_ERROR, "wait 1 is not one this make has");
	frame_put(&st, 0, p.data, p.len);
	corpus_file(dir, "error", 3, &st);
	buf_reset(&st);
	buf_addf(&st, "12:%s", cookie);
	corpus_file(dir, "arg", '1', &st);
	buf_reset(&st);
	buf_reset(&p);
	{
		struct progress_msg m = { 3, 1, 1, 0, (char *)"a.o" };

		msg_put_progress(&p, &m);
		frame_put(&st, 0, p.data, p.len);
		corpus_file(dir, "progress", 5, &st);
	}
	msg_result_release(&r);
	buf_release(&p);
	buf_release(&st);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--write-corpus"))
		return write_corpus(argv[2]);
	test_collect();
	test_step();
	test_progress_msg();
	test_progress_line();
	test_arg();
	test_emit();
	tap_why_release();
	return done_testing();
}
