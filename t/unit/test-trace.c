/*
 * Unit tests for the tracer (trace/, the events of lib/tracelog.h):
 * t/helpers/trace-probe and shells run with trace/asynccompile-trace.so
 * preloaded and a memfd log at TL_FD, as the runner sets them up; the
 * log is read back with tl_next() once every process of the run is done
 * (the test reads the run's stdout to its end: every process of it holds
 * that pipe until it exits, so no sleep is needed).  Run from the
 * repository root (prove ./t/unit/test-trace.t).
 *
 * Over 600 lines: one case per modelled behaviour, sharing the runner and
 * the accounting check.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "answer/readset_check.h"
#include "lib/buf.h"
#include "lib/readset.h"
#include "lib/tracelog.h"
#include "tap.h"

static char tracer[PATH_MAX], probe[PATH_MAX], dir[PATH_MAX];

struct ev {
	struct tl_event e;
	char *path;
};

struct run {
	struct ev *v;
	size_t n;
	int whole;          /* the log parsed to its end */
	int status;
	char out[8192];     /* the run's standard output */
	pid_t pid;          /* the process the test started */
	const char *shm_why; /* the shared log's header check (tl_shm_check) */
	char *raw;          /* the events as the runner decodes them */
	size_t rawn;
};

/* 1: the log is a plain memfd written with writev (a harness's); 0: shared. */
static int legacy_log;
/* the shared log's room (the runner's is 64 MiB) */
static uint64_t shm_cap = ((uint64_t)4 << 20) - TL_SHM_DATA;

static const char *const type_names[] = {
	"?", "HELLO", "BYE", "FORK", "EXEC", "EXECFAIL", "SPAWN", "READ", "LIST", "WRITE",
	"OPAQUE", "CLOCK", "VALUE", "IMPURE", "RANDOM",
};

static void run_free(struct run *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->v[i].path);
	free(r->v);
	free(r->raw);
	memset(r, 0, sizeof *r);
}

static void dump(const struct run *r)
{
	for (size_t i = 0; i < r->n; i++)
		diag("%d %s kind=%d flags=%d aux=%d ino=%llu %s", r->v[i].e.pid,
		     r->v[i].e.type < 15 ? type_names[r->v[i].e.type] : "?", r->v[i].e.kind,
		     r->v[i].e.flags, r->v[i].e.aux, (unsigned long long)r->v[i].e.ino, r->v[i].path);
}

/*
 * Run argv with the tracer.  env: extra "NAME=VALUE" settings ("NAME="
 * with nothing after it unsets NAME); trace: 0 gives no ASYNCCOMPILE_TRACE,
 * 1 "FD:DEV:INO", 2 a wrong identity, 3 the seven-field form naming the
 * run's stdout pipe as the job's stdout and stderr, 4 the same with
 * pipes that are not the run's, 5 "FD:DEV:INO" ahead of need (TL_ENV_AHEAD).
 */
static void run(struct run *r, int trace, const char *const *env, char *const argv[])
{
	int m = memfd_create("trace-log", MFD_CLOEXEC), w, p[2];
	char path[64], var[256];
	struct stat st;
	size_t off = 0, plen, got = 0, n;
	const char *pp;
	struct tl_event e;
	char *log;
	ssize_t k;
	off_t base;

	memset(r, 0, sizeof *r);
	snprintf(path, sizeof path, "/proc/self/fd/%d", m);
	if (m < 0 || (!legacy_log && tl_shm_make(m, shm_cap) < 0))
		abort();
	w = open(path, (legacy_log ? O_WRONLY : O_RDWR) | O_APPEND | O_CLOEXEC);
	if (w < 0 || fstat(w, &st) < 0 || pipe2(p, O_CLOEXEC) < 0)
		abort();
	snprintf(var, sizeof var, "%d:%llu:%llu", TL_FD, (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino + (trace == 2));
	if (trace == 5)
		strcat(var, TL_ENV_AHEAD);
	if (trace == 3 || trace == 4) {
		struct stat ps;
		size_t l = strlen(var);

		if (fstat(p[1], &ps) < 0)
			abort();
		for (int i = 0; i < 2; i++)
			l += (size_t)snprintf(var + l, sizeof var - l, ":%llu:%llu",
					      (unsigned long long)ps.st_dev,
					      (unsigned long long)ps.st_ino + (trace == 4));
	}
	r->pid = fork();
	if (r->pid == 0) {
		if (dup2(w, TL_FD) < 0 || dup2(p[1], 1) < 0)
			_exit(126);
		setenv("LD_PRELOAD", tracer, 1);
		if (trace)
			setenv(TL_ENV, var, 1);
		else
			unsetenv(TL_ENV);
		for (int i = 0; env && env[i]; i++) {
			const char *eq = strchr(env[i], '=');
			char name[256];

			snprintf(name, sizeof name, "%.*s", (int)(eq - env[i]), env[i]);
			if (eq[1])
				setenv(name, eq + 1, 1);
			else
				unsetenv(name);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	/* to the end, keeping what fits: the run must never block on the pipe */
	for (char sink[512]; (k = got < sizeof r->out - 1 ?
				     read(p[0], r->out + got, sizeof r->out - 1 - got) :
				     read(p[0], sink, sizeof sink)) > 0;)
		if (got < sizeof r->out - 1)
			got += (size_t)k;
	r->out[got] = 0;
	close(p[0]);
	waitpid(r->pid, &r->status, 0);
	n = (size_t)lseek(m, 0, SEEK_END);
	base = 0;
	if (!legacy_log) {
		/* the shared log as the runner reads it (lib/run.c) */
		struct tl_shm h;

		if (pread(m, &h, sizeof h, 0) != (ssize_t)sizeof h)
			abort();
		r->shm_why = tl_shm_check(&h, n);
		n = r->shm_why ? 0 : (size_t)h.head;
		base = TL_SHM_DATA;
	}
	log = malloc(n + 1);
	if (!log || pread(m, log, n, base) != (ssize_t)n)
		abort();
	while (tl_next(log, n, &off, &e, &pp, &plen)) {
		r->v = realloc(r->v, (r->n + 1) * sizeof *r->v);
		if (!r->v)
			abort();
		r->v[r->n].e = e;
		r->v[r->n].path = strndup(pp, plen);
		r->n++;
	}
	r->whole = !r->shm_why && off == n;
	r->raw = log;
	r->rawn = n;
	close(m);
	close(w);
}

/* Index of the first event from `from` of type (and pid, kind, path when given). */
static long find(const struct run *r, size_t from, int type, pid_t pid, int kind, const char *path)
{
	for (size_t i = from; i < r->n; i++) {
		const struct tl_event *e = &r->v[i].e;

		if (e->type == type && (pid <= 0 || e->pid == pid) && (kind < 0 || e->kind == kind) &&
		    (!path || !strcmp(r->v[i].path, path)))
			return (long)i;
	}
	return -1;
}

/*
 * f, a FORK event, names a child of the traced process, and after it come
 * that child's READ of path and its BYE, under the child's own pid.
 */
static int child_read_bye(const struct run *r, long f, const char *path)
{
	return f >= 0 && r->v[f].e.aux == r->pid && r->v[f].e.pid != r->pid &&
	       find(r, (size_t)f, TL_READ, r->v[f].e.pid, TL_FILE, path) >= 0 &&
	       find(r, (size_t)f, TL_BYE, r->v[f].e.pid, -1, NULL) >= 0;
}

/* The flags of every READ of a path ending in suffix, or'ed; -1: none. */
static int read_flags(const struct run *r, const char *suffix)
{
	size_t k = strlen(suffix);
	int f = -1;

	for (size_t i = 0; i < r->n; i++) {
		size_t n = strlen(r->v[i].path);

		if (r->v[i].e.type == TL_READ && n >= k && !strcmp(r->v[i].path + n - k, suffix))
			f = (f < 0 ? 0 : f) | r->v[i].e.flags;
	}
	return f;
}

static int event_with(const struct run *r, int type, const char *word)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->v[i].e.type == type && strstr(r->v[i].path, word))
			return 1;
	return 0;
}

static int opaque_with(const struct run *r, const char *word)
{
	return event_with(r, TL_OPAQUE, word);
}

/*
 * Every process accounted for: HELLO or FORK then BYE; every EXEC then a
 * HELLO or EXECFAIL of its pid; every SPAWN's child said HELLO.
 */
static int accounted(const struct run *r, char *why, size_t size)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct tl_event *e = &r->v[i].e;

		if ((e->type == TL_HELLO || e->type == TL_FORK) &&
		    find(r, i + 1, TL_BYE, e->pid, -1, NULL) < 0 &&
		    find(r, i + 1, TL_EXEC, e->pid, -1, NULL) < 0) {
			snprintf(why, size, "pid %d never said BYE", e->pid);
			return 0;
		}
		if (e->type == TL_EXEC && find(r, i + 1, TL_HELLO, e->pid, -1, NULL) < 0 &&
		    find(r, i + 1, TL_EXECFAIL, e->pid, -1, NULL) < 0) {
			snprintf(why, size, "pid %d: EXEC %s without HELLO", e->pid, r->v[i].path);
			return 0;
		}
		if (e->type == TL_SPAWN && find(r, 0, TL_HELLO, e->aux, -1, NULL) < 0) {
			snprintf(why, size, "spawned pid %d never said HELLO", e->aux);
			return 0;
		}
	}
	return 1;
}

