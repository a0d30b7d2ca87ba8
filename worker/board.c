/*
 * board.c - job pids published by workers to their pool (see board.h).
 */
#include "board.h"

#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

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
	return v > 0 ? (pid_t)v : 0;
}
