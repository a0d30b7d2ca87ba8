/*
 * rawsys.h - for rawread.c and jitread.c: print a file read through a
 * system-call function of the program's own (never the C library's
 * open and read), the reads the tracer cannot see.
 */
#ifndef ASYNC_T_RAWSYS_H
#define ASYNC_T_RAWSYS_H

#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>

typedef long (*rawsys_fn)(long nr, long a, long b, long c);

/* 0, or 1 when the file cannot be opened or read */
static int rawsys_print(rawsys_fn sys, const char *path)
{
	char buf[4096];
	long fd = sys(SYS_openat, AT_FDCWD, (long)path, O_RDONLY), n;

	if (fd < 0)
		return 1;
	while ((n = sys(SYS_read, fd, (long)buf, sizeof buf)) > 0)
		fwrite(buf, 1, (size_t)n, stdout);
	sys(SYS_close, fd, 0, 0);
	return n < 0;
}

#endif
