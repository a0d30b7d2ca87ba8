/*
 * Unit tests for lib/readset.c, readset_decode.c and
 * answer/readset_check.c: the verdict a trace log earns, the read set's
 * codec, and its check against the file system.  The logs are written
 * here by hand, event by event, as the preload would write them
 * (lib/tracelog.h); test-trace.c checks the preload itself.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "answer/readset_check.h"
#include "lib/pstate.h"
#include "lib/readset.h"
#include "lib/tracelog.h"
#include "tap.h"

#define ROOT 4242
#define ENV 77

static char dir[] = "/tmp/asynccompile-readset.XXXXXX";

static int64_t now_real(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * A command start well after the files the test just made: a file's
 * ctime cannot be set back, and one changed within RS_RACY_NS of the
 * start is not trusted.
 */
static int64_t later(void)
{
	return now_real() + 10 * RS_RACY_NS;
}

/* Append one event; the identity is the path's as it is now. */
static void ev(struct buf *log, int type, int flags, int pid, int aux, const char *path)
{
	struct tl_event e;
	struct stat sb;
	size_t n = strlen(path);

	memset(&e, 0, sizeof e);
	e.type = (uint8_t)type;
	e.flags = (uint8_t)flags;
	e.pid = pid;
	e.aux = aux;
	if (type != TL_OPAQUE && type != TL_VALUE && type != TL_BYE && type != TL_FORK &&
	    type != TL_EXECFAIL && type != TL_CLOCK && type != TL_RANDOM &&
	    !((flags & TL_NOFOLLOW) ? lstat(path, &sb) : stat(path, &sb))) {
		e.kind = S_ISREG(sb.st_mode) ? TL_FILE : S_ISDIR(sb.st_mode) ? TL_DIR
			 : S_ISLNK(sb.st_mode) ? TL_LINK : TL_OTHER;
		e.mode = sb.st_mode;
		e.dev = sb.st_dev;
		e.ino = sb.st_ino;
		e.size = sb.st_size;
		e.mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
		e.ctime_ns = (int64_t)sb.st_ctim.tv_sec * 1000000000 + sb.st_ctim.tv_nsec;
		if (flags & TL_ATIME)
			e.atime_ns = (int64_t)sb.st_atim.tv_sec * 1000000000 + sb.st_atim.tv_nsec;
	}
	e.len = (uint32_t)(sizeof e + n);
	buf_add(log, &e, sizeof e);
	buf_add(log, path, n);
}

static char *at(const char *name)
{
	static char p[8][512];
	static int i;

	i = (i + 1) % 8;
	snprintf(p[i], sizeof p[i], "%s/%s", dir, name);
	return p[i];
}

static void put(const char *name, const char *text)
{
	FILE *f = fopen(at(name), "w");

	if (!f || fputs(text, f) < 0 || fclose(f))
		abort();
}

/* Backdate a file so that it is not racy. */
static void age(const char *name)
{
	struct timespec t[2] = { { 1000000000, 0 }, { 1000000000, 0 } };

	if (utimensat(AT_FDCWD, at(name), t, 0))
		abort();
}

static void start(struct buf *log)
{
	buf_reset(log);
	ev(log, TL_HELLO, 0, ROOT, 1, "/bin/sh");
}

static void finish(struct buf *log)
{
	ev(log, TL_BYE, 0, ROOT, 0, "");
}

/* Build, then check now: the verdict of readset_check (and the build's). */
static int verdict(const struct buf *log, int64_t start_ns, struct buf *rs)
{
	struct buf why = BUF_INIT;
	int v;

	buf_reset(rs);
	readset_build(log->data, log->len, ROOT, start_ns, ENV, rs);
	v = readset_check(rs->data, rs->len, ENV, &why);
	if (v != RS_PURE)
		diag("not pure: %s", why.len ? (char *)why.data : "?");
	buf_release(&why);
	return v;
}