static void check_accounted(const struct run *r, const char *what)
{
	char why[256] = "";
	int good = r->whole && accounted(r, why, sizeof why) &&
		   find(r, 0, TL_HELLO, r->pid, -1, NULL) >= 0 && !opaque_with(r, "");

	if (!ok(good, "%s: every process accounted for, nothing opaque", what)) {
		diag("%s (log whole: %d, status %d)", why, r->whole, r->status);
		dump(r);
	}
}

static char *at(const char *name)
{
	/* enough for every path of one command line */
	static char buf[32][PATH_MAX];
	static int k;

	k = (k + 1) % 32;
	if (snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name) >= (int)sizeof buf[k])
		abort();
	return buf[k];
}

static ino_t ino_of(const char *path, int nofollow)
{
	struct stat st;

	if ((nofollow ? lstat(path, &st) : stat(path, &st)) < 0)
		return 0;
	return st.st_ino;
}

static void touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || close(fd) < 0)
		abort();
}

/* A READ of path with the identity it has, flags as wanted. */
static int read_ok(const struct run *r, int type, const char *path, int kind, int flags)
{
	long i = find(r, 0, type, r->pid, kind, path);

	if (i < 0)
		return 0;
	if (kind == TL_ABSENT)
		return r->v[i].e.ino == 0 && r->v[i].e.flags == flags;
	return r->v[i].e.ino == ino_of(path, flags & TL_NOFOLLOW) && r->v[i].e.flags == flags;
}

static void test_untraced(void)
{
	struct run r;

	run(&r, 0, NULL, (char *[]){ probe, "open", at("f"), NULL });
	ok(r.n == 0 && strstr(r.out, "open ok") && WIFEXITED(r.status) && !WEXITSTATUS(r.status),
	   "no ASYNCCOMPILE_TRACE: no events, the program runs as usual (%zu events)", r.n);
	run_free(&r);
	run(&r, 2, NULL, (char *[]){ probe, "open", at("f"), "getenv", TL_ENV, NULL });
	ok(r.n == 0 && strstr(r.out, "open ok") && strstr(r.out, TL_ENV "=1021:"),
	   "a log that is not the one named: no events, nothing hidden (%zu events)", r.n);
	run_free(&r);
}

static void test_reads(void)
{
	struct run r;

	run(&r, 1, NULL,
	    (char *[]){ probe, "open", at("f"), "open", at("absent"), "openat-rel", at("d"), "g",
			"stat", at("f"), "lstat", at("link"), "access", at("nodir/x"), "readlink",
			at("link"), "opendir", at("d"), "realpath", at("link"), NULL });
	check_accounted(&r, "reads");
	ok(read_ok(&r, TL_READ, at("f"), TL_FILE, 0), "open: READ with the file's identity");
	ok(read_ok(&r, TL_READ, at("absent"), TL_ABSENT, 0), "open of a missing file: READ ABSENT");
	ok(read_ok(&r, TL_READ, at("d/g"), TL_FILE, 0), "openat relative to a dirfd: absolute path");
	ok(read_ok(&r, TL_READ, at("link"), TL_LINK, TL_NOFOLLOW | TL_ATIME),
	   "lstat: READ NOFOLLOW of the link, with the access time it returned");
	{
		long i = find(&r, 0, TL_READ, r.pid, TL_FILE, at("f"));
		long j = i < 0 ? -1 : find(&r, i + 1, TL_READ, r.pid, TL_FILE, at("f"));

		ok(i >= 0 && j > i && r.v[i].e.flags == 0 && !r.v[i].e.atime_ns &&
		   r.v[j].e.flags == TL_ATIME && r.v[j].e.atime_ns > 0,
		   "open: no access time; stat: the access time it returned (TL_ATIME)");
	}
	ok(read_ok(&r, TL_READ, at("nodir/x"), TL_ABSENT, 0), "access under a missing directory: ABSENT");
	ok(find(&r, 0, TL_READ, r.pid, TL_LINK, at("link")) >= 0 &&
	   find(&r, 0, TL_READ, r.pid, TL_FILE, at("f")) >= 0, "readlink and stat seen");
	ok(read_ok(&r, TL_LIST, at("d"), TL_DIR, 0), "opendir: LIST with the directory's identity");
	ok(read_ok(&r, TL_READ, dir, TL_DIR, TL_NOFOLLOW) &&
	   find(&r, 0, TL_READ, r.pid, TL_FILE, at("f")) >= 0,
	   "realpath: every step of the resolution, NOFOLLOW");
	run_free(&r);
}

