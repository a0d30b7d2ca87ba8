/*
 * hooks_open.c - opening files: the open, creat and fopen families,
 * tmpfile and the mkstemp family.
 *
 * An open for reading (no O_WRONLY, O_RDWR, O_CREAT, O_TRUNC; fopen "r")
 * is a READ with the identity of what was opened (fstat of the new
 * descriptor), or what the failure depended on (tr_lookup).  An open for
 * writing is a WRITE with what was at the path before (lstat, before
 * the call); a failure is also the READ it depended on.  O_TMPFILE
 * creates nothing with a name.  Writes to /dev/null are not events, nor
 * are its reads (the decoder ignores it).  fopen with ",ccs=" loads
 * character set converters (gconv) inside glibc: OPAQUE.
 * mkstemp and friends, mkdtemp: the created path is a WRITE of kind
 * ABSENT (it did not exist: O_EXCL); a failure is OPAQUE (which
 * directory lookup failed is not known).  tmpfile: an O_TMPFILE file is
 * unnamed (only its directory is read); a named one glibc created and
 * unlinked is both WRITEs.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/trace.h"

#define TR_NEEDS_MODE(f) (((f) & O_CREAT) || ((f) & O_TMPFILE) == O_TMPFILE)

struct tr_open {
	int write, tmpfile, nofollow;
};

static void tr_open_before(struct tr_open *op, int dirfd, const char *path, int flags)
{
	struct tr_guard g;

	op->tmpfile = (flags & O_TMPFILE) == O_TMPFILE;
	op->write = !op->tmpfile &&
		    ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC)));
	op->nofollow = (flags & O_NOFOLLOW) != 0;
	if (op->write) {
		tr_lock(&g);
		tr_before_write(dirfd, path);
		tr_unlock(&g);
	}
}

static void tr_open_after(const struct tr_open *op, int dirfd, const char *path, int fd)
{
	struct tr_guard g;
	struct stat st;

	tr_lock(&g);
	if (tr_is_devnull(path))
		;
	else if (fd >= 0 && !op->write && !op->tmpfile)
		tr_lookup(TL_READ, op->nofollow, dirfd, path, fstat(fd, &st) == 0, 0, &st);
	else if (fd < 0 && (!op->tmpfile || g.saved_errno == ENOENT || g.saved_errno == ENOTDIR))
		tr_lookup(TL_READ, op->nofollow, dirfd, path, 0, g.saved_errno, NULL);
	tr_unlock(&g);
}

/* One body for the whole family: the real call is the expression `call`. */
#define TR_OPEN(dirfd, path, flags, call)                                                  \
	do {                                                                               \
		struct tr_open op_;                                                        \
		int fd_;                                                                   \
		if (!tr_active())                                                          \
			return call;                                                       \
		tr_open_before(&op_, dirfd, path, flags);                                  \
		fd_ = call;                                                                \
		tr_open_after(&op_, dirfd, path, fd_);                                     \
		return fd_;                                                                \
	} while (0)

#define TR_MODE_ARG(flags, mode)                                                           \
	if (TR_NEEDS_MODE(flags)) {                                                        \
		va_list ap_;                                                               \
		va_start(ap_, flags);                                                      \
		mode = va_arg(ap_, mode_t);                                                \
		va_end(ap_);                                                               \
	}

TR_HOOK int open(const char *path, int flags, ...)
{
	mode_t mode = 0;

	TR_MODE_ARG(flags, mode);
	TR_OPEN(AT_FDCWD, path, flags, TR_CALL(open)(path, flags, mode));
}

TR_HOOK int open64(const char *path, int flags, ...)
{
	mode_t mode = 0;

	TR_MODE_ARG(flags, mode);
	TR_OPEN(AT_FDCWD, path, flags, TR_CALL(open64)(path, flags, mode));
}

TR_HOOK int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;

	TR_MODE_ARG(flags, mode);
	TR_OPEN(dirfd, path, flags, TR_CALL(openat)(dirfd, path, flags, mode));
}

TR_HOOK int openat64(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;

	TR_MODE_ARG(flags, mode);
	TR_OPEN(dirfd, path, flags, TR_CALL(openat64)(dirfd, path, flags, mode));
}

TR_HOOK int __open_2(const char *path, int flags)
{
	TR_OPEN(AT_FDCWD, path, flags, TR_CALL(__open_2)(path, flags));
}