/* A command that read a file, missed one, listed a directory. */
static void test_pure(void)
{
	struct buf log = BUF_INIT, rs = BUF_INIT, why = BUF_INIT;
	int64_t t0;

	put("in.txt", "one");
	age("in.txt");
	mkdir(at("listed"), 0700);
	put("listed/a", "a");
	age("listed");
	t0 = later();
	start(&log);
	ev(&log, TL_READ, 0, ROOT, 0, at("in.txt"));
	ev(&log, TL_READ, 0, ROOT, 0, at("missing.h"));
	ev(&log, TL_LIST, 0, ROOT, 0, at("listed"));
	ev(&log, TL_READ, 0, ROOT, 0, "/dev/null");
	finish(&log);
	ok(verdict(&log, t0, &rs) == RS_PURE, "a command that only read is pure");
	ok(readset_check(rs.data, rs.len, ENV + 1, &why) != RS_PURE && strstr((char *)why.data, "environment"),
	   "another environment does not match: %s", (char *)why.data);
	buf_reset(&why);
	put("in.txt", "two!");
	ok(readset_check(rs.data, rs.len, ENV, &why) != RS_PURE && strstr((char *)why.data, "in.txt"),
	   "a file it read changed: %s", (char *)why.data);
	buf_reset(&rs);
	age("in.txt");
	start(&log);
	ev(&log, TL_READ, 0, ROOT, 0, at("missing.h"));
	ev(&log, TL_LIST, 0, ROOT, 0, at("listed"));
	finish(&log);
	readset_build(log.data, log.len, ROOT, t0, ENV, &rs);
	put("missing.h", "");
	buf_reset(&why);
	ok(readset_check(rs.data, rs.len, ENV, &why) != RS_PURE && strstr((char *)why.data, "missing.h"),
	   "a path it looked up in vain appeared: %s", (char *)why.data);
	unlink(at("missing.h"));
	ok(readset_check(rs.data, rs.len, ENV, &why) == RS_PURE, "and holds again once it is gone");
	put("listed/b", "b");
	buf_reset(&why);
	ok(readset_check(rs.data, rs.len, ENV, &why) != RS_PURE && strstr((char *)why.data, "listed"),
	   "a directory it listed got an entry: %s", (char *)why.data);
	buf_release(&log);
	buf_release(&rs);
	buf_release(&why);
}

/*
 * A directory passed through, not listed, is an input only by its
 * existence, type and mode: dkms copies a module into a fresh build
 * directory for every build, where the probes only make scratch files.
 */
static void test_dir_passed(void)
{
	struct buf log = BUF_INIT, rs = BUF_INIT, why = BUF_INIT;
	int64_t t0;

	mkdir(at("build"), 0755);
	age("build");
	t0 = later();
	start(&log);
	ev(&log, TL_READ, 0, ROOT, 0, at("build"));
	ev(&log, TL_WRITE, 0, ROOT, 0, at("build/.tmp_1"));
	finish(&log);
	ok(verdict(&log, t0, &rs) == RS_PURE, "scratch made in a directory: pure");
	/* made before the old one goes, so that its inode is another */
	mkdir(at("build.new"), 0755);
	rmdir(at("build"));
	rename(at("build.new"), at("build"));
	ok(readset_check(rs.data, rs.len, ENV, &why) == RS_PURE,
	   "the directory made afresh (a new inode): still holds");
	chmod(at("build"), 0700);
	ok(readset_check(rs.data, rs.len, ENV, &why) != RS_PURE, "its mode changed: a miss");
	rmdir(at("build"));
	put("build", "a file now");
	ok(readset_check(rs.data, rs.len, ENV, &why) != RS_PURE, "a file in its place: a miss");
	unlink(at("build"));
	ok(readset_check(rs.data, rs.len, ENV, &why) != RS_PURE, "gone: a miss");
	mkdir(at("listed2"), 0755);
	age("listed2");
	start(&log);
	ev(&log, TL_LIST, 0, ROOT, 0, at("listed2"));
	finish(&log);
	ok(verdict(&log, t0, &rs) == RS_PURE, "a listed directory: pure");
	mkdir(at("listed2.new"), 0755);
	age("listed2.new");
	rmdir(at("listed2"));
	rename(at("listed2.new"), at("listed2"));
	ok(readset_check(rs.data, rs.len, ENV, &why) != RS_PURE,
	   "a listed directory made afresh: a miss (its entries are an input)");
	buf_release(&log);
	buf_release(&rs);
	buf_release(&why);
}

