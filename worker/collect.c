/*
 * collect.c - the collector: asynccompile-worker --collect SOCKET WAIT:COOKIE,
 * the command line a $(async-wait) inside a recipe expands to.  It runs
 * as a recipe line of make's, in its own process: it asks the plugin in
 * that make for the wait's steps over the private socket, writes each
 * step's output to its own stdout and stderr in queue order (so make's
 * -O keeps it in the target's block, in recipe order) and exits with
 * the first failed step's status, so make reports `Error N` and -k, -i
 * and .DELETE_ON_ERROR apply.  It has no children and holds nothing of
 * the jobserver's: the plugin lets the waited steps run on the slot its
 * line holds.  When its make dies the socket ends and it exits at once.
 *
 * The status line: when the plugin sends PROGRESS (it does only for a
 * wait whose line is to draw it: asynccompile(7), PROGRESS), and stderr
 * is a terminal or the config says `always`, the collector draws the
 * line half a second into its wait, redraws it four times a second, and
 * erases it before each step's output and at the end.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/msg_collect.h"
#include "lib/msgtab.h"
#include "lib/progress.h"
#include "worker/diag.h"
#include "worker/worker.h"

static void collect_write(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return; /* nobody reads it any more: make is gone */
		c += w;
		n -= (size_t)w;
	}
}

