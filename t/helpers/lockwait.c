/*
 * lockwait FILE: wait for an exclusive lock on FILE, opened for reading,
 * then exit 0.  A command that writes nothing, so async-shell may run it
 * ahead of need, and that a test can hold up for as long as it holds the
 * lock itself (flock(1) on a descriptor of its own).
 */
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int fd;

	if (argc != 2)
		return 2;
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || flock(fd, LOCK_EX) < 0)
		return 1;
	return 0;
}
