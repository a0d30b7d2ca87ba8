/*
 * store.h - the per-user directory that holds what one make run leaves for
 * the next: the answer cache's files (answer/: cached answers, async-shell's
 * records, the counts) and syscan's verdicts (lib/syscan.h).  Whatever is
 * read from it makes the plugin run commands or answer for one, so it is a
 * security boundary, guarded the way ccache guards its directory:
 *
 *  - it lives in $XDG_CACHE_HOME/asynccompile, else ~/.cache/asynccompile,
 *    or the config's cache_dir; never in the source tree;
 *  - a directory it creates is created 0700;
 *  - a store directory or file that another user owns, or that group or
 *    others may write, is refused and has no effect at all;
 *  - under sudo with the invoking user's HOME kept, the user's cache
 *    directory is not ours: the passwd entry's home of the effective user
 *    is used instead, so root never writes into the user's tree;
 *  - files are written to a temporary name and renamed into place, so a
 *    reader sees a whole old file or a whole new one;
 *  - every byte read back is untrusted: the callers' decoders check it.
 *
 * All paths are resolved once, in store_open(), to a directory descriptor;
 * the other calls work relative to it (openat), so a directory renamed or
 * replaced by a symlink afterwards is not followed.  Nothing here prints:
 * every failure is returned with a one-line reason for a debug message.
 * Not thread-safe (store_write() numbers its temporary names with a
 * counter): one thread of a process at a time.  In the plugin that is
 * make's thread (answer/; and syscan, under its lock, for a command run
 * there); workers and the asynccompile command are processes of their
 * own.  store_hash() is pure, for any thread.
 */
#ifndef ASYNC_STORE_H
#define ASYNC_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"

/* Largest file store_read() accepts. */
#define STORE_MAX_FILE ((size_t)8 << 20)

/*
 * Open the store directory: `dir` if it is not empty, else the per-user
 * default; with `create`, creating it (0700) and its missing parents.
 * Returns a descriptor (O_CLOEXEC, the caller closes it), or -1 with the
 * reason in `err` (errno ENOENT: there is none and `create` was 0).
 */
int store_open(const char *dir, int create, struct buf *err);
/*
 * The path store_open() would use (malloc'd), or NULL with `err` when no
 * home directory is known.  Nothing is created or checked.
 */
char *store_path(const char *dir, struct buf *err);
/*
 * A per-user path that follows the XDG rules: "$XDG_VAR/leaf" when the
 * environment variable xdg_var is an absolute path, else
 * "$HOME/home_sub/leaf".  A directory another user owns is not this
 * user's (sudo keeping the invoking user's HOME or XDG_*): then the
 * passwd entry's home is used.  Malloc'd, or NULL with `err` when no home
 * directory is known.  Nothing is created or checked.  store_path() is
 * ("XDG_CACHE_HOME", ".cache", "asynccompile"); the configuration's user
 * file (config/find.c) is ("XDG_CONFIG_HOME", ".config",
 * "asynccompile/asynccompile.yaml").
 */
char *store_user_path(const char *xdg_var, const char *home_sub, const char *leaf,
		      struct buf *err);
/*
 * Read the regular file `name` in the store into `out` (appended).  0, or
 * -1 with `err`: missing, not a regular file, another owner, writable by
 * group or others, larger than STORE_MAX_FILE, or a read error.
 */
int store_read(int dirfd, const char *name, struct buf *out, struct buf *err);
/*
 * Open (creating it 0700) the directory `name` inside the store, with the
 * store's ownership and mode checks.  A descriptor, or -1 with `err`.
 */
int store_subdir(int dirfd, const char *name, struct buf *err);
/* Replace `name` atomically with n bytes.  0, or -1 with `err`. */
int store_write(int dirfd, const char *name, const void *p, size_t n, struct buf *err);

/* 64-bit FNV-1a, for file names derived from keys (the files hold the keys). */
uint64_t store_hash(const void *p, size_t n, uint64_t h);
#define STORE_HASH_INIT 14695981039346656037ull

#endif
