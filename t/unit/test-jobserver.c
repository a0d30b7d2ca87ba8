/* Unit tests for plugin/js.c: MAKEFLAGS parsing and token traffic. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin/js.h"
#include "tap.h"

static void test_parse_auth(void)
{
	struct js_auth a;

	ok(js_parse_auth(" -j4 --jobserver-auth=3,4", &a) == 1 && a.style == JS_PIPE &&
	   a.rfd == 3 && a.wfd == 4, "pipe auth parsed");
	ok(js_parse_auth("-j --jobserver-auth=3,4 --jobserver-auth=fifo:/tmp/x y", &a) == 1 &&
	   a.style == JS_FIFO && !strcmp(a.path, "/tmp/x"), "last --jobserver-auth wins (fifo)");
	js_auth_release(&a);
	ok(js_parse_auth("--jobserver-auth=fifo:/a --jobserver-auth=5,6", &a) == 1 &&
	   a.style == JS_PIPE && a.rfd == 5, "last --jobserver-auth wins (pipe)");
	ok(js_parse_auth("--jobserver-fds=7,8", &a) == 1 && a.rfd == 7 && a.wfd == 8,
	   "old --jobserver-fds spelling");
	ok(js_parse_auth("-j2 --jobserver-auth=-2,-2", &a) == 0, "negative fds mean no jobserver");
	ok(js_parse_auth("k -j2", &a) == 0, "no auth word");
	ok(js_parse_auth(NULL, &a) == 0, "NULL MAKEFLAGS");
	ok(js_parse_auth("--jobserver-auth=3,4x", &a) == 0, "garbage after fds rejected");
}

static void test_parse_flags(void)
{
	struct make_flags f;

	js_parse_flags("ks -j3 --jobserver-auth=3,4", &f);
	ok(f.silent && !f.dry_run && f.jobs == 3, "ks -j3");
	js_parse_flags("n -j", &f);
	ok(f.dry_run && !f.question && f.jobs == -1, "-j without a number");
	js_parse_flags("--no-print-directory", &f);
	ok(!f.silent && !f.dry_run && f.jobs == 0, "long options only");
	js_parse_flags("q -- FOO=-j9 n=1", &f);
	ok(f.dry_run && f.question && f.jobs == 0, "assignments after -- are not flags; q questions");
	js_parse_flags(" -j 5", &f);
	ok(f.jobs == 5, "-j N as two words");
	/* a user's MAKEFLAGS in the environment: the first word is -WORD to make */
	js_parse_flags("j4", &f);
	is_int(f.jobs, 4, "j4 without a dash");
	js_parse_flags("kj4 FOO=1", &f);
	is_int(f.jobs, 4, "kj4: letters, then j with its number");
	js_parse_flags("sj 6", &f);
	ok(f.silent, "sj 6: s is -s");
	is_int(f.jobs, 6, "sj 6: the number as the next word");
	js_parse_flags("j", &f);
	is_int(f.jobs, -1, "j alone: no limit");
	js_parse_flags("Cj4", &f);
	is_int(f.jobs, 0, "Cj4: j4 is -C's directory, not -j");
}