static void test_writes(void)
{
	struct run r;
	ino_t a = ino_of(at("wa"), 0), c = ino_of(at("wc"), 0);
	long i;

	run(&r, 1, NULL,
	    (char *[]){ probe, "rename", at("wa"), at("wb"), "unlink", at("wc"), "mkdir", at("we"),
			"creat", at("wn"), "fopen-w", at("wm"), "mkstemp", at("tmpXXXXXX"),
			"creat", "/dev/null", "mkdir", at("d"), NULL });
	check_accounted(&r, "writes");
	i = find(&r, 0, TL_WRITE, r.pid, TL_FILE, at("wa"));
	ok(i >= 0 && r.v[i].e.ino == a && r.v[i].e.flags == TL_NOFOLLOW,
	   "rename: WRITE of the old path with its identity before");
	ok(find(&r, 0, TL_WRITE, r.pid, TL_ABSENT, at("wb")) >= 0, "rename: WRITE of the new path, absent before");
	i = find(&r, 0, TL_WRITE, r.pid, TL_FILE, at("wc"));
	ok(i >= 0 && r.v[i].e.ino == c, "unlink: WRITE with the identity before");
	ok(find(&r, 0, TL_WRITE, r.pid, TL_ABSENT, at("we")) >= 0, "mkdir: WRITE, absent before");
	ok(find(&r, 0, TL_WRITE, -1, -1, at("d")) < 0 && find(&r, 0, TL_READ, r.pid, TL_DIR, at("d")) >= 0,
	   "mkdir of a directory that exists (mkdir -p's parents): a READ, no WRITE");
	ok(find(&r, 0, TL_WRITE, r.pid, TL_ABSENT, at("wn")) >= 0 &&
	   find(&r, 0, TL_WRITE, r.pid, TL_ABSENT, at("wm")) >= 0, "creat and fopen \"w\": WRITE");
	{
		const char *name = strstr(r.out, "mkstemp ");
		char made[PATH_MAX] = "";

		if (name)
			sscanf(name + 8, "%4095s", made);
		ok(*made && find(&r, 0, TL_WRITE, r.pid, TL_ABSENT, made) >= 0 &&
		   find(&r, 0, TL_WRITE, r.pid, TL_FILE, made) >= 0,
		   "mkstemp: the created file WRITE ABSENT, its unlink WRITE (%s)", made);
	}
	ok(find(&r, 0, TL_WRITE, -1, -1, "/dev/null") < 0, "writes to /dev/null are not events");
	run_free(&r);
}

static void test_relative(void)
{
	struct run r;

	run(&r, 1, NULL, (char *[]){ probe, "chdir", at("d"), "open", "g", "stat", "missing", NULL });
	check_accounted(&r, "chdir");
	ok(read_ok(&r, TL_READ, at("d/g"), TL_FILE, 0), "after chdir, a relative path is logged absolute");
	ok(find(&r, 0, TL_READ, r.pid, TL_ABSENT, at("d/missing")) >= 0, "... a missing one too");
	ok(read_ok(&r, TL_READ, at("d"), TL_DIR, 0), "chdir: READ of the directory");
	run_free(&r);
}

static void test_path_search(void)
{
	char path[3 * PATH_MAX];
	const char *env[] = { path, NULL };
	struct run r;
	long a, b, x, h;

	snprintf(path, sizeof path, "PATH=%s:%s:%s", at("bin1"), at("bin2"), at("bin3"));
	run(&r, 1, env, (char *[]){ probe, "execvp", "tprog", "stat", "/", NULL });
	check_accounted(&r, "execvp");
	a = find(&r, 0, TL_READ, r.pid, TL_ABSENT, at("bin1/tprog"));
	b = find(&r, 0, TL_READ, r.pid, TL_ABSENT, at("bin2/tprog"));
	x = find(&r, 0, TL_EXEC, r.pid, TL_FILE, at("bin3/tprog"));
	h = x < 0 ? -1 : find(&r, (size_t)x, TL_HELLO, r.pid, -1, NULL);
	ok(a >= 0 && b > a && x > b && h > x,
	   "execvp: two misses (READ ABSENT, in PATH order), EXEC of the third, its HELLO");
	ok(x >= 0 && r.v[x].e.ino == ino_of(at("bin3/tprog"), 0), "EXEC carries the program's identity");
	run_free(&r);

	run(&r, 1, env, (char *[]){ probe, "spawnp", "tprog", NULL });
	check_accounted(&r, "posix_spawnp");
	a = find(&r, 0, TL_READ, r.pid, TL_ABSENT, at("bin1/tprog"));
	b = find(&r, 0, TL_READ, r.pid, TL_ABSENT, at("bin2/tprog"));
	x = find(&r, 0, TL_SPAWN, r.pid, TL_FILE, at("bin3/tprog"));
	ok(a >= 0 && b > a && x > b && find(&r, 0, TL_HELLO, r.v[x].e.aux, -1, NULL) >= 0,
	   "posix_spawnp: two misses, SPAWN of the third, the child's HELLO");
	run_free(&r);
}

