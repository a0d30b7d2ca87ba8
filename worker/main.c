/*
 * main.c - the asynccompile-worker executable: a pool worker
 * (--worker INDEX) or a supervisor owning a pool of them (--supervise N),
 * both speaking the framed protocol on stdin/stdout (stderr is for
 * humans); a recipe wait's collector (--collect); the token guard of a
 * make that inherited a jobserver (--guard PID); and, for compatibility,
 * the asynccompile command's --print-config, --cache-stats, --cache-clear
 * (cli/tools.h), and --version (asynccompile-worker(1)).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "worker/diag.h"
#include "cli/tools.h"
#include "lib/proto.h"
#include "lib/run.h"
#include "lib/sig.h"
#include "lib/store.h"
#include "worker/worker.h"

static void usage(void)
{
	fputs("usage: asynccompile-worker --worker INDEX [--started-after MS] [--pid-board 3]\n"
	      "       asynccompile-worker --supervise NWORKERS [--started-after MS]\n"
	      "       asynccompile-worker --print-config [FILE]\n"
	      "       asynccompile-worker --cache-stats [FILE]\n"
	      "       asynccompile-worker --cache-clear [FILE]\n"
	      "       asynccompile-worker --collect SOCKET WAIT:COOKIE\n"
	      "       asynccompile-worker --guard PID\n"
	      "       asynccompile-worker --version\n"
	      "Speaks the asynccompile protocol on stdin/stdout; started by the\n"
	      "asynccompile make plugin, not by hand.\n", stderr);
	exit(2);
}

static int parse_int(const char *s, int min, int max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max) {
		diag_warn("bad number '%s' (%d..%d)", s, min, max);
		usage();
	}
	return (int)v;
}

/*
 * Whatever the parent leaked must not reach jobs (they get closefrom(3)
 * anyway) nor keep other pipes alive, e.g. a jobserver's write end.
 */
static void close_inherited(int from)
{
	if (syscall(SYS_close_range, (unsigned)from, ~0U, 0U) == 0)
		return;
	for (long fd = sysconf(_SC_OPEN_MAX) - 1; fd >= from; fd--)
		close((int)fd);
}

/* Pipes created later must not land on 0-2 and be mistaken for stdio. */
static void open_stdio(void)
{
	for (int fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0 &&
		    open("/dev/null", fd ? O_WRONLY : O_RDONLY) != fd)
			exit(1);
}

static void die_with_parent(void)
{
	if (sig_die_with_parent(getppid(), SIGTERM) < 0) {
		if (errno != ESRCH)
			perror("asynccompile-worker: prctl");
		exit(1);
	}
}

static char *self_exe(const char *argv0)
{
	static char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);

	if (n <= 0)
		return (char *)argv0;
	path[n] = 0;
	return path;
}

/*
 * The maintenance options are the asynccompile command's (cli/tools.h),
 * kept for compatibility: --print-config is -p without the origins,
 * --cache-stats is -s, --cache-clear is -C; FILE names the configuration.
 */
static int maintenance(const char *what, const char *file)
{
	struct buf err = BUF_INIT, warn = BUF_INIT;
	int rc;

	if (!strcmp(what, "--print-config"))
		rc = tools_print_config(file, 0, &err);
	else if (!strcmp(what, "--cache-stats"))
		rc = tools_show_stats(file, &warn, &err);
	else
		rc = tools_clear(file, &err);
	fflush(stdout);
	if (warn.len)
		diag_warn("%s", (char *)warn.data);
	if (rc < 0)
		diag_warn("%s", err.len ? (char *)err.data : "failed");
	buf_release(&err);
	buf_release(&warn);
	return rc < 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
	int after = -1, board = -1;

	if (argc >= 2 && argc <= 3 &&
	    (!strcmp(argv[1], "--print-config") || !strcmp(argv[1], "--cache-stats") ||
	     !strcmp(argv[1], "--cache-clear")))
		return maintenance(argv[1], argc == 3 ? argv[2] : NULL);
	if (argc == 4 && !strcmp(argv[1], "--collect")) {
		/* a recipe line of make's: stdio is make's, nothing else is ours */
		signal(SIGPIPE, SIG_IGN);
		return collect_main(argv[2], argv[3]);
	}
	if (argc == 3 && !strcmp(argv[1], "--guard")) {
		/* fds 3 and 4 are the plugin's (worker/guard.c) */
		close_inherited(5);
		open_stdio();
		signal(SIGPIPE, SIG_IGN);
		return guard_main(parse_int(argv[2], 1, INT_MAX));
	}
	if (argc == 2 && !strcmp(argv[1], "--version")) {
		printf("asynccompile-worker %s (protocol %d)\n", ASYNC_VERSION,
		       PROTO_VERSION);
		return 0;
	}
	if (argc < 3 || argc % 2 == 0)
		usage();
	for (int i = 3; i < argc; i += 2) {
		if (!strcmp(argv[i], "--started-after"))
			after = parse_int(argv[i + 1], 0, 3600000);
		else if (!strcmp(argv[i], "--pid-board") && !strcmp(argv[1], "--worker"))
			board = parse_int(argv[i + 1], 3, 3); /* spawn.c puts it there */
		else
			usage();
	}
	close_inherited(board >= 0 ? 4 : 3);
	open_stdio();
	signal(SIGPIPE, SIG_IGN);
	if (!strcmp(argv[1], "--worker")) {
		int index = parse_int(argv[2], 0, INT_MAX);

		die_with_parent();
		return serve_main(0, 1, index, after < 0 ? 0 : after, board);
	}
	if (!strcmp(argv[1], "--supervise")) {
		int n = parse_int(argv[2], 1, 1024);

		die_with_parent();
		return supervise_main(0, 1, n, self_exe(argv[0]), after);
	}
	usage();
}
