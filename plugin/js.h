/*
 * js.h - a client of GNU make's jobserver (4.3 pipes, 4.4 fifos).
 *
 * Reading: we never read from make's own descriptor.  For a pipe we open
 * /proc/self/fd/R, for a fifo the path, each O_RDONLY|O_NONBLOCK|O_CLOEXEC:
 * a private open file description, so O_NONBLOCK is ours to set and make's
 * blocking/non-blocking choice on its own description is left alone.
 * EAGAIN on read is normal (another client won the token).
 *
 * Writing: a write end is held only while at least one token is held, and
 * it is opened *before* the first token is read, so a token is never taken
 * that could not be given back.  The top-level make, at exit, closes its
 * write end and reads tokens until EOF: an extra write end held while we
 * hold nothing would hang it forever; one held while we do hold tokens just
 * makes it wait until our jobs end and the tokens come back.
 *
 * Every token written back is the very byte that was read.
 * Not thread-safe: the plugin calls these under its engine lock.
 */
#ifndef ASYNC_JS_H
#define ASYNC_JS_H

#include <sys/types.h>

#include "lib/buf.h"

enum js_style { JS_NONE, JS_PIPE, JS_FIFO };

struct js_auth {
	enum js_style style;
	int rfd, wfd;   /* JS_PIPE */
	char *path;     /* JS_FIFO, malloc'd */
	int ident;      /* JS_PIPE: dev/ino below must match (see js_identify) */
	dev_t dev;
	ino_t ino;
};

struct jobserver {
	struct js_auth auth;
	int rfd;        /* our private read description, non-blocking */
	int wfd;        /* our write end while held > 0, else -1 */
	unsigned held;  /* tokens we hold */
	int make_wfd;   /* make's own write end (pipe: W; fifo: found in /proc), or -1 */
	dev_t dev;
	ino_t ino;      /* identity of the pipe/fifo, to notice fd reuse */
};

struct make_flags {
	int jobs;        /* -jN seen: N; -j without number: -1; none: 0 */
	int dry_run;     /* -n (also -q, which expands but runs nothing) */
	int question;    /* -q: and prints nothing either */
	int silent;      /* -s */
};

/*
 * Find the last --jobserver-auth= (or the old --jobserver-fds=) word in a
 * MAKEFLAGS value.  Returns 1 and fills *a (free with js_auth_release), or 0
 * when there is none or it says "no jobserver" (negative fds).
 */
int js_parse_auth(const char *makeflags, struct js_auth *a);
void js_auth_release(struct js_auth *a);
int js_auth_equal(const struct js_auth *a, const struct js_auth *b);

/*
 * Record which pipe the descriptors of a JS_PIPE auth are, now.  The plugin
 * calls it at load time, before it opens anything: later the same numbers
 * may name the plugin's own pipes (make closes the jobserver descriptors
 * of a sub-make it did not know was recursive).  Returns 0, or -1 if they
 * are not the two ends of one pipe now.
 */
int js_identify(struct js_auth *a);

/* Flags from a MAKEFLAGS value (first word of single letters, -jN). */
void js_parse_flags(const char *makeflags, struct make_flags *f);
/*
 * -j as make was started with, from /proc/self/cmdline: make 4.3 does not
 * show it in MAKEFLAGS while the top-level make reads makefiles.
 * Returns like make_flags.jobs.
 */
int js_cmdline_jobs(void);

/*
 * Open a client on `a` (copied).  Returns 0, or -1 with a reason in err:
 * closed or invalid descriptors (a sub-make run from a recipe line without
 * '+'), a descriptor that is not a pipe, a missing fifo.
 */
int js_open(struct jobserver *js, const struct js_auth *a, struct buf *err);
/*
 * Take one token without blocking: 1 and *tok set, 0 if none available now
 * (poll js->rfd for POLLIN and try again), -1 on error (errno).
 */
int js_try_acquire(struct jobserver *js, unsigned char *tok);
/* Give back a token read by js_try_acquire.  0, or -1 (errno). */
int js_release(struct jobserver *js, unsigned char tok);
/* A token someone else gave back for us (a signal handler): count it as released. */
void js_forget(struct jobserver *js);
/*
 * A new write end of js, close-on-exec, or -1: the caller closes it.
 * Async-signal-safe; reads only what js_open() set.
 */
int js_write_end(const struct jobserver *js);
/*
 * The top-level make closes its write end when it starts reading every
 * token back at exit: true once make_wfd no longer is this jobserver.
 */
int js_make_draining(const struct jobserver *js);
/* Tokens held now. */
unsigned js_held(const struct jobserver *js);
/* Is js open on the jobserver `a` names? */
int js_uses(const struct jobserver *js, const struct js_auth *a);
/* The descriptor to poll for POLLIN while waiting for a token, or -1. */
int js_poll_fd(const struct jobserver *js);
/* Can js_make_draining() see make's write end at all? */
int js_sees_make(const struct jobserver *js);
enum js_style js_style(const struct jobserver *js);
/* Close everything.  The caller gives back the tokens it holds first. */
void js_close(struct jobserver *js);
/*
 * Write n token bytes to the jobserver `a` names, through a write end of
 * our own opened and closed here: tokens a previous image of this process
 * held (plugin/reexec.c).  0, or -1 if it is not usable or a write failed.
 */
int js_give_back(const struct js_auth *a, const unsigned char *tok, size_t n);

#endif
