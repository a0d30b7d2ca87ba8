/*
 * Recipe waits: the waits collectors claim, their connections, and the
 * slot each connected collector lends to its steps.  See collect.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "plugin/collect.h"
#include "plugin/engine.h"
#include "plugin/waitsock.h"

/* A COLLECT message is a few dozen bytes: a longer frame is refused. */
#define COLLECT_MAX_HELLO 4096
/* Connections that have not said which wait they collect, at most. */
#define COLLECT_MAX_PENDING 64

struct collect_conn {
	int fd;
	struct frame_decoder dec;
	struct frame_outq out;
	struct collect_wait *wait; /* the wait it collects, once claimed */
	int closing;               /* all is queued: close once it is written */
	int dead;                  /* to be freed after this round of events */
	struct collect_conn *next;
};

struct collect_wait {
	int64_t id;
	char cookie[COLLECT_COOKIE_HEX + 1];
	struct job **jobs;         /* in queue order; sent ones are NULL */
	size_t n, sent;
	struct collect_conn *conn; /* the collector, once it claimed the wait */
	int lent;                  /* one of the jobs runs on the collector's slot */
	struct collect_wait *next;
};

static struct {
	int listen_fd;
	int64_t next_id;
	struct collect_wait *waits;
	struct collect_conn *conns;
	size_t nconns;
	struct collect_conn **polled; /* conns in the order collect_pollfds gave them */
	size_t cap;
} C = { .listen_fd = -1 };

int collect_open(struct buf *err)
{
	if (C.listen_fd < 0)
		C.listen_fd = waitsock_listen(err);
	return C.listen_fd < 0 ? -1 : 0;
}

const char *collect_socket(void)
{
	return waitsock_path();
}

int64_t collect_add(struct job **jobs, size_t n, char cookie[COLLECT_COOKIE_HEX + 1])
{
	struct collect_wait *w = calloc(1, sizeof *w);
	unsigned char rnd[COLLECT_COOKIE_BYTES];

	if (!w || !(w->jobs = malloc((n ? n : 1) * sizeof *w->jobs)))
		abort();
	/* a guess at the cookie only ever meets a clear refusal; the peer check guards too */
	if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
		for (size_t i = 0; i < sizeof rnd; i++)
			rnd[i] = (unsigned char)(rand() ^ (int)proto_now_ns() >> (i % 8));
	for (size_t i = 0; i < sizeof rnd; i++)
		snprintf(w->cookie + 2 * i, 3, "%02x", rnd[i]);
	memcpy(cookie, w->cookie, sizeof w->cookie);
	memcpy(w->jobs, jobs, n * sizeof *jobs);
	w->n = n;
	w->id = ++C.next_id;
	for (size_t i = 0; i < n; i++)
		jobs[i]->wait = w;
	w->next = C.waits;
	C.waits = w;
	return w->id;
}

static void collect_unlink_wait(struct collect_wait *w)
{
	struct collect_wait **pp = &C.waits;

	while (*pp && *pp != w)
		pp = &(*pp)->next;
	if (*pp)
		*pp = w->next;
	if (w->conn)
		w->conn->wait = NULL;
	free(w->jobs);
	free(w);
}

/* Its collector is gone (or make exits): nobody will report its steps. */
static void collect_abandon(struct collect_wait *w)
{
	for (size_t i = w->sent; i < w->n; i++) {
		w->jobs[i]->wait = NULL;
		engine_collect_abandon(w->jobs[i]);
	}
	collect_unlink_wait(w);
}

/*
 * A connection that failed is only marked dead: its wait is abandoned
 * in collect_reap(), never from inside a backend's report (collect_ended),
 * where cancelling other jobs would re-enter the backend.
 */
static void collect_flush(struct collect_conn *c)
{
	if (c->dead)
		return;
	if (frame_outq_flush(c->fd, &c->out) < 0 && errno != EAGAIN) {
		c->dead = 1; /* the collector is gone */
		return;
	}
	if (c->closing && !frame_outq_pending(&c->out))
		c->dead = 1;
}

