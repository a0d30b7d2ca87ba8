/*
 * board.c - job pids published by workers to their pool (see board.h).
 */
#include "lib/board.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/buf.h"

int board_create(int slots)
{
	int fd = memfd_create("asynccompile-pids", MFD_CLOEXEC);

	/* above 2: starting a worker moves its pipes onto 0 and 1 first */
	if (fd >= 0 && fd < 3) {
		int high = fcntl(fd, F_DUPFD_CLOEXEC, 3);

		close(fd);
		fd = high;
	}
	if (fd >= 0 && ftruncate(fd, (off_t)slots * 4) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

void board_set(int fd, int slot, pid_t pid)
{
	int32_t v = (int32_t)pid;

	if (fd >= 0 && slot >= 0)
		(void)!pwrite(fd, &v, sizeof v, (off_t)slot * 4);
}

pid_t board_get(int fd, int slot)
{
	int32_t v = 0;

	if (fd < 0 || slot < 0 || pread(fd, &v, sizeof v, (off_t)slot * 4) != sizeof v)
		return 0;
	return v > 0 || v == BOARD_STARTING ? (pid_t)v : 0;
}

/*
 * Does the NUL-separated environment in b hold exactly the entry `mark`?
 * An entry cut off by the end of what was read does not count.
 */
static int board_env_has(const struct buf *b, const char *mark, size_t mlen)
{
	const char *p = (const char *)b->data, *end = p + b->len;

	while (p < end) {
		size_t n = strnlen(p, (size_t)(end - p));

		if (p + n < end && n == mlen && !memcmp(p, mark, mlen))
			return 1;
		p += n + 1;
	}
	return 0;
}

void board_kill_marked(pid_t worker, int sig)
{
	char mark[64], path[64];
	int mlen = snprintf(mark, sizeof mark, "%s=%ld", BOARD_MARK, (long)worker);
	struct buf env = BUF_INIT;
	struct dirent *e;
	DIR *d = opendir("/proc");

	if (!d || mlen <= 0)
		goto out;
	while ((e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		int fd;

		if (*end || pid <= 0 || pid == (long)getpid())
			continue;
		snprintf(path, sizeof path, "/proc/%ld/environ", pid);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		buf_reset(&env);
		buf_read_fd(&env, fd, (size_t)1 << 20);
		close(fd);
		if (board_env_has(&env, mark, (size_t)mlen)) {
			kill(-(pid_t)pid, sig);
			kill((pid_t)pid, sig);
		}
	}
out:
	if (d)
		closedir(d);
	buf_release(&env);
}
