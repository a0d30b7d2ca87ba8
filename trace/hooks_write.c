/*
 * hooks_write.c - changes to the file system by path: rename, unlink,
 * rmdir, remove, mkdir, link, symlink, truncate, chmod, chown, utime,
 * mknod, mkfifo, xattrs, and bind of a socket path.
 *
 * Each changed path is a WRITE with what was there just before (lstat,
 * before the real call: the decoder tells a scratch file, absent before
 * and gone after, from a change that outlives the command).  A failure
 * is also the READ it depended on (the path absent, or what was there).
 * mkdir is a WRITE only when it made the directory (TR_CREATE).
 * rename and renameat2 change both paths, link both (the old path's
 * link count and ctime).  Writes to /dev/null are not events; changes
 * through descriptors (fchmod, ftruncate, write...) are not either.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <utime.h>

#include "trace/trace.h"

static void tr_change_before(int dirfd, const char *path)
{
	struct tr_guard g;

	tr_lock(&g);
	tr_before_write(dirfd, path);
	tr_unlock(&g);
}

static void tr_change_after(int failed, int follow, int dirfd, const char *path)
{
	struct tr_guard g;

	if (!failed || tr_is_devnull(path))
		return;
	tr_lock(&g);
	tr_lookup(TL_READ, !follow, dirfd, path, 0, g.saved_errno, NULL);
	tr_unlock(&g);
}

/* One changed path (follow: the call follows a final symbolic link). */
#define TR_CHANGE(dirfd, path, follow, call)                                               \
	do {                                                                               \
		int r_;                                                                    \
		if (!tr_active() || !tr_maybe_null(path))                                  \
			return call;                                                       \
		tr_change_before(dirfd, path);                                             \
		r_ = call;                                                                 \
		tr_change_after(r_ < 0, follow, dirfd, path);                              \
		return r_;                                                                 \
	} while (0)

static void tr_change_made(int dirfd, const char *path)
{
	struct tr_guard g;

	tr_lock(&g);
	tr_emit(TL_WRITE, TL_NOFOLLOW, NULL, dirfd, path);
	tr_unlock(&g);
}

/*
 * A path the call makes only where there was none (mkdir): what was there
 * before a success is known (nothing), and a failure changed nothing, so
 * it is only the READ it depended on.  `mkdir -p DIR/sub` tries every
 * existing parent: those are not writes.
 */
#define TR_CREATE(dirfd, path, call)                                                       \
	do {                                                                               \
		int r_;                                                                    \
		if (!tr_active() || !tr_maybe_null(path))                                  \
			return call;                                                       \
		r_ = call;                                                                 \
		if (r_ == 0 && !tr_is_devnull(path))                                       \
			tr_change_made(dirfd, path);                                       \
		tr_change_after(r_ < 0, 0, dirfd, path);                                   \
		return r_;                                                                 \
	} while (0)

/* Two changed paths. */
#define TR_CHANGE2(dfd1, p1, dfd2, p2, call)                                               \
	do {                                                                               \
		int r_, e_;                                                                \
		if (!tr_active())                                                          \
			return call;                                                       \
		tr_change_before(dfd1, p1);                                                \
		tr_change_before(dfd2, p2);                                                \
		r_ = call;                                                                 \
		e_ = errno;                                                                \
		tr_change_after(r_ < 0, 0, dfd1, p1);                                      \
		errno = e_;                                                                \
		tr_change_after(r_ < 0, 0, dfd2, p2);                                      \
		return r_;                                                                 \
	} while (0)

TR_HOOK int rename(const char *old, const char *new)
{
	TR_CHANGE2(AT_FDCWD, old, AT_FDCWD, new, TR_CALL(rename)(old, new));
}

TR_HOOK int renameat(int olddirfd, const char *old, int newdirfd, const char *new)
{
	TR_CHANGE2(olddirfd, old, newdirfd, new, TR_CALL(renameat)(olddirfd, old, newdirfd, new));
}

TR_HOOK int renameat2(int olddirfd, const char *old, int newdirfd, const char *new,
		      unsigned int flags)
{
	TR_CHANGE2(olddirfd, old, newdirfd, new,
		   TR_CALL(renameat2)(olddirfd, old, newdirfd, new, flags));
}

