/*
 * guard.h - the process that gives back the jobserver tokens of a make
 * killed by SIGKILL.
 *
 * make's other fatal signals are caught (fatal.h) and the tokens held go
 * back before make dies; SIGKILL runs no handler.  A sub-make killed so
 * while its jobs (speculated at load, or queued) held tokens of its
 * parent's jobserver took them with it, and the top-level make ran on
 * with fewer slots: serially, at -j2.
 *
 * The guard is the worker executable in its --guard role
 * (worker/guard.c), started before the first token of a jobserver that
 * make inherited is taken.  It maps the record of held tokens (reexec.h:
 * a memfd), holds a read end of the jobserver (a write end held would
 * keep the top-level make from ever seeing EOF when it drains), and
 * waits for the end of a pipe only make holds.  Once make is gone (dead:
 * a re-exec leaves the tokens to the new image), it empties the record's
 * slots and writes their tokens back, and exits.  A top-level make's own
 * jobserver dies with it: it gets no guard.
 *
 * guard_prepare: make's thread, before the engine starts, when make
 * inherited a jobserver: find the worker executable.
 * guard_cover: I/O thread, the_engine.lock held, before a token of `js` is
 * taken: a guard for js, started unless one runs for it (a jobserver
 * that changed gets a new one, the old one leaves as on a re-exec).
 * Nothing without guard_prepare; a guard that cannot start is warned
 * about once, and the tokens are as unguarded as before.
 * guard_fatal: async-signal-safe, for fatal.c's handler once it gave the
 * tokens back: the guard is told to go now (its stdin closed), not when
 * make has died.  make's handler waits for its children with wait(2)
 * and counts on ECHILD when the one it waits for was reaped already: a
 * guard still waiting for make there would wait for ever, and make for
 * it.
 * guard_owns: any thread: is pid the guard running now?  It is one of
 * make's children that is not make's (engine_owns: it never ends while
 * make runs, so "make runs a child" must not count it).
 */
#ifndef ASYNC_GUARD_H
#define ASYNC_GUARD_H

#include <sys/types.h>

#include "plugin/js.h"

void guard_prepare(void);
void guard_cover(const struct jobserver *js);
void guard_fatal(void);
int guard_owns(pid_t pid);

#endif
