/*
 * readset_impl.h - what the two halves of the read set module share:
 * readset.c builds a read set, readset_check.c checks one.  Not for
 * other modules: readset.h is the interface.
 */
#ifndef ASYNC_READSET_IMPL_H
#define ASYNC_READSET_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

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

/*
 * A timestamp ts (ns) lies within the racy window before `start_real_ns`
 * (CLOCK_REALTIME): a change after the start could leave the identity as
 * it is (readset.c: the window and the timestamp's granularity).
 */
int readset_racy_ts(int64_t ts, int64_t start_real_ns);

/*
 * Through a table (readset_table.c; t NULL: straight to the file
 * system): stat(2) or, with nofollow, lstat(2) of path into *sb, with
 * *r the call's result (errno set when -1).  Returns the table's slot
 * for the path, which readset_seen_writers() takes, or NULL when the
 * identity is not kept (no table, or a racy identity).
 */
struct rs_seen;
struct rs_seen *readset_stat(struct rs_table *t, const char *path, int nofollow, struct stat *sb,
			     int *r);
/* readset_writers(), asked once per slot (s NULL: asked now). */
int readset_seen_writers(struct rs_seen *s, int safe, const char *path, int nofollow,
			 int64_t dev, int64_t ino);
/* readset_value_now(), read once per table (t NULL: read now). */
void readset_table_value(struct rs_table *t, const char *name, size_t n, struct buf *v);

#endif
