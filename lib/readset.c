/*
 * readset.c - from a trace log to a verdict and a read set, and the read
 * set's encoding (readset.h).  Reading one back is readset_decode.c's;
 * checking it against the file system, the answer cache's
 * (answer/readset_check.c).
 *
 * Over 600 lines: every rule of the verdict (paths, processes, values,
 * pids in the answer) reads and writes the one walk's state (struct
 * rs_state), which stays private to this file.
 */
#include "lib/readset.h"
#include "lib/readset_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/proto.h"
#include "lib/store.h"
#include "lib/syscan.h"
#include "lib/tracelog.h"

#define RS_REASON_MAX 200

struct rs_state;
static void rs_value(struct rs_state *st, const char *p, size_t n);

/* One path the log names, with what the command did to it. */
struct rs_path {
	char *path;
	size_t len;
	uint64_t h;
	unsigned seen : 1;          /* some event named it */
	unsigned first_absent : 1;  /* ... and the first one found it absent */
	unsigned written : 1;
	unsigned changed : 1;       /* read twice with two identities */
	unsigned code : 1;          /* mapped as code: its system calls count */
	unsigned has[3];            /* READ follow, READ nofollow, LIST */
	struct tl_event id[3];
};

enum { RS_FOLLOW, RS_NOFOLLOW, RS_LISTED };

struct rs_proc {
	int32_t pid;
	unsigned used : 1, alive : 1, pending : 1, hello : 1;
};

struct rs_state {
	struct rs_path *paths;
	size_t npaths, cappaths;
	struct rs_proc *procs;
	size_t nprocs, capprocs;
	struct buf values;          /* VALUE texts, each NUL-terminated */
	int32_t root;               /* the pid the runner started */
	char reason[RS_REASON_MAX];
	int verdict;
};

static void rs_set(struct rs_state *st, int verdict, const char *what, const char *path,
		   size_t plen)
{
	if (verdict <= st->verdict)
		return;
	st->verdict = verdict;
	if (plen > 120)
		plen = 120;
	snprintf(st->reason, sizeof st->reason, "%s%s%.*s", what, path ? " " : "",
		 (int)plen, path ? path : "");
}

/* ---- tables: open addressing, grown at half full ---- */

static struct rs_path *rs_path_get(struct rs_state *st, const char *p, size_t n)
{
	uint64_t h = store_hash(p, n, STORE_HASH_INIT);
	size_t i;

	if (2 * (st->npaths + 1) > st->cappaths) {
		size_t cap = st->cappaths ? 2 * st->cappaths : 256;
		struct rs_path *t = calloc(cap, sizeof *t);

		if (!t)
			abort();
		for (size_t k = 0; k < st->cappaths; k++) {
			struct rs_path *o = &st->paths[k];

			if (!o->path)
				continue;
			for (i = o->h % cap; t[i].path; i = (i + 1) % cap)
				;
			t[i] = *o;
		}
		free(st->paths);
		st->paths = t;
		st->cappaths = cap;
	}
	for (i = h % st->cappaths; st->paths[i].path; i = (i + 1) % st->cappaths) {
		struct rs_path *e = &st->paths[i];

		if (e->h == h && e->len == n && !memcmp(e->path, p, n))
			return e;
	}
	st->paths[i].path = malloc(n + 1);
	if (!st->paths[i].path)
		abort();
	memcpy(st->paths[i].path, p, n);
	st->paths[i].path[n] = 0;
	st->paths[i].len = n;
	st->paths[i].h = h;
	st->npaths++;
	return &st->paths[i];
}

static struct rs_proc *rs_proc_get(struct rs_state *st, int32_t pid)
{
	size_t i;