static void test_accounting(void)
{
	struct buf log = BUF_INIT, rs = BUF_INIT;
	int64_t t0 = later();

	buf_reset(&log);
	ev(&log, TL_READ, 0, ROOT, 0, "/bin/sh");
	ok(verdict(&log, t0, &rs) == RS_OPAQUE, "no HELLO from the command: opaque");
	start(&log);
	ok(verdict(&log, t0, &rs) == RS_OPAQUE, "a HELLO without its BYE: opaque");
	start(&log);
	ev(&log, TL_EXEC, 0, ROOT, 0, "/bin/true");
	finish(&log);
	ok(verdict(&log, t0, &rs) == RS_OPAQUE, "an exec without its HELLO (a static program): opaque");
	start(&log);
	ev(&log, TL_EXEC, 0, ROOT, 0, "/bin/true");
	ev(&log, TL_HELLO, 0, ROOT, 1, "/bin/true");
	finish(&log);
	ok(verdict(&log, t0, &rs) == RS_PURE, "an exec followed by its HELLO is accounted for");
	start(&log);
	ev(&log, TL_EXEC, 0, ROOT, 0, at("nope"));
	ev(&log, TL_EXECFAIL, 0, ROOT, 2, "");
	finish(&log);
	ok(verdict(&log, t0, &rs) == RS_PURE, "a failed exec is accounted for");
	start(&log);
	ev(&log, TL_FORK, 0, ROOT + 1, ROOT, "");
	finish(&log);
	ok(verdict(&log, t0, &rs) == RS_OPAQUE, "a forked child that never said BYE: opaque");
	start(&log);
	ev(&log, TL_FORK, 0, ROOT + 1, ROOT, "");
	ev(&log, TL_BYE, 0, ROOT + 1, 0, "");
	finish(&log);
	ok(verdict(&log, t0, &rs) == RS_PURE, "a forked child that said BYE is accounted for");
	start(&log);
	ev(&log, TL_SPAWN, 0, ROOT, ROOT + 2, "/bin/true");
	finish(&log);
	ok(verdict(&log, t0, &rs) == RS_OPAQUE, "a spawned child without its HELLO: opaque");
	start(&log);
	ev(&log, TL_OPAQUE, 0, ROOT, 0, "glob() is not modelled");
	finish(&log);
	ok(verdict(&log, t0, &rs) == RS_OPAQUE, "an OPAQUE event: opaque");
	start(&log);
	buf_add(&log, "garbage", 7);
	ok(verdict(&log, t0, &rs) == RS_OPAQUE, "a malformed log: opaque");
	buf_release(&log);
	buf_release(&rs);
}

static void test_writes(void)
{
	struct buf log = BUF_INIT, rs = BUF_INIT, why = BUF_INIT;
	int64_t t0;

	put("kept.txt", "x");
	age("kept.txt");
	t0 = later();
	start(&log);
	ev(&log, TL_WRITE, 0, ROOT, 0, at("kept.txt"));
	finish(&log);
	ok(verdict(&log, t0, &rs) == RS_IMPURE, "writing a file that was there: impure");

	start(&log);
	ev(&log, TL_WRITE, 0, ROOT, 0, at("new.txt")); /* absent before */
	put("new.txt", "made");
	finish(&log);
	ok(verdict(&log, t0, &rs) == RS_IMPURE, "creating a file that stays: impure");
	unlink(at("new.txt"));

	start(&log);
	ev(&log, TL_WRITE, 0, ROOT, 0, at("scratch")); /* mkdir */
	mkdir(at("scratch"), 0700);
	ev(&log, TL_WRITE, 0, ROOT, 0, at("scratch/tmp.o"));
	put("scratch/tmp.o", "o");
	ev(&log, TL_READ, 0, ROOT, 0, at("scratch/tmp.o"));
	unlink(at("scratch/tmp.o"));
	rmdir(at("scratch"));
	ev(&log, TL_WRITE, 0, ROOT, 0, at("scratch"));
	finish(&log);
	ok(verdict(&log, t0, &rs) == RS_PURE, "a scratch directory made and removed: pure");
	ok(!memmem(rs.data, rs.len, "scratch/", 8), "and nothing under it is in the read set");
	mkdir(at("scratch"), 0700);
	ok(readset_check(rs.data, rs.len, ENV, &why) != RS_PURE,
	   "but its absence is: with it there, the run does not hold");
	rmdir(at("scratch"));
	start(&log);
	ev(&log, TL_WRITE, 0, ROOT, 0, "/dev/null");
	finish(&log);
	ok(verdict(&log, t0, &rs) == RS_PURE, "writing /dev/null is no write");
	buf_release(&log);
	buf_release(&rs);
	buf_release(&why);
}

/* One read by a child process `pid` of the root: the verdict. */
static int child_reads(int pid, const char *path)
{
	struct buf log = BUF_INIT, rs = BUF_INIT;
	int v;

	start(&log);
	ev(&log, TL_FORK, 0, pid, ROOT, "");
	ev(&log, TL_READ, 0, pid, 0, path);
	ev(&log, TL_BYE, 0, pid, 0, "");
	finish(&log);
	v = verdict(&log, later(), &rs);
	buf_release(&log);
	buf_release(&rs);
	return v;
}

