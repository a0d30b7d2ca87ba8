#include "plugin/js.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/err.h"

static const char *js_next_word(const char *s, size_t *len)
{
	while (*s == ' ' || *s == '\t')
		s++;
	*len = strcspn(s, " \t");
	return s;
}

int js_parse_auth(const char *mf, struct js_auth *a)
{
	const char *w, *last = NULL;
	size_t n, lastlen = 0;
	static const char *const keys[] = { "--jobserver-auth=", "--jobserver-fds=" };

	memset(a, 0, sizeof *a);
	a->rfd = a->wfd = -1;
	if (!mf)
		return 0;
	for (w = js_next_word(mf, &n); n; w = js_next_word(w + n, &n)) {
		for (size_t k = 0; k < 2; k++) {
			size_t kl = strlen(keys[k]);
			if (n > kl && !strncmp(w, keys[k], kl)) {
				last = w + kl;
				lastlen = n - kl;
			}
		}
	}
	if (!last)
		return 0;
	if (lastlen > 5 && !strncmp(last, "fifo:", 5)) {
		a->style = JS_FIFO;
		a->path = strndup(last + 5, lastlen - 5);
		return a->path != NULL;
	}
	{
		char tmp[64];
		int r, wr;
		char c;

		if (lastlen >= sizeof tmp)
			return 0;
		memcpy(tmp, last, lastlen);
		tmp[lastlen] = 0;
		if (sscanf(tmp, "%d,%d%c", &r, &wr, &c) != 2 || r < 0 || wr < 0)
			return 0;
		a->style = JS_PIPE;
		a->rfd = r;
		a->wfd = wr;
	}
	return 1;
}

void js_auth_release(struct js_auth *a)
{
	free(a->path);
	a->path = NULL;
	a->style = JS_NONE;
}

int js_auth_equal(const struct js_auth *a, const struct js_auth *b)
{
	if (a->style != b->style)
		return 0;
	if (a->style == JS_PIPE)
		return a->rfd == b->rfd && a->wfd == b->wfd;
	if (a->style == JS_FIFO)
		return !strcmp(a->path, b->path);
	return 1;
}

/* "-j", "-j4", "--jobs", "--jobs=4"; *consumed_next when the count is the next word. */
static int js_jobs_word(const char *w, size_t n, const char *next, size_t nn, int *consumed_next)
{
	char tmp[32];
	const char *num = NULL;
	size_t numlen = 0;

	*consumed_next = 0;
	if (n >= 2 && w[0] == '-' && w[1] == 'j') {
		num = w + 2;
		numlen = n - 2;
	} else if (n >= 6 && !strncmp(w, "--jobs", 6) && (n == 6 || w[6] == '=')) {
		num = w + (n == 6 ? 6 : 7);
		numlen = n == 6 ? 0 : n - 7;
	} else {
		return 0;
	}
	if (!numlen && next && nn && nn < sizeof tmp && strspn(next, "0123456789") >= nn) {
		num = next;
		numlen = nn;
		*consumed_next = 1;
	}
	if (!numlen)
		return -1;
	if (numlen >= sizeof tmp || strspn(num, "0123456789") < numlen)
		return 0;
	memcpy(tmp, num, numlen);
	tmp[numlen] = 0;
	long v = strtol(tmp, NULL, 10);
	return v > 0 && v < INT_MAX ? (int)v : 0;
}

void js_parse_flags(const char *mf, struct make_flags *f)
{
	const char *w, *nw;
	size_t n, nn;
	int first = 1, consumed;

	memset(f, 0, sizeof *f);
	if (!mf)
		return;
	for (w = js_next_word(mf, &n); n; w = nw, n = nn, first = 0) {
		nw = js_next_word(w + n, &nn);
		if (w[0] == '-' && w[1] == '-' && n == 2)
			break; /* variable assignments follow */
		if (first && w[0] != '-') {
			/*
			 * make puts single-letter flags first, without a dash; a
			 * user's MAKEFLAGS=j4 (or kj 4) in the environment is read
			 * the same way, as -j4.
			 */
			for (size_t i = 0; i < n; i++) {
				if (w[i] == 'j') {
					size_t d = strspn(w + i + 1, "0123456789");

					if (i + 1 + d == n && d)
						f->jobs = atoi(w + i + 1);
					else if (i + 1 == n && nn && strspn(nw, "0123456789") >= nn) {
						f->jobs = atoi(nw);
						nw = js_next_word(nw + nn, &nn);
					} else if (i + 1 == n)
						f->jobs = -1;
					break;
				}
				if (strchr("CfIloWEO", w[i]))
					break; /* the rest is that option's argument */
				switch (w[i]) {
				case 'q': f->question = 1; /* fall through */
				case 'n': f->dry_run = 1; break;
				case 's': f->silent = 1; break;
				}
			}
			continue;
		}
		int j = js_jobs_word(w, n, nw, nn, &consumed);
		if (j)
			f->jobs = j;
		if (consumed)
			nw = js_next_word(nw + nn, &nn);
	}
}