	if (2 * (st->nprocs + 1) > st->capprocs) {
		size_t cap = st->capprocs ? 2 * st->capprocs : 64;
		struct rs_proc *t = calloc(cap, sizeof *t);

		if (!t)
			abort();
		for (size_t k = 0; k < st->capprocs; k++) {
			if (!st->procs[k].used)
				continue;
			for (i = (uint32_t)st->procs[k].pid % cap; t[i].used; i = (i + 1) % cap)
				;
			t[i] = st->procs[k];
		}
		free(st->procs);
		st->procs = t;
		st->capprocs = cap;
	}
	for (i = (uint32_t)pid % st->capprocs; st->procs[i].used; i = (i + 1) % st->capprocs)
		if (st->procs[i].pid == pid)
			return &st->procs[i];
	st->procs[i].used = 1;
	st->procs[i].pid = pid;
	st->nprocs++;
	return &st->procs[i];
}

/* ---- what a path is worth ---- */

static int rs_prefix(const char *p, size_t n, const char *pre)
{
	size_t k = strlen(pre);
	return n >= k && !memcmp(p, pre, k);
}

static int rs_is(const char *p, size_t n, const char *s)
{
	return n == strlen(s) && !memcmp(p, s, n);
}

/*
 * Descriptors and devices whose reading says nothing about the answer
 * (the random devices only for writes: rs_read makes a reading opaque).
 */
static int rs_ignored_io(const char *p, size_t n)
{
	static const char *const ok[] = {
		"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
		"/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/fd/0", "/dev/fd/1",
		"/dev/fd/2", "/proc/self/fd/0", "/proc/self/fd/1", "/proc/self/fd/2",
		"/proc/self/exe", NULL
	};
	for (int i = 0; ok[i]; i++)
		if (rs_is(p, n, ok[i]))
			return 1;
	return 0;
}

/* Inputs with no identity to check again. */
static int rs_unidentified(const char *p, size_t n)
{
	return rs_prefix(p, n, "/proc/") || rs_prefix(p, n, "/sys/") ||
	       rs_prefix(p, n, "/dev/") || rs_is(p, n, "/proc") || rs_is(p, n, "/sys");
}

/*
 * A process's own /proc entries are not inputs.  Their text is a function
 * of the images and libraries the read set already holds, of the process
 * state it holds too (lib/pstate.h), and of kernel randomness (addresses,
 * counters, pids): reusing an answer that read them equals one legal run.
 * GNU grep, cmp and diff read /proc/self/maps at start (gnulib's stack
 * overflow handler); rustup's proxy too.  Reached as /proc/self,
 * /proc/thread-self or /proc/PID with the reader's own pid.  The root
 * process's stat and status name its parent, which is make for a call and
 * a pool worker for a speculated job: those stay inputs without identity,
 * as do another process's entries, mountinfo, cgroup and all else.
 */
static int rs_own_proc(const struct rs_state *st, int32_t pid, const char *p, size_t n)
{
	static const char *const own[] = {
		"maps", "smaps", "smaps_rollup", "statm", "exe", "auxv", "fd", "stat", "status", NULL
	};
	char pre[32];
	size_t k;

	snprintf(pre, sizeof pre, "/proc/%d/", (int)pid);
	if (rs_prefix(p, n, "/proc/self/"))
		k = sizeof "/proc/self/" - 1;
	else if (rs_prefix(p, n, "/proc/thread-self/"))
		k = sizeof "/proc/thread-self/" - 1;
	else if (rs_prefix(p, n, pre))
		k = strlen(pre);
	else
		return 0;
	p += k;
	n -= k;
	for (int i = 0; own[i]; i++)
		if (rs_is(p, n, own[i]))
			return !(pid == st->root && (rs_is(p, n, "stat") || rs_is(p, n, "status")));
	/* a descriptor's link names what was opened, which the read set holds */
	if (n > 3 && !memcmp(p, "fd/", 3)) {
		for (size_t i = 3; i < n; i++)
			if (p[i] < '0' || p[i] > '9')
				return 0;
		return 1;
	}
	return 0;
}

static void rs_note_first(struct rs_path *e, int absent)
{
	if (!e->seen) {
		e->seen = 1;
		e->first_absent = absent;
	}
}