static void test_processes(void)
{
	struct run r;
	long f;

	run(&r, 1, NULL, (char *[]){ probe, "fork-open", at("f"), NULL });
	check_accounted(&r, "fork");
	f = find(&r, 0, TL_FORK, -1, -1, NULL);
	ok(child_read_bye(&r, f, at("f")), "fork: the child's FORK, its READ, its BYE");
	run_free(&r);

	/*
	 * What the loader mapped is flagged for the runner's scan; the C
	 * library, the loader and the tracer are exempt.  The loader maps
	 * (dlopen too) with its own mmap, not the hooked one: nothing opaque.
	 */
	run(&r, 1, NULL, (char *[]){ probe, "dlopen", "/lib/x86_64-linux-gnu/libm.so.6", NULL });
	check_accounted(&r, "dlopen");
	is_int(read_flags(&r, "/libm.so.6"), TL_MAPPED, "a dlopen'ed library: TL_MAPPED");
	is_int(read_flags(&r, "/libc.so.6"), TL_MAPPED | TL_SYSTEM, "the C library: TL_SYSTEM");
	is_int(read_flags(&r, "/ld-linux-x86-64.so.2"), TL_MAPPED | TL_SYSTEM,
	       "the dynamic loader: TL_SYSTEM");
	is_int(read_flags(&r, "/asynccompile-trace.so"), TL_MAPPED | TL_SYSTEM,
	       "the tracer: TL_SYSTEM");
	run_free(&r);

	/* an object dlopen'ed before the fork is not news to the child */
	run(&r, 1, NULL, (char *[]){ probe, "dlopen", "/lib/x86_64-linux-gnu/libm.so.6",
				     "vfork-exec", probe, NULL });
	check_accounted(&r, "dlopen then vfork");
	f = find(&r, 0, TL_FORK, -1, -1, NULL);
	ok(f >= 0 && find(&r, (size_t)f, TL_EXEC, r.v[f].e.pid, TL_FILE, probe) >= 0 &&
	   find(&r, (size_t)f, TL_HELLO, r.v[f].e.pid, -1, NULL) >= 0,
	   "vfork then exec: FORK, EXEC, HELLO of the child");
	run_free(&r);

	/* a real vfork: what the child's tracer did to the parent's memory is undone */
	run(&r, 1, NULL, (char *[]){ probe, "vfork-open", at("f"), "open", at("d/g"), NULL });
	check_accounted(&r, "vfork, the child opens and _exits");
	f = find(&r, 0, TL_FORK, -1, -1, NULL);
	ok(child_read_bye(&r, f, at("f")),
	   "vfork: the child's FORK, its READ and its BYE carry its own pid");
	ok(f >= 0 && find(&r, (size_t)f, TL_READ, r.pid, TL_FILE, at("d/g")) >= 0 &&
	   find(&r, (size_t)f, TL_BYE, r.pid, -1, NULL) >= 0,
	   "vfork: the parent's events go on under its pid, and it says BYE after its child did");
	ok(strstr(r.out, "vfork shared memory: 1\n") != NULL,
	   "vfork while traced is a real vfork (the child's store is the parent's)");
	run_free(&r);

	run(&r, 1, NULL, (char *[]){ probe, "vfork-move-exec", probe, "open", at("d/g"), NULL });
	check_accounted(&r, "vfork, the child moves the log and execs");
	f = find(&r, 0, TL_FORK, -1, -1, NULL);
	ok(f >= 0 && find(&r, (size_t)f, TL_HELLO, r.v[f].e.pid, -1, NULL) >= 0 &&
	   find(&r, (size_t)f, TL_READ, r.pid, TL_FILE, at("d/g")) >= 0,
	   "vfork: the child's dup2 onto the log moved it in the child only; the parent logs on");
	run_free(&r);

	/* a vfork child's vfork is a fork: its snapshot would overwrite the parent's */
	run(&r, 1, NULL, (char *[]){ probe, "vfork-vfork", "open", at("d/g"), NULL });
	check_accounted(&r, "vfork in a vfork child");
	f = find(&r, 0, TL_FORK, -1, -1, NULL);
	ok(f >= 0 && find(&r, (size_t)f, TL_READ, r.pid, TL_FILE, at("d/g")) >= 0 &&
	   find(&r, (size_t)f, TL_BYE, r.pid, -1, NULL) >= 0,
	   "vfork in a vfork child: the parent resumes as itself (its READ and BYE under its pid)");
	run_free(&r);

	/* with a thread about, vfork is a fork */
	run(&r, 1, NULL, (char *[]){ probe, "threads", "1", at("t"), "vfork-open", at("f"), NULL });
	check_accounted(&r, "threads, then vfork");
	f = find(&r, 0, TL_FORK, -1, -1, NULL);
	ok(f >= 0 && find(&r, (size_t)f, TL_READ, r.v[f].e.pid, TL_FILE, at("f")) >= 0 &&
	   strstr(r.out, "vfork shared memory: 0\n") != NULL,
	   "vfork after a thread was made: a fork (FORK, the child's READ; its store not shared)");
	run_free(&r);

	run(&r, 1, NULL, (char *[]){ probe, "threads", "8", at("t"), NULL });
	check_accounted(&r, "threads");
	{
		int all = 1;

		for (int i = 0; i < 8; i++) {
			char name[32];

			snprintf(name, sizeof name, "t.%d", i);
			all &= read_ok(&r, TL_READ, at(name), TL_FILE, 0);
		}
		ok(all, "8 threads: every one's open is a READ");
	}
	run_free(&r);

	run(&r, 1, NULL, (char *[]){ probe, "exit", "3", NULL });
	f = find(&r, 0, TL_BYE, r.pid, -1, NULL);
	ok(f >= 0 && r.v[f].e.aux == 3, "exit(3): BYE with status 3");
	run_free(&r);
	run(&r, 1, NULL, (char *[]){ probe, "_exit", "4", NULL });
	f = find(&r, 0, TL_BYE, r.pid, -1, NULL);
	ok(f >= 0 && r.v[f].e.aux == 4, "_exit(4): BYE with status 4");
	run_free(&r);

	run(&r, 1, NULL, (char *[]){ probe, "system", probe, "popen", "echo hi", NULL });
	check_accounted(&r, "system and popen");
	f = find(&r, 0, TL_SPAWN, r.pid, -1, "/bin/sh");
	ok(f >= 0 && find(&r, (size_t)f + 1, TL_SPAWN, r.pid, -1, "/bin/sh") >= 0 &&
	   strstr(r.out, "popen 0 hi"), "system and popen: their shells are SPAWNed and traced");
	run_free(&r);
}

static void test_env(void)
{
	char pre[PATH_MAX + 32], cmd[3 * PATH_MAX];
	const char *env[] = { pre, NULL };
	struct run r;

	snprintf(pre, sizeof pre, "LD_PRELOAD=libm.so.6:%s", tracer);
	run(&r, 1, env,
	    (char *[]){ probe, "getenv", TL_ENV, "getenv", "LD_PRELOAD", "execvp", probe, "getenv",
			"LD_PRELOAD", "open", at("f"), NULL });
	check_accounted(&r, "hidden variables");
	ok(strstr(r.out, "getenv " TL_ENV "=(unset)\n") != NULL, "the program does not see " TL_ENV);
	if (!ok(strstr(r.out, "getenv LD_PRELOAD=libm.so.6\ngetenv LD_PRELOAD=libm.so.6\n") != NULL,
		"the program and its exec'd image see LD_PRELOAD as it was"))
		diag("output: %s", r.out);
	ok(find(&r, 0, TL_READ, r.pid, TL_FILE, at("f")) > find(&r, 0, TL_EXEC, r.pid, -1, probe),
	   "the exec'd image is traced");
	run_free(&r);

	snprintf(cmd, sizeof cmd, "env -i %s open %s", probe, at("f"));
	run(&r, 1, NULL, (char *[]){ "/bin/sh", "-c", cmd, NULL });
	check_accounted(&r, "env -i");
	ok(find(&r, 0, TL_HELLO, -1, -1, probe) >= 0 && find(&r, 0, TL_READ, -1, TL_FILE, at("f")) >= 0,
	   "env -i: the program it runs is still traced");
	run_free(&r);
}

