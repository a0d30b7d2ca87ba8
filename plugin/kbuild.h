/*
 * kbuild.h - zero-edit adoption of Kbuild trees (asynccompile-kbuild.mk).
 * Make's thread only.
 *
 * kbuild_setup(): at load, before any makefile of the tree is read,
 * registers a make function for each probe macro's name (try-run,
 * cc-option, ...).  make's $(call NAME,...) invokes a function of that
 * name in preference to the variable, so every probe call comes here,
 * whenever and however often Kbuild (re)defines the macro; kbuild.c says
 * what each call then does.  Owns nothing the caller sees: the variables
 * it defines are make's (async-compile-internal-*).
 */
#ifndef ASYNC_KBUILD_H
#define ASYNC_KBUILD_H

void kbuild_setup(void);

#endif