static int rs_same_id(const struct tl_event *a, const struct tl_event *b)
{
	return a->kind == b->kind && a->mode == b->mode && a->dev == b->dev &&
	       a->ino == b->ino && a->size == b->size && a->mtime_ns == b->mtime_ns &&
	       a->ctime_ns == b->ctime_ns;
}

/*
 * The access time, an input only where a stat-family call handed it to
 * the program (TL_ATIME): kept from the first such event of the slot;
 * another one that saw a different atime is a change while it ran.
 * 0 when the two disagree.
 */
static int rs_same_atime(struct tl_event *kept, const struct tl_event *ev)
{
	if (!(ev->flags & TL_ATIME))
		return 1;
	if (!(kept->flags & TL_ATIME)) {
		kept->flags |= TL_ATIME;
		kept->atime_ns = ev->atime_ns;
		return 1;
	}
	return kept->atime_ns == ev->atime_ns;
}

static struct rs_path *rs_read(struct rs_state *st, const struct tl_event *ev, int slot,
			       const char *p, size_t n)
{
	struct rs_path *e;

	if (rs_is(p, n, "/dev/random") || rs_is(p, n, "/dev/urandom")) {
		/* whatever it read there is another answer each time */
		rs_set(st, RS_OPAQUE, "read randomness:", p, n);
		return NULL;
	}
	if (rs_ignored_io(p, n) || rs_own_proc(st, ev->pid, p, n))
		return NULL;
	if (rs_is(p, n, RS_PROC_FS)) {
		/* libselinux's test for selinuxfs: its text is what is checked */
		struct buf v = BUF_INIT;

		readset_value_now("file:" RS_PROC_FS, sizeof "file:" RS_PROC_FS - 1, &v);
		if (v.len)
			rs_value(st, (char *)v.data, v.len);
		else /* unreadable now (EMFILE): nothing to hold it to */
			rs_set(st, RS_OPAQUE, "could not read back:", p, n);
		buf_release(&v);
		return NULL;
	}
	/* an absence is checked like any other (cc1 looks for /dev/null.gch) */
	if (ev->kind != TL_ABSENT && (rs_unidentified(p, n) || ev->kind == TL_OTHER)) {
		rs_set(st, RS_OPAQUE, "read an input without identity:", p, n);
		return NULL;
	}
	e = rs_path_get(st, p, n);
	rs_note_first(e, ev->kind == TL_ABSENT);
	if (!e->has[slot]) {
		e->has[slot] = 1;
		e->id[slot] = *ev;
	} else if (slot != RS_LISTED && ev->kind == TL_DIR && e->id[slot].kind == TL_DIR) {
		/* a directory looked at, not listed: only what rs_holds checks */
		if (e->id[slot].mode != ev->mode || !rs_same_atime(&e->id[slot], ev))
			e->changed = 1;
	} else if (!rs_same_id(&e->id[slot], ev) || !rs_same_atime(&e->id[slot], ev)) {
		e->changed = 1;
	}
	return e;
}

/* A program or library mapped as code (HELLO, READ with TL_MAPPED). */
static void rs_code(struct rs_state *st, const struct tl_event *ev, const char *p, size_t n)
{
	struct rs_path *e = rs_read(st, ev, RS_FOLLOW, p, n);

	if (e && tl_code_to_scan(ev))
		e->code = 1;
	else if (e && !(ev->flags & TL_SYSTEM))
		rs_set(st, RS_OPAQUE, "ran code that is not a file:", p, n);
}

static void rs_write(struct rs_state *st, const struct tl_event *ev, const char *p, size_t n)
{
	struct rs_path *e;

	if (rs_ignored_io(p, n) && !rs_is(p, n, "/proc/self/exe"))
		return;
	if (rs_unidentified(p, n)) {
		rs_set(st, RS_IMPURE, "wrote", p, n);
		return;
	}
	e = rs_path_get(st, p, n);
	rs_note_first(e, ev->kind == TL_ABSENT);
	e->written = 1;
}

