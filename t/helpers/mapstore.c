/*
 * mapstore FILE: map the first page of FILE shared and writable, close
 * the descriptor (the mapping keeps the file open for writing), then for
 * each line read from standard input store its first byte at offset 0
 * with a plain memory store (no write(2)) and answer "ok" on standard
 * output.  Exits 0 at end of input.  A test drives it over two fifos to
 * change a file's content the way a process with a shared writable
 * mapping does: the kernel stamps the file only at the first store after
 * the page was written back (never, on tmpfs), so later stores leave
 * size, mtime and ctime as they were.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char line[64];
	char *p;
	int fd;

	if (argc != 2)
		return 2;
	fd = open(argv[1], O_RDWR);
	if (fd < 0)
		return 1;
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return 1;
	/*
	 * read first, as programs do: on tmpfs the read fault maps the page
	 * writable, and no store after it ever stamps the file
	 */
	if (((volatile char *)p)[0] == 0x7f)
		line[0] = 0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (fgets(line, sizeof line, stdin)) {
		p[0] = line[0];
		if (printf("ok\n") < 0)
			return 1;
	}
	return 0;
}
