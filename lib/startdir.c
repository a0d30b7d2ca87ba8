/*
 * startdir.c - the directory a build was started from (startdir.h): the
 * top-level make above us, found through /proc, and where it started.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/startdir.h"

#define STARTDIR_MAX_PROC ((size_t)4 << 20)
#define STARTDIR_MAX_DEPTH 64

/* /proc/PID/WHAT whole into b (NUL-separated for cmdline and environ). */
static int startdir_read(pid_t pid, const char *what, struct buf *b)
{
	char path[64];
	int fd, r;

	snprintf(path, sizeof path, "/proc/%ld/%s", (long)pid, what);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	r = buf_read_fd(b, fd, STARTDIR_MAX_PROC);
	close(fd);
	if (r < 0)
		return -1;
	buf_addch(b, 0); /* the last string ends even if the file did not end it */
	return 0;
}

/* The value of NAME in a NUL-separated environment block, or NULL. */
static const char *startdir_env(const struct buf *env, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < env->len;) {
		const char *e = (const char *)env->data + i;

		if (!strncmp(e, name, n) && e[n] == '=')
			return e + n + 1;
		i += strlen(e) + 1;
	}
	return NULL;
}

/* A MAKELEVEL value of a top-level process: none, empty or 0. */
static int startdir_top(const char *level)
{
	return !level || !*level || !strcmp(level, "0");
}

static pid_t startdir_ppid(pid_t pid)
{
	struct buf b = BUF_INIT;
	const char *p;
	long ppid = -1;

	/* "PID (COMM) STATE PPID ...": COMM may hold anything but ends at the last ')' */
	if (startdir_read(pid, "stat", &b) == 0 && (p = strrchr((char *)b.data, ')')) &&
	    sscanf(p + 1, " %*c %ld", &ppid) != 1)
		ppid = -1;
	buf_release(&b);
	return (pid_t)ppid;
}

/* Does `arg` (after "--") spell a prefix of the long option `name`, of at least `min` chars? */
static int startdir_long(const char *arg, const char *name, size_t min)
{
	size_t n = strcspn(arg, "=");

	return n >= min && n <= strlen(name) && !strncmp(arg, name, n);
}

/*
 * The -C directories of make's command line, in order, appended to *dirs
 * as NUL-terminated strings.  make's long options may be abbreviated;
 * those that take a value in the next word are skipped with it.
 */
static void startdir_chdirs(const struct buf *cmd, struct buf *dirs)
{
	static const char *const with_value[] = {
		"file", "makefile", "include-dir", "old-file", "assume-old", "new-file",
		"assume-new", "what-if", "eval", "jobserver-style", "jobserver-auth",
		"sync-mutex",
	};
	const char *end = (const char *)cmd->data + cmd->len, *a = (const char *)cmd->data;

	a += strlen(a) + 1; /* argv[0] */
	while (a < end) {
		const char *next = a + strlen(a) + 1, *val = NULL;

		if (!strcmp(a, "--"))
			return;
		if (!strncmp(a, "--", 2)) {
			const char *eq = strchr(a, '=');

			if (startdir_long(a + 2, "directory", 2)) {
				val = eq ? eq + 1 : next < end ? next : NULL;
				if (!eq && val)
					next += strlen(next) + 1;
			} else if (!eq) {
				for (size_t i = 0; i < sizeof with_value / sizeof *with_value; i++)
					if (startdir_long(a + 2, with_value[i], 3) && next < end) {
						next += strlen(next) + 1;
						break;
					}
			}
		} else if (a[0] == '-') {
			for (const char *c = a + 1; *c; c++) {
				if (*c == 'C' || strchr("fIoWE", *c)) {
					const char *v = c[1] ? c + 1 : next < end ? next : NULL;

					if (!c[1] && v)
						next += strlen(next) + 1;
					if (*c == 'C')
						val = v;
					break;
				}
				if (strchr("jlO", *c))
					break; /* an optional value: the rest of the word */
			}
		}
		if (val && *val)
			buf_add(dirs, val, strlen(val) + 1);
		a = next;
	}
}

static int startdir_same(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && S_ISDIR(sa.st_mode) &&
	       sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Does following the -C list `dirs` from `from` lead to `cwd` (a /proc link)? */
static int startdir_leads(const char *from, const struct buf *dirs, const char *cwd)
{
	struct buf path = BUF_INIT;
	int same;

	buf_addstr(&path, from);
	for (size_t i = 0; i < dirs->len; i += strlen((char *)dirs->data + i) + 1) {
		const char *d = (const char *)dirs->data + i;

		if (d[0] == '/')
			buf_reset(&path);
		else
			buf_addch(&path, '/');
		buf_addstr(&path, d);
	}
	same = startdir_same((char *)path.data, cwd);
	buf_release(&path);
	return same;
}

char *startdir_of_make(pid_t pid)
{
	struct buf cmd = BUF_INIT, dirs = BUF_INIT, env = BUF_INIT;
	char link[64], plink[64], cwd[PATH_MAX], parent[PATH_MAX], *r = NULL;
	const char *pwd = NULL;
	ssize_t n;

	snprintf(link, sizeof link, "/proc/%ld/cwd", (long)pid);
	n = readlink(link, cwd, sizeof cwd - 1);
	if (n <= 0 || startdir_read(pid, "cmdline", &cmd) < 0)
		goto out;
	cwd[n] = 0;
	startdir_chdirs(&cmd, &dirs);
	if (!dirs.len) {
		r = strdup(cwd);
		goto out;
	}
	/* what the shell said, else where the shell that started it is */
	if (startdir_read(pid, "environ", &env) == 0)
		pwd = startdir_env(&env, "PWD");
	if (pwd && pwd[0] == '/' && startdir_leads(pwd, &dirs, link)) {
		r = strdup(pwd);
		goto out;
	}
	snprintf(plink, sizeof plink, "/proc/%ld/cwd", (long)startdir_ppid(pid));
	n = readlink(plink, parent, sizeof parent - 1);
	if (n > 0) {
		parent[n] = 0;
		if (parent[0] == '/' && startdir_leads(parent, &dirs, link)) {
			r = strdup(parent);
			goto out;
		}
	}
	r = strdup(cwd);
out:
	buf_release(&cmd);
	buf_release(&dirs);
	buf_release(&env);
	return r;
}

char *startdir_find(const char *own)
{
	char *r = NULL, cwd[PATH_MAX];
	pid_t pid = getppid();

	if (!startdir_top(getenv("MAKELEVEL"))) {
		/* up to the first process not below a make: the top-level make */
		for (int depth = 0; !r && pid > 1 && depth < STARTDIR_MAX_DEPTH; depth++) {
			struct buf env = BUF_INIT;
			int top = -1;

			if (startdir_read(pid, "environ", &env) == 0)
				top = startdir_top(startdir_env(&env, "MAKELEVEL"));
			buf_release(&env);
			if (top < 0)
				break; /* another user's, or gone */
			if (top)
				r = startdir_of_make(pid);
			if (top)
				break;
			pid = startdir_ppid(pid);
		}
	}
	if (!r && own)
		r = strdup(own);
	if (!r)
		r = strdup(getcwd(cwd, sizeof cwd) ? cwd : ".");
	if (!r)
		abort();
	return r;
}