static void rs_value(struct rs_state *st, const char *p, size_t n)
{
	const char *eq = memchr(p, '=', n);
	size_t name = eq ? (size_t)(eq - p) + 1 : n;

	for (size_t off = 0; off < st->values.len;) {
		const char *v = (const char *)st->values.data + off;
		size_t len = strlen(v);

		if (len >= name && !memcmp(v, p, name)) {
			if (len != n || memcmp(v, p, n))
				rs_set(st, RS_OPAQUE, "an input changed while it ran:", p, name);
			return;
		}
		off += len + 1;
	}
	buf_add(&st->values, p, n);
	buf_addch(&st->values, 0);
}

/* A path event names an absolute path, a value a name=value, no NUL. */
static int rs_well_formed(const struct tl_event *ev, const char *p, size_t n)
{
	if (ev->kind > TL_OTHER ||
	    (ev->flags & ~(TL_NOFOLLOW | TL_TO_ANSWER | TL_ATIME | TL_MAPPED | TL_SYSTEM)) ||
	    memchr(p, 0, n))
		return 0;
	switch (ev->type) {
	case TL_HELLO: case TL_EXEC: case TL_SPAWN: case TL_READ: case TL_LIST: case TL_WRITE:
		return n > 0 && p[0] == '/';
	case TL_VALUE:
		return memchr(p, '=', n) != NULL;
	default:
		return 1;
	}
}

static void rs_event(struct rs_state *st, const struct tl_event *ev, const char *p, size_t n)
{
	struct rs_proc *pr;

	if (!rs_well_formed(ev, p, n)) {
		rs_set(st, RS_OPAQUE, "a malformed trace", NULL, 0);
		return;
	}
	switch (ev->type) {
	case TL_HELLO:
		pr = rs_proc_get(st, ev->pid);
		pr->alive = pr->hello = 1;
		pr->pending = 0;
		/* its parent's pid too ($PPID): the runner's, for the first */
		rs_proc_get(st, ev->aux);
		rs_code(st, ev, p, n);
		break;
	case TL_BYE:
		rs_proc_get(st, ev->pid)->alive = 0;
		break;
	case TL_FORK:
		rs_proc_get(st, ev->pid)->alive = 1;
		break;
	case TL_EXEC:
		rs_proc_get(st, ev->pid)->pending = 1;
		rs_read(st, ev, RS_FOLLOW, p, n);
		break;
	case TL_EXECFAIL:
		rs_proc_get(st, ev->pid)->pending = 0;
		break;
	case TL_SPAWN:
		pr = rs_proc_get(st, ev->aux);
		if (!pr->hello)
			pr->pending = 1;
		rs_read(st, ev, RS_FOLLOW, p, n);
		break;
	case TL_READ:
		if (ev->flags & TL_MAPPED)
			rs_code(st, ev, p, n);
		else
			rs_read(st, ev, (ev->flags & TL_NOFOLLOW) ? RS_NOFOLLOW : RS_FOLLOW, p, n);
		break;
	case TL_LIST:
		rs_read(st, ev, RS_LISTED, p, n);
		break;
	case TL_WRITE:
		rs_write(st, ev, p, n);
		break;
	case TL_OPAQUE:
		rs_set(st, RS_OPAQUE, "the tracer cannot see:", p, n);
		break;
	case TL_IMPURE:
		rs_set(st, RS_IMPURE, "acted outside itself:", p, n);
		break;
	case TL_CLOCK:
		if (ev->flags & TL_TO_ANSWER)
			rs_set(st, RS_OPAQUE, "read the clock", NULL, 0);
		break;
	case TL_RANDOM:
		if (ev->flags & TL_TO_ANSWER)
			rs_set(st, RS_OPAQUE, "read randomness", NULL, 0);
		break;
	case TL_VALUE:
		rs_value(st, p, n);
		break;
	default:
		rs_set(st, RS_OPAQUE, "a malformed trace", NULL, 0);
	}
}

/* Absent now (ENOENT, ENOTDIR): what was created was removed again. */
static int rs_gone(const char *path)
{
	struct stat sb;
	return lstat(path, &sb) < 0 && (errno == ENOENT || errno == ENOTDIR);
}

