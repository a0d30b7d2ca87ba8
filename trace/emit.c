/*
 * emit.c - the tracer's plumbing: the real functions, paths made
 * absolute, events built on the stack and appended to the shared log (or
 * written with one writev(2)), the models' memo of lookups, and the few
 * rules every hook shares (what a lookup depended on, what a change
 * destroyed).  Nothing here allocates from the heap: it runs in fork
 * children and on the way out of _exit.
 *
 * Over 600 lines: the log's two ways of appending, the event ring, the
 * memo and the shared rules all meet in tr_write(), whose state
 * (thread-local ring and batch) vfork.c saves and restores as one.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace/trace.h"

int tr_state;
int tr_logfd = -1;
int tr_pid;
__thread int tr_busy __attribute__((tls_model("initial-exec")));
struct tr_env tr_env;

/* Writers in flight, so that a descriptor move waits for them (tr_fd_protect). */
static int tr_inflight;

/* ---- real functions ---- */

void *tr_real_resolve(struct tr_real *r)
{
	const char *name = TR_NAME(r->name);
	void *p = dlsym(RTLD_NEXT, name);

	if (!p) {
		/* a hook whose function no later object defines cannot be called */
		static const char msg[] = "asynccompile-trace: no definition of a hooked function: ";
		ssize_t w TR_UNUSED;

		w = write(2, msg, sizeof msg - 1);
		w = write(2, name, strlen(name));
		w = write(2, "\n", 1);
		abort();
	}
	__atomic_store_n(&r->fn, p, __ATOMIC_RELEASE);
	return p;
}

const struct tr_symnames tr_symnames = {
#define TR_SLOT(fn) #fn,
#include "build/trace-slots.h"
#undef TR_SLOT
#define TR_CLASS(fn, cls, ver) #fn, ver,
#include "build/trace-classes.h"
#undef TR_CLASS
};

/* every slot, once (trace.h: the list is trace/libc.classes) */
#define TR_SLOT(fn) struct tr_real tr_real_##fn = { 0, offsetof(struct tr_symnames, slot_##fn) };
#include "build/trace-slots.h"
#undef TR_SLOT

void tr_real_warm(void)
{
	tr_real_get(&tr_real_readlink);
	tr_real_get(&tr_real_fstatat);
	tr_real_get(&tr_real_fcntl);
}

/* ---- small helpers ---- */

size_t tr_fmt_u64(char *buf, uint64_t v)
{
	char tmp[24];
	size_t n = 0, i = 0;

	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (n)
		buf[i++] = tmp[--n];
	buf[i] = 0;
	return i;
}

int tr_stat_at(int dirfd, const char *path, int nofollow, struct stat *st)
{
	return TR_CALL(fstatat)(dirfd, path, st, nofollow ? AT_SYMLINK_NOFOLLOW : 0);
}

/* The path a descriptor was opened by, if it is one still. */
int tr_fd_path(int fd, char *buf, size_t size)
{
	char link[32] = "/proc/self/fd/";
	ssize_t n;

	if (fd < 0 || size < 2)
		return -1;
	tr_fmt_u64(link + 14, (uint64_t)fd);
	n = TR_CALL(readlink)(link, buf, size - 1);
	if (n <= 0 || (size_t)n >= size - 1 || buf[0] != '/')
		return -1;
	buf[n] = 0;
	if (n > 10 && !strcmp(buf + n - 10, " (deleted)"))
		return -1;
	return 0;
}

int tr_is_devnull(const char *path)
{
	return path && !strcmp(path, "/dev/null");
}

/* ---- paths ---- */

#define TR_MAX_PATH (TL_MAX_EVENT - sizeof(struct tl_event))

