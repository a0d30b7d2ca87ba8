/*
 * hooks_stat.c - lookups that do not open: the stat family (READ with
 * the identity the call returned, its access time included: TL_ATIME,
 * no extra syscall), access (READ with
 * the identity stat finds: the answer is in the mode), readlink (READ of
 * the link itself), realpath (every step of the resolution), chdir,
 * getxattr and listxattr, pathconf; and directory listings: opendir,
 * fdopendir, scandir, getdents64 (LIST with the directory's identity).
 * A failure with ENOENT or ENOTDIR is a negative READ; any other failure
 * is the identity it depended on, or OPAQUE (tr_lookup).
 * glob, nftw, ftw and fts walk directories inside glibc: OPAQUE.
 */
#include <dirent.h>
#include <fcntl.h>
#include <fts.h>
#include <ftw.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "trace/trace.h"

_Static_assert(sizeof(struct stat) == sizeof(struct stat64), "stat64 is stat on x86_64");

/* After a lookup: ok, the identity it returned (NULL: none returned). */
static void tr_after_flags(int type, int flags, int dirfd, const char *path, int ok,
			   const void *st)
{
	struct tr_guard g;

	tr_lock(&g);
	if (!tr_is_devnull(path))
		tr_lookup_flags(type, flags, dirfd, path, ok, g.saved_errno, st);
	tr_unlock(&g);
}

static void tr_after(int type, int nofollow, int dirfd, const char *path, int ok,
		     const void *st)
{
	tr_after_flags(type, nofollow ? TL_NOFOLLOW : 0, dirfd, path, ok, st);
}

/* The stat family hands the program the access time too: TL_ATIME. */
#define TR_STAT(dirfd, path, nofollow, st, call)                                           \
	do {                                                                               \
		int r_;                                                                    \
		if (!tr_active())                                                          \
			return call;                                                       \
		r_ = call;                                                                 \
		tr_after_flags(TL_READ, ((nofollow) ? TL_NOFOLLOW : 0) | TL_ATIME, dirfd,  \
			       path, r_ == 0, r_ == 0 ? (st) : NULL);                     \
		return r_;                                                                 \
	} while (0)

TR_HOOK int stat(const char *path, struct stat *st)
{
	TR_STAT(AT_FDCWD, path, 0, st, TR_CALL(stat)(path, st));
}

TR_HOOK int stat64(const char *path, struct stat64 *st)
{
	TR_STAT(AT_FDCWD, path, 0, st, TR_CALL(stat64)(path, st));
}

TR_HOOK int lstat(const char *path, struct stat *st)
{
	TR_STAT(AT_FDCWD, path, 1, st, TR_CALL(lstat)(path, st));
}

TR_HOOK int lstat64(const char *path, struct stat64 *st)
{
	TR_STAT(AT_FDCWD, path, 1, st, TR_CALL(lstat64)(path, st));
}

TR_HOOK int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	TR_STAT(dirfd, path, flags & AT_SYMLINK_NOFOLLOW, st,
		TR_CALL(fstatat)(dirfd, path, st, flags));
}

TR_HOOK int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
	TR_STAT(dirfd, path, flags & AT_SYMLINK_NOFOLLOW, st,
		TR_CALL(fstatat64)(dirfd, path, st, flags));
}

TR_HOOK int __xstat(int ver, const char *path, struct stat *st)
{
	TR_STAT(AT_FDCWD, path, 0, st, TR_CALL(__xstat)(ver, path, st));
}

TR_HOOK int __xstat64(int ver, const char *path, struct stat64 *st)
{
	TR_STAT(AT_FDCWD, path, 0, st, TR_CALL(__xstat64)(ver, path, st));
}

TR_HOOK int __lxstat(int ver, const char *path, struct stat *st)
{
	TR_STAT(AT_FDCWD, path, 1, st, TR_CALL(__lxstat)(ver, path, st));
}

TR_HOOK int __lxstat64(int ver, const char *path, struct stat64 *st)
{
	TR_STAT(AT_FDCWD, path, 1, st, TR_CALL(__lxstat64)(ver, path, st));
}

TR_HOOK int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags)
{
	TR_STAT(dirfd, path, flags & AT_SYMLINK_NOFOLLOW, st,
		TR_CALL(__fxstatat)(ver, dirfd, path, st, flags));
}