static int rs_under(const struct rs_path *e, const struct rs_path *dir)
{
	return e->len > dir->len && e->path[dir->len] == '/' &&
	       !memcmp(e->path, dir->path, dir->len);
}

/* Written paths: each scratch (gone, and absent before) or impure. */
static void rs_settle_writes(struct rs_state *st)
{
	for (size_t i = 0; i < st->cappaths; i++) {
		struct rs_path *e = &st->paths[i];

		if (!e->path || !e->written)
			continue;
		if (!e->first_absent || !rs_gone(e->path))
			rs_set(st, RS_IMPURE, "wrote", e->path, e->len);
	}
}

/*
 * Code that enters the kernel other than through the C library reads
 * and writes what the tracer never sees (syscan.h).  Looked for last,
 * and only in a run that is pure so far: scans are cached, but the
 * first of an object costs (cc1: about 0.1 s).
 */
static void rs_settle_code(struct rs_state *st)
{
	for (size_t i = 0; st->verdict == RS_PURE && i < st->cappaths; i++) {
		struct rs_path *e = &st->paths[i];
		struct buf why = BUF_INIT;
		char what[RS_REASON_MAX - 1];

		if (!e->path || !e->code || e->changed)
			continue;
		if (syscan_object(e->path, &e->id[RS_FOLLOW], &why) == SYSCAN_RAW) {
			buf_addch(&why, 0);
			snprintf(what, sizeof what, "enters the kernel itself: %.*s (%s)",
				 (int)(e->len < 120 ? e->len : 120), e->path, (char *)why.data);
			rs_set(st, RS_OPAQUE, what, NULL, 0);
		}
		buf_release(&why);
	}
}

/* Under a directory the command wrote (made and removed: pure). */
static int rs_scratch(const struct rs_path *e, struct rs_path *const *written, size_t nw)
{
	for (size_t i = 0; i < nw; i++)
		if (rs_under(e, written[i]))
			return 1;
	return 0;
}

/*
 * How coarse a timestamp may be, from the timestamp itself.  A file
 * system keeps its timestamps to a granularity (ns on ext4 with large
 * inodes, xfs, btrfs, tmpfs; 1 s on ext4 with 128-byte inodes, ext3,
 * HFS+; 2 s for FAT's mtime; 10 ms on exFAT) and truncates every one to
 * it, so a timestamp whose nanoseconds end in k decimal zeros may come
 * from one with a granularity of 10^k ns, and one with no nanoseconds at
 * all from one of whole seconds, or FAT's two.  On a fine file system
 * the guess costs nothing: its timestamps rarely end in zeros (one in
 * ten ends in one, one in 10^9 is whole), and a bigger window only
 * matters for a file changed just before a command read it.
 */
static int64_t rs_ts_granularity(int64_t ns)
{
	int64_t g = 1;

	if (ns % 1000000000 == 0)
		return 2 * (int64_t)1000000000;
	while (ns % (g * 10) == 0)
		g *= 10;
	return g;
}

/*
 * A change after `start` could leave this identity as it is: its mtime
 * or ctime lies within the racy window before the start.  A change
 * gets a timestamp of the kernel's coarse clock (up to a tick behind
 * CLOCK_REALTIME: RS_RACY_NS), truncated to the file system's
 * granularity; two changes in one granule are the same to stat(2) (a
 * same-size rewrite, a rename in a listed directory), so each window
 * grows by its timestamp's granularity.  Each timestamp is judged by its
 * own: every change moves ctime, so a ctime with nanoseconds shows a
 * fine file system whatever mtime says (touch -d, tar, cp -p set a
 * whole-second mtime on a file changed now).
 */
int readset_racy_ts(int64_t ts, int64_t start_real_ns)
{
	return ts >= start_real_ns - RS_RACY_NS - rs_ts_granularity(ts);
}

static int rs_racy(const struct tl_event *id, int slot, int64_t start_real_ns)
{
	if (id->kind == TL_ABSENT || (id->kind == TL_DIR && slot != RS_LISTED))
		return 0;
	return readset_racy_ts(id->mtime_ns, start_real_ns) ||
	       readset_racy_ts(id->ctime_ns, start_real_ns);
}

