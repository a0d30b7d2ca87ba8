/*
 * children.c - running children of this process (see children.h).
 */
#include "plugin/children.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/buf.h"

/*
 * The state letter and parent of a process, from /proc/PID/stat
 * ("pid (comm) S ppid ..."; comm may hold anything, so look after the
 * last ')').  0, or -1 if it is gone or unreadable.
 */
static int children_stat(long pid, char *state, long *ppid)
{
	char path[64];
	struct buf b = BUF_INIT;
	const char *p;
	int fd, r = -1;

	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (buf_read_fd(&b, fd, 4096) == 0 && b.len &&
	    (p = strrchr((const char *)b.data, ')')) && sscanf(p + 1, " %c %ld", state, ppid) == 2)
		r = 0;
	close(fd);
	buf_release(&b);
	return r;
}

/* Alive and not a zombie (Z) or dead (X, x); a process gone counts as ended. */
static int children_alive(long pid, long parent)
{
	char st;
	long ppid;

	if (children_stat(pid, &st, &ppid) < 0 || (parent && ppid != parent))
		return 0;
	return st != 'Z' && st != 'X' && st != 'x';
}

/* Without the children file: every process whose parent is us. */
static int children_scan(int (*skip)(void *ctx, pid_t pid), void *ctx)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	long self = (long)getpid();
	int found = 0;

	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);

		if (pid <= 0 || *end || (skip && skip(ctx, (pid_t)pid)))
			continue;
		found = children_alive(pid, self);
	}
	closedir(d);
	return found;
}

int children_running(int (*skip)(void *ctx, pid_t pid), void *ctx)
{
	char path[64];
	struct buf list = BUF_INIT;
	int fd, found = 0;

	snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)getpid());
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return children_scan(skip, ctx);
	buf_read_fd(&list, fd, 0);
	close(fd);
	for (char *p = list.len ? (char *)list.data : "", *end; *p && !found; p = end) {
		long pid = strtol(p, &end, 10);

		if (end == p)
			break;
		if (pid > 0 && !(skip && skip(ctx, (pid_t)pid)))
			found = children_alive(pid, 0);
	}
	buf_release(&list);
	return found;
}
