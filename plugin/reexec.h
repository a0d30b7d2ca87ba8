#ifndef ASYNC_REEXEC_H
#define ASYNC_REEXEC_H

#include "plugin/js.h"

/*
 * reexec.c: tokens held when a sub-make re-executes itself, given back by
 * the plugin in the new image, or by a fatal signal's handler, or by the
 * guard (guard.h) once the image has ended.
 * reexec_init: once, on make's thread, at load: gives back what the image
 * before this one held, if the environment says so (nothing else).
 * reexec_arm: once, on make's thread, as the engine starts, before the
 * environment is copied for the pool: puts the record into it.
 * reexec_jobserver: the jobserver every held token comes from (the
 * engine's), before the first one is taken.  reexec_hold: with
 * the_engine.lock held, for every token taken (+1) or to be given back (-1);
 * for -1 it returns 1 when the caller writes the byte back, 0 when
 * reexec_give_back_held() already did (then js_forget() it).
 * reexec_give_back_held: async-signal-safe; gives back every token held.
 * reexec_record_fd: the memfd the record lives in, shared with the guard
 * (guard.h), or -1 when there is no record or it is not shared; set on
 * make's thread by reexec_arm, close-on-exec.  reexec_guarded: the I/O
 * thread, once a guard holds the record (1), or before it is told to
 * leave (0).
 */
void reexec_init(void);
void reexec_arm(void);
void reexec_jobserver(const struct jobserver *js);
int reexec_hold(unsigned char tok, int delta);
void reexec_give_back_held(void);
int reexec_record_fd(void);
void reexec_guarded(int on);

#endif