/*
 * A process's own /proc entries are not inputs (grep reads its maps at
 * start); another's are, and so are the system's and the root process's
 * stat and status, which name its parent (make, or a pool worker).
 */
static void test_own_proc(void)
{
	struct buf log = BUF_INIT, rs = BUF_INIT;
	char p[64];
	int me = (int)getpid();

	ok(child_reads(me, "/proc/self/maps") == RS_PURE, "its own /proc/self/maps: not an input");
	snprintf(p, sizeof p, "/proc/%d/maps", me);
	ok(child_reads(me, p) == RS_PURE, "its own maps through /proc/PID: not an input");
	ok(child_reads(me + 1, p) == RS_OPAQUE, "another process's maps: opaque");
	ok(child_reads(me, "/proc/thread-self/status") == RS_PURE, "its own thread's status: pure");
	ok(child_reads(me, "/proc/self/fd/0") == RS_PURE && child_reads(me, "/proc/self/fd") == RS_PURE,
	   "its own descriptors' links: pure");
	ok(child_reads(me, "/proc/self/mountinfo") == RS_OPAQUE, "its mountinfo: opaque");
	ok(child_reads(me, "/proc/self/cgroup") == RS_OPAQUE, "its cgroup: opaque");
	ok(child_reads(me, "/proc/self/fdinfo/0") == RS_OPAQUE, "its fdinfo: opaque");
	ok(child_reads(me, "/proc/self/mounts") == RS_OPAQUE, "its mounts: opaque");
	start(&log);
	ev(&log, TL_READ, 0, ROOT, 0, "/proc/self/stat");
	finish(&log);
	ok(verdict(&log, later(), &rs) == RS_OPAQUE, "the root's own stat (its parent's pid): opaque");
	start(&log);
	ev(&log, TL_READ, 0, ROOT, 0, "/proc/self/maps");
	finish(&log);
	ok(verdict(&log, later(), &rs) == RS_PURE, "the root's own maps: pure");
	buf_release(&log);
	buf_release(&rs);
}

static void test_inputs(void)
{
	struct buf log = BUF_INIT, rs = BUF_INIT, why = BUF_INIT;
	struct utsname u;
	char v[1200];
	int64_t t0;

	t0 = later();
	start(&log);
	ev(&log, TL_READ, 0, ROOT, 0, "/proc/cpuinfo");
	finish(&log);
	ok(verdict(&log, t0, &rs) == RS_OPAQUE, "reading /proc: opaque");
	start(&log);
	ev(&log, TL_CLOCK, TL_TO_ANSWER, ROOT, 0, "");
	finish(&log);
	ok(verdict(&log, t0, &rs) == RS_OPAQUE, "the clock read where it can reach the answer: opaque");
	start(&log);
	ev(&log, TL_CLOCK, 0, ROOT, 0, "");
	finish(&log);
	ok(verdict(&log, t0, &rs) == RS_PURE, "the clock read with the output elsewhere: pure");

	put("fresh.txt", "new");
	start(&log);
	ev(&log, TL_READ, 0, ROOT, 0, at("fresh.txt"));
	finish(&log);
	ok(verdict(&log, now_real(), &rs) == RS_OPAQUE,
	   "a file modified just before the command read it: opaque (racy)");
	age("fresh.txt");
	start(&log);
	ev(&log, TL_READ, 0, ROOT, 0, at("fresh.txt"));
	put("fresh.txt", "newer");
	ev(&log, TL_READ, 0, ROOT, 0, at("fresh.txt"));
	finish(&log);
	ok(verdict(&log, later(), &rs) == RS_OPAQUE, "a file that changed while it ran: opaque");

	if (uname(&u))
		abort();
	snprintf(v, sizeof v, "uname=%s %s %s %s", u.sysname, u.release, u.version, u.machine);
	start(&log);
	ev(&log, TL_VALUE, 0, ROOT, 0, v);
	finish(&log);
	ok(verdict(&log, t0, &rs) == RS_PURE, "uname read: pure, and it holds now");
	start(&log);
	ev(&log, TL_VALUE, 0, ROOT, 0, "uname=Plan9 1 1 mips");
	finish(&log);
	buf_reset(&rs);
	readset_build(log.data, log.len, ROOT, t0, ENV, &rs);
	ok(readset_check(rs.data, rs.len, ENV, &why) != RS_PURE, "another uname does not hold: %s",
	   (char *)why.data);
	buf_release(&log);
	buf_release(&rs);
	buf_release(&why);
}