static void test_log_fd(void)
{
	char cmd[3 * PATH_MAX];
	struct run r;
	long x;

	/* dash takes only one-digit descriptors in redirections; bash more */
	if (access("/bin/bash", X_OK) == 0) {
		snprintf(cmd, sizeof cmd, "exec 1021>&-; %s open %s", probe, at("f"));
		/* bash asks getpwuid() (opaque) for SHELL or HOME when they are unset, as under CI */
		run(&r, 1, (const char *const[]){ "SHELL=/bin/bash", "HOME=/", NULL },
		    (char *[]){ "/bin/bash", "-c", cmd, NULL });
		check_accounted(&r, "exec 1021>&-");
		ok(find(&r, 0, TL_READ, -1, TL_FILE, at("f")) >= 0,
		   "the log survives `exec 1021>&-` in bash");
		run_free(&r);
	} else {
		ok(1, "# SKIP `exec 1021>&-`: no /bin/bash (dash takes only one-digit descriptors)");
	}

	run(&r, 1, NULL,
	    (char *[]){ probe, "dup2-log", "open", at("f"), "close-range", "close-log", "execvp", probe,
			"open", at("d/g"), NULL });
	check_accounted(&r, "dup2 onto the log");
	x = find(&r, 0, TL_EXEC, r.pid, -1, probe);
	ok(strstr(r.out, "dup2-log ok\n") && find(&r, 0, TL_READ, r.pid, TL_FILE, at("f")) >= 0 &&
	   x >= 0 && find(&r, (size_t)x, TL_READ, r.pid, TL_FILE, at("d/g")) >= 0,
	   "dup2 onto the log, close_range and close: the log moves and follows the exec");
	run_free(&r);
}

/* The verdict the runner gives log[0..n) of root's run; why: its reason. */
static int built(const char *log, size_t n, pid_t root, struct buf *why)
{
	struct buf out = BUF_INIT;
	int v;

	buf_reset(why);
	/* a start far ahead: no timestamp is within the racy window */
	readset_build(log, n, root, INT64_MAX / 2, 0, &out);
	v = readset_check(out.data, out.len, 0, why);
	buf_addch(why, 0);
	buf_release(&out);
	return v;
}

/*
 * The shared log (tracelog.h, struct tl_shm): what the runner reads, a
 * writer killed between taking room and committing it, an overflow, and
 * the plain log of a harness.
 */
static void test_shm_log(void)
{
	struct run r;
	struct buf why = BUF_INIT;
	char *torn;
	size_t off = 0, plen, third = 0;
	struct tl_event e;
	const char *pp;
	int v;

	run(&r, 1, NULL, (char *[]){ probe, "open", at("f"), "stat", at("d"), NULL });
	check_accounted(&r, "shared log");
	ok(!r.shm_why, "shared log: nothing written past its room (%s)",
	   r.shm_why ? r.shm_why : "header holds");
	v = built(r.raw, r.rawn, r.pid, &why);
	if (!ok(v == RS_PURE, "shared log: a pure run decodes as pure"))
		diag("%s", (char *)why.data);
	/* the third event's room taken and never committed: its len is zero */
	for (int i = 0; i < 2 && tl_next(r.raw, r.rawn, &off, &e, &pp, &plen); i++)
		third = off;
	torn = malloc(r.rawn + 1);
	if (!torn)
		abort();
	memcpy(torn, r.raw, r.rawn);
	memset(torn + third, 0, 4);
	v = built(torn, r.rawn, r.pid, &why);
	ok(third > 0 && v == RS_OPAQUE && strstr((char *)why.data, "half written"),
	   "an event whose len was never stored: opaque, not a smaller read set (%s)",
	   (char *)why.data);
	/* ... and one at the very end, with nothing after it */
	memcpy(torn, r.raw, r.rawn);
	off = 0;
	while (tl_next(r.raw, r.rawn, &off, &e, &pp, &plen) && off < r.rawn)
		third = off;
	memset(torn + third, 0, r.rawn - third);
	v = built(torn, r.rawn, r.pid, &why);
	ok(v == RS_OPAQUE && strstr((char *)why.data, "half written"),
	   "the last event never committed: opaque (%s)", (char *)why.data);
	free(torn);
	run_free(&r);

	shm_cap = 512;
	run(&r, 1, NULL, (char *[]){ probe, "open", at("f"), NULL });
	ok(r.status == 0 && r.shm_why && !strcmp(r.shm_why, "the trace log overflowed"),
	   "a log too small for the run: overflowed, seen by the header (%s)",
	   r.shm_why ? r.shm_why : "no complaint");
	run_free(&r);
	shm_cap = ((uint64_t)4 << 20) - TL_SHM_DATA;

	legacy_log = 1;
	run(&r, 1, NULL, (char *[]){ probe, "open", at("f"), NULL });
	check_accounted(&r, "a plain log (writev)");
	ok(read_ok(&r, TL_READ, at("f"), TL_FILE, 0), "a plain log: READ with the file's identity");
	run_free(&r);
	legacy_log = 0;
	buf_release(&why);
}