static void test_tokens(void)
{
	struct jobserver js;
	struct js_auth a = { .style = JS_PIPE, .rfd = -1, .wfd = -1 };
	struct buf err = BUF_INIT;
	int p[2];
	unsigned char t1, t2, t3, back[8];

	if (pipe(p) < 0)
		abort();
	(void)!write(p[1], "xy", 2);
	a.rfd = p[0];
	a.wfd = p[1];
	ok(js_open(&js, &a, &err) == 0, "open a pipe jobserver");
	ok(!(fcntl(p[0], F_GETFL) & O_NONBLOCK), "make's own descriptor stays blocking");
	ok(js_try_acquire(&js, &t1) == 1 && js_try_acquire(&js, &t2) == 1, "two tokens taken");
	ok(js_try_acquire(&js, &t3) == 0, "third try says 'none now' without blocking");
	ok(js.wfd >= 0 && js.held == 2, "a write end is held while tokens are held");
	ok(js_release(&js, t2) == 0 && js_release(&js, t1) == 0, "tokens given back");
	ok(js.wfd < 0 && js.held == 0, "no write end held once all tokens are back");
	ok(read(p[0], back, sizeof back) == 2 && ((back[0] == 'x' && back[1] == 'y') ||
						   (back[0] == 'y' && back[1] == 'x')),
	   "the same bytes came back");
	ok(js_try_acquire(&js, &t1) == 0 && js.wfd < 0, "an empty pipe leaves no write end open");
	ok(!js_make_draining(&js), "make's write end is open: not draining");
	js_close(&js);

	/* identity recorded now must still match later */
	ok(js_identify(&a) == 0 && a.ident, "a live pipe is identified");
	{
		int q[2];
		struct js_auth other = a;

		if (pipe(q) < 0)
			abort();
		other.rfd = q[0];
		other.wfd = q[1];
		buf_reset(&err);
		ok(js_open(&js, &other, &err) == -1, "another pipe under the recorded identity is refused");
		close(q[0]);
		close(q[1]);
	}
	ok(js_open(&js, &a, &err) == 0, "the identified pipe opens");
	(void)!write(p[1], "z", 1);
	ok(js_try_acquire(&js, &t1) == 1, "token taken");
	{
		int saved = dup(p[1]);
		close(p[1]);  /* what the top-level make does at exit */
		ok(js_make_draining(&js), "make closing its write end is seen");
		ok(js_release(&js, t1) == 0, "the token still goes back through our own write end");
		(void)!dup2(saved, p[1]);
		close(saved);
	}
	js_close(&js);

	/* make closed its write end and the number now names a file */
	close(p[1]);
	int f = open("/dev/null", O_WRONLY);
	if (f != p[1]) {
		(void)!dup2(f, p[1]);
		close(f);
	}
	a.rfd = p[0];
	a.wfd = p[1];
	buf_reset(&err);
	ok(js_open(&js, &a, &err) == -1 && strstr((char *)err.data, "not the two ends of one pipe"),
	   "a reused descriptor number is detected: %s", err.data ? (char *)err.data : "");
	close(p[0]);
	close(p[1]);
	buf_reset(&err);
	ok(js_open(&js, &a, &err) == -1 && strstr((char *)err.data, "are not open"),
	   "closed descriptors are detected: %s", err.data ? (char *)err.data : "");
	buf_release(&err);
}

static void test_fifo(void)
{
	char dir[] = "/tmp/js-test.XXXXXX", path[64];
	struct jobserver js;
	struct js_auth a = { .style = JS_FIFO, .rfd = -1, .wfd = -1, .path = path };
	struct buf err = BUF_INIT;
	unsigned char t;
	int r, w, fd, rc;

	if (!mkdtemp(dir))
		abort();
	snprintf(path, sizeof path, "%s/fifo", dir);
	mkfifo(path, 0600);
	r = open(path, O_RDONLY | O_NONBLOCK);
	w = open(path, O_WRONLY);
	(void)!write(w, "z", 1);
	ok(js_open(&js, &a, &err) == 0, "open a fifo jobserver");
	ok(js.make_wfd == w, "make's write descriptor on the fifo is found (%d)", js.make_wfd);
	ok(js_try_acquire(&js, &t) == 1 && t == 'z', "fifo token read");
	ok(js_release(&js, t) == 0, "fifo token returned");
	ok(read(r, &t, 1) == 1 && t == 'z', "fifo holds the byte again");
	close(w);
	ok(js_make_draining(&js), "fifo: make closing its write end is seen");
	w = open("/dev/null", O_WRONLY);
	js_close(&js);
	close(r);
	close(w);
	unlink(path);

	/* a --jobserver-auth=fifo: that names no fifo says why, in words */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || close(fd))
		abort();
	rc = js_open(&js, &a, &err);
	ok(rc == -1 && err.data &&
	   strstr((char *)err.data, "/fifo: not a fifo or pipe; running one job at a time"),
	   "a regular file is refused as not a fifo: %s", err.data ? (char *)err.data : "");
	buf_reset(&err);
	unlink(path);
	rc = js_open(&js, &a, &err);
	ok(rc == -1 && err.data &&
	   strstr((char *)err.data, "/fifo: No such file or directory; running one job at a time"),
	   "a missing fifo names errno's reason: %s", err.data ? (char *)err.data : "");
	rmdir(dir);
	buf_release(&err);
}

int main(void)
{
	test_parse_auth();
	test_parse_flags();
	test_tokens();
	test_fifo();
	return done_testing();
}