/*
 * /proc/filesystems is checked by its text.  When that text cannot be
 * read while the log is turned into a read set (no descriptor left), the
 * run is opaque: an empty value would encode a read set that its own
 * decoder refuses, and match an earlier empty one by accident.
 */
static void test_proc_fs_unreadable(void)
{
	struct buf log = BUF_INIT, rs = BUF_INIT, why = BUF_INIT;
	struct rlimit was, low;
	int free_fd, rc, v = -1;

	start(&log);
	ev(&log, TL_READ, 0, ROOT, 0, "/proc/filesystems");
	finish(&log);
	ok(verdict(&log, later(), &rs) == RS_PURE, "/proc/filesystems read: pure, by its text");

	free_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (free_fd < 0 || close(free_fd) || getrlimit(RLIMIT_NOFILE, &was))
		abort();
	low = was;
	low.rlim_cur = (rlim_t)free_fd; /* the next open() fails with EMFILE */
	if (setrlimit(RLIMIT_NOFILE, &low))
		abort();
	buf_reset(&rs);
	readset_build(log.data, log.len, ROOT, later(), ENV, &rs);
	if (setrlimit(RLIMIT_NOFILE, &was))
		abort();
	rc = readset_decode(rs.data, rs.len, &v, &why);
	ok(rc == 0, "its text unreadable: the read set still decodes %s",
	   why.len ? (char *)why.data : "");
	ok(v == RS_OPAQUE, "its text unreadable: opaque (%d)", v);
	buf_release(&log);
	buf_release(&rs);
	buf_release(&why);
}

