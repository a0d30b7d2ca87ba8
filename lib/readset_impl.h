/*
 * readset_impl.h - what the parts of the read set module share:
 * readset.c builds a read set, readset_decode.c reads one back, and the
 * answer cache's answer/readset_check.c checks one against the file
 * system (through answer/readset_table.c's table).  Not for other
 * modules: readset.h and answer/readset_check.h are the interfaces.
 */
#ifndef ASYNC_READSET_IMPL_H
#define ASYNC_READSET_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "lib/buf.h"
#include "lib/wire.h"

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
 * included: 1, else 0, also when it cannot tell (readset_decode.c).  A
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
 * One entry of an encoding (readset.h), as readset_get_entry() reads it:
 * path points into the encoding and is not NUL-terminated.
 */
struct rs_entry {
	uint8_t type, kind, flags;
	uint32_t mode;
	int64_t dev, ino, size, mtime_ns, ctime_ns, atime_ns;
	const char *path;
	size_t plen;
};

/*
 * Read an encoding's head (magic, verdict, environment digest, reason,
 * count), checking it: 0, or -1 with one reason appended to err (NULL:
 * not wanted).  *reason points into the encoding (*rlen bytes).
 */
int readset_get_head(struct wire_reader *r, int *verdict, uint64_t *env, const char **reason,
		     size_t *rlen, uint32_t *count, struct buf *err);
/* Read and check the next entry: 0, or -1 when it is malformed. */
int readset_get_entry(struct wire_reader *r, struct rs_entry *e);

#endif
