/*
 * main.c - the asynccompile-worker executable: a pool worker
 * (--worker INDEX) or a supervisor owning a pool of them (--supervise N),
 * both speaking the framed protocol on stdin/stdout (stderr is for
 * humans); a recipe wait's collector (--collect); the token guard of a
 * make that inherited a jobserver (--guard PID); and the user's tools:
 * --print-config, --cache-stats, --cache-clear, --version
 * (asynccompile-worker(1)).
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
#include "config/config.h"
#include "lib/cache.h"
#include "lib/proto.h"
#include "lib/run.h"
#include "lib/sig.h"
#include "lib/startdir.h"
#include "lib/store.h"
#include "worker/worker.h"

#define WORKER_VERSION "0.1"

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

/* Where make would start, seen from here: a recipe's make, or this directory. */
static const char *start_dir(void)
{
	static char *dir;

	if (!dir)
		dir = startdir_find(NULL);
	return dir;
}

/*
 * The configuration the plugin would use, found the same way
 * (config/find.c) but for the make-only step: FILE in place of
 * $(async-config) and the make variable.
 */
static int find_config(const char *file, struct config *c)
{
	struct buf err = BUF_INIT;
	struct config_search s = { file, CONFIG_NAMED, start_dir };
	struct config_origin o;
	int r = config_find_load(&s, c, &o, &err);

	config_origin_release(&o);
	if (r < 0) {
		diag_warn("%s", (char *)err.data);
		config_release(c);
		buf_release(&err);
		return -1;
	}
	return 0;
}

/*
 * --cache-stats, --cache-clear: the answer cache of the store the
 * configuration names (cache_dir), with the plugin's own checks.
 */
static int cache_command(const char *what, const char *file)
{
	struct config c;
	struct buf out = BUF_INIT, err = BUF_INIT;
	int store, dir;
	char *path;

	if (find_config(file, &c) < 0)
		return 1;
	path = store_path(c.cache_dir, &err);
	store = path ? store_open(c.cache_dir, 1, &err) : -1;
	dir = store >= 0 ? cache_open(store, &err) : -1;
	if (dir < 0) {
		diag_warn("no cache: %s", (char *)err.data);
		free(path);
		config_release(&c);
		buf_release(&err);
		return 1;
	}
	if (!strcmp(what, "--cache-clear"))
		printf("removed %ld entries from %s/cache\n", cache_clear(dir), path);
	else {
		cache_stats(dir, &out);
		printf("%s/cache %s\n", path, (char *)out.data);
	}
	close(dir);
	close(store);
	free(path);
	config_release(&c);
	buf_release(&out);
	buf_release(&err);
	return 0;
}

static int print_config(const char *file)
{
	struct config c;
	struct buf out = BUF_INIT;

	if (find_config(file, &c) < 0)
		return 1;
	config_dump(&c, &out);
	fwrite(out.data, 1, out.len, stdout);
	config_release(&c);
	buf_release(&out);
	return 0;
}

int main(int argc, char **argv)
{
	int after = -1, board = -1;

	if (argc >= 2 && argc <= 3 && !strcmp(argv[1], "--print-config"))
		return print_config(argc == 3 ? argv[2] : NULL);
	if (argc >= 2 && argc <= 3 &&
	    (!strcmp(argv[1], "--cache-stats") || !strcmp(argv[1], "--cache-clear")))
		return cache_command(argv[1], argc == 3 ? argv[2] : NULL);
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
		printf("asynccompile-worker %s (protocol %d)\n", WORKER_VERSION,
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
