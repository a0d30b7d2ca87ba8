/*
 * readset_impl.h - what the two halves of the read set module share:
 * readset.c builds a read set, readset_check.c checks one.  Not for
 * other modules: readset.h is the interface.
 */
#ifndef ASYNC_READSET_IMPL_H
#define ASYNC_READSET_IMPL_H

#include <stddef.h>

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

#endif