int tr_where(struct tr_where *w, int dirfd, const char *path)
{
	size_t plen, dlen;

	/* no path is no lookup (EFAULT, or "" without AT_EMPTY_PATH: ENOENT) */
	if (!path || !*path)
		return -1;
	plen = strlen(path);
	w->n = 0;
	if (path[0] != '/') {
		if (dirfd == AT_FDCWD) {
			if (!getcwd(w->dir, sizeof w->dir) || w->dir[0] != '/') {
				tr_opaque("a relative path without a working directory:", path);
				return -1;
			}
		} else if (tr_fd_path(dirfd, w->dir, sizeof w->dir) < 0) {
			tr_opaque("a path relative to an unnamed directory:", path);
			return -1;
		}
		dlen = strlen(w->dir);
		w->iov[w->n].iov_base = w->dir;
		w->iov[w->n++].iov_len = dlen;
		if (w->dir[dlen - 1] != '/') {
			w->iov[w->n].iov_base = (void *)"/";
			w->iov[w->n++].iov_len = 1;
		}
	}
	w->iov[w->n].iov_base = (void *)path;
	w->iov[w->n++].iov_len = plen;
	w->len = 0;
	for (int i = 0; i < w->n; i++)
		w->len += w->iov[i].iov_len;
	if (w->len > TR_MAX_PATH) {
		tr_opaque("a path too long for the log:", path);
		return -1;
	}
	return 0;
}

int tr_where_str(const struct tr_where *w, char *buf, size_t size)
{
	size_t off = 0;

	if (w->len >= size)
		return -1;
	for (int i = 0; i < w->n; i++) {
		memcpy(buf + off, w->iov[i].iov_base, w->iov[i].iov_len);
		off += w->iov[i].iov_len;
	}
	buf[off] = 0;
	return 0;
}

/* ---- events ---- */

static uint8_t tr_kind(mode_t m)
{
	return S_ISREG(m) ? TL_FILE : S_ISDIR(m) ? TL_DIR : S_ISLNK(m) ? TL_LINK : TL_OTHER;
}

void tr_event_init(struct tl_event *ev, int type)
{
	memset(ev, 0, sizeof *ev);
	ev->type = (uint8_t)type;
}

