/*
 * rawread FILE: print FILE, opened and read with the program's own
 * `syscall` instructions instead of the C library's open and read: a
 * dynamically linked program whose reads the tracer cannot see (Go's
 * runtime does the same).  lib/syscan.c must find the instruction and
 * make the run opaque.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>

static long rawread_sys(long nr, long a, long b, long c)
{
	long r;

	__asm__ volatile("syscall" : "=a"(r) : "a"(nr), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return r;
}

int main(int argc, char **argv)
{
	char buf[4096];
	long fd, n;

	if (argc != 2)
		return 2;
	fd = rawread_sys(SYS_openat, AT_FDCWD, (long)argv[1], O_RDONLY);
	if (fd < 0)
		return 1;
	while ((n = rawread_sys(SYS_read, fd, (long)buf, sizeof buf)) > 0)
		fwrite(buf, 1, (size_t)n, stdout);
	rawread_sys(SYS_close, fd, 0, 0);
	return n < 0;
}
