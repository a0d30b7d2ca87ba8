/*
 * readset_table.h - what readset_check.c asks of the identity table
 * (readset_table.c).  Not for other modules: readset_check.h is the
 * interface.
 */
#ifndef ASYNC_READSET_TABLE_H
#define ASYNC_READSET_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "lib/buf.h"

struct rs_table;

/*
 * Through a table (t NULL: straight to the file system): stat(2) or,
 * with nofollow, lstat(2) of path into *sb, with *r the call's result
 * (errno set when -1).  Returns the table's slot for the path, which
 * readset_seen_writers() takes, or NULL when the identity is not kept
 * (no table, or a racy identity).
 */
struct rs_seen;
struct rs_seen *readset_stat(struct rs_table *t, const char *path, int nofollow, struct stat *sb,
			     int *r);
/* readset_writers() (lib/readset_impl.h), asked once per slot (s NULL: asked now). */
int readset_seen_writers(struct rs_seen *s, int safe, const char *path, int nofollow,
			 int64_t dev, int64_t ino);
/* readset_value_now(), read once per table (t NULL: read now). */
void readset_table_value(struct rs_table *t, const char *name, size_t n, struct buf *v);

#endif
