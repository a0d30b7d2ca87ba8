/*
 * snap.h - a copy of a memory region, to be put back later, that leaves
 * out the anonymous pages nothing has touched yet (vfork.c's snapshot of
 * the tracer's own variables around a vfork child).
 *
 * Why: on a virtual machine each page touched for the first time costs a
 * fault of 10-20 us, and most of the tracer's variables are tables and
 * buffers a process never uses.  Copying them read every such page (a
 * fault each) and wrote as many pages of the copy (a fault each): 67
 * faults and 1.45 ms of a Kbuild try-run.
 *
 * The rule: a page of anonymous memory (a library's bss past the part its
 * file backs) that is neither in memory nor in swap, as /proc/self/pagemap
 * tells, has never been stored to, so it holds zeros.  Such a page is left
 * out of the copy and not read.  When the region is put back, a page left
 * out that is now in memory or in swap was stored to meanwhile, and is
 * zeroed.  Every other page is copied, and written back where it differs.
 * Without pagemap (the descriptor is -1, or the read fails), nothing is
 * left out on taking, and every page left out is zeroed on putting back.
 * A pagemap that calls the struct's own page untouched (it lies in the
 * region, written by tr_snap_init) describes some other memory, an
 * emulator's or a /proc that is not the kernel's: nothing is left out.
 *
 * Usage:
 *  1. tr_snap_init() once, with the region, where its file-backed part
 *     ends, and a save area of `size` bytes (pages it never needs stay
 *     untouched: an mmap'ed area costs only what is used).
 *  2. tr_snap_take() with a descriptor open on /proc/self/pagemap (or -1),
 *     which the caller owns and closes.
 *  3. tr_snap_restore() likewise, once per take.
 * The struct may lie inside the region itself (vfork.c's does): take sets
 * left_out before it copies, and restore reads it before writing back.
 * Neither allocates, takes a lock or changes errno; one thread only.
 */
#ifndef ASYNC_TRACE_SNAP_H
#define ASYNC_TRACE_SNAP_H

#include <stddef.h>
#include <stdint.h>

#define TR_SNAP_PAGE 4096
#define TR_SNAP_PAGES 64 /* anonymous pages past that many are always copied */

struct tr_snap {
	unsigned char *data;   /* the region */
	size_t size;
	uintptr_t anon;        /* from this page on, anonymous memory */
	size_t npages;         /* pages from anon on that may be left out */
	unsigned char *save;   /* the copy, at the region's offsets */
	uint64_t left_out;     /* bit i: page anon + i is not in the copy */
};

/* file_end: the end of the part a file backs; anonymous from the next page on. */
void tr_snap_init(struct tr_snap *s, void *data, size_t size, uintptr_t file_end, void *save);
void tr_snap_take(struct tr_snap *s, int pagemap);
void tr_snap_restore(struct tr_snap *s, int pagemap);

#endif
