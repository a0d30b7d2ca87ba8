/*
 * siglisten FILE PIDFILE - counts the signals a test's commands send it.
 *
 * Appends one line to FILE per signal taken: "sig" for SIGRTMIN+1 (what
 * the commands send), "mark N" for the Nth SIGRTMIN+2 (what the test
 * sends after a run).  Real-time signals queue, one per kill(), where two
 * SIGUSR1 sent before the first is taken would count once; and they are
 * taken lowest number first, so once "mark N" is in FILE every signal
 * sent before the test's Nth mark is counted.  Writes its pid to PIDFILE
 * (through a rename, so a reader never sees half of it) once the signals
 * are blocked; SIGTERM ends it.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	sigset_t set;
	char tmp[4096], line[64];
	int fd, marks = 0;
	FILE *f;

	if (argc != 3 || snprintf(tmp, sizeof tmp, "%s.tmp", argv[2]) >= (int)sizeof tmp) {
		fprintf(stderr, "usage: siglisten FILE PIDFILE\n");
		return 2;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN + 1);
	sigaddset(&set, SIGRTMIN + 2);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return 1;
	fd = open(argv[1], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	f = fopen(tmp, "w");
	if (fd < 0 || !f || fprintf(f, "%ld\n", (long)getpid()) < 0 || fclose(f) ||
	    rename(tmp, argv[2]) < 0)
		return 1;
	for (;;) {
		int sig = sigwaitinfo(&set, NULL);
		int n;

		if (sig < 0)
			continue;
		if (sig == SIGRTMIN + 1)
			n = snprintf(line, sizeof line, "sig\n");
		else
			n = snprintf(line, sizeof line, "mark %d\n", ++marks);
		if (write(fd, line, (size_t)n) != n)
			return 1;
	}
}
