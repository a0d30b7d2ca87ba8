/*
 * msg_collect.h - the messages of a recipe wait's channel: the collector
 * (asynccompile-worker --collect, a recipe line of make's) and the plugin
 * inside that make (plugin/collect.c) talk over a private Unix socket in
 * frames (proto.h framing).  PROTOCOL.md, "Recipe waits", is normative.
 *
 *   collector -> plugin   COLLECT (id 0): which wait, proven by its cookie
 *   plugin -> collector   STEP (id = 1, 2, ...): one waited step, in
 *                         queue order, with its RESULT
 *                         ERROR (id 0): the wait is refused; then close
 *                         PROGRESS (id 0): how the wait's steps stand,
 *                         when the collector is to draw the status line
 *                         shutdown (id -1): every step was sent
 *
 * Pure encoders and decoders (the fuzzer drives the decoders): nothing
 * here blocks, prints or exits.  Also shared: msg_result_emit(), a result's
 * output in the order the step wrote it, used by the plugin's blocking
 * wait and by the collector alike.
 */
#ifndef ASYNC_COLLECTMSG_H
#define ASYNC_COLLECTMSG_H

#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"
#include "lib/proto.h"

/* The channel's own types, X(NAME, type byte), as msg.h's MSG_TYPES. */
#define MSG_COLLECT_TYPES(X) \
	X(COLLECT, 9)   /* collector -> plugin, first and only frame */ \
	X(STEP, 10)     /* plugin -> collector, one per waited step */ \
	X(PROGRESS, 11) /* plugin -> collector, control: the wait's state */

enum {
#define MSG_ENUM_ROW(name, byte) MSG_##name = byte,
	MSG_COLLECT_TYPES(MSG_ENUM_ROW)
#undef MSG_ENUM_ROW
};

/* A wait's cookie: this many random bytes, written as twice as many hex digits. */
#define COLLECT_COOKIE_BYTES 16
#define COLLECT_COOKIE_HEX (2 * COLLECT_COOKIE_BYTES)

struct collect_msg {
	uint32_t version;    /* PROTO_VERSION */
	int64_t wait;        /* the wait's number in its make, > 0 */
	char cookie[COLLECT_COOKIE_HEX + 1]; /* hex, NUL-terminated */
};

struct step_msg {
	char *name;          /* malloc'd, not NULL */
	char *command;       /* malloc'd, not NULL */
	struct result_msg res;
};

void msg_put_collect(struct buf *out, const struct collect_msg *m);
/* 0, or -1 with one reason appended to err (err.h). */
int msg_get_collect(const void *p, size_t n, struct collect_msg *m, struct buf *err);
void msg_put_step(struct buf *out, const char *name, const char *command,
		  const struct result_msg *res);
/* 0 (release with msg_step_release), or -1 with err and *m empty. */
int msg_get_step(const void *p, size_t n, struct step_msg *m, struct buf *err);
void msg_step_release(struct step_msg *m);

/*
 * How a recipe wait's steps stand (lib/progress.h draws it): sent when
 * the wait is claimed and whenever one of its steps starts or ends, only
 * for a wait whose line is to draw the status line (asynccompile(7),
 * PROGRESS).  `always`: draw it even when stderr is not a terminal.
 */
struct progress_msg {
	uint32_t total, done, running;
	uint8_t always;
	char *oldest;        /* malloc'd, not NULL; "" when none runs */
};

void msg_put_progress(struct buf *out, const struct progress_msg *m);
/* 0 (free m->oldest), or -1 with err and *m empty; done + running <= total. */
int msg_get_progress(const void *p, size_t n, struct progress_msg *m, struct buf *err);

/*
 * "WAIT:COOKIE", the collector's one argument: parse it into m (version
 * set to PROTO_VERSION).  0, or -1 if it is not that shape.
 */
int msg_collect_parse_arg(const char *arg, struct collect_msg *m);

/*
 * A step's stdout text to fd 1 and stderr text to fd 2 through emit(), in
 * the order the step wrote them (res->order, checked by msg_get_result),
 * then what has no place in that order (the pool's notes at the end).
 */
void msg_result_emit(const struct result_msg *r, void (*emit)(int fd, const void *p, size_t n));

#endif