/* Send what is in order now; the last step sent ends the wait. */
static void collect_send(struct collect_wait *w)
{
	struct collect_conn *c = w->conn;
	struct buf p = BUF_INIT;

	while (w->sent < w->n && w->jobs[w->sent]->state == JOB_DONE) {
		struct job *j = w->jobs[w->sent];

		buf_reset(&p);
		msg_put_step(&p, j->name, j->command, &j->res);
		frame_put(&c->out.buf, (int64_t)++w->sent, p.data, p.len);
		w->jobs[w->sent - 1] = NULL;
		j->wait = NULL;
		engine_collect_forget(j);
	}
	buf_release(&p);
	if (w->sent == w->n) {
		frame_put(&c->out.buf, PROTO_ID_SHUTDOWN, NULL, 0);
		c->closing = 1;
		collect_unlink_wait(w);
	}
	collect_flush(c);
}

static void collect_refuse(struct collect_conn *c, const char *why)
{
	struct buf p = BUF_INIT;

	msg_put_text(&p, MSG_ERROR, why);
	frame_put(&c->out.buf, PROTO_ID_CONTROL, p.data, p.len);
	buf_release(&p);
	c->closing = 1;
	collect_flush(c);
}

static void collect_claim(struct collect_conn *c, const void *p, size_t n)
{
	struct collect_msg m;
	struct collect_wait *w;
	struct buf why = BUF_INIT;

	if (msg_get_collect(p, n, &m, &why) < 0)
		goto refuse;
	if (m.version != PROTO_VERSION) {
		buf_addf(&why, "the collector speaks protocol %" PRIu32 ", this make's plugin %d "
			 "(two installations mixed?)", m.version, PROTO_VERSION);
		goto refuse;
	}
	if (waitsock_peer_check(c->fd, &why) < 0)
		goto refuse;
	for (w = C.waits; w && w->id != m.wait; w = w->next)
		;
	if (!w || strcmp(w->cookie, m.cookie) || w->conn) {
		buf_addf(&why, "wait %" PRId64 " is not one this make (pid %ld) has for a "
			 "collector%s", m.wait, (long)getpid(),
			 w && w->conn ? ": another collector has it" : "");
		goto refuse;
	}
	c->wait = w;
	w->conn = c;
	collect_send(w);
	return;
refuse:
	collect_refuse(c, (char *)why.data);
	buf_release(&why);
}

static void collect_accept(void)
{
	int fd;

	size_t pending = 0;

	for (struct collect_conn *c = C.conns; c; c = c->next)
		pending += !c->wait && !c->closing;
	while ((fd = waitsock_accept(C.listen_fd)) >= 0) {
		struct collect_conn *c;

		if (pending >= COLLECT_MAX_PENDING) {
			close(fd);
			continue;
		}
		pending++;
		c = calloc(1, sizeof *c);
		if (!c)
			abort();
		c->fd = fd;
		frame_decoder_init(&c->dec);
		c->dec.max_len = COLLECT_MAX_HELLO;
		c->next = C.conns;
		C.conns = c;
		C.nconns++;
	}
}

/* Bytes from a collector: its COLLECT, and after that nothing at all. */
static int collect_on_frame(void *ctx, struct frame_decoder *d)
{
	struct collect_conn *c = ctx;

	if (c->wait) {
		collect_abandon(c->wait);
		collect_refuse(c, "a message after COLLECT");
	} else if (d->id != PROTO_ID_CONTROL) {
		collect_refuse(c, "the first frame must be a COLLECT message");
	} else {
		collect_claim(c, d->payload.data, d->payload.len);
	}
	return c->closing;
}

