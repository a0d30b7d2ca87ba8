#ifndef ASYNC_FATAL_H
#define ASYNC_FATAL_H

#include <sys/types.h>

/*
 * fatal.c: make's fatal signals (HUP, INT, QUIT, TERM, XCPU, XFSZ).
 * fatal_init: at load, on make's thread: a handler in front of make's that
 * gives back the held tokens, ends the token guard (guard.h), marks the
 * plugin dying and writes a byte to
 * the descriptor of fatal_set_wake (the I/O thread's wake pipe; -1:
 * none).  fatal_dying: from then on no token is taken, no job started and
 * no pool restarted.  fatal_release: make's handlers back (at unload).
 * fatal_child: the command async-shell runs in make's own process while
 * make waits for it (pid > 0), or none (0): the handler sends it the
 * signal make got, as make's group would have, before make's handler
 * kills make; make's thread only, set before the command can be reaped.
 */
void fatal_init(void);
void fatal_release(void);
int fatal_dying(void);
void fatal_set_wake(int fd);
void fatal_child(pid_t pid);

#endif
