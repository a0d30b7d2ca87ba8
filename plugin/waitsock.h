/*
 * waitsock.h - the private Unix socket recipe waits' collectors reach
 * this make's plugin on (collect.h).
 *
 * Where: DIR/asynccompile-UID/mPID.RANDOM, DIR being $XDG_RUNTIME_DIR,
 * else $TMPDIR, else /tmp (/tmp too when the path would not fit a socket
 * address).  The directory is created 0700 and refused unless it is a
 * directory (not a link) this user owns that nobody else may enter.
 * Socket files of makes that are gone (nobody listens) are removed when
 * a new one is made; the plugin removes its own at exit.  A socket is
 * bound as tPID.RANDOM and renamed to its m name once it listens, so
 * no sweep ever finds a live make's socket refusing (t/unit/test-waitsock).
 *
 * Who may speak: waitsock_peer_check() accepts a peer of this user that
 * descends from this make process (a recipe line's collector does; one
 * started by hand or by another make does not).
 *
 * Descriptors are close-on-exec and non-blocking; the caller owns those
 * it gets.  Nothing here prints; failures come back as text in `err`.
 * Not thread-safe: the engine calls it with its lock held.
 */
#ifndef ASYNC_WAITSOCK_H
#define ASYNC_WAITSOCK_H

#include <sys/types.h>

#include "lib/buf.h"

/* Make the directory and a listening socket.  The fd, or -1 with err. */
int waitsock_listen(struct buf *err);
/* The listening socket's path ("" before waitsock_listen succeeded). */
const char *waitsock_path(void);
/* Close the listening socket (fd) and remove its file. */
void waitsock_close(int fd);
/* Accept one pending connection: its fd, or -1 (EAGAIN: none pending). */
int waitsock_accept(int fd);
/* 0 if the peer on fd may collect this make's waits, else -1 with err. */
int waitsock_peer_check(int fd, struct buf *err);

#endif