/*
 * One argv word of make's command line: bundled short options ("-kj4"),
 * stopping at the first option that takes an argument.
 */
static int js_short_jobs(const char *w, const char *next, int *consumed)
{
	static const char takes_arg[] = "CfIloWEO";

	*consumed = 0;
	for (const char *c = w + 1; *c; c++) {
		if (*c == 'j') {
			if (c[1])
				return strspn(c + 1, "0123456789") == strlen(c + 1) ? atoi(c + 1) : 0;
			if (next && *next && strspn(next, "0123456789") == strlen(next)) {
				*consumed = 1;
				return atoi(next);
			}
			return -1;
		}
		if (strchr(takes_arg, *c))
			return 0;
	}
	return 0;
}

int js_cmdline_jobs(void)
{
	static int cached = -2;
	char buf[65536];
	ssize_t n;
	int fd, jobs = 0, consumed, v;
	size_t off;

	/* make's argv does not change; this runs for every queued job */
	if (cached != -2)
		return cached;
	cached = 0;

	fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	for (off = strlen(buf) + 1; off < (size_t)n; off += strlen(buf + off) + 1) {
		const char *w = buf + off;
		size_t wl = strlen(w);
		const char *next = off + wl + 1 < (size_t)n ? w + wl + 1 : NULL;

		if (!strcmp(w, "--"))
			break;
		if (w[0] != '-' || !w[1])
			continue;
		if (w[1] == '-')
			v = js_jobs_word(w, wl, next, next ? strlen(next) : 0, &consumed);
		else
			v = js_short_jobs(w, next, &consumed);
		if (v)
			jobs = v;
		if (consumed)
			off += wl + 1;
	}
	cached = jobs;
	return jobs;
}

enum js_pipe_state { JS_PIPE_OK, JS_PIPE_CLOSED, JS_PIPE_NOT_ONE };

/* Are r and w open, and the two ends of one pipe (whose identity *st gets)? */
static enum js_pipe_state js_pipe_check(int r, int w, struct stat *st)
{
	struct stat st2;

	if (r < 0 || w < 0 || fcntl(r, F_GETFD) < 0 || fcntl(w, F_GETFD) < 0)
		return JS_PIPE_CLOSED;
	if (fstat(r, st) < 0 || fstat(w, &st2) < 0 || !S_ISFIFO(st->st_mode) ||
	    st->st_ino != st2.st_ino || st->st_dev != st2.st_dev)
		return JS_PIPE_NOT_ONE;
	return JS_PIPE_OK;
}

int js_identify(struct js_auth *a)
{
	struct stat st;

	if (a->style != JS_PIPE || js_pipe_check(a->rfd, a->wfd, &st) != JS_PIPE_OK)
		return -1;
	a->ident = 1;
	a->dev = st.st_dev;
	a->ino = st.st_ino;
	return 0;
}

/* make's write descriptor on the fifo: the one opened write-only that is not ours */
static int js_find_make_wfd(const struct jobserver *js)
{
	struct stat st;

	for (int fd = 3; fd < 1024; fd++) {
		if (fd == js->rfd || fstat(fd, &st) < 0 || st.st_dev != js->dev || st.st_ino != js->ino)
			continue;
		int fl = fcntl(fd, F_GETFL);
		if (fl >= 0 && (fl & O_ACCMODE) == O_WRONLY)
			return fd;
	}
	return -1;
}

int js_make_draining(const struct jobserver *js)
{
	struct stat st;

	if (js->make_wfd < 0)
		return 0;
	return fstat(js->make_wfd, &st) < 0 || st.st_dev != js->dev || st.st_ino != js->ino;
}