TR_HOOK int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *st, int flags)
{
	TR_STAT(dirfd, path, flags & AT_SYMLINK_NOFOLLOW, st,
		TR_CALL(__fxstatat64)(ver, dirfd, path, st, flags));
}

TR_HOOK int statx(int dirfd, const char *path, int flags, unsigned int mask, struct statx *stx)
{
	const unsigned need = STATX_TYPE | STATX_MODE | STATX_INO | STATX_SIZE | STATX_MTIME |
			      STATX_CTIME;
	struct stat st;
	int r, atime;

	if (!tr_active())
		return TR_CALL(statx)(dirfd, path, flags, mask, stx);
	r = TR_CALL(statx)(dirfd, path, flags, mask, stx);
	atime = r == 0 && (mask & STATX_ATIME) && (stx->stx_mask & STATX_ATIME);
	if (r == 0 && (stx->stx_mask & need) != need && atime) {
		/*
		 * stat -c %X asks for STATX_ATIME alone: the rest of the
		 * identity from a stat of the tracer's own, the access time the
		 * one the program was given
		 */
		struct tr_guard g;
		int have;

		tr_lock(&g);
		have = tr_stat_at(dirfd, path, flags & AT_SYMLINK_NOFOLLOW, &st) == 0;
		tr_unlock(&g);
		if (have) {
			st.st_atim.tv_sec = stx->stx_atime.tv_sec;
			st.st_atim.tv_nsec = stx->stx_atime.tv_nsec;
			tr_after_flags(TL_READ, ((flags & AT_SYMLINK_NOFOLLOW) ? TL_NOFOLLOW : 0) |
				       TL_ATIME | TR_ATIME_ASKED, dirfd, path, 1, &st);
		} else {
			tr_after(TL_READ, flags & AT_SYMLINK_NOFOLLOW, dirfd, path, 1, NULL);
		}
	} else if (r == 0 && (stx->stx_mask & need) == need) {
		st.st_mode = stx->stx_mode;
		st.st_dev = makedev(stx->stx_dev_major, stx->stx_dev_minor);
		st.st_ino = stx->stx_ino;
		st.st_size = (off_t)stx->stx_size;
		st.st_mtim.tv_sec = stx->stx_mtime.tv_sec;
		st.st_mtim.tv_nsec = stx->stx_mtime.tv_nsec;
		st.st_ctim.tv_sec = stx->stx_ctime.tv_sec;
		st.st_ctim.tv_nsec = stx->stx_ctime.tv_nsec;
		/* asked for without STATX_ATIME: the program does not look at it */
		st.st_atim.tv_sec = atime ? stx->stx_atime.tv_sec : 0;
		st.st_atim.tv_nsec = atime ? stx->stx_atime.tv_nsec : 0;
		tr_after_flags(TL_READ, ((flags & AT_SYMLINK_NOFOLLOW) ? TL_NOFOLLOW : 0) |
			       (atime ? TL_ATIME | TR_ATIME_ASKED : 0), dirfd, path, 1, &st);
	} else {
		tr_after(TL_READ, flags & AT_SYMLINK_NOFOLLOW, dirfd, path, r == 0, NULL);
	}
	return r;
}

/* ---- access, readlink, xattrs: found or not, the identity is stat's ---- */

#define TR_PROBE(type, dirfd, path, nofollow, okexpr, call)                                \
	do {                                                                               \
		__typeof__(call) r_;                                                       \
		if (!tr_active())                                                          \
			return call;                                                       \
		r_ = call;                                                                 \
		tr_after(type, nofollow, dirfd, path, okexpr, NULL);                       \
		return r_;                                                                 \
	} while (0)

TR_HOOK int access(const char *path, int mode)
{
	TR_PROBE(TL_READ, AT_FDCWD, path, 0, r_ == 0, TR_CALL(access)(path, mode));
}

TR_HOOK int faccessat(int dirfd, const char *path, int mode, int flags)
{
	TR_PROBE(TL_READ, dirfd, path, flags & AT_SYMLINK_NOFOLLOW, r_ == 0,
		 TR_CALL(faccessat)(dirfd, path, mode, flags));
}

TR_HOOK int euidaccess(const char *path, int mode)
{
	TR_PROBE(TL_READ, AT_FDCWD, path, 0, r_ == 0, TR_CALL(euidaccess)(path, mode));
}