void tr_ident(struct tl_event *ev, const struct stat *st)
{
	if (!st) {
		ev->kind = TL_ABSENT;
		ev->mode = 0;
		ev->dev = ev->ino = 0;
		ev->size = ev->mtime_ns = ev->ctime_ns = 0;
		return;
	}
	ev->kind = tr_kind(st->st_mode);
	ev->mode = st->st_mode;
	ev->dev = st->st_dev;
	ev->ino = st->st_ino;
	ev->size = st->st_size;
	ev->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
	ev->ctime_ns = (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
}

/*
 * The last events this thread wrote, to drop one identical to any of
 * them (compilers stat the same directories over and over).  Only whole
 * events are compared, identity included, so nothing that differs is
 * ever dropped: an identical event already in the log says all the
 * later one would.  A fork child's events carry another pid.
 */
#define TR_RING 8
#define TR_RING_MAX 320
static __thread struct {
	unsigned next;
	uint32_t len[TR_RING];
	unsigned char b[TR_RING][TR_RING_MAX];
} tr_ring __attribute__((tls_model("initial-exec")));

static int tr_ring_has(const struct tl_event *ev, const struct iovec *iov, int n)
{
	if (ev->len > TR_RING_MAX)
		return 0;
	for (int k = 0; k < TR_RING; k++) {
		size_t off = sizeof *ev;
		int same = tr_ring.len[k] == ev->len && !memcmp(tr_ring.b[k], ev, sizeof *ev);

		for (int i = 0; same && i < n; i++) {
			same = !memcmp(tr_ring.b[k] + off, iov[i].iov_base, iov[i].iov_len);
			off += iov[i].iov_len;
		}
		if (same)
			return 1;
	}
	return 0;
}

static void tr_ring_add(const struct tl_event *ev, const struct iovec *iov, int n)
{
	unsigned k = tr_ring.next++ % TR_RING;
	size_t off = sizeof *ev;

	if (ev->len > TR_RING_MAX)
		return;
	memcpy(tr_ring.b[k], ev, sizeof *ev);
	for (int i = 0; i < n; i++) {
		memcpy(tr_ring.b[k] + off, iov[i].iov_base, iov[i].iov_len);
		off += iov[i].iov_len;
	}
	tr_ring.len[k] = ev->len;
}

static void tr_memo_forget(void);

/* The events of a batch on this thread (tr_batch_begin), if one is open. */
static __thread struct tr_batch *tr_batch_cur __attribute__((tls_model("initial-exec")));

size_t tr_emit_tls_size(void)
{
	return sizeof tr_busy + sizeof tr_ring + sizeof tr_batch_cur;
}

void tr_emit_tls_save(void *to)
{
	unsigned char *p = to;

	memcpy(p, &tr_busy, sizeof tr_busy);
	memcpy(p + sizeof tr_busy, &tr_ring, sizeof tr_ring);
	memcpy(p + sizeof tr_busy + sizeof tr_ring, &tr_batch_cur, sizeof tr_batch_cur);
}

void tr_emit_tls_restore(const void *from)
{
	const unsigned char *p = from;

	memcpy(&tr_busy, p, sizeof tr_busy);
	memcpy(&tr_ring, p + sizeof tr_busy, sizeof tr_ring);
	memcpy(&tr_batch_cur, p + sizeof tr_busy + sizeof tr_ring, sizeof tr_batch_cur);
}

/*
 * The shared log (lib/tracelog.h, struct tl_shm), mapped by this process
 * image (fork children keep the mapping; an exec maps it again); NULL:
 * a log without the header, one writev per append.
 */
static struct tl_shm *tr_shm;
static unsigned char *tr_shm_data;
static uint64_t tr_shm_cap;

void tr_log_map(int fd, const struct stat *st)
{
	struct tl_shm *h;

	if (st->st_size <= TL_SHM_DATA || !S_ISREG(st->st_mode))
		return;
	/* a failure leaves writev, which lands past the area: an opaque run */
	h = TR_CALL(mmap)(NULL, (size_t)st->st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED)
		return;
	if (memcmp(h->magic, TL_SHM_MAGIC, sizeof h->magic) ||
	    h->cap != (uint64_t)st->st_size - TL_SHM_DATA) {
		TR_CALL(munmap)(h, (size_t)st->st_size);
		return;
	}
	tr_shm_cap = h->cap;
	tr_shm_data = (unsigned char *)h + TL_SHM_DATA;
	tr_shm = h;
}

/* An unaligned 32-bit store in one instruction: the commit of an append. */
typedef uint32_t __attribute__((aligned(1), may_alias)) tr_u32_unaligned;

/*
 * Whole events into the shared log: room taken with one fetch-add, the
 * bytes copied, the first event's len stored last (tracelog.h: a process
 * killed before that leaves a zero no reader takes for an event).  Past
 * the end, nothing is written and head past cap makes the run opaque.
 */
static void tr_shm_put(const struct iovec *v, int n)
{
	size_t total = 0, at;
	uint64_t off;
	uint32_t first;
	unsigned char *p;

	for (int i = 0; i < n; i++)
		total += v[i].iov_len;
	off = __atomic_fetch_add(&tr_shm->head, (uint64_t)total, __ATOMIC_SEQ_CST);
	if (off > tr_shm_cap || total > tr_shm_cap - off)
		return;
	p = tr_shm_data + off;
	memcpy(&first, v[0].iov_base, sizeof first);
	memcpy(p + sizeof first, (const unsigned char *)v[0].iov_base + sizeof first,
	       v[0].iov_len - sizeof first);
	at = v[0].iov_len;
	for (int i = 1; i < n; i++) {
		memcpy(p + at, v[i].iov_base, v[i].iov_len);
		at += v[i].iov_len;
	}
	__atomic_thread_fence(__ATOMIC_RELEASE);
	*(volatile tr_u32_unaligned *)p = first;
}

/*
 * One writev on an O_APPEND description: the kernel appends it whole,
 * between other processes' writes.  A failure only loses events, which
 * shows as missing accounting in the log.  v[0] starts with an event's
 * header (its len first).
 */
static void tr_append(const struct iovec *v, int n)
{
	ssize_t r;

	if (tr_shm) {
		tr_shm_put(v, n);
		return;
	}

	__atomic_add_fetch(&tr_inflight, 1, __ATOMIC_SEQ_CST);
	do
		r = writev(__atomic_load_n(&tr_logfd, __ATOMIC_SEQ_CST), v, n);
	while (r < 0 && errno == EINTR);
	__atomic_sub_fetch(&tr_inflight, 1, __ATOMIC_SEQ_CST);
}

static void tr_batch_flush(struct tr_batch *b)
{
	struct iovec v = { b->buf, b->len };

	if (b->len)
		tr_append(&v, 1);
	b->len = 0;
}

/*
 * Events written between tr_batch_begin and tr_batch_end (bookkeeping
 * that emits several at once: the constructor, the models) go to the
 * log in as few writes as fit, each write still whole events in order.
 * Nothing runs between them that another process could need to see
 * first, and a batch is always ended before the real call.
 */
void tr_batch_begin(struct tr_batch *b)
{
	b->len = 0;
	/* with the shared log an event costs no system call: nothing to gather */
	if (!tr_batch_cur && !tr_shm)
		tr_batch_cur = b;
}

void tr_batch_end(struct tr_batch *b)
{
	if (tr_batch_cur != b)
		return;
	tr_batch_flush(b);
	tr_batch_cur = NULL;
}

void tr_write(struct tl_event *ev, const struct iovec *iov, int n)
{
	struct iovec v[8];
	struct tr_batch *b = tr_batch_cur;
	size_t len = sizeof *ev;
	int dedup = ev->type == TL_READ || ev->type == TL_LIST || ev->type == TL_WRITE ||
		    ev->type == TL_VALUE;
	int saved = errno;

	for (int i = 0; i < n && n <= 7; i++)
		len += iov[i].iov_len;
	if (n > 7 || len > TL_MAX_EVENT) {
		/* never reached by the callers here; never silent either */
		static const char why[] = "an event the tracer could not write";
		static const struct iovec w = { (void *)why, sizeof why - 1 };

		ev->type = TL_OPAQUE;
		ev->kind = TL_ABSENT;
		n = 1;
		iov = &w;
		len = sizeof *ev + w.iov_len;
		dedup = 0;
	}
	ev->len = (uint32_t)len;
	ev->pid = __atomic_load_n(&tr_pid, __ATOMIC_RELAXED);
	if (ev->type == TL_WRITE)
		tr_memo_forget();
	if (dedup && tr_ring_has(ev, iov, n)) {
		errno = saved;
		return;
	}
	if (dedup)
		tr_ring_add(ev, iov, n);
	if (b && len <= sizeof b->buf) {
		if (b->len + len > sizeof b->buf)
			tr_batch_flush(b);
		memcpy(b->buf + b->len, ev, sizeof *ev);
		b->len += sizeof *ev;
		for (int i = 0; i < n; i++) {
			memcpy(b->buf + b->len, iov[i].iov_base, iov[i].iov_len);
			b->len += iov[i].iov_len;
		}
	} else {
		if (b)
			tr_batch_flush(b);
		v[0].iov_base = ev;
		v[0].iov_len = sizeof *ev;
		memcpy(v + 1, iov, (size_t)n * sizeof *iov);
		tr_append(v, n + 1);
	}
	errno = saved;
}

/*
 * Move the log off descriptor fd if it is there (the program is about to
 * dup2 onto it).  The new number is what children are told from now on.
 * Writers that read the old number finish before the program's call can
 * replace it.  Returns 0, or -1 when the log could not be moved: the
 * process is then no longer traced (an OPAQUE says so).
 */
int tr_fd_protect(int fd)
{
	int old = __atomic_load_n(&tr_logfd, __ATOMIC_SEQ_CST), nfd;

	if (fd != old || __atomic_load_n(&tr_state, __ATOMIC_ACQUIRE) != TR_ON)
		return 0;
	nfd = TR_CALL(fcntl)(old, F_DUPFD, 900);
	if (nfd < 0) {
		tr_opaque("the log's descriptor could not be kept from the program", NULL);
		__atomic_store_n(&tr_state, TR_OFF, __ATOMIC_SEQ_CST);
		return -1;
	}
	__atomic_store_n(&tr_logfd, nfd, __ATOMIC_SEQ_CST);
	/* bounded: a fork child inherits a count from threads it does not have */
	for (int spin = 0; __atomic_load_n(&tr_inflight, __ATOMIC_SEQ_CST) && spin < 100000; spin++)
		sched_yield();
	return 0;
}

void tr_emit_where(int type, int flags, const struct stat *st, const struct tr_where *w)
{
	struct tl_event ev;

	tr_event_init(&ev, type);
	ev.flags = (uint8_t)flags;
	tr_ident(&ev, st);
	ev.flags &= (uint8_t)~(TL_ATIME | TR_ATIME_ASKED);
	if (st && (flags & TL_ATIME) && (!S_ISDIR(st->st_mode) || (flags & TR_ATIME_ASKED))) {
		ev.flags |= TL_ATIME;
		ev.atime_ns = (int64_t)st->st_atim.tv_sec * 1000000000 + st->st_atim.tv_nsec;
	}
	tr_write(&ev, w->iov, w->n);
}

void tr_emit(int type, int flags, const struct stat *st, int dirfd, const char *path)
{
	struct tr_where w;

	if (tr_where(&w, dirfd, path) == 0)
		tr_emit_where(type, flags, st, &w);
}

/*
 * The tracer's own lookups for its models (the walk realpath makes,
 * locale and message catalogue candidates): the first answer for a path
 * in this process image stands for the later ones, as tr_once() lets a
 * model's first events stand for its later runs.  Sound because the
 * read set keeps the first identity a path had in the run and is checked
 * against the file system as it is when reused: a path that changed
 * after the first lookup differs from it then (ctime only moves
 * forward), and a change by the command itself is its WRITE (scratch or
 * impure).  A WRITE of this process empties the memo all the same
 * (tr_write), so that its own scratch is seen as it is.  Lives in memory
 * of its own, mapped on first use: a vfork child's entries stay for its
 * parent (true lookups of the same run), and the snapshot stays small.
 */
#define TR_MEMO_SLOTS 128    /* answers kept, in the order they came */
#define TR_MEMO_INDEX 256    /* hash buckets: slot + 1, 0 free */
#define TR_MEMO_TEXT 8192
struct tr_memo_slot {
	uint64_t h;
	uint32_t gen, off, len;
	int err;            /* 0: st holds the identity; else the errno */
	struct stat st;
};
/*
 * Dense, so that a process touches a few pages of it (each one a page
 * fault, bench/README.md): the index, then the slots and their paths as
 * they are used.
 */
struct tr_memo {
	int lock;
	uint32_t gen, used, text_used;
	uint16_t index[TR_MEMO_INDEX];
	struct tr_memo_slot slot[TR_MEMO_SLOTS];
	char text[TR_MEMO_TEXT];
};
static struct tr_memo *tr_memo;

static uint64_t tr_memo_hash(const char *p, size_t n, int nofollow)
{
	uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)nofollow;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 0x100000001b3ull;
	return h | 1;
}