static void test_values(void)
{
	struct run r;
	char want[64];
	long i;

	run(&r, 1, NULL, (char *[]){ probe, "uname", "time", "nprocs", NULL });
	check_accounted(&r, "values");
	i = find(&r, 0, TL_VALUE, r.pid, -1, NULL);
	ok(i >= 0 && !strncmp(r.v[i].path, "uname=Linux ", 12), "uname: VALUE %s",
	   i >= 0 ? r.v[i].path : "missing");
	ok(find(&r, 0, TL_CLOCK, r.pid, -1, NULL) >= 0 && find(&r, (size_t)find(&r, 0, TL_CLOCK,
	   r.pid, -1, NULL) + 1, TL_CLOCK, r.pid, -1, NULL) < 0, "time: one CLOCK");
	snprintf(want, sizeof want, "nprocs=%ld", sysconf(_SC_NPROCESSORS_ONLN));
	ok(find(&r, 0, TL_VALUE, r.pid, -1, want) >= 0, "sysconf: VALUE %s", want);
	run_free(&r);

	run(&r, 3, NULL, (char *[]){ probe, "time", "getenv", TL_ENV, NULL });
	i = find(&r, 0, TL_CLOCK, r.pid, -1, NULL);
	ok(i >= 0 && r.v[i].e.flags == TL_TO_ANSWER && strstr(r.out, TL_ENV "=(unset)"),
	   "the clock read with stdout the job's pipe: CLOCK TL_TO_ANSWER");
	run_free(&r);
	run(&r, 4, NULL, (char *[]){ probe, "time", "execvp", probe, "time", NULL });
	check_accounted(&r, "seven-field variable");
	i = find(&r, 0, TL_CLOCK, r.pid, -1, NULL);
	{
		long j = i < 0 ? -1 : find(&r, (size_t)i + 1, TL_CLOCK, r.pid, -1, NULL);

		ok(i >= 0 && j > i && !r.v[i].e.flags && !r.v[j].e.flags,
		   "other pipes: no TL_TO_ANSWER, in the exec'd image either (all fields passed on)");
	}
	run_free(&r);

	/* every clock but CPU time; randomness; the affinity is no VALUE */
	for (int k = 0; k < 2; k++) {
		run(&r, 3, NULL, (char *[]){ probe, k ? "boottime" : "monotonic", NULL });
		i = find(&r, 0, TL_CLOCK, r.pid, -1, NULL);
		ok(i >= 0 && r.v[i].e.flags == TL_TO_ANSWER, "the %s clock: CLOCK TL_TO_ANSWER",
		   k ? "boot-time" : "monotonic");
		run_free(&r);
	}
	run(&r, 3, NULL, (char *[]){ probe, "cputime", "rusage", "affinity", NULL });
	check_accounted(&r, "cpu time");
	ok(find(&r, 0, TL_CLOCK, r.pid, -1, NULL) < 0 && find(&r, 0, TL_VALUE, r.pid, -1, NULL) < 0 &&
	   strstr(r.out, "rusage ok") && strstr(r.out, "affinity ok"),
	   "CPU time, getrusage and the process's own affinity: no event");
	run_free(&r);
	for (int k = 0; k < 2; k++) {
		char *op = k ? (char *)"getentropy" : (char *)"getrandom";

		run(&r, 3, NULL, (char *[]){ probe, op, op, NULL });
		i = find(&r, 0, TL_RANDOM, r.pid, -1, NULL);
		ok(i >= 0 && r.v[i].e.flags == TL_TO_ANSWER &&
		   find(&r, (size_t)i + 1, TL_RANDOM, r.pid, -1, NULL) < 0,
		   "%s: one RANDOM, TL_TO_ANSWER", op);
		run_free(&r);
	}
}

static void test_loader_and_scripts(void)
{
	char llp[PATH_MAX + 32], path[PATH_MAX + 8];
	const char *env[] = { llp, path, NULL };
	struct run r;
	long x, y;

	snprintf(llp, sizeof llp, "LD_LIBRARY_PATH=%s", at("d"));
	snprintf(path, sizeof path, "PATH=%s", at("bin3"));
	run(&r, 1, env, (char *[]){ probe, "execvp", "script", NULL });
	check_accounted(&r, "scripts");
	ok(read_ok(&r, TL_LIST, at("d"), TL_DIR, 0), "LD_LIBRARY_PATH: LIST of its directory");
	x = find(&r, 0, TL_EXEC, r.pid, TL_FILE, at("bin3/script"));
	ok(x >= 0 && find(&r, (size_t)x, TL_READ, r.pid, TL_FILE, at("bin3/script")) >= 0 &&
	   find(&r, (size_t)x, TL_HELLO, r.pid, -1, NULL) >= 0, "#! script: EXEC, READ of it, HELLO");
	x = find(&r, 0, TL_EXECFAIL, -1, -1, NULL);
	y = x < 0 ? -1 : find(&r, (size_t)x, TL_EXEC, r.v[x].e.pid, TL_FILE, "/bin/sh");
	ok(x >= 0 && r.v[x].e.aux == ENOEXEC && y > x,
	   "a script without #!: EXECFAIL ENOEXEC, then /bin/sh runs it as glibc does");
	ok(strstr(r.out, "open ok") != NULL, "... and it ran");
	run_free(&r);

	run(&r, 1, NULL, (char *[]){ probe, "dlopen", "libtrace-test-none.so", "syscall-open",
				     at("f"), "getpwnam", "root", "glob", "/*", NULL });
	ok(opaque_with(&r, "by name") && opaque_with(&r, "raw system call") &&
	   opaque_with(&r, "getpwnam") && opaque_with(&r, "glob"),
	   "dlopen by bare name, a raw openat, NSS, glob: OPAQUE");
	run_free(&r);

	run(&r, 1, NULL, (char *[]){ probe, "scandir", at("d"), "closefrom", "open", at("f"), NULL });
	check_accounted(&r, "scandir, closefrom");
	ok(read_ok(&r, TL_LIST, at("d"), TL_DIR, 0) && read_ok(&r, TL_READ, at("f"), TL_FILE, 0),
	   "scandir: LIST; closefrom leaves the log open");
	run_free(&r);

	if (system("printf 'int main(void){return 0;}' | cc -x c - -o /dev/null 2>/dev/null") == 0) {
		char cmd[2 * PATH_MAX];

		snprintf(cmd, sizeof cmd,
			 "printf 'int main(void){return 0;}' | cc -x c - -o %s -Wl,-rpath,'$ORIGIN/d'",
			 at("rpath"));
		if (system(cmd) != 0)
			abort();
		run(&r, 1, NULL, (char *[]){ at("rpath"), NULL });
		check_accounted(&r, "rpath");
		ok(read_ok(&r, TL_LIST, at("d"), TL_DIR, 0), "DT_RUNPATH $ORIGIN/d: LIST of that directory");
		run_free(&r);
	} else {
		ok(1, "# SKIP DT_RUNPATH: no C compiler");
	}

	/*
	 * A library the loader took from /etc/ld.so.cache: no search of the
	 * system directories to record (objects.c, tr_cache_entries: the
	 * cache's entries, looked up by the library's soname).
	 */
	if (access("/lib/x86_64-linux-gnu/libz.so.1", R_OK) == 0 &&
	    system("grep -qaF /lib/x86_64-linux-gnu/libz.so.1 /etc/ld.so.cache 2>/dev/null") == 0 &&
	    system("printf 'int main(void){return 0;}' | cc -x c - -o /dev/null 2>/dev/null") == 0) {
		char cmd[2 * PATH_MAX];

		snprintf(cmd, sizeof cmd,
			 "printf 'int main(void){return 0;}' | cc -x c - -o %s -x none -Wl,--no-as-needed "
			 "/lib/x86_64-linux-gnu/libz.so.1", at("withz"));
		if (system(cmd) != 0)
			abort();
		run(&r, 1, NULL, (char *[]){ at("withz"), NULL });
		check_accounted(&r, "a cached library");
		ok(find(&r, 0, TL_READ, r.pid, TL_FILE, "/lib/x86_64-linux-gnu/libz.so.1") >= 0 &&
		   find(&r, 0, TL_LIST, r.pid, -1, "/lib/x86_64-linux-gnu") < 0 &&
		   find(&r, 0, TL_LIST, r.pid, -1, "/usr/lib") < 0,
		   "a library found through ld.so.cache: mapped, no system directory listed");
		run_free(&r);
	} else {
		ok(1, "# SKIP a cached library: no libz.so.1 that ld.so.cache names, or no C compiler");
	}

	{
		const char *lenv[] = { "LANG=C.UTF-8", "LC_ALL=", "LANGUAGE=xx_YY:zz", NULL };

		run(&r, 1, lenv, (char *[]){ probe, "gettext", "tdom", at("msgs"), "hello", NULL });
		if (strstr(r.out, "gettext errno")) {
			ok(1, "# SKIP message catalogues: no C.UTF-8 locale");
		} else {
			check_accounted(&r, "gettext");
			ok(read_ok(&r, TL_READ, at("msgs/xx/LC_MESSAGES/tdom.mo"), TL_FILE, 0) &&
			   find(&r, 0, TL_LIST, r.pid, TL_ABSENT, at("msgs/xx_YY/LC_MESSAGES")) >= 0 &&
			   find(&r, 0, TL_LIST, r.pid, TL_ABSENT, at("msgs/zz/LC_MESSAGES")) >= 0,
			   "gettext: every LANGUAGE variant's catalogue directory, the catalogue found");
		}
		run_free(&r);

		/*
		 * The child's gettext models fill the tracer's memo.  None of
		 * it may stand when the parent resumes, or its own calls are
		 * taken as modelled.  (The memo's keys land on pages the
		 * snapshot leaves out, but its lengths on a page it keeps, so
		 * this case cannot tell whether those pages are zeroed:
		 * test-snap does.)
		 */
		run(&r, 1, lenv, (char *[]){ probe, "vfork-gettext", "24", at("msgs"), "hello", NULL });
		if (!strstr(r.out, "vfork-gettext ok")) {
			ok(1, "# SKIP vfork and message catalogues: no C.UTF-8 locale");
		} else {
			long f = find(&r, 0, TL_FORK, -1, -1, NULL);
			int mine = 0;

			check_accounted(&r, "vfork, the child's gettext");
			for (int k = 0; k < 24 && f >= 0; k++) {
				char mo[64];

				snprintf(mo, sizeof mo, "msgs/xx/LC_MESSAGES/vfdom%d.mo", k);
				mine += find(&r, (size_t)f, TL_READ, r.pid, TL_ABSENT, at(mo)) >= 0;
			}
			is_int(mine, 24, "vfork: what the child's tracer modelled is undone; "
			       "the parent models all 24 domains itself");
		}
		run_free(&r);
	}
	{
		const char *lenv[] = { "LANG=C.UTF-8", "LC_ALL=", NULL };

		run(&r, 1, lenv, (char *[]){ probe, "setlocale", "tmpfile", NULL });
		check_accounted(&r, "setlocale");
		ok(find(&r, 0, TL_READ, r.pid, -1, "/usr/lib/locale/locale-archive") >= 0 &&
		   find(&r, 0, TL_LIST, r.pid, -1, "/usr/lib/locale") >= 0,
		   "setlocale: the locale archive and directory are inputs");
		ok(strstr(r.out, "tmpfile ok") && (find(&r, 0, TL_READ, r.pid, TL_DIR, "/tmp") >= 0 ||
						  find(&r, 0, TL_WRITE, r.pid, -1, NULL) >= 0),
		   "tmpfile: its directory (unnamed) or the file it made and removed");
		run_free(&r);
	}
}