TR_HOOK int link(const char *old, const char *new)
{
	TR_CHANGE2(AT_FDCWD, old, AT_FDCWD, new, TR_CALL(link)(old, new));
}

TR_HOOK int linkat(int olddirfd, const char *old, int newdirfd, const char *new, int flags)
{
	if ((flags & AT_EMPTY_PATH) && tr_maybe_null(old) && !*old)
		/* linking a descriptor (an O_TMPFILE file): only the new name */
		TR_CHANGE(newdirfd, new, 0,
			  TR_CALL(linkat)(olddirfd, old, newdirfd, new, flags));
	TR_CHANGE2(olddirfd, old, newdirfd, new,
		   TR_CALL(linkat)(olddirfd, old, newdirfd, new, flags));
}

TR_HOOK int unlink(const char *path)
{
	TR_CHANGE(AT_FDCWD, path, 0, TR_CALL(unlink)(path));
}

TR_HOOK int unlinkat(int dirfd, const char *path, int flags)
{
	TR_CHANGE(dirfd, path, 0, TR_CALL(unlinkat)(dirfd, path, flags));
}

TR_HOOK int rmdir(const char *path)
{
	TR_CHANGE(AT_FDCWD, path, 0, TR_CALL(rmdir)(path));
}

TR_HOOK int remove(const char *path)
{
	TR_CHANGE(AT_FDCWD, path, 0, TR_CALL(remove)(path));
}

TR_HOOK int mkdir(const char *path, mode_t mode)
{
	TR_CREATE(AT_FDCWD, path, TR_CALL(mkdir)(path, mode));
}

TR_HOOK int mkdirat(int dirfd, const char *path, mode_t mode)
{
	TR_CREATE(dirfd, path, TR_CALL(mkdirat)(dirfd, path, mode));
}

TR_HOOK int symlink(const char *target, const char *path)
{
	TR_CHANGE(AT_FDCWD, path, 0, TR_CALL(symlink)(target, path));
}

TR_HOOK int symlinkat(const char *target, int dirfd, const char *path)
{
	TR_CHANGE(dirfd, path, 0, TR_CALL(symlinkat)(target, dirfd, path));
}

TR_HOOK int truncate(const char *path, off_t len)
{
	TR_CHANGE(AT_FDCWD, path, 1, TR_CALL(truncate)(path, len));
}

TR_HOOK int truncate64(const char *path, off64_t len)
{
	TR_CHANGE(AT_FDCWD, path, 1, TR_CALL(truncate64)(path, len));
}

TR_HOOK int chmod(const char *path, mode_t mode)
{
	TR_CHANGE(AT_FDCWD, path, 1, TR_CALL(chmod)(path, mode));
}

TR_HOOK int fchmodat(int dirfd, const char *path, mode_t mode, int flags)
{
	TR_CHANGE(dirfd, path, !(flags & AT_SYMLINK_NOFOLLOW),
		  TR_CALL(fchmodat)(dirfd, path, mode, flags));
}

TR_HOOK int lchmod(const char *path, mode_t mode)
{
	TR_CHANGE(AT_FDCWD, path, 0, TR_CALL(lchmod)(path, mode));
}

TR_HOOK int chown(const char *path, uid_t owner, gid_t group)
{
	TR_CHANGE(AT_FDCWD, path, 1, TR_CALL(chown)(path, owner, group));
}

TR_HOOK int lchown(const char *path, uid_t owner, gid_t group)
{
	TR_CHANGE(AT_FDCWD, path, 0, TR_CALL(lchown)(path, owner, group));
}

TR_HOOK int fchownat(int dirfd, const char *path, uid_t owner, gid_t group, int flags)
{
	if ((flags & AT_EMPTY_PATH) && tr_maybe_null(path) && !*path)
		return TR_CALL(fchownat)(dirfd, path, owner, group, flags);
	TR_CHANGE(dirfd, path, !(flags & AT_SYMLINK_NOFOLLOW),
		  TR_CALL(fchownat)(dirfd, path, owner, group, flags));
}

