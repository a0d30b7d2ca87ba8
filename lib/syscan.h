/*
 * syscan.h - does an executable or shared object enter the kernel by
 * itself, other than through the C library?
 *
 * The tracer (trace/) sees what a program asks the C library for.  Code
 * with its own system-call instructions (Go's runtime, an inline
 * `syscall`, a hand-written stub) reads files behind its back, so a run
 * that mapped such an object cannot be vouched for: readset_build()
 * makes it OPAQUE, naming the object.  The C library, the dynamic loader
 * and the tracer are exempt (the tracer flags them, TL_SYSTEM).
 *
 * How an object is judged (syscan_image):
 *  - a Go program (its .note.go.buildid note, or a .go.buildinfo or
 *    .gopclntab section) makes its own system calls by design: RAW;
 *  - else the executable bytes (PF_X segments; only SHF_EXECINSTR
 *    sections when the object has a section table, since linkers put
 *    read-only data in the text segment without -z separate-code) are
 *    searched for the byte pairs of `syscall` (0f 05), `sysenter`
 *    (0f 34) and `int $0x80` (cd 80).  Most such pairs are pieces of
 *    other instructions (an immediate, a displacement: cc1 has 161), so
 *    each candidate is confirmed: the function around it is found in
 *    .eh_frame_hdr's table (every gcc and clang function has an unwind
 *    entry) and decoded from its first byte with capstone; the
 *    candidate is real when an instruction of those three starts a
 *    decoded instruction that covers it.  A candidate outside every
 *    unwind entry, or in bytes the decoder refuses, counts as real.
 * A false RAW only costs speed (the run is used once); a missed real
 * one would be a wrong answer, so every doubt is RAW.
 *
 * capstone is loaded with dlopen() on the first candidate to confirm
 * (nothing at make's load, nothing for an object without candidates);
 * without it every candidate counts as real, and the reason says so.
 *
 * Results are kept by the file's identity (dev, ino, size, mtime,
 * ctime): in memory for the process's life, and in the per-user store
 * (store.h, subdirectory "syscan"; the default store, when it exists)
 * for the next process, so an object is scanned once per change.
 * Thread-safe (one lock).
 */
#ifndef ASYNC_SYSCAN_H
#define ASYNC_SYSCAN_H

#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"
#include "lib/tracelog.h"

enum syscan_result {
	SYSCAN_CLEAN = 0,   /* enters the kernel only through other objects */
	SYSCAN_RAW = 1,     /* may enter the kernel itself (or cannot be told) */
};

/*
 * Judge an ELF image (the whole file, n bytes, untrusted).  On RAW, a
 * one-line reason is appended to why (NULL: not wanted).
 */
int syscan_image(const void *p, size_t n, struct buf *why);

/*
 * syscan_object() finds a file's candidates reading it this many bytes at
 * a time (the rest of the judgement maps it); a pair across two reads is
 * found once.  Here so that the tests can put pairs on the seams.
 */
#define SYSCAN_READ_CHUNK (256u << 10)

/*
 * Judge the object at path, which the trace saw with the identity in id
 * (kind, dev, ino, size, mtime_ns, ctime_ns).  A file that cannot be
 * read, or no longer has that identity, is RAW; so is one that changes
 * while it is scanned (it is written to, or loses bytes: a read finds it
 * shorter, a page of the mapping raises SIGBUS), and that verdict is not
 * kept.  Cached (above).
 */
int syscan_object(const char *path, const struct tl_event *id, struct buf *why);

/*
 * The candidates in n bytes at p: the offset (base + index) of every byte
 * pair of the three above, in order, at most max of them into out.
 * Returns how many, or max + 1 when there are more.
 */
size_t syscan_pairs(const unsigned char *p, size_t n, uint64_t base, uint64_t *out, size_t max);

/*
 * For the tests: called with the path once a file is mapped for a scan,
 * before a byte of it is read (t/unit/test-syscan.c cuts the file short
 * there: the scan must end, not the process).  NULL otherwise.
 */
extern void (*syscan_mapped_hook)(const char *path);

/* For the tests: 1 if capstone could be loaded. */
int syscan_have_decoder(void);

/*
 * The store cache's entry (one file per identity, named by its hash):
 *   u8 SYSCAN_MAGIC, i64 dev, ino, size, mtime_ns, ctime_ns, u8 result,
 *   str reason.  Untrusted when read back: syscan_entry_decode() checks
 *   every byte (and is fuzzed); 0, or -1 when it is not an entry for id.
 */
#define SYSCAN_MAGIC 0x5c
void syscan_entry_encode(struct buf *out, const struct tl_event *id, int result,
			 const char *reason);
int syscan_entry_decode(const void *p, size_t n, const struct tl_event *id, int *result,
			struct buf *reason);

#endif