/* Randomness, a pid in the answer, and the process state (item 29.2, 29.7). */
static void test_nondet(void)
{
	struct buf log = BUF_INIT, rs = BUF_INIT, why = BUF_INIT, text = BUF_INIT, st = BUF_INIT;
	char pid[32];

	start(&log);
	ev(&log, TL_RANDOM, 0, ROOT, 0, "");
	finish(&log);
	ok(verdict(&log, later(), &rs) == RS_PURE, "random bytes with other pipes as output: pure");
	start(&log);
	ev(&log, TL_RANDOM, TL_TO_ANSWER, ROOT, 0, "");
	finish(&log);
	ok(verdict(&log, later(), &rs) == RS_OPAQUE, "random bytes that can reach the answer: opaque");
	start(&log);
	ev(&log, TL_READ, 0, ROOT, 0, "/dev/urandom");
	finish(&log);
	ok(verdict(&log, later(), &rs) == RS_OPAQUE, "a read of /dev/urandom: opaque");

	/* the root's pid, a child's, the runner's (the root's parent, 1 here) */
	start(&log);
	ev(&log, TL_FORK, 0, ROOT + 1, ROOT, "");
	ev(&log, TL_BYE, 0, ROOT + 1, 0, "");
	finish(&log);
	for (int k = 0; k < 4; k++) {
		int32_t p = k == 0 ? ROOT : k == 1 ? ROOT + 1 : k == 2 ? 1 : ROOT + 2;

		snprintf(pid, sizeof pid, "x %d\n", (int)p);
		buf_reset(&text);
		buf_addstr(&text, pid);
		buf_reset(&rs);
		readset_build_answer(log.data, log.len, ROOT, 0, later(), ENV, &text, NULL, &rs);
		if (k < 3)
			ok(readset_verdict(rs.data, rs.len) == RS_OPAQUE,
			   "an answer naming pid %d of the run: opaque", (int)p);
		else
			ok(readset_verdict(rs.data, rs.len) == RS_PURE,
			   "an answer naming no pid of the run: pure");
	}
	buf_reset(&text);
	snprintf(pid, sizeof pid, "1%d 0x%x", ROOT, ROOT);
	buf_addstr(&text, pid);
	buf_reset(&rs);
	readset_build_answer(log.data, log.len, ROOT, 0, later(), ENV, NULL, &text, &rs);
	ok(readset_verdict(rs.data, rs.len) == RS_PURE,
	   "a pid inside a longer number, or in hex: not seen (a documented residue)");

	/* the state a runner writes, checked against this process's */
	buf_addstr(&st, "state=");
	ok(pstate_get(&st) == 0, "the process state reads whole");
	start(&log);
	ev(&log, TL_VALUE, 0, 1, 0, (char *)st.data);
	finish(&log);
	ok(verdict(&log, later(), &rs) == RS_PURE, "the state it started with holds in the same one");
	{
		mode_t was = umask(077);
		int v;

		buf_reset(&why);
		v = readset_check(rs.data, rs.len, ENV, &why);
		ok(v == RS_OPAQUE && strstr((char *)why.data, "umask 0077, was"),
		   "another umask does not hold: %s", (char *)why.data);
		umask(was);
	}
	{
		struct rlimit rl, low;

		getrlimit(RLIMIT_NOFILE, &rl);
		low = rl;
		low.rlim_cur = rl.rlim_cur > 64 ? rl.rlim_cur - 1 : rl.rlim_cur;
		int v;

		setrlimit(RLIMIT_NOFILE, &low);
		buf_reset(&why);
		v = readset_check(rs.data, rs.len, ENV, &why);
		ok(v == RS_OPAQUE && strstr((char *)why.data, "RLIMIT_NOFILE"),
		   "another RLIMIT_NOFILE does not hold: %s", (char *)why.data);
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	buf_release(&log);
	buf_release(&rs);
	buf_release(&why);
	buf_release(&text);
	buf_release(&st);
}

static void test_codec(void)
{
	struct buf log = BUF_INIT, rs = BUF_INIT;
	size_t bad = 0;
	int v;

	put("c.txt", "c");
	age("c.txt");
	start(&log);
	ev(&log, TL_READ, 0, ROOT, 0, at("c.txt"));
	ev(&log, TL_READ, TL_NOFOLLOW, ROOT, 0, at("c.txt"));
	ev(&log, TL_READ, 0, ROOT, 0, at("none"));
	finish(&log);
	readset_build(log.data, log.len, ROOT, later(), ENV, &rs);
	ok(readset_decode(rs.data, rs.len, &v, NULL) == 0 && v == RS_PURE, "a read set decodes");
	for (size_t n = 0; n < rs.len; n++)
		bad += readset_decode(rs.data, n, &v, NULL) == 0;
	ok(bad == 0, "every truncation is refused (%zu accepted)", bad);
	buf_addch(&rs, 0);
	ok(readset_decode(rs.data, rs.len, &v, NULL) < 0, "trailing bytes are refused");
	ok(readset_verdict("", 0) == RS_OPAQUE, "an empty read set is opaque");
	buf_reset(&rs);
	readset_opaque(&rs, "because");
	ok(readset_decode(rs.data, rs.len, &v, NULL) == 0 && v == RS_OPAQUE,
	   "an opaque verdict decodes as one");
	buf_release(&log);
	buf_release(&rs);
}

/* A READ (or LIST) with the identity given, of a path that need not exist. */
static void ev_at(struct buf *log, int type, int kind, int64_t mtime_ns, int64_t ctime_ns,
		  const char *path)
{
	struct tl_event e;
	size_t at_ev = log->len;

	ev(log, type, 0, ROOT, 0, path); /* absent: the identity is set here */
	memcpy(&e, log->data + at_ev, sizeof e);
	e.kind = (uint8_t)kind;
	e.mode = kind == TL_DIR ? S_IFDIR | 0755 : S_IFREG | 0644;
	e.dev = 1;
	e.ino = 2;
	e.size = 1;
	e.mtime_ns = mtime_ns;
	e.ctime_ns = ctime_ns;
	memcpy(log->data + at_ev, &e, sizeof e);
}

/* The verdict of a command that read one file with these timestamps. */
static int read_one(int type, int kind, int64_t mtime_ns, int64_t ctime_ns, int64_t start_ns)
{
	struct buf log = BUF_INIT, rs = BUF_INIT;
	int v;

	ev(&log, TL_HELLO, 0, ROOT, 1, "/bin/sh");
	ev_at(&log, type, kind, mtime_ns, ctime_ns, "/nowhere/f");
	ev(&log, TL_BYE, 0, ROOT, 0, "");
	readset_build(log.data, log.len, ROOT, start_ns, ENV, &rs);
	v = readset_verdict(rs.data, rs.len);
	buf_release(&log);
	buf_release(&rs);
	return v;
}

/* The racy window follows the granularity the timestamps show. */
static void test_granularity(void)
{
	/*
	 * A start after every real file's timestamps: /bin/sh, read for
	 * real, may have changed lately (perf's build-id cache links it).
	 */
	const int64_t s = 1000000000, B = (int64_t)time(NULL) + 1000;
	const int64_t t0 = B * s + s / 2; /* x.5 s */

	ok(read_one(TL_READ, TL_FILE, B * s, B * s, t0) == RS_OPAQUE,
	   "whole seconds, the second of the start: opaque");
	ok(read_one(TL_READ, TL_FILE, (B - 1) * s, (B - 1) * s, t0) == RS_OPAQUE,
	   "whole seconds, the second before (FAT keeps two): opaque");
	ok(read_one(TL_READ, TL_FILE, (B - 10) * s, (B - 10) * s, t0) == RS_PURE,
	   "whole seconds, ten seconds before: pure");
	ok(read_one(TL_READ, TL_FILE, B * s + 123456789, B * s + 123456789, t0) ==
	   RS_PURE, "nanoseconds, 0.38 s before: pure");
	ok(read_one(TL_READ, TL_FILE, (B - 100000000) * s, B * s + 123456789, t0) == RS_PURE,
	   "a whole-second mtime long ago, a fine ctime 0.38 s before (tar, touch -d): pure");
	ok(read_one(TL_READ, TL_FILE, B * s, (B - 100000000) * s + 1, t0) == RS_OPAQUE,
	   "a whole-second mtime in the second of the start: opaque");
	ok(read_one(TL_READ, TL_FILE, (B - 100000000) * s + 1, B * s + 470000000, t0) ==
	   RS_OPAQUE, "10 ms timestamps (exFAT), 30 ms before: opaque");
	ok(read_one(TL_READ, TL_FILE, (B - 100000000) * s + 1, B * s + 470000001, t0) ==
	   RS_PURE, "nanoseconds, 30 ms before: pure");
	ok(read_one(TL_LIST, TL_DIR, B * s, B * s, t0) == RS_OPAQUE,
	   "a directory listed, whole seconds, the second of the start: opaque");
	ok(read_one(TL_READ, TL_DIR, B * s, B * s, t0) == RS_PURE,
	   "a directory looked at, not listed: its timestamps do not matter");
}

/* The access time is an input where a stat call handed it over. */
static void test_atime(void)
{
	struct buf log = BUF_INIT, rs = BUF_INIT;
	struct timespec t[2] = { { 1000000000, 0 }, { 1500000000, 0 } };
	struct stat before, after;
	char c;
	int fd;

	put("at.txt", "A");
	if (utimensat(AT_FDCWD, at("at.txt"), t, 0))
		abort();
	start(&log);
	ev(&log, TL_READ, 0, ROOT, 0, at("at.txt"));
	ev(&log, TL_READ, TL_ATIME, ROOT, 0, at("at.txt"));
	finish(&log);
	ok(verdict(&log, later(), &rs) == RS_PURE, "opened, then stat'ed (its atime seen): pure");
	start(&log);
	ev(&log, TL_READ, 0, ROOT, 0, at("at.txt"));
	finish(&log);
	/* a read moves an atime older than the mtime (relatime, strictatime) */
	if (stat(at("at.txt"), &before) || (fd = open(at("at.txt"), O_RDONLY)) < 0 ||
	    read(fd, &c, 1) != 1 || close(fd) || stat(at("at.txt"), &after))
		abort();
	if (before.st_atim.tv_sec == after.st_atim.tv_sec) {
		for (int k = 0; k < 3; k++)
			ok(1, "# skip a read does not move the access time here (noatime)");
		buf_release(&log);
		buf_release(&rs);
		return;
	}
	ok(readset_check(rs.data, rs.len, ENV, NULL) == RS_OPAQUE,
	   "its access time moved by a read since: not reused");
	ok(verdict(&log, later(), &rs) == RS_PURE, "only opened: a read since does not matter");
	start(&log);
	ev(&log, TL_READ, TL_ATIME, ROOT, 0, at("at.txt"));
	if (utimensat(AT_FDCWD, at("at.txt"), t, 0) || (fd = open(at("at.txt"), O_RDONLY)) < 0 ||
	    read(fd, &c, 1) != 1 || close(fd))
		abort();
	ev(&log, TL_READ, TL_ATIME, ROOT, 0, at("at.txt"));
	finish(&log);
	ok(verdict(&log, later(), &rs) == RS_OPAQUE, "two stat calls saw two access times: opaque");
	buf_release(&log);
	buf_release(&rs);
}

/* A file some process maps shared and writable is no input to trust. */
static void test_shared_writable(void)
{
	struct buf log = BUF_INIT, rs = BUF_INIT;
	char *m;
	int fd;

	put("mapped.txt", "A");
	age("mapped.txt");
	start(&log);
	ev(&log, TL_READ, 0, ROOT, 0, at("mapped.txt"));
	finish(&log);
	ok(verdict(&log, later(), &rs) == RS_PURE, "a file nobody writes: pure");
	fd = open(at("mapped.txt"), O_RDWR);
	m = fd < 0 ? MAP_FAILED : mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (fd >= 0)
		close(fd);
	if (m == MAP_FAILED)
		abort();
	ok(readset_check(rs.data, rs.len, ENV, NULL) == RS_OPAQUE,
	   "mapped shared and writable since the build (descriptor closed): not reused");
	ok(verdict(&log, later(), &rs) == RS_OPAQUE,
	   "mapped shared and writable when the read set is built: opaque");
	munmap(m, 4096);
	ok(verdict(&log, later(), &rs) == RS_PURE, "unmapped again: pure");
	buf_release(&log);
	buf_release(&rs);
}

/*
 * A table of identities: two read sets that share a path stat it once;
 * a table stands for the file system as it first saw it (its owner's to
 * drop); an identity changed within the racy window is never kept.
 */
static void test_table(void)
{
	struct buf log = BUF_INIT, rs = BUF_INIT, why = BUF_INIT;
	struct rs_table *t = readset_table_new();
	unsigned long looked, reused;
	int64_t t0;

	put("shared.h", "shared");
	age("shared.h");
	put("own.h", "own");
	age("own.h");
	t0 = later();
	start(&log);
	ev(&log, TL_READ, 0, ROOT, 0, at("shared.h"));
	ev(&log, TL_READ, 0, ROOT, 0, at("own.h"));
	ev(&log, TL_READ, 0, ROOT, 0, at("nothere.h"));
	finish(&log);
	ok(verdict(&log, t0, &rs) == RS_PURE, "table: a pure read set");
	/* age() moved the ctimes to now: past the racy window, as settle() does */
	usleep(60 * 1000);
	ok(readset_check_in(rs.data, rs.len, ENV, t, &why) == RS_PURE &&
	   readset_check_in(rs.data, rs.len, ENV, t, &why) == RS_PURE, "table: it holds twice");
	readset_table_counts(t, &looked, &reused);
	ok(reused >= 3 && looked + reused >= 6 && looked <= reused,
	   "table: the second check answered by the table (looked %lu, reused %lu)", looked, reused);
	put("own.h", "changed");
	ok(readset_check_in(rs.data, rs.len, ENV, t, &why) == RS_PURE,
	   "table: a change after the table saw the path is not seen (its owner drops it)");
	ok(readset_check(rs.data, rs.len, ENV, &why) != RS_PURE, "... readset_check sees it");
	readset_table_free(t);

	/*
	 * own.h written just now (its identity no longer the read set's):
	 * racy, so the table keeps shared.h and looks at own.h every time
	 */
	t = readset_table_new();
	ok(readset_check_in(rs.data, rs.len, ENV, t, &why) != RS_PURE, "table: a changed file fails");
	readset_table_counts(t, &looked, &reused);
	put("own.h", "new");
	ok(readset_check_in(rs.data, rs.len, ENV, t, &why) != RS_PURE, "table: ... and fails again");
	readset_table_free(t);
	t = readset_table_new();
	{
		unsigned long l1, r1, l2, r2;

		(void)readset_check_in(rs.data, rs.len, ENV, t, &why);
		readset_table_counts(t, &l1, &r1);
		(void)readset_check_in(rs.data, rs.len, ENV, t, &why);
		readset_table_counts(t, &l2, &r2);
		ok(l2 - l1 >= 1 && l2 - l1 + r2 - r1 == l1 + r1,
		   "table: an identity within the racy window is never kept (looked %lu then %lu more)",
		   l1, l2 - l1);
	}
	readset_table_free(t);
	buf_release(&log);
	buf_release(&rs);
	buf_release(&why);
}

int main(void)
{
	char cmd[600];

	if (!mkdtemp(dir))
		abort();
	test_pure();
	test_dir_passed();
	test_accounting();
	test_writes();
	test_inputs();
	test_own_proc();
	test_proc_fs_unreadable();
	test_nondet();
	test_codec();
	test_granularity();
	test_shared_writable();
	test_atime();
	test_table();
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd))
		abort();
	return done_testing();
}