TR_HOOK int utime(const char *path, const struct utimbuf *times)
{
	TR_CHANGE(AT_FDCWD, path, 1, TR_CALL(utime)(path, times));
}

TR_HOOK int utimes(const char *path, const struct timeval tv[2])
{
	TR_CHANGE(AT_FDCWD, path, 1, TR_CALL(utimes)(path, tv));
}

TR_HOOK int lutimes(const char *path, const struct timeval tv[2])
{
	TR_CHANGE(AT_FDCWD, path, 0, TR_CALL(lutimes)(path, tv));
}

/* a NULL path changes the descriptor's file: not a path event */
TR_HOOK int utimensat(int dirfd, const char *path, const struct timespec times[2], int flags)
{
	TR_CHANGE(dirfd, path, !(flags & AT_SYMLINK_NOFOLLOW),
		  TR_CALL(utimensat)(dirfd, path, times, flags));
}

TR_HOOK int futimesat(int dirfd, const char *path, const struct timeval tv[2])
{
	TR_CHANGE(dirfd, path, 1, TR_CALL(futimesat)(dirfd, path, tv));
}

TR_HOOK int mknod(const char *path, mode_t mode, dev_t dev)
{
	TR_CHANGE(AT_FDCWD, path, 0, TR_CALL(mknod)(path, mode, dev));
}

TR_HOOK int mknodat(int dirfd, const char *path, mode_t mode, dev_t dev)
{
	TR_CHANGE(dirfd, path, 0, TR_CALL(mknodat)(dirfd, path, mode, dev));
}

TR_HOOK int __xmknod(int ver, const char *path, mode_t mode, dev_t *dev)
{
	TR_CHANGE(AT_FDCWD, path, 0, TR_CALL(__xmknod)(ver, path, mode, dev));
}

TR_HOOK int __xmknodat(int ver, int dirfd, const char *path, mode_t mode, dev_t *dev)
{
	TR_CHANGE(dirfd, path, 0, TR_CALL(__xmknodat)(ver, dirfd, path, mode, dev));
}

TR_HOOK int mkfifo(const char *path, mode_t mode)
{
	TR_CHANGE(AT_FDCWD, path, 0, TR_CALL(mkfifo)(path, mode));
}

TR_HOOK int mkfifoat(int dirfd, const char *path, mode_t mode)
{
	TR_CHANGE(dirfd, path, 0, TR_CALL(mkfifoat)(dirfd, path, mode));
}

TR_HOOK int setxattr(const char *path, const char *name, const void *value, size_t size,
		     int flags)
{
	TR_CHANGE(AT_FDCWD, path, 1, TR_CALL(setxattr)(path, name, value, size, flags));
}

TR_HOOK int lsetxattr(const char *path, const char *name, const void *value, size_t size,
		      int flags)
{
	TR_CHANGE(AT_FDCWD, path, 0, TR_CALL(lsetxattr)(path, name, value, size, flags));
}

TR_HOOK int removexattr(const char *path, const char *name)
{
	TR_CHANGE(AT_FDCWD, path, 1, TR_CALL(removexattr)(path, name));
}

TR_HOOK int lremovexattr(const char *path, const char *name)
{
	TR_CHANGE(AT_FDCWD, path, 0, TR_CALL(lremovexattr)(path, name));
}

/* bind of an AF_UNIX path creates the socket file */
TR_HOOK int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	const struct sockaddr_un *un = (const struct sockaddr_un *)addr;
	size_t off = offsetof(struct sockaddr_un, sun_path), n;
	char buf[sizeof un->sun_path + 1];
	const char *path = buf;

	if (!tr_active() || !addr || addr->sa_family != AF_UNIX || len <= off ||
	    !un->sun_path[0])
		return TR_CALL(bind)(fd, addr, len);
	n = len - off < sizeof un->sun_path ? len - off : sizeof un->sun_path;
	memcpy(buf, un->sun_path, n);
	buf[n] = 0;
	TR_CHANGE(AT_FDCWD, path, 0, TR_CALL(bind)(fd, addr, len));
}