static void rs_put_entry(struct buf *out, uint8_t type, uint8_t flags, const struct tl_event *id,
			 const char *path)
{
	wire_put_u8(out, type);
	wire_put_u8(out, id->kind);
	wire_put_u8(out, flags);
	wire_put_u32(out, id->mode);
	wire_put_i64(out, (int64_t)id->dev);
	wire_put_i64(out, (int64_t)id->ino);
	wire_put_i64(out, id->size);
	wire_put_i64(out, id->mtime_ns);
	wire_put_i64(out, id->ctime_ns);
	wire_put_i64(out, (flags & TL_ATIME) ? id->atime_ns : 0);
	wire_put_str(out, path);
}

static void rs_encode(struct rs_state *st, int64_t start_real_ns, uint64_t env, struct buf *out)
{
	static const uint8_t type[3] = { TL_READ, TL_READ, TL_LIST };
	static const uint8_t flags[3] = { 0, TL_NOFOLLOW, 0 };
	struct buf ents = BUF_INIT;
	struct rs_path **written = calloc(st->npaths + 1, sizeof *written);
	size_t nw = 0;
	uint32_t count = 0;
	int safe = readset_lease_safe();

	if (!written)
		abort();
	for (size_t i = 0; i < st->cappaths; i++)
		if (st->paths[i].path && st->paths[i].written)
			written[nw++] = &st->paths[i];
	for (size_t i = 0; st->verdict == RS_PURE && i < st->cappaths; i++) {
		struct rs_path *e = &st->paths[i];

		if (!e->path || rs_scratch(e, written, nw))
			continue;
		if (e->written) {
			/*
			 * Scratch (pure runs only get here): absent before, absent
			 * after.  What the command did depended on its absence
			 * (rm -rf, mkdir), and that is all it may depend on.
			 */
			struct tl_event absent = { 0 };

			rs_put_entry(&ents, TL_READ, TL_NOFOLLOW, &absent, e->path);
			count++;
			continue;
		}
		if (e->changed) {
			rs_set(st, RS_OPAQUE, "an input changed while it ran:", e->path, e->len);
			break;
		}
		for (int s = 0; s < 3; s++) {
			if (!e->has[s])
				continue;
			if (rs_racy(&e->id[s], s, start_real_ns)) {
				rs_set(st, RS_OPAQUE, "an input changed as it ran:", e->path, e->len);
				break;
			}
			if (e->id[s].kind == TL_FILE &&
			    readset_writers(safe, e->path, s == RS_NOFOLLOW,
					    (int64_t)e->id[s].dev, (int64_t)e->id[s].ino)) {
				rs_set(st, RS_OPAQUE, "an input is open for writing:", e->path, e->len);
				break;
			}
			rs_put_entry(&ents, type[s], flags[s] | (e->id[s].flags & TL_ATIME),
				     &e->id[s], e->path);
			count++;
		}
	}
	for (size_t off = 0; st->verdict == RS_PURE && off < st->values.len;) {
		const char *v = (const char *)st->values.data + off;
		struct tl_event none = { 0 };

		rs_put_entry(&ents, TL_VALUE, 0, &none, v);
		count++;
		off += strlen(v) + 1;
	}
	if (count > RS_MAX_ENTRIES)
		rs_set(st, RS_OPAQUE, "too many inputs", NULL, 0);
	wire_put_u8(out, RS_MAGIC);
	wire_put_u8(out, (uint8_t)st->verdict);
	wire_put_i64(out, (int64_t)env);
	wire_put_str(out, st->verdict == RS_PURE ? "" : st->reason);
	if (st->verdict == RS_PURE) {
		wire_put_u32(out, count);
		buf_add(out, ents.data, ents.len);
	} else {
		wire_put_u32(out, 0);
	}
	buf_release(&ents);
	free(written);
}

