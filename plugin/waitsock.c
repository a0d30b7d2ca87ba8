/* The recipe waits' private socket: see waitsock.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "lib/err.h"
#include "plugin/waitsock.h"

static char waitsock_file[sizeof ((struct sockaddr_un *)0)->sun_path];

const char *waitsock_path(void)
{
	return waitsock_file;
}

/* base/asynccompile-UID into dir: 0, or -1 if it would not leave room for a socket name. */
static int waitsock_dir_name(const char *base, char *dir, size_t size)
{
	int n = snprintf(dir, size, "%s/asynccompile-%lu", base, (unsigned long)geteuid());

	/* "/m" + pid + "." + 8 hex digits must fit after it */
	return n > 0 && (size_t)n + 2 + 10 + 1 + 8 < size ? 0 : -1;
}

/* Ours, a directory, nobody else may enter: 0, or -1 with err. */
static int waitsock_dir(char *dir, size_t size, struct buf *err)
{
	const char *bases[3] = { getenv("XDG_RUNTIME_DIR"), getenv("TMPDIR"), "/tmp" };
	struct stat st;
	size_t i;

	for (i = 0; i < 3; i++)
		if (bases[i] && bases[i][0] == '/' && waitsock_dir_name(bases[i], dir, size) == 0)
			break;
	if (i == 3) {
		return err_fail(err, "no directory for the recipe waits' socket");
	}
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return err_fail(err, "%s: cannot create:", dir);
	if (lstat(dir, &st) < 0)
		return err_fail(err, "%s:", dir);
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)) {
		return err_fail(err, "%s: refused: %s", dir, !S_ISDIR(st.st_mode) ? "not a directory"
				: st.st_uid != geteuid() ? "owned by another user"
				: "others may enter it (it must be 0700)");
	}
	return 0;
}

static void waitsock_addr(struct sockaddr_un *sa, const char *path)
{
	memset(sa, 0, sizeof *sa);
	sa->sun_family = AF_UNIX;
	snprintf(sa->sun_path, sizeof sa->sun_path, "%s", path);
}

/* Socket files nobody listens on any more (their make is gone). */
static void waitsock_sweep(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		struct sockaddr_un sa;
		char path[sizeof sa.sun_path];
		int fd;

		if (e->d_name[0] != 'm' || e->d_type != DT_SOCK ||
		    snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path)
			continue;
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			break;
		waitsock_addr(&sa, path);
		if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0 && errno == ECONNREFUSED)
			unlink(path);
		close(fd);
	}
	closedir(d);
}

/*
 * The socket is bound under a name the sweep passes over ('t', not 'm')
 * and renamed once it listens: between bind() and listen() a connect()
 * is refused, and a sibling make sweeping just then (two sub-makes
 * starting side by side) would take the live socket for a dead one and
 * unlink it.
 */
int waitsock_listen(struct buf *err)
{
	struct sockaddr_un sa;
	char dir[sizeof sa.sun_path], tmp[sizeof sa.sun_path];
	uint32_t rnd;
	int fd;

	if (waitsock_dir(dir, sizeof dir, err) < 0)
		return -1;
	waitsock_sweep(dir);
	if (getrandom(&rnd, sizeof rnd, 0) != sizeof rnd)
		rnd = (uint32_t)getpid() ^ (uint32_t)time(NULL);
	if (snprintf(waitsock_file, sizeof waitsock_file, "%s/m%ld.%08x", dir, (long)getpid(),
		     (unsigned)rnd) >= (int)sizeof waitsock_file) {
		err_fail(err, "%s: too long a path for a socket", dir);
		waitsock_file[0] = 0;
		return -1;
	}
	/* the final name with its last component's 'm' made a 't' */
	memcpy(tmp, waitsock_file, sizeof tmp);
	tmp[strlen(dir) + 1] = 't';
	waitsock_addr(&sa, tmp);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		err_fail(err, "%s:", tmp);
		goto fail;
	}
	if (listen(fd, 64) < 0 || rename(tmp, waitsock_file) < 0) {
		err_fail(err, "%s:", waitsock_file);
		unlink(tmp);
		goto fail;
	}
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	waitsock_file[0] = 0;
	return -1;
}

void waitsock_close(int fd)
{
	if (fd >= 0)
		close(fd);
	if (waitsock_file[0])
		unlink(waitsock_file);
	waitsock_file[0] = 0;
}

int waitsock_accept(int fd)
{
	return accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
}

/* The parent of pid from /proc, or -1. */
static pid_t waitsock_ppid(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	long ppid;
	int fd;

	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	/* "pid (comm) state ppid ...": comm may hold anything, even ") " */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %ld", &ppid) != 1)
		return -1;
	return (pid_t)ppid;
}

int waitsock_peer_check(int fd, struct buf *err)
{
	struct ucred cr;
	socklen_t len = sizeof cr;
	pid_t self = getpid(), p;
	int depth;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0)
		return err_fail(err, "cannot tell who the collector is:");
	if (cr.uid != geteuid())
		return err_fail(err, "the collector runs as uid %lu, this make as uid %lu",
				(unsigned long)cr.uid, (unsigned long)geteuid());
	errno = 0;
	for (p = cr.pid, depth = 0; p > 1 && p != self && depth < 64; depth++)
		p = waitsock_ppid(p);
	/* a process that is gone is not ours; out of descriptors says nothing */
	if (p < 0 && errno && errno != ENOENT && errno != ESRCH)
		return err_fail(err, "cannot tell whether the collector (pid %ld) is a process "
				"of this make:", (long)cr.pid);
	if (p != self)
		return err_fail(err, "the collector (pid %ld) is not a process of this make "
				"(pid %ld): it runs as the recipe line a wait expands to, not by "
				"hand or from another make", (long)cr.pid, (long)self);
	return 0;
}