static int collect_connect(const char *path)
{
	struct sockaddr_un sa;
	int fd;

	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sa.sun_path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* The status line: what the plugin last said, and whether it is on stderr. */
struct collect_line {
	struct progress_msg last;  /* last.oldest NULL: nothing said yet */
	int on;                    /* draw: PROGRESS came, and a terminal or `always` */
	int drawn;
	int64_t since;
};

#define COLLECT_LINE_FIRST_NS (500 * 1000000LL)
#define COLLECT_LINE_EVERY_MS 250

static void collect_line_erase(struct collect_line *l)
{
	if (l->drawn)
		collect_write(2, PROGRESS_ERASE, sizeof PROGRESS_ERASE - 1);
	l->drawn = 0;
}

static void collect_line_draw(struct collect_line *l)
{
	struct progress p = {
		.done = l->last.done, .total = l->last.total, .running = l->last.running,
		.oldest = l->last.oldest, .elapsed_ns = proto_now_ns() - l->since,
	};
	struct buf b = BUF_INIT;

	if (!l->on || p.elapsed_ns < COLLECT_LINE_FIRST_NS)
		return;
	progress_format(&b, &p, progress_width(2));
	collect_write(2, b.data, b.len);
	buf_release(&b);
	l->drawn = 1;
}

/* A PROGRESS frame: 0, or -1 when it is malformed. */
static int collect_line_update(struct collect_line *l, const void *p, size_t n)
{
	struct progress_msg m;
	struct buf err = BUF_INIT;

	if (msg_get_progress(p, n, &m, &err) < 0) {
		collect_line_erase(l);
		diag_warn("--collect: bad message from make: %s", (char *)err.data);
		buf_release(&err);
		return -1;
	}
	free(l->last.oldest);
	l->last = m;
	l->on = m.always || isatty(2);
	collect_line_draw(l);
	return 0;
}

/* Wait for the next frame, redrawing the line meanwhile. */
static void collect_line_wait(struct collect_line *l, int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	while (l->on) {
		int64_t left = l->since + COLLECT_LINE_FIRST_NS - proto_now_ns();
		int ms = left > 0 ? (int)(left / 1000000) + 1 : COLLECT_LINE_EVERY_MS;
		int r = poll(&pfd, 1, ms);

		if (r > 0 || (r < 0 && errno != EINTR))
			return;
		if (!r)
			collect_line_draw(l);
	}
}

/* Status make sees for the first failure: 1..255, as `exit N` could give. */
static int collect_exit_status(int status)
{
	return status > 0 && status < 256 ? status : 1;
}

/* One wait's collection, as the plugin's messages bring it. */
struct collector {
	struct collect_line line;
	int64_t wait;        /* its number */
	int64_t next;        /* the step expected next: 1, 2, ... */
	struct buf fail;     /* "  NAME (status N): COMMAND" of each failed step */
	int nfail, first;    /* how many failed; the first one's status */
};

/* Handlers return 0 to go on, 1 when the collection ends with an error. */
static int collector_on_progress(void *ctx, const struct msg_in *m)
{
	return collect_line_update(&((struct collector *)ctx)->line, m->p, m->n) < 0;
}

static int collector_on_error(void *ctx, const struct msg_in *m)
{
	struct collector *c = ctx;

	collect_line_erase(&c->line);
	diag_warn("--collect: make refused wait %lld: %.*s", (long long)c->wait, m->text_len,
		  m->text);
	return 1;
}

static int collector_on_step(void *ctx, const struct msg_in *m)
{
	struct collector *c = ctx;
	struct step_msg st;
	struct buf err = BUF_INIT;

	if (m->id != c->next || msg_get_step(m->p, m->n, &st, &err) < 0) {
		collect_line_erase(&c->line);
		diag_warn("--collect: bad message from make: %s", m->id != c->next
			  ? "a step out of order" : (char *)err.data);
		buf_release(&err);
		return 1;
	}
	c->next++;
	if (st.res.out.len || st.res.err.len)
		collect_line_erase(&c->line);
	msg_result_emit(&st.res, collect_write);
	if (st.res.status) {
		if (!c->nfail++)
			c->first = st.res.status;
		buf_addf(&c->fail, "  %s (status %d): %s\n", st.name, (int)st.res.status,
			 st.command);
	}
	msg_step_release(&st);
	return 0;
}

static const struct msg_route collector_routes[] = {
	{ MSG_STEP, MSG_ON_JOB, collector_on_step },
	{ MSG_PROGRESS, MSG_ON_CONTROL, collector_on_progress },
	{ MSG_ERROR, MSG_ON_CONTROL, collector_on_error },
};
static const struct msg_table collector_table = MSG_TABLE("collector", collector_routes);

int collect_main(const char *path, const char *arg)
{
	struct collect_msg hello;
	struct frame_decoder d;
	struct buf payload = BUF_INIT;
	int fd, rc = COLLECT_EXIT_ERROR;
	struct collector c = { .line = { .since = proto_now_ns() }, .next = 1 };

	if (msg_collect_parse_arg(arg, &hello) < 0) {
		diag_warn("--collect: '%s' is not a wait (WAIT:COOKIE); this command is "
			  "what $(async-wait) expands to in a recipe, not one to run by hand", arg);
		return COLLECT_EXIT_ERROR;
	}
	fd = collect_connect(path);
	if (fd < 0) {
		diag_warn("--collect: no make is waiting at %s (it has exited, or this "
			  "line was not started by the make whose recipe expanded it):", path);
		return COLLECT_EXIT_ERROR;
	}
	msg_put_collect(&payload, &hello);
	if (frame_write_all(fd, PROTO_ID_CONTROL, payload.data, payload.len) < 0) {
		diag_warn("--collect: cannot ask the make at %s for wait %lld:", path,
			  (long long)hello.wait);
		close(fd);
		buf_release(&payload);
		return COLLECT_EXIT_ERROR;
	}
	buf_release(&payload);
	c.wait = hello.wait;
	frame_decoder_init(&d);
	for (;;) {
		struct buf err = BUF_INIT;
		int r;

		collect_line_wait(&c.line, fd);
		r = frame_read_one(fd, &d);
		if (r <= 0) {
			collect_line_erase(&c.line);
			if (r == 0)
				diag_warn("--collect: the make that queued wait %lld exited "
					  "before its steps ended", (long long)hello.wait);
			else if (d.err.len)
				diag_warn("--collect: bad frame from make: %s", (char *)d.err.data);
			else
				diag_warn("--collect: reading from make:");
			break;
		}
		if (d.id == PROTO_ID_SHUTDOWN) {
			collect_line_erase(&c.line);
			if (c.nfail) {
				struct buf head = BUF_INIT;

				buf_addf(&head, "asynccompile: %d build step%s failed:\n", c.nfail,
					 c.nfail == 1 ? "" : "s");
				collect_write(2, head.data, head.len);
				collect_write(2, c.fail.data, c.fail.len);
				buf_release(&head);
			}
			rc = c.nfail ? collect_exit_status(c.first) : 0;
			break;
		}
		r = msg_dispatch(&collector_table, &c, d.id, d.payload.data, d.payload.len, &err);
		if (r < 0) {
			collect_line_erase(&c.line);
			diag_warn("--collect: bad message from make: %s", (char *)err.data);
		}
		buf_release(&err);
		if (r)
			break;
		frame_next(&d);
	}
	collect_line_erase(&c.line);
	free(c.line.last.oldest);
	frame_decoder_release(&d);
	buf_release(&c.fail);
	close(fd);
	return rc;
}
