/*
 * jitread MODE FILE: print FILE, read by code made at run time, as a JIT
 * would: a `syscall` stub copied into memory that is made executable
 * (MODE mmap: mapped PROT_EXEC at once; mprotect: written, then made
 * executable).  The program's own file holds the stub as data only
 * (.rodata), so no scan of it can find the instruction: the tracer's
 * mmap/mprotect hooks must make the run opaque.
 * MODE shared: print FILE through a MAP_SHARED, PROT_WRITE mapping of it
 * (writes through it would reach the file unseen).
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rawsys.h"

/* mov %rdi,%rax; mov %rsi,%rdi; mov %rdx,%rsi; mov %rcx,%rdx; syscall; ret */
static const unsigned char jitread_stub[] = {
	0x48, 0x89, 0xf8, 0x48, 0x89, 0xf7, 0x48, 0x89, 0xd6, 0x48, 0x89, 0xca, 0x0f, 0x05, 0xc3
};

static int jitread_shared(const char *path)
{
	int fd = open(path, O_RDWR);
	struct stat st;
	char *p;

	if (fd < 0 || fstat(fd, &st) < 0)
		return 1;
	if (!st.st_size)
		return 0;
	p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return 1;
	fwrite(p, 1, (size_t)st.st_size, stdout);
	return 0;
}

int main(int argc, char **argv)
{
	void *mem;

	if (argc != 3)
		return 2;
	if (!strcmp(argv[1], "shared"))
		return jitread_shared(argv[2]);
	if (!strcmp(argv[1], "mmap")) {
		mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mem == MAP_FAILED)
			return 1;
		memcpy(mem, jitread_stub, sizeof jitread_stub);
	} else {
		mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mem == MAP_FAILED)
			return 1;
		memcpy(mem, jitread_stub, sizeof jitread_stub);
		if (mprotect(mem, 4096, PROT_READ | PROT_EXEC))
			return 1;
	}
	return rawsys_print((rawsys_fn)mem, argv[2]);
}