static void test_untraceable(void)
{
	char cmd[3 * PATH_MAX];
	struct run r;
	long x;

	snprintf(cmd, sizeof cmd, "printf 'int main(void){return 0;}' | cc -static -x c - -o %s 2>/dev/null",
		 at("static"));
	if (system(cmd) != 0) {
		ok(1, "# SKIP a static program: cc -static does not link here (no libc.a?)");
	} else {
		run(&r, 1, NULL, (char *[]){ probe, "execvp", at("static"), NULL });
		x = find(&r, 0, TL_EXEC, r.pid, TL_FILE, at("static"));
		ok(opaque_with(&r, "static") && x >= 0 && find(&r, (size_t)x, TL_HELLO, r.pid, -1, NULL) < 0,
		   "a static program: OPAQUE, and its EXEC has no HELLO");
		run_free(&r);
	}

	if (geteuid() != 0) {
		ok(1, "# SKIP a setuid program: only root can make one owned by nobody");
		return;
	}
	{
		struct passwd *pw = getpwnam("nobody");

		snprintf(cmd, sizeof cmd, "cp %s %s", probe, at("suid"));
		if (!pw || system(cmd) != 0 || chown(at("suid"), pw->pw_uid, pw->pw_gid) < 0 ||
		    chmod(at("suid"), 04755) < 0) {
			ok(1, "# SKIP a setuid program: could not make one");
			return;
		}
	}
	run(&r, 1, NULL, (char *[]){ probe, "execvp", at("suid"), "open", at("f"), NULL });
	ok(opaque_with(&r, "setuid"), "a setuid program: OPAQUE");
	run_free(&r);
}

/* the generic hooks of trace/libc.classes (trace/classes.c) */
static void test_classes(void)
{
	char other[PATH_MAX], saved[PATH_MAX], name[64], why[256];
	struct run r;

	run(&r, 1, NULL, (char *[]){ probe, "getloadavg", "getloadavg", NULL });
	ok(r.whole && accounted(&r, why, sizeof why) && strstr(r.out, "getloadavg ok\ngetloadavg ok") && opaque_with(&r, "getloadavg") &&
	   !event_with(&r, TL_IMPURE, ""),
	   "getloadavg (classified opaque): OPAQUE, and the program gets its answer");
	{
		int n = 0;

		for (size_t i = 0; i < r.n; i++)
			n += r.v[i].e.type == TL_OPAQUE;
		ok(n == 1, "a classified function called twice: one event per process (%d)", n);
	}
	run_free(&r);

	snprintf(name, sizeof name, "/asynccompile-t-%d", (int)getpid());
	run(&r, 1, NULL, (char *[]){ probe, "shm_unlink", name, NULL });
	ok(r.whole && accounted(&r, why, sizeof why) && strstr(r.out, "shm_unlink errno 2") && event_with(&r, TL_IMPURE, "shm_unlink") &&
	   !opaque_with(&r, ""),
	   "shm_unlink (classified impure): IMPURE, the real call's errno kept");
	run_free(&r);

	/* variadic, through the trampoline: the value argument must arrive */
	run(&r, 1, NULL, (char *[]){ probe, "sem", name, NULL });
	ok(r.whole && accounted(&r, why, sizeof why) && strstr(r.out, "sem 3") && opaque_with(&r, "sem_open") &&
	   event_with(&r, TL_IMPURE, "sem_unlink"),
	   "sem_open's variadic arguments pass the trampoline; sem_unlink is IMPURE");
	run_free(&r);

	run(&r, 1, NULL, (char *[]){ probe, "ustat", NULL });
	ok(r.whole && accounted(&r, why, sizeof why) && strstr(r.out, "ustat ok") && opaque_with(&r, "ustat"),
	   "ustat bound to its old version (resolved with dlvsym): OPAQUE, the real one called");
	run_free(&r);

	/* the tracer as it runs on a C library its list was not made for */
	if (!realpath("build/trace-other-libc.so", other))
		abort();
	memcpy(saved, tracer, sizeof saved);
	memcpy(tracer, other, sizeof tracer);
	run(&r, 1, NULL, (char *[]){ probe, "stat", at("f"), NULL });
	memcpy(tracer, saved, sizeof tracer);
	ok(r.whole && accounted(&r, why, sizeof why) && opaque_with(&r, "the C library was not classified"),
	   "a C library the classification was not made for: every run OPAQUE");
	run_free(&r);
	run(&r, 1, NULL, (char *[]){ probe, "stat", at("f"), NULL });
	ok(!opaque_with(&r, ""), "this C library: a plain run is not opaque");
	run_free(&r);
}