int js_open(struct jobserver *js, const struct js_auth *a, struct buf *err)
{
	struct stat st;
	char path[64];
	const char *why = NULL;

	memset(js, 0, sizeof *js);
	js->rfd = js->wfd = js->make_wfd = -1;
	js->auth = *a;
	js->auth.path = NULL;
	if (a->style == JS_PIPE) {
		enum js_pipe_state ps = js_pipe_check(a->rfd, a->wfd, &st);

		if (ps == JS_PIPE_NOT_ONE) {
			return err_fail(err, "jobserver descriptors %d,%d are not the two ends of "
					"one pipe; running one job at a time", a->rfd, a->wfd);
		}
		/* a pipe other than the one recorded at load time: ours, not make's */
		if (ps == JS_PIPE_CLOSED ||
		    (a->ident && (st.st_dev != a->dev || st.st_ino != a->ino))) {
			return err_fail(err, "jobserver descriptors %d,%d are not open "
					"(recursive make run without '+'?); running one job at a time",
					a->rfd, a->wfd);
		}
		snprintf(path, sizeof path, "/proc/self/fd/%d", a->rfd);
		js->rfd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	} else if (a->style == JS_FIFO) {
		js->auth.path = strdup(a->path);
		if (!js->auth.path)
			return -1;
		js->rfd = open(a->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	} else {
		return -1;
	}
	if (js->rfd < 0 || fstat(js->rfd, &st) < 0)
		why = strerror(errno);
	else if (!S_ISFIFO(st.st_mode))
		why = "not a fifo or pipe"; /* errno says nothing here */
	if (why) {
		/* the reason mid-sentence: the trailing-colon rule cannot word it */
		err_fail(err, "cannot open the jobserver %s: %s; running one job at a time",
			 a->style == JS_FIFO ? a->path : "pipe", why);
		if (js->rfd >= 0)
			close(js->rfd);
		js->rfd = -1;
		free(js->auth.path);
		js->auth.path = NULL;
		return -1;
	}
	js->dev = st.st_dev;
	js->ino = st.st_ino;
	js->make_wfd = a->style == JS_PIPE ? a->wfd : js_find_make_wfd(js);
	return 0;
}

int js_write_end(const struct jobserver *js)
{
	struct stat st;
	int fd;

	if (js->auth.style == JS_FIFO)
		fd = open(js->auth.path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	else
		fd = fcntl(js->auth.wfd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || st.st_dev != js->dev || st.st_ino != js->ino) {
		/* make closed its end and the number was reused */
		close(fd);
		errno = EBADF;
		return -1;
	}
	return fd;
}

int js_try_acquire(struct jobserver *js, unsigned char *tok)
{
	ssize_t n;

	if (js->rfd < 0) {
		errno = EBADF;
		return -1;
	}
	if (js->wfd < 0) {
		js->wfd = js_write_end(js);
		if (js->wfd < 0)
			return -1;
	}
	do
		n = read(js->rfd, tok, 1);
	while (n < 0 && errno == EINTR);
	if (n == 1) {
		js->held++;
		return 1;
	}
	if (!js->held) {
		close(js->wfd);
		js->wfd = -1;
	}
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 0;
	if (n == 0)
		errno = EPIPE;
	return -1;
}

int js_release(struct jobserver *js, unsigned char tok)
{
	ssize_t n;
	int ret = 0;

	if (!js->held || js->wfd < 0) {
		errno = EINVAL;
		return -1;
	}
	do
		n = write(js->wfd, &tok, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		ret = -1;
	js_forget(js);
	return ret;
}

void js_forget(struct jobserver *js)
{
	if (js->held && !--js->held && js->wfd >= 0) {
		close(js->wfd);
		js->wfd = -1;
	}
}

unsigned js_held(const struct jobserver *js)
{
	return js->held;
}

int js_uses(const struct jobserver *js, const struct js_auth *a)
{
	return js->rfd >= 0 && js_auth_equal(&js->auth, a);
}

int js_poll_fd(const struct jobserver *js)
{
	return js->rfd;
}

int js_sees_make(const struct jobserver *js)
{
	return js->make_wfd >= 0;
}

enum js_style js_style(const struct jobserver *js)
{
	return js->auth.style;
}

void js_close(struct jobserver *js)
{
	if (js->rfd >= 0)
		close(js->rfd);
	if (js->wfd >= 0)
		close(js->wfd);
	js->rfd = js->wfd = js->make_wfd = -1;
	js->held = 0;
	free(js->auth.path);
	js->auth.path = NULL;
	js->auth.style = JS_NONE;
}

int js_give_back(const struct js_auth *a, const unsigned char *tok, size_t n)
{
	struct jobserver js;
	struct buf err = BUF_INIT;
	int fd = -1, r = -1;

	if (js_open(&js, a, &err) == 0 && (fd = js_write_end(&js)) >= 0) {
		r = 0;
		while (n) {
			ssize_t w = write(fd, tok, n);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				r = -1;
				break;
			}
			tok += w;
			n -= (size_t)w;
		}
		close(fd);
	}
	js_close(&js);
	buf_release(&err);
	return r;
}