TR_HOOK int eaccess(const char *path, int mode)
{
	TR_PROBE(TL_READ, AT_FDCWD, path, 0, r_ == 0, TR_CALL(eaccess)(path, mode));
}

TR_HOOK ssize_t readlink(const char *path, char *buf, size_t size)
{
	TR_PROBE(TL_READ, AT_FDCWD, path, 1, r_ >= 0, TR_CALL(readlink)(path, buf, size));
}

TR_HOOK ssize_t readlinkat(int dirfd, const char *path, char *buf, size_t size)
{
	TR_PROBE(TL_READ, dirfd, path, 1, r_ >= 0, TR_CALL(readlinkat)(dirfd, path, buf, size));
}

/* what -D_FORTIFY_SOURCE programs call (Debian's packages are built so) */
TR_HOOK ssize_t __readlink_chk(const char *path, char *buf, size_t size, size_t buflen)
{
	TR_PROBE(TL_READ, AT_FDCWD, path, 1, r_ >= 0,
		 TR_CALL(__readlink_chk)(path, buf, size, buflen));
}

TR_HOOK ssize_t __readlinkat_chk(int dirfd, const char *path, char *buf, size_t size,
				 size_t buflen)
{
	TR_PROBE(TL_READ, dirfd, path, 1, r_ >= 0,
		 TR_CALL(__readlinkat_chk)(dirfd, path, buf, size, buflen));
}

TR_HOOK ssize_t getxattr(const char *path, const char *name, void *value, size_t size)
{
	TR_PROBE(TL_READ, AT_FDCWD, path, 0, r_ >= 0 || errno == ENODATA,
		 TR_CALL(getxattr)(path, name, value, size));
}

TR_HOOK ssize_t lgetxattr(const char *path, const char *name, void *value, size_t size)
{
	TR_PROBE(TL_READ, AT_FDCWD, path, 1, r_ >= 0 || errno == ENODATA,
		 TR_CALL(lgetxattr)(path, name, value, size));
}

TR_HOOK ssize_t listxattr(const char *path, char *list, size_t size)
{
	TR_PROBE(TL_READ, AT_FDCWD, path, 0, r_ >= 0, TR_CALL(listxattr)(path, list, size));
}

TR_HOOK ssize_t llistxattr(const char *path, char *list, size_t size)
{
	TR_PROBE(TL_READ, AT_FDCWD, path, 1, r_ >= 0, TR_CALL(llistxattr)(path, list, size));
}

/* -1 with errno untouched is "no limit": a success */
TR_HOOK long pathconf(const char *path, int name)
{
	int saved = errno;
	long r;

	if (!tr_active())
		return TR_CALL(pathconf)(path, name);
	errno = 0;
	r = TR_CALL(pathconf)(path, name);
	if (r >= 0 || !errno) {
		errno = saved;
		tr_after(TL_READ, 0, AT_FDCWD, path, 1, NULL);
	} else {
		tr_after(TL_READ, 0, AT_FDCWD, path, 0, NULL);
	}
	return r;
}

/* ---- realpath: glibc resolves with its own lstat and readlink ---- */

/*
 * Every path realpath looks at, in its order: each prefix of what it
 * resolves is lstat'ed (a NOFOLLOW READ), and a symbolic link's target
 * is spliced in front of what is left.  The names are those realpath
 * itself builds, so a changed link anywhere on the way shows.
 */