TR_HOOK int __open64_2(const char *path, int flags)
{
	TR_OPEN(AT_FDCWD, path, flags, TR_CALL(__open64_2)(path, flags));
}

TR_HOOK int __openat_2(int dirfd, const char *path, int flags)
{
	TR_OPEN(dirfd, path, flags, TR_CALL(__openat_2)(dirfd, path, flags));
}

TR_HOOK int __openat64_2(int dirfd, const char *path, int flags)
{
	TR_OPEN(dirfd, path, flags, TR_CALL(__openat64_2)(dirfd, path, flags));
}

TR_HOOK int creat(const char *path, mode_t mode)
{
	TR_OPEN(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, TR_CALL(creat)(path, mode));
}

TR_HOOK int creat64(const char *path, mode_t mode)
{
	TR_OPEN(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, TR_CALL(creat64)(path, mode));
}

/* ---- stdio ---- */

/* The open(2) flags of an fopen mode; -1 for a mode fopen refuses. */
static int tr_fopen_flags(const char *mode, int *ccs)
{
	int flags;

	*ccs = mode && strstr(mode, ",ccs=") != NULL;
	if (!mode)
		return -1;
	switch (mode[0]) {
	case 'r':
		flags = O_RDONLY;
		break;
	case 'w':
		flags = O_WRONLY | O_CREAT | O_TRUNC;
		break;
	case 'a':
		flags = O_WRONLY | O_CREAT | O_APPEND;
		break;
	default:
		return -1;
	}
	for (const char *m = mode + 1; *m && *m != ','; m++) {
		if (*m == '+')
			flags = (flags & ~O_ACCMODE) | O_RDWR;
		else if (*m == 'x')
			flags |= O_EXCL;
	}
	return flags;
}

#define TR_FOPEN(path, mode, call)                                                         \
	do {                                                                               \
		struct tr_open op_;                                                        \
		int flags_, ccs_;                                                          \
		FILE *fp_;                                                                 \
		if (!tr_active())                                                          \
			return call;                                                       \
		flags_ = tr_fopen_flags(mode, &ccs_);                                      \
		if (flags_ < 0 || !path)                                                   \
			return call;                                                       \
		if (ccs_)                                                                  \
			tr_opaque("fopen converting a character set:", path);             \
		tr_open_before(&op_, AT_FDCWD, path, flags_);                              \
		fp_ = call;                                                                \
		tr_open_after(&op_, AT_FDCWD, path, fp_ ? fileno(fp_) : -1);               \
		return fp_;                                                                \
	} while (0)

TR_HOOK FILE *fopen(const char *path, const char *mode)
{
	TR_FOPEN(path, mode, TR_CALL(fopen)(path, mode));
}

TR_HOOK FILE *fopen64(const char *path, const char *mode)
{
	TR_FOPEN(path, mode, TR_CALL(fopen64)(path, mode));
}

TR_HOOK FILE *freopen(const char *path, const char *mode, FILE *stream)
{
	if (!path && tr_active())
		tr_opaque("freopen of a stream's own file", NULL);
	TR_FOPEN(path, mode, TR_CALL(freopen)(path, mode, stream));
}

TR_HOOK FILE *freopen64(const char *path, const char *mode, FILE *stream)
{
	if (!path && tr_active())
		tr_opaque("freopen of a stream's own file", NULL);
	TR_FOPEN(path, mode, TR_CALL(freopen64)(path, mode, stream));
}

/* ---- temporary files ---- */

static void tr_tmpfile_after(FILE *fp)
{
	char link[32] = "/proc/self/fd/", buf[PATH_MAX];
	struct tr_guard g;
	struct stat st;
	ssize_t n;

	if (!fp)
		return;
	tr_lock(&g);
	tr_fmt_u64(link + 14, (uint64_t)fileno(fp));
	n = TR_CALL(readlink)(link, buf, sizeof buf - 1);
	if (n > 10 && buf[0] == '/' && (size_t)n < sizeof buf - 1 &&
	    !memcmp(buf + n - 10, " (deleted)", 10)) {
		char *base;

		buf[n - 10] = 0;
		base = strrchr(buf, '/');
		if (base[1] == '#' && strspn(base + 2, "0123456789") == strlen(base + 2)) {
			/* O_TMPFILE: no name, only the directory it went into */
			*base = 0;
			tr_emit_now(TL_READ, 0, AT_FDCWD, base == buf ? "/" : buf);
		} else {
			tr_emit(TL_WRITE, TL_NOFOLLOW, NULL, AT_FDCWD, buf);
			if (fstat(fileno(fp), &st) == 0)
				tr_emit(TL_WRITE, TL_NOFOLLOW, &st, AT_FDCWD, buf);
		}
	} else {
		tr_opaque("a temporary file the tracer cannot name", NULL);
	}
	tr_unlock(&g);
}