/* Forget every answer (this process changed the file system). */
static void tr_memo_forget(void)
{
	struct tr_memo *m = tr_memo;

	if (m)
		__atomic_add_fetch(&m->gen, 1, __ATOMIC_SEQ_CST);
}

/*
 * The index bucket for path (n bytes, absolute) in a locked memo: the
 * one that holds it (*found 1: current; 2: from before a WRITE), or a
 * free one; NULL when the index is full.
 */
static uint16_t *tr_memo_find(struct tr_memo *m, const char *path, size_t n, uint64_t h,
			      int *found)
{
	*found = 0;
	for (uint32_t i = (uint32_t)(h % TR_MEMO_INDEX), k = 0; k < TR_MEMO_INDEX;
	     i = (i + 1) % TR_MEMO_INDEX, k++) {
		struct tr_memo_slot *sl;

		if (!m->index[i])
			return &m->index[i];
		sl = &m->slot[m->index[i] - 1];
		if (sl->h == h && sl->len == n && !memcmp(m->text + sl->off, path, n)) {
			*found = sl->gen == m->gen ? 1 : 2;
			return &m->index[i];
		}
	}
	return NULL;
}

/* stat (lstat) of an absolute path through the memo; -1 with errno. */
static int tr_stat_memo(const char *path, int nofollow, struct stat *st)
{
	size_t n = strlen(path);
	uint64_t h = tr_memo_hash(path, n, nofollow);
	struct tr_memo *m = tr_memo;
	struct tr_memo_slot *sl = NULL;
	uint16_t *ix;
	int found, r, err;

	if (!m) {
		void *p = TR_CALL(mmap)(NULL, sizeof *m, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return tr_stat_at(AT_FDCWD, path, nofollow, st);
		tr_memo = m = p;
	}
	if (n >= TR_MEMO_TEXT || __atomic_exchange_n(&m->lock, 1, __ATOMIC_ACQUIRE))
		return tr_stat_at(AT_FDCWD, path, nofollow, st);
	ix = tr_memo_find(m, path, n, h, &found);
	if (found == 1) {
		sl = &m->slot[*ix - 1];
		err = sl->err;
		*st = sl->st;
		__atomic_store_n(&m->lock, 0, __ATOMIC_RELEASE);
		errno = err;
		return err ? -1 : 0;
	}
	r = tr_stat_at(AT_FDCWD, path, nofollow, st);
	err = r < 0 ? errno : 0;
	/* only what the models turn into events: an identity or an absence */
	if (ix && (!err || err == ENOENT || err == ENOTDIR)) {
		if (found == 2) {
			sl = &m->slot[*ix - 1];
		} else if (m->used < TR_MEMO_SLOTS && m->text_used + n <= TR_MEMO_TEXT &&
			   2 * (m->used + 1) <= TR_MEMO_INDEX) {
			sl = &m->slot[m->used];
			memcpy(m->text + m->text_used, path, n);
			sl->off = m->text_used;
			sl->len = (uint32_t)n;
			sl->h = h;
			m->text_used += (uint32_t)n;
			*ix = (uint16_t)++m->used;
		}
		if (sl) {
			sl->gen = m->gen;
			sl->err = err;
			if (!err)
				sl->st = *st;
		}
	}
	__atomic_store_n(&m->lock, 0, __ATOMIC_RELEASE);
	errno = err;
	return r;
}

int tr_stat_model(const char *path, int nofollow, struct stat *st)
{
	if (!path || path[0] != '/')
		return tr_stat_at(AT_FDCWD, path, nofollow, st);
	return tr_stat_memo(path, nofollow, st);
}

void tr_emit_model(int type, int flags, const char *path)
{
	struct stat st;

	if (tr_stat_model(path, flags & TL_NOFOLLOW, &st) == 0)
		tr_emit(type, flags, &st, AT_FDCWD, path);
	else if (errno == ENOENT || errno == ENOTDIR)
		tr_emit(type, flags, NULL, AT_FDCWD, path);
	else
		tr_opaque_at("cannot tell what a path is:", AT_FDCWD, path);
}

void tr_emit_now(int type, int flags, int dirfd, const char *path)
{
	struct stat st;

	if (tr_stat_at(dirfd, path, flags & TL_NOFOLLOW, &st) == 0)
		tr_emit(type, flags, &st, dirfd, path);
	else if (errno == ENOENT || errno == ENOTDIR)
		tr_emit(type, flags, NULL, dirfd, path);
	else
		tr_opaque_at("cannot tell what a path is:", dirfd, path);
}

static void tr_emit_pieces(int type, int32_t aux, const char *a, const struct iovec *rest,
			   int nrest)
{
	struct tl_event ev;
	struct iovec v[6];
	size_t room = TR_MAX_PATH, alen = strlen(a);
	int n = 0;

	tr_event_init(&ev, type);
	ev.aux = aux;
	if (alen > room)
		alen = room;
	v[n].iov_base = (void *)a;
	v[n++].iov_len = alen;
	room -= alen;
	if (nrest && room > 1) {
		v[n].iov_base = (void *)" ";
		v[n++].iov_len = 1;
		room--;
		for (int i = 0; i < nrest && room; i++) {
			size_t l = rest[i].iov_len < room ? rest[i].iov_len : room;

			v[n].iov_base = rest[i].iov_base;
			v[n++].iov_len = l;
			room -= l;
		}
	}
	tr_write(&ev, v, n);
}

void tr_emit_text(int type, int32_t aux, const char *a, const char *b)
{
	struct iovec v = { (void *)b, b ? strlen(b) : 0 };

	tr_emit_pieces(type, aux, a, &v, b ? 1 : 0);
}

void tr_opaque(const char *why, const char *what)
{
	tr_emit_text(TL_OPAQUE, 0, why, what);
}

void tr_impure(const char *why, const char *what)
{
	tr_emit_text(TL_IMPURE, 0, why, what);
}

void tr_opaque_at(const char *why, int dirfd, const char *path)
{
	struct tr_where w;

	if (path && *path && path[0] != '/' && tr_where(&w, dirfd, path) == 0)
		tr_emit_pieces(TL_OPAQUE, 0, why, w.iov, w.n);
	else
		tr_opaque(why, path);
}

/* A fork child has none of its parent's writers. */
void tr_emit_after_fork(void)
{
	__atomic_store_n(&tr_inflight, 0, __ATOMIC_SEQ_CST);
}

void tr_reentered(void)
{
	static int once;

	if (!__atomic_exchange_n(&once, 1, __ATOMIC_RELAXED))
		tr_opaque("a hooked call from inside the tracer (a signal handler?) was not seen", NULL);
}

/* ---- the shared rules ---- */

void tr_lookup(int type, int nofollow, int dirfd, const char *path, int ok, int err,
	       const struct stat *st)
{
	tr_lookup_flags(type, nofollow ? TL_NOFOLLOW : 0, dirfd, path, ok, err, st);
}

void tr_lookup_flags(int type, int flags, int dirfd, const char *path, int ok, int err,
		     const struct stat *st)
{
	int nofollow = flags & TL_NOFOLLOW;

	if (!ok || !st) /* an atime the program was not given is no input */
		flags &= ~TL_ATIME;
	struct stat sb;

	/* no path, or a bad descriptor: nothing was looked up */
	if (!path || !*path || (!ok && (err == EBADF || err == EFAULT)))
		return;
	if (ok && st) {
		tr_emit(type, flags, st, dirfd, path);
		return;
	}
	if (!ok && (err == ENOENT || err == ENOTDIR)) {
		tr_emit(type, flags, NULL, dirfd, path);
		return;
	}
	/* found but no identity returned, or failed for another reason */
	if (tr_stat_at(dirfd, path, nofollow, &sb) == 0) {
		tr_emit(type, flags, &sb, dirfd, path);
		return;
	}
	tr_opaque_at(ok ? "a path changed as it was looked up:" : "a lookup failed unexplained:",
		     dirfd, path);
}

void tr_before_write(int dirfd, const char *path)
{
	struct stat sb;

	if (!path || !*path || tr_is_devnull(path))
		return;
	if (tr_stat_at(dirfd, path, 1, &sb) == 0)
		tr_emit(TL_WRITE, TL_NOFOLLOW, &sb, dirfd, path);
	else if (errno == ENOENT || errno == ENOTDIR)
		tr_emit(TL_WRITE, TL_NOFOLLOW, NULL, dirfd, path);
	else
		tr_opaque_at("cannot tell what a change replaced:", dirfd, path);
}