static void tr_walk(const char *path)
{
	char out[PATH_MAX], rest[PATH_MAX], tmp[PATH_MAX], target[PATH_MAX];
	size_t olen, rlen = strlen(path);
	int links = 0;

	if (!*path || rlen >= sizeof rest)
		return;
	if (path[0] == '/') {
		strcpy(out, "/");
	} else if (!getcwd(out, sizeof out) || out[0] != '/') {
		tr_opaque("a relative path without a working directory:", path);
		return;
	}
	olen = strlen(out);
	memcpy(rest, path, rlen + 1);
	for (char *p = rest; *p;) {
		char *end = strchrnul(p, '/');
		size_t n = (size_t)(end - p);
		struct stat st;
		ssize_t t;

		if (!n || (n == 1 && p[0] == '.')) {
			p = *end ? end + 1 : end;
			continue;
		}
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			while (olen > 1 && out[olen - 1] != '/')
				olen--;
			if (olen > 1)
				olen--;
			out[olen] = 0;
			p = *end ? end + 1 : end;
			continue;
		}
		if (olen + 1 + n >= sizeof out) {
			tr_opaque("a path too long to follow:", path);
			return;
		}
		if (out[olen - 1] != '/')
			out[olen++] = '/';
		memcpy(out + olen, p, n);
		olen += n;
		out[olen] = 0;
		p = *end ? end + 1 : end;
		if (tr_stat_model(out, 1, &st) < 0) {
			tr_lookup(TL_READ, 1, AT_FDCWD, out, 0, errno, NULL);
			return;
		}
		tr_emit(TL_READ, TL_NOFOLLOW, &st, AT_FDCWD, out);
		if (S_ISLNK(st.st_mode)) {
			size_t left = strlen(p);

			t = TR_CALL(readlink)(out, target, sizeof target - 1);
			if (t <= 0 || ++links > 40)
				return;
			if ((size_t)t + 1 + left >= sizeof tmp) {
				tr_opaque("a path too long to follow:", path);
				return;
			}
			memcpy(tmp, target, (size_t)t);
			tmp[t] = '/';
			memcpy(tmp + t + 1, p, left + 1);
			memcpy(rest, tmp, (size_t)t + 2 + left);
			p = rest;
			/* back to the directory holding the link, or to the root */
			if (target[0] == '/')
				olen = 1;
			else
				while (olen > 1 && out[olen - 1] != '/')
					olen--;
			out[olen] = 0;
		} else if (!S_ISDIR(st.st_mode) && *p) {
			return;   /* ENOTDIR: nothing further is looked at */
		}
	}
}

static void tr_walk_guarded(const char *path)
{
	struct tr_guard g;
	struct tr_batch b;

	if (!path)
		return;
	tr_lock(&g);
	tr_batch_begin(&b);
	tr_walk(path);
	tr_batch_end(&b);
	tr_unlock(&g);
}

TR_HOOK char *realpath(const char *path, char *resolved)
{
	if (tr_active())
		tr_walk_guarded(path);
	return TR_CALL(realpath)(path, resolved);
}

TR_HOOK char *__realpath_chk(const char *path, char *resolved, size_t resolvedlen)
{
	if (tr_active())
		tr_walk_guarded(path);
	return TR_CALL(__realpath_chk)(path, resolved, resolvedlen);
}

TR_HOOK char *canonicalize_file_name(const char *path)
{
	if (tr_active())
		tr_walk_guarded(path);
	return TR_CALL(canonicalize_file_name)(path);
}

/* ---- the working directory ---- */

TR_HOOK int chdir(const char *path)
{
	char abs[PATH_MAX];
	struct tr_where w;
	struct tr_guard g;
	struct stat st;
	int r, named;

	if (!tr_active())
		return TR_CALL(chdir)(path);
	tr_lock(&g);
	named = tr_where(&w, AT_FDCWD, path) == 0 && tr_where_str(&w, abs, sizeof abs) == 0;
	tr_unlock(&g);
	r = TR_CALL(chdir)(path);
	tr_lock(&g);
	if (named && r == 0 && tr_stat_at(AT_FDCWD, ".", 0, &st) == 0)
		tr_emit(TL_READ, 0, &st, AT_FDCWD, abs);
	else if (named)
		tr_lookup(TL_READ, 0, AT_FDCWD, abs, 0, r == 0 ? 0 : g.saved_errno, NULL);
	tr_unlock(&g);
	return r;
}

/* ---- directories ---- */

/* LIST of the directory open at fd, named by /proc/self/fd. */
static void tr_list_fd(int fd)
{
	char path[PATH_MAX];
	struct tr_guard g;
	struct stat st;

	tr_lock(&g);
	if (tr_fd_path(fd, path, sizeof path) == 0 && fstat(fd, &st) == 0)
		tr_emit(TL_LIST, 0, &st, AT_FDCWD, path);
	else
		tr_opaque("a directory listed by a descriptor the tracer cannot name", NULL);
	tr_unlock(&g);
}

