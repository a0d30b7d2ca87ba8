/*
 * The per-user store: where it is, whether it can be trusted, and atomic
 * whole-file reads and writes inside it.  store.h explains the rules.
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/store.h"

uint64_t store_hash(const void *p, size_t n, uint64_t h)
{
	const unsigned char *c = p;

	while (n--)
		h = (h ^ *c++) * 1099511628211ull;
	return h;
}

/* A directory of ours: our owner, and nobody else may write to it. */
static int store_trusted(const struct stat *st, mode_t forbidden)
{
	return st->st_uid == geteuid() && !(st->st_mode & forbidden);
}

/* The effective user's home from the passwd database, or NULL. */
static const char *store_pw_home(void)
{
	struct passwd *pw = getpwuid(geteuid());

	return pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : NULL;
}

/* path exists and belongs to another user: not a place for our files */
static int store_foreign(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && st.st_uid != geteuid();
}

char *store_user_path(const char *xdg_var, const char *home_sub, const char *leaf,
		      struct buf *err)
{
	const char *xdg = getenv(xdg_var), *home = getenv("HOME");
	struct buf p = BUF_INIT;

	if (xdg && xdg[0] == '/' && !store_foreign(xdg)) {
		buf_addf(&p, "%s/%s", xdg, leaf);
		return buf_detach(&p, NULL);
	}
	/* sudo may keep the invoking user's HOME: that tree is not ours */
	if (!home || home[0] != '/' || store_foreign(home))
		home = store_pw_home();
	if (!home || store_foreign(home)) {
		err_fail(err, "no home directory of this user");
		return NULL;
	}
	buf_addf(&p, "%s/%s/%s", strcmp(home, "/") ? home : "", home_sub, leaf);
	return buf_detach(&p, NULL);
}

char *store_path(const char *dir, struct buf *err)
{
	char *p;
	struct buf why = BUF_INIT;

	if (dir && *dir)
		return strdup(dir);
	p = store_user_path("XDG_CACHE_HOME", ".cache", "asynccompile", &why);
	if (!p)
		err_fail(err, "%s to keep a cache in", (char *)why.data);
	buf_release(&why);
	return p;
}

/* mkdir -p with 0700 for what is missing. */
static int store_mkdirs(char *path)
{
	for (char *s = strchr(path + 1, '/');; s = strchr(s + 1, '/')) {
		if (s)
			*s = 0;
		int r = mkdir(path, 0700);
		int e = errno;
		if (s)
			*s = '/';
		if (r < 0 && e != EEXIST) {
			errno = e;
			return -1;
		}
		if (!s)
			return 0;
	}
}

int store_open(const char *dir, int create, struct buf *err)
{
	char *path = store_path(dir, err), *slash;
	struct stat st;
	int fd, e;

	if (!path)
		return -1;
	if (create && path[0] == '/' && store_mkdirs(path) < 0) {
		err_fail(err, "%s: cannot create:", path);
		free(path);
		return -1;
	}
	if (create && path[0] != '/' && mkdir(path, 0700) < 0 && errno != EEXIST) {
		err_fail(err, "%s: cannot create:", path);
		free(path);
		return -1;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		e = errno;
		err_fail(err, "%s:", path);
		if (fd >= 0)
			close(fd);
		free(path);
		errno = e;
		return -1;
	}
	if (!store_trusted(&st, 022)) {
		err_fail(err, "%s: refused: %s", path, st.st_uid != geteuid()
			 ? "owned by another user" : "group or others may write to it");
		goto fail;
	}
	/* whoever may write the parent may swap our directory for theirs */
	slash = strrchr(path, '/');
	if (slash && slash != path) {
		*slash = 0;
		if (stat(path, &st) == 0 && (st.st_mode & 002) && !(st.st_mode & S_ISVTX)) {
			err_fail(err, "%s: refused: others may write to it", path);
			goto fail;
		}
	}
	free(path);
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	free(path);
	return -1;
}

int store_subdir(int dirfd, const char *name, struct buf *err)
{
	struct stat st;
	int fd;

	if (mkdirat(dirfd, name, 0700) < 0 && errno != EEXIST) {
		err_fail(err, "%s: cannot create:", name);
		return -1;
	}
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		err_fail(err, "%s:", name);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!store_trusted(&st, 022)) {
		err_fail(err, "%s: refused: %s", name, st.st_uid != geteuid()
			 ? "owned by another user" : "group or others may write to it");
		close(fd);
		return -1;
	}
	return fd;
}

int store_read(int dirfd, const char *name, struct buf *out, struct buf *err)
{
	struct stat st;
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	int r = -1;

	if (fd < 0) {
		/*
		 * No file yet is the common case (a make's first run, a make
		 * that keeps nothing), and libc's first strerror() loads its
		 * message catalogue: not at every load of the plugin
		 */
		if (errno == ENOENT)
			return err_fail(err, "%s: does not exist", name);
		return err_fail(err, "%s:", name);
	}
	if (fstat(fd, &st) < 0)
		err_fail(err, "%s:", name);
	else if (!S_ISREG(st.st_mode))
		err_fail(err, "%s: refused: not a regular file", name);
	else if (!store_trusted(&st, 022))
		err_fail(err, "%s: refused: %s", name, st.st_uid != geteuid()
			 ? "owned by another user" : "group or others may write to it");
	else if ((size_t)st.st_size > STORE_MAX_FILE)
		err_fail(err, "%s: refused: larger than %zu bytes", name, STORE_MAX_FILE);
	else if (buf_read_fd(out, fd, out->len + STORE_MAX_FILE + 1) < 0)
		err_fail(err, "%s:", name);
	else
		r = 0;
	close(fd);
	return r;
}

int store_write(int dirfd, const char *name, const void *p, size_t n, struct buf *err)
{
	static unsigned seq;
	char tmp[64];
	const char *c = p;
	int fd, e;

	snprintf(tmp, sizeof tmp, ".tmp.%ld.%u", (long)getpid(), seq++);
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		err_fail(err, "%s:", name);
		return -1;
	}
	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			goto fail;
		c += w;
		n -= (size_t)w;
	}
	if (close(fd) < 0) {
		fd = -1;
		goto fail;
	}
	if (renameat(dirfd, tmp, dirfd, name) < 0) {
		fd = -1;
		goto fail;
	}
	return 0;
fail:
	e = errno ? errno : EIO;
	if (fd >= 0)
		close(fd);
	unlinkat(dirfd, tmp, 0);
	errno = e;
	return err_fail(err, "%s:", name);
}