static void setup(void)
{
	const char *tmp = getenv("TMPDIR");
	char d[PATH_MAX];

	if (!realpath("trace/asynccompile-trace.so", tracer) ||
	    !realpath("t/helpers/trace-probe", probe)) {
		printf("Bail out! run from the repository root after building the tracer and probe\n");
		exit(1);
	}
	snprintf(d, sizeof d, "%s/trace-test.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(d) || !realpath(d, dir))
		abort();
	touch(at("f"));
	touch(at("wa"));
	touch(at("wc"));
	if (mkdir(at("d"), 0755) || mkdir(at("bin1"), 0755) || mkdir(at("bin2"), 0755) ||
	    mkdir(at("bin3"), 0755) || symlink(at("f"), at("link")) ||
	    symlink(probe, at("bin3/tprog")))
		abort();
	touch(at("d/g"));
	if (mkdir(at("msgs"), 0755) || mkdir(at("msgs/xx"), 0755) ||
	    mkdir(at("msgs/xx/LC_MESSAGES"), 0755))
		abort();
	touch(at("msgs/xx/LC_MESSAGES/tdom.mo"));
	{
		/* in PATH: a #! script that runs the probe, and one without #! */
		FILE *s = fopen(at("bin3/script"), "w"), *t = fopen(at("bin3/noshebang"), "w");

		if (!s || !t)
			abort();
		fprintf(s, "#!/bin/sh\nexec noshebang\n");
		fprintf(t, "exec %s open %s\n", probe, at("f"));
		if (fclose(s) || fclose(t) || chmod(at("bin3/script"), 0755) ||
		    chmod(at("bin3/noshebang"), 0755))
			abort();
	}
	for (int i = 0; i < 8; i++) {
		char name[32];

		snprintf(name, sizeof name, "t.%d", i);
		touch(at(name));
	}
}

/* A child of the test's that waits for a signal (default dispositions). */
static pid_t target(void)
{
	pid_t t = fork();

	if (t == 0) {
		for (;;)
			pause();
	}
	if (t < 0)
		abort();
	return t;
}

/* How t ended: the signal that killed it, after a SIGKILL of our own. */
static int target_end(pid_t t)
{
	int status;

	kill(t, SIGKILL);
	if (waitpid(t, &status, 0) != t || !WIFSIGNALED(status))
		return -1;
	return WTERMSIG(status);
}

/* hooks_proc.c: this process is its own; another is read or acted on. */
static void test_other_processes(void)
{
	struct run r;
	pid_t t = target();
	char tp[16];

	snprintf(tp, sizeof tp, "%d", (int)t);
	run(&r, 1, NULL, (char *[]){ probe, "kill-self", "0", "kill-self", "28", NULL });
	ok(strstr(r.out, "kill-self ok\nkill-self ok\n") && !event_with(&r, TL_IMPURE, ""),
	   "a signal to the process itself: no IMPURE");
	check_accounted(&r, "kill of itself");
	run_free(&r);

	run(&r, 1, NULL, (char *[]){ probe, "kill", tp, "0", "getpriority", tp, NULL });
	if (!ok(strstr(r.out, "kill ok") && strstr(r.out, "getpriority 0") &&
		opaque_with(&r, "kill") && opaque_with(&r, "getpriority") &&
		!event_with(&r, TL_IMPURE, ""),
		"signal 0 and getpriority of another process: OPAQUE (read), not IMPURE")) {
		diag("%s", r.out);
		dump(&r);
	}
	run_free(&r);

	run(&r, 1, NULL, (char *[]){ probe, "setpriority", tp, "1", NULL });
	ok(strstr(r.out, "setpriority ok") && event_with(&r, TL_IMPURE, "setpriority") &&
	   getpriority(PRIO_PROCESS, (id_t)t) == 1,
	   "setpriority of another process: done, and IMPURE");
	run_free(&r);

	run(&r, 5, NULL, (char *[]){ probe, "setpriority", tp, "2", "kill", tp, "15", "kill", tp,
				     "0", "syscall-kill", tp, "15", "execvp", probe, "kill", tp,
				     "15", NULL });
	ok(strstr(r.out, "setpriority errno 1\nkill errno 1\nkill ok\nsyscall-kill errno 1\n"
			 "kill errno 1\n") &&
	   event_with(&r, TL_IMPURE, "kill") && getpriority(PRIO_PROCESS, (id_t)t) == 1,
	   "ahead of need: acts refused with EPERM (exec'd programs too), reads done");
	if (!ok(target_end(t) == SIGKILL, "ahead of need: the target never got the signal"))
		diag("%s", r.out);
	run_free(&r);

	t = target();
	snprintf(tp, sizeof tp, "%d", (int)t);
	run(&r, 1, NULL, (char *[]){ probe, "kill", tp, "15", NULL });
	ok(strstr(r.out, "kill ok") && event_with(&r, TL_IMPURE, "kill") &&
	   target_end(t) == SIGTERM, "a signal to another process: sent, and IMPURE");
	check_accounted(&r, "kill of another process");
	run_free(&r);
}

int main(void)
{
	char cmd[PATH_MAX + 16];

	setup();
	test_untraced();
	test_reads();
	test_writes();
	test_relative();
	test_path_search();
	test_processes();
	test_env();
	test_log_fd();
	test_shm_log();
	test_values();
	test_loader_and_scripts();
	test_untraceable();
	test_classes();
	test_other_processes();
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd))
		abort();
	return done_testing();
}