/* 1 if the table knows pid (without adding it). */
static int rs_knows_pid(const struct rs_state *st, int32_t pid)
{
	for (size_t i = st->capprocs ? (uint32_t)pid % st->capprocs : 0; st->capprocs &&
	     st->procs[i].used; i = (i + 1) % st->capprocs)
		if (st->procs[i].pid == pid)
			return 1;
	return 0;
}

/*
 * A pid of the run in its answer, as a decimal word ("echo $$", a name
 * made of one): the next run has other pids, so the answer is another.
 * Shells call getpid() whether or not the script asks for $$, so the
 * call cannot be the rule; the answer can.  A pid written otherwise
 * (in hex, or in a sum) is not seen (asynccompile(7)).
 */
static void rs_pids_in(struct rs_state *st, const struct buf *text)
{
	const unsigned char *p = text ? text->data : NULL;
	size_t n = text ? text->len : 0;

	for (size_t i = 0; i < n;) {
		size_t j = i;
		int64_t v = 0;

		if (p[i] < '0' || p[i] > '9') {
			i++;
			continue;
		}
		while (j < n && p[j] >= '0' && p[j] <= '9') {
			if (j - i < 10)
				v = v * 10 + (p[j] - '0');
			j++;
		}
		/* pid_max is at most 2^22: seven digits */
		if (j - i <= 7 && v > 0 && rs_knows_pid(st, (int32_t)v)) {
			char what[64];

			snprintf(what, sizeof what, "its answer names pid %d", (int)v);
			rs_set(st, RS_OPAQUE, what, NULL, 0);
			return;
		}
		i = j;
	}
}

void readset_build(const void *log, size_t n, pid_t root, int64_t start_real_ns,
		   uint64_t env, struct buf *out)
{
	readset_build_answer(log, n, root, 0, start_real_ns, env, NULL, NULL, out);
}

void readset_build_answer(const void *log, size_t n, pid_t root, pid_t shown,
			  int64_t start_real_ns, uint64_t env, const struct buf *answer_out,
			  const struct buf *answer_err, struct buf *out)
{
	struct rs_state st = { .verdict = RS_PURE, .root = (int32_t)root };
	struct tl_event ev;
	const char *p;
	size_t off = 0, plen;

	while (tl_next(log, n, &off, &ev, &p, &plen))
		rs_event(&st, &ev, p, plen);
	if (off != n && n - off >= 4 && !memcmp((const char *)log + off, "\0\0\0\0", 4))
		/* room taken, never committed (tracelog.h, struct tl_shm) */
		rs_set(&st, RS_OPAQUE, "an event was left half written", NULL, 0);
	else if (off != n)
		rs_set(&st, RS_OPAQUE, "a malformed trace", NULL, 0);
	if (!rs_proc_get(&st, (int32_t)root)->hello)
		rs_set(&st, RS_OPAQUE, "the command was not traced", NULL, 0);
	for (size_t i = 0; i < st.capprocs; i++) {
		struct rs_proc *pr = &st.procs[i];
		char what[64];

		if (!pr->used || (!pr->alive && !pr->pending))
			continue;
		snprintf(what, sizeof what, "process %d was not traced to its end", (int)pr->pid);
		rs_set(&st, RS_OPAQUE, what, NULL, 0);
	}
	if (shown > 0)
		rs_proc_get(&st, (int32_t)shown); /* known, not a process to account for */
	rs_pids_in(&st, answer_out);
	rs_pids_in(&st, answer_err);
	rs_settle_writes(&st);
	rs_settle_code(&st);
	rs_encode(&st, start_real_ns, env, out);
	for (size_t i = 0; i < st.cappaths; i++)
		free(st.paths[i].path);
	free(st.paths);
	free(st.procs);
	buf_release(&st.values);
}

void readset_opaque(struct buf *out, const char *reason)
{
	wire_put_u8(out, RS_MAGIC);
	wire_put_u8(out, RS_OPAQUE);
	wire_put_i64(out, 0);
	wire_put_str(out, reason);
	wire_put_u32(out, 0);
}
