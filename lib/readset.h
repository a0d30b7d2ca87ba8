/*
 * readset.h - what a traced command depended on, and whether its answer
 * may stand for another run's.
 *
 * The runner turns a command's trace log (tracelog.h) into a read set
 * once the command has been reaped: readset_build().  The read set is
 * what travels in a RESULT, what the record and the cache keep on disk,
 * and what is checked before an answer is reused: readset_check(), the
 * answer cache's (answer/readset_check.h; lib/ builds and decodes read
 * sets, for the runner and the protocol, and checks none).
 *
 * The verdict:
 *  - RS_PURE: every process of the command was traced and accounted for
 *    (HELLO ... BYE, no exec or spawn left without its HELLO), nothing it
 *    wrote outlived it (a path written is forgiven only if it did not
 *    exist before the command first touched it and does not exist once
 *    the command is over: scratch files and directories), no input was
 *    read that has no identity (/proc, /sys, devices other than null,
 *    zero and full) or is random (/dev/random, /dev/urandom), no file it
 *    read was modified within RS_RACY_NS of the command's start (plus its
 *    timestamps' granularity: a whole-second timestamp means 2 s more) or
 *    while it ran (its identity could not tell that change from the
 *    next), no file it read is open for writing by some process as the
 *    read set is built (a store through a shared writable mapping changes
 *    a file unseen: readset_impl.h, readset_writers), no process read a
 *    clock or asked for random bytes with the answer pipes as its output,
 *    the answer names no pid of the run, and no program or library it
 *    mapped (HELLO, READ with TL_MAPPED but not TL_SYSTEM) has
 *    system-call instructions of its own (syscan.h: its reads are
 *    invisible to the tracer).  Only a pure answer is speculated,
 *    memoized or cached.
 *  - RS_IMPURE: it wrote something that outlived it, or acted on another
 *    process or the system (a TL_IMPURE event).  Never run ahead of
 *    need, never reused, never cached.
 *  - RS_OPAQUE: the trace cannot vouch for it (an untraced process, a
 *    call the tracer does not model, a racy or changing input, a
 *    clock, randomness, a pid, code that enters the kernel itself).  Used
 *    once, as $(shell) uses it, and never again.
 * Entries are kept only for a pure verdict: the paths read (identity, or
 * absence), the directories listed, the programs run, and VALUE inputs.
 *
 * Encoding (proto.h field primitives, native byte order; untrusted when
 * read back, readset_decode() checks every byte and is fuzzed):
 *   u8   RS_MAGIC
 *   u8   verdict
 *   i64  the environment's digest (launch_env_digest())
 *   str  reason (why it is not pure; "" when pure)
 *   u32  count (<= RS_MAX_ENTRIES)
 *   count x { u8 type (TL_READ, TL_LIST, TL_VALUE), u8 kind,
 *             u8 flags (TL_NOFOLLOW, TL_ATIME), u32 mode, i64 dev, i64 ino,
 *             i64 size, i64 mtime_ns, i64 ctime_ns,
 *             i64 atime_ns (0 without TL_ATIME), str path }
 * Any thread may call these; nothing here keeps state between calls.
 */
#ifndef ASYNC_READSET_H
#define ASYNC_READSET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/buf.h"

/* 0xa5: before atime_ns; refused, so its answers are run again */
#define RS_MAGIC 0xa6
#define RS_MAX_ENTRIES 65536
/*
 * A file changed this close to the command's start is not trusted (the
 * kernel stamps changes with a clock up to a tick behind); the window
 * grows by the granularity its timestamps show (readset.c, rs_racy).
 */
#define RS_RACY_NS ((int64_t)20 * 1000 * 1000)

enum rs_verdict {
	RS_PURE = 0,
	RS_IMPURE = 1,
	RS_OPAQUE = 2,
};

/*
 * Decide from a log what the command depended on.  `root` is the pid the
 * runner started (its HELLO must be in the log); start_real_ns is
 * CLOCK_REALTIME just before it was started; env is the digest of the
 * environment it was started with (launch_env_digest()).  Looks at the file system
 * (lstat of what was written) and must run after the command and every
 * process it left were reaped.  Appends the encoding to `out`.
 */
void readset_build(const void *log, size_t n, pid_t root, int64_t start_real_ns,
		   uint64_t env, struct buf *out);
/*
 * The same, knowing the answer (its stdout and stderr; NULL: none): one
 * that names a pid of the run (a process the log shows, or the parent
 * of one: the runner; or `shown`, the parent the root process was shown,
 * make's pid for a speculated job: 0 for none) as a decimal word is
 * opaque, so $$, $PPID and the like are never reused.
 */
void readset_build_answer(const void *log, size_t n, pid_t root, pid_t shown,
			  int64_t start_real_ns, uint64_t env, const struct buf *answer_out,
			  const struct buf *answer_err, struct buf *out);

/* The encoding of a verdict without entries (the runner could not trace). */
void readset_opaque(struct buf *out, const char *reason);
/* The verdict of an encoding (RS_OPAQUE if malformed), without checking. */
int readset_verdict(const void *p, size_t n);
/* The environment digest an encoding holds: 0, or -1 if it is malformed. */
int readset_env(const void *p, size_t n, uint64_t *env);

/*
 * Validate an encoding without looking at the file system: 0, or -1 with
 * one reason appended to err (err.h; NULL: not wanted; only a refusal
 * allocates).  *verdict gets its verdict.
 */
int readset_decode(const void *p, size_t n, int *verdict, struct buf *err);

#endif