TR_HOOK FILE *tmpfile(void)
{
	FILE *fp = TR_CALL(tmpfile)();

	if (tr_active())
		tr_tmpfile_after(fp);
	return fp;
}

TR_HOOK FILE *tmpfile64(void)
{
	FILE *fp = TR_CALL(tmpfile64)();

	if (tr_active())
		tr_tmpfile_after(fp);
	return fp;
}

static void tr_created(int ok, const char *path)
{
	struct tr_guard g;

	tr_lock(&g);
	if (ok)
		tr_emit(TL_WRITE, TL_NOFOLLOW, NULL, AT_FDCWD, path);
	else
		tr_opaque("a temporary file could not be created:", path);
	tr_unlock(&g);
}

#define TR_MKSTEMP(tmpl, call)                                                             \
	do {                                                                               \
		int fd_ = call;                                                            \
		if (tr_active())                                                           \
			tr_created(fd_ >= 0, tmpl);                                        \
		return fd_;                                                                \
	} while (0)

TR_HOOK int mkstemp(char *tmpl)
{
	TR_MKSTEMP(tmpl, TR_CALL(mkstemp)(tmpl));
}

TR_HOOK int mkstemp64(char *tmpl)
{
	TR_MKSTEMP(tmpl, TR_CALL(mkstemp64)(tmpl));
}

TR_HOOK int mkostemp(char *tmpl, int flags)
{
	TR_MKSTEMP(tmpl, TR_CALL(mkostemp)(tmpl, flags));
}

TR_HOOK int mkostemp64(char *tmpl, int flags)
{
	TR_MKSTEMP(tmpl, TR_CALL(mkostemp64)(tmpl, flags));
}

TR_HOOK int mkstemps(char *tmpl, int suffixlen)
{
	TR_MKSTEMP(tmpl, TR_CALL(mkstemps)(tmpl, suffixlen));
}

TR_HOOK int mkstemps64(char *tmpl, int suffixlen)
{
	TR_MKSTEMP(tmpl, TR_CALL(mkstemps64)(tmpl, suffixlen));
}

TR_HOOK int mkostemps(char *tmpl, int suffixlen, int flags)
{
	TR_MKSTEMP(tmpl, TR_CALL(mkostemps)(tmpl, suffixlen, flags));
}

TR_HOOK int mkostemps64(char *tmpl, int suffixlen, int flags)
{
	TR_MKSTEMP(tmpl, TR_CALL(mkostemps64)(tmpl, suffixlen, flags));
}

TR_HOOK char *mkdtemp(char *tmpl)
{
	char *r = TR_CALL(mkdtemp)(tmpl);

	if (tr_active())
		tr_created(r != NULL, tmpl);
	return r;
}

/* tmpnam looks for P_tmpdir (/tmp) first: the name depends on it. */
static char *tr_tmpnam_seen(char *r)
{
	if (tr_active()) {
		struct tr_guard g;

		tr_lock(&g);
		tr_emit_now(TL_READ, 0, AT_FDCWD, "/tmp");
		tr_unlock(&g);
	}
	return r;
}

TR_HOOK char *tmpnam(char s[L_tmpnam])
{
	return tr_tmpnam_seen(TR_CALL(tmpnam)(s));
}

TR_HOOK char *tmpnam_r(char s[L_tmpnam])
{
	return tr_tmpnam_seen(TR_CALL(tmpnam_r)(s));
}

/* tempnam picks among TMPDIR, dir, P_tmpdir and /tmp by existence */
TR_HOOK char *tempnam(const char *dir, const char *pfx)
{
	if (tr_active())
		tr_opaque("tempnam chooses a directory unseen", NULL);
	return TR_CALL(tempnam)(dir, pfx);
}
