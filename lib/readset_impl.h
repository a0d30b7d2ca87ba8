/*
 * readset_impl.h - what the two halves of the read set module share:
 * readset.c builds a read set, readset_check.c checks one.  Not for
 * other modules: readset.h is the interface.
 */
#ifndef ASYNC_READSET_IMPL_H
#define ASYNC_READSET_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"

/*
 * Kernel files whose content, not identity, is an input: kept as a
 * VALUE "file:PATH=HASH" (the only one: every coreutils program reads
 * it through libselinux).
 */
#define RS_PROC_FS "/proc/filesystems"

/*
 * Append what the VALUE input `name` (n bytes, not NUL-terminated) is
 * now, in the tracer's spelling ("uname=...", "file:PATH=HASH"); nothing
 * for a name it does not know.
 */
void readset_value_now(const char *name, size_t n, struct buf *v);

/*
 * Some process has the regular file at `path` (lstat'ed if nofollow;
 * identity dev:ino) open for writing, a shared writable mapping
 * included: 1, else 0, also when it cannot tell (readset_check.c).  A
 * store through such a mapping changes the content without write(2),
 * and the kernel stamps the file only at the first store after the page
 * was written back (never, on tmpfs), so no identity can show it: a
 * file being written by another process is no input to trust.  `safe`
 * is readset_lease_safe()'s answer, asked once per read set.
 */
int readset_writers(int safe, const char *path, int nofollow, int64_t dev, int64_t ino);
int readset_lease_safe(void);

#endif