TR_HOOK DIR *opendir(const char *path)
{
	struct stat st;
	DIR *d;

	if (!tr_active())
		return TR_CALL(opendir)(path);
	d = TR_CALL(opendir)(path);
	if (d) {
		int ok = fstat(dirfd(d), &st) == 0;

		tr_after(TL_LIST, 0, AT_FDCWD, path, ok, ok ? &st : NULL);
	} else {
		tr_after(TL_LIST, 0, AT_FDCWD, path, 0, NULL);
	}
	return d;
}

TR_HOOK DIR *fdopendir(int fd)
{
	DIR *d = TR_CALL(fdopendir)(fd);

	if (d && tr_active())
		tr_list_fd(fd);
	return d;
}

TR_HOOK ssize_t getdents64(int fd, void *buf, size_t n)
{
	ssize_t r = TR_CALL(getdents64)(fd, buf, n);

	if (r >= 0 && tr_active())
		tr_list_fd(fd);
	return r;
}

#define TR_SCANDIR(dirfd, path, call)                                                      \
	TR_PROBE(TL_LIST, dirfd, path, 0, r_ >= 0, call)

TR_HOOK int scandir(const char *dir, struct dirent ***list, int (*filter)(const struct dirent *),
		    int (*compar)(const struct dirent **, const struct dirent **))
{
	TR_SCANDIR(AT_FDCWD, dir, TR_CALL(scandir)(dir, list, filter, compar));
}

TR_HOOK int scandir64(const char *dir, struct dirent64 ***list,
		      int (*filter)(const struct dirent64 *),
		      int (*compar)(const struct dirent64 **, const struct dirent64 **))
{
	TR_SCANDIR(AT_FDCWD, dir, TR_CALL(scandir64)(dir, list, filter, compar));
}

TR_HOOK int scandirat(int dirfd, const char *dir, struct dirent ***list,
		      int (*filter)(const struct dirent *),
		      int (*compar)(const struct dirent **, const struct dirent **))
{
	TR_SCANDIR(dirfd, dir, TR_CALL(scandirat)(dirfd, dir, list, filter, compar));
}

TR_HOOK int scandirat64(int dirfd, const char *dir, struct dirent64 ***list,
			int (*filter)(const struct dirent64 *),
			int (*compar)(const struct dirent64 **, const struct dirent64 **))
{
	TR_SCANDIR(dirfd, dir, TR_CALL(scandirat64)(dirfd, dir, list, filter, compar));
}

/* ---- walks inside glibc ---- */

#define TR_WALK(what, call)                                                                \
	do {                                                                               \
		if (tr_active())                                                           \
			tr_opaque(what " walks directories unseen", NULL);                 \
		return call;                                                               \
	} while (0)

TR_HOOK int glob(const char *pattern, int flags, int (*errfunc)(const char *, int), glob_t *g)
{
	TR_WALK("glob", TR_CALL(glob)(pattern, flags, errfunc, g));
}

TR_HOOK int glob64(const char *pattern, int flags, int (*errfunc)(const char *, int),
		   glob64_t *g)
{
	TR_WALK("glob", TR_CALL(glob64)(pattern, flags, errfunc, g));
}

TR_HOOK int nftw(const char *dir, __nftw_func_t fn, int nopenfd, int flags)
{
	TR_WALK("nftw", TR_CALL(nftw)(dir, fn, nopenfd, flags));
}

TR_HOOK int nftw64(const char *dir, __nftw64_func_t fn, int nopenfd, int flags)
{
	TR_WALK("nftw", TR_CALL(nftw64)(dir, fn, nopenfd, flags));
}

TR_HOOK int ftw(const char *dir, __ftw_func_t fn, int nopenfd)
{
	TR_WALK("ftw", TR_CALL(ftw)(dir, fn, nopenfd));
}

TR_HOOK int ftw64(const char *dir, __ftw64_func_t fn, int nopenfd)
{
	TR_WALK("ftw", TR_CALL(ftw64)(dir, fn, nopenfd));
}

TR_HOOK FTS *fts_open(char *const *argv, int options,
		      int (*compar)(const FTSENT **, const FTSENT **))
{
	TR_WALK("fts", TR_CALL(fts_open)(argv, options, compar));
}

TR_HOOK FTS64 *fts64_open(char *const *argv, int options,
			  int (*compar)(const FTSENT64 **, const FTSENT64 **))
{
	TR_WALK("fts", TR_CALL(fts64_open)(argv, options, compar));
}