static void collect_read(struct collect_conn *c)
{
	char one;
	ssize_t r;
	size_t n;

	if (!c->closing && !c->wait) {
		switch (frame_read(c->fd, &c->dec, 0, collect_on_frame, c, &n)) {
		case FRAME_R_AGAIN: case FRAME_R_OK: case FRAME_R_STOP:
			return;
		case FRAME_R_BAD:
			if (n) { /* malformed, not cut off */
				/* a frame only too long for a COLLECT, or one that is not framed */
				collect_refuse(c, c->dec.len > COLLECT_MAX_HELLO &&
					       c->dec.len <= PROTO_MAX_PAYLOAD && c->dec.id >= 0 ?
					       "the first frame must be a COLLECT message" :
					       (char *)c->dec.err.data);
				return;
			}
			/* fall through */
		default:
			c->dead = 1; /* the collector is gone; collect_reap() abandons its wait */
			return;
		}
	}
	/* after COLLECT, or refused: only its end matters */
	r = read(c->fd, &one, 1);
	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (r <= 0) {
		c->dead = 1;
		return;
	}
	if (c->wait && !c->closing) {
		collect_abandon(c->wait);
		collect_refuse(c, "a message after COLLECT");
	}
}

size_t collect_nfds(void)
{
	return 1 + C.nconns;
}

size_t collect_pollfds(struct pollfd *fds, size_t max)
{
	size_t n = 0;

	if (C.listen_fd < 0 || max < 1)
		return 0;
	if (C.cap < C.nconns) {
		C.cap = C.nconns * 2;
		C.polled = realloc(C.polled, C.cap * sizeof *C.polled);
		if (!C.polled)
			abort();
	}
	fds[n++] = (struct pollfd){ .fd = C.listen_fd, .events = POLLIN };
	for (struct collect_conn *c = C.conns; c && n < max; c = c->next) {
		C.polled[n - 1] = c;
		fds[n++] = (struct pollfd){ .fd = c->fd, .events = (short)(POLLIN |
			(frame_outq_pending(&c->out) ? POLLOUT : 0)) };
	}
	return n;
}

static void collect_reap(void)
{
	struct collect_conn **pp = &C.conns, *c;

	while ((c = *pp)) {
		if (!c->dead) {
			pp = &c->next;
			continue;
		}
		*pp = c->next;
		if (c->wait)
			collect_abandon(c->wait);
		close(c->fd);
		frame_decoder_release(&c->dec);
		frame_outq_release(&c->out);
		free(c);
		C.nconns--;
	}
}

void collect_events(const struct pollfd *fds, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct collect_conn *c = C.polled[i - 1];

		if (!fds[i].revents || c->dead)
			continue;
		if (fds[i].revents & POLLOUT)
			collect_flush(c);
		if (!c->dead && (fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
			collect_read(c);
	}
	collect_reap();
	if (n && fds[0].revents)
		collect_accept();
}

struct job *collect_lendable(void)
{
	for (struct collect_wait *w = C.waits; w; w = w->next) {
		if (!w->conn || w->lent)
			continue;
		for (size_t i = w->sent; i < w->n; i++)
			if (w->jobs[i]->state == JOB_QUEUED)
				return w->jobs[i];
	}
	return NULL;
}

struct job *collect_swappable(void)
{
	for (struct collect_wait *w = C.waits; w; w = w->next) {
		if (!w->conn || w->lent)
			continue;
		for (size_t i = w->sent; i < w->n; i++)
			if (w->jobs[i]->state == JOB_RUNNING &&
			    (w->jobs[i]->slot == SLOT_TOKEN || w->jobs[i]->slot == SLOT_LIMIT))
				return w->jobs[i];
	}
	return NULL;
}

void collect_lend(struct job *j)
{
	j->wait->lent = 1;
}

void collect_ended(struct job *j, int was_lent)
{
	struct collect_wait *w = j->wait;

	if (!w)
		return;
	if (was_lent)
		w->lent = 0;
	if (w->conn)
		collect_send(w);
}

void collect_stop(void)
{
	while (C.waits)
		collect_abandon(C.waits);
	for (struct collect_conn *c = C.conns; c; c = c->next)
		c->dead = 1;
	collect_reap();
	free(C.polled);
	C.polled = NULL;
	C.cap = 0;
	if (C.listen_fd >= 0)
		waitsock_close(C.listen_fd);
	C.listen_fd = -1;
}
