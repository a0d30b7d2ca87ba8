/*
 * readset_check.c - a read set read back (readset.h): readset_decode()
 * checks every byte of an untrusted encoding (it is fuzzed), and
 * readset_check() asks the file system whether each entry still holds.
 */
#include "lib/readset.h"
#include "lib/readset_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/proto.h"
#include "lib/pstate.h"
#include "lib/store.h"
#include "lib/tracelog.h"

struct rs_entry {
	uint8_t type, kind, flags;
	uint32_t mode;
	int64_t dev, ino, size, mtime_ns, ctime_ns, atime_ns;
	const char *path; /* into the encoding; not NUL-terminated */
	size_t plen;
};

static int rs_get_head(struct wire_reader *r, int *verdict, uint64_t *env, const char **reason,
		       size_t *rlen, uint32_t *count, struct buf *err)
{
	if (wire_get_u8(r) != RS_MAGIC || r->failed)
		return err_fail(err, "not a read set");
	*verdict = wire_get_u8(r);
	*env = (uint64_t)wire_get_i64(r);
	*reason = wire_get_bytes(r, rlen);
	*count = wire_get_u32(r);
	if (r->failed || *verdict > RS_OPAQUE || *count > RS_MAX_ENTRIES ||
	    (*verdict != RS_PURE && *count))
		return err_fail(err, "a malformed read set");
	return 0;
}

static int rs_get_entry(struct wire_reader *r, struct rs_entry *e)
{
	e->type = wire_get_u8(r);
	e->kind = wire_get_u8(r);
	e->flags = wire_get_u8(r);
	e->mode = wire_get_u32(r);
	e->dev = wire_get_i64(r);
	e->ino = wire_get_i64(r);
	e->size = wire_get_i64(r);
	e->mtime_ns = wire_get_i64(r);
	e->ctime_ns = wire_get_i64(r);
	e->atime_ns = wire_get_i64(r);
	e->path = wire_get_bytes(r, &e->plen);
	if (r->failed || !e->path || !e->plen || memchr(e->path, 0, e->plen) ||
	    e->plen >= TL_MAX_EVENT || e->kind > TL_OTHER ||
	    (e->flags & ~(TL_NOFOLLOW | TL_ATIME)))
		return -1;
	if (e->type == TL_VALUE)
		return 0;
	if ((e->type != TL_READ && e->type != TL_LIST) || e->path[0] != '/')
		return -1;
	return 0;
}

int readset_decode(const void *p, size_t n, int *verdict, struct buf *err)
{
	struct wire_reader r;
	const char *reason;
	size_t rlen;
	uint32_t count;
	struct rs_entry e;
	uint64_t env;

	wire_reader_init(&r, p, n);
	if (rs_get_head(&r, verdict, &env, &reason, &rlen, &count, err) < 0)
		return -1;
	for (uint32_t i = 0; i < count; i++)
		if (rs_get_entry(&r, &e) < 0)
			return err_fail(err, "a malformed read set entry");
	if (r.left)
		return err_fail(err, "trailing bytes after a read set");
	return 0;
}

static uint8_t rs_kind(mode_t m)
{
	return S_ISREG(m) ? TL_FILE : S_ISDIR(m) ? TL_DIR : S_ISLNK(m) ? TL_LINK : TL_OTHER;
}

void readset_value_now(const char *name, size_t n, struct buf *v)
{
	if (n == sizeof "file:" RS_PROC_FS - 1 && !memcmp(name, "file:" RS_PROC_FS, n)) {
		struct buf text = BUF_INIT;
		int fd = open(RS_PROC_FS, O_RDONLY | O_CLOEXEC);

		if (fd >= 0 && buf_read_fd(&text, fd, 1 << 20) == 0)
			buf_addf(v, "file:%s=%016llx", RS_PROC_FS, (unsigned long long)
				 store_hash(text.data, text.len, STORE_HASH_INIT));
		if (fd >= 0)
			close(fd);
		buf_release(&text);
	} else if (n == 5 && !memcmp(name, "uname", 5)) {
		struct utsname u;

		if (!uname(&u))
			buf_addf(v, "uname=%s %s %s %s", u.sysname, u.release, u.version, u.machine);
	} else if (n == 8 && !memcmp(name, "hostname", 8)) {
		char h[256];

		if (!gethostname(h, sizeof h)) {
			h[sizeof h - 1] = 0;
			buf_addf(v, "hostname=%s", h);
		}
	} else if (n == 6 && !memcmp(name, "nprocs", 6)) {
		buf_addf(v, "nprocs=%ld", sysconf(_SC_NPROCESSORS_ONLN));
	} else if (n == sizeof PSTATE_VALUE - 1 && !memcmp(name, PSTATE_VALUE, n)) {
		buf_addstr(v, PSTATE_VALUE "=");
		pstate_get(v);
	}
}

/*
 * The probe is a read lease (fcntl(2) F_SETLEASE F_RDLCK), which the
 * kernel refuses with EAGAIN while any process has the file open for
 * writing, a mapping's file included, and which is dropped by close()
 * at once.  It needs the file to be ours or CAP_LEASE: elsewhere (root's
 * /usr/include for a user) it cannot tell, and those files only another
 * user's processes can write.  Scanning /proc/<pid>/maps instead costs
 * 4 ms of CPU per look with 130 processes, 18 ms with 430 (2 and 8 ms
 * with the PROCMAP_QUERY ioctl of Linux 6.11), where a lease costs 11 us
 * of CPU per regular file more than the stat beside it (open, fstat,
 * two fcntl, close: a gcc probe reads a few dozen).  A lease broken while held signals its owner,
 * this process (make, a worker): the break signal is set to SIGURG,
 * whose default is to be ignored, and nothing is probed where SIGURG
 * has a handler.  A writer that opens the file with O_NONBLOCK in the
 * microseconds the lease is held gets EWOULDBLOCK.
 */
int readset_lease_safe(void)
{
	struct sigaction sa;

	return sigaction(SIGURG, NULL, &sa) == 0 && !(sa.sa_flags & SA_SIGINFO) &&
	       (sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN);
}

int readset_writers(int safe, const char *path, int nofollow, int64_t dev, int64_t ino)
{
	int saved = errno, busy = 0, fd;
	struct stat sb;

	if (!safe)
		return 0;
	/* O_NONBLOCK: the path may be a fifo by now, whose open would wait */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));
	if (fd < 0) {
		errno = saved;
		return 0;
	}
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && (int64_t)sb.st_dev == dev &&
	    (int64_t)sb.st_ino == ino && fcntl(fd, F_SETSIG, SIGURG) == 0 &&
	    fcntl(fd, F_SETLEASE, F_RDLCK) < 0 && errno == EAGAIN)
		busy = 1;
	close(fd);
	errno = saved;
	return busy;
}

/*
 * 1 if e still holds; 0 if it changed (why gets more than the entry says,
 * when there is more); -1 if it is open for writing.
 */
static int rs_holds(const struct rs_entry *e, int safe, struct rs_table *t, struct buf *why)
{
	struct rs_seen *seen;
	char path[TL_MAX_EVENT];
	struct stat sb;
	int r;

	if (e->type == TL_VALUE) {
		const char *eq = memchr(e->path, '=', e->plen);
		struct buf now = BUF_INIT;
		int same;

		if (eq)
			readset_table_value(t, e->path, (size_t)(eq - e->path), &now);
		same = now.len == e->plen && !memcmp(now.data, e->path, e->plen);
		/* which part of the process state: "umask 0077, was 0022" */
		if (!same && eq && eq - e->path == sizeof PSTATE_VALUE - 1 &&
		    !memcmp(e->path, PSTATE_VALUE, sizeof PSTATE_VALUE - 1) &&
		    now.len >= sizeof PSTATE_VALUE) {
			size_t skip = sizeof PSTATE_VALUE;

			buf_addstr(why, "the process state changed: ");
			pstate_diff(e->path + skip, e->plen - skip, (const char *)now.data + skip,
				    now.len - skip, why);
		}
		buf_release(&now);
		return same;
	}
	memcpy(path, e->path, e->plen);
	path[e->plen] = 0;
	seen = readset_stat(t, path, e->flags & TL_NOFOLLOW, &sb, &r);
	if (r < 0)
		return e->kind == TL_ABSENT && (errno == ENOENT || errno == ENOTDIR);
	if (e->kind != rs_kind(sb.st_mode) || e->mode != sb.st_mode)
		return 0;
	/* the program saw the access time (a stat call): a read since moved it */
	if ((e->flags & TL_ATIME) &&
	    e->atime_ns != (int64_t)sb.st_atim.tv_sec * 1000000000 + sb.st_atim.tv_nsec)
		return 0;
	/*
	 * A directory passed through or looked at, not listed: its existence,
	 * type and mode are all the command could learn.  What it read inside
	 * is an entry of its own, looked up by path again, so a directory made
	 * afresh (dkms copies the module into a new build directory for every
	 * build) still holds.
	 */
	if (e->kind == TL_DIR && e->type != TL_LIST)
		return 1;
	if (e->dev != (int64_t)sb.st_dev || e->ino != (int64_t)sb.st_ino)
		return 0;
	if (e->size != (int64_t)sb.st_size ||
	    e->mtime_ns != (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec ||
	    e->ctime_ns != (int64_t)sb.st_ctim.tv_sec * 1000000000 + sb.st_ctim.tv_nsec)
		return 0;
	/* a lease needs the file to be ours (or CAP_LEASE, which root has) */
	if (e->kind == TL_FILE && (sb.st_uid == geteuid() || !geteuid()) &&
	    readset_seen_writers(seen, safe, path, e->flags & TL_NOFOLLOW, e->dev, e->ino))
		return -1;
	return 1;
}

int readset_env(const void *p, size_t n, uint64_t *env)
{
	struct wire_reader r;
	const char *reason;
	size_t rlen;
	uint32_t count;
	int verdict;

	wire_reader_init(&r, p, n);
	return rs_get_head(&r, &verdict, env, &reason, &rlen, &count, NULL);
}

int readset_verdict(const void *p, size_t n)
{
	int verdict;

	return readset_decode(p, n, &verdict, NULL) < 0 ? RS_OPAQUE : verdict;
}

int readset_check(const void *p, size_t n, uint64_t env, struct buf *err)
{
	return readset_check_in(p, n, env, NULL, err);
}

int readset_check_in(const void *p, size_t n, uint64_t env, struct rs_table *t, struct buf *err)
{
	struct wire_reader r;
	const char *reason;
	size_t rlen;
	uint32_t count;
	int verdict, safe;
	uint64_t was;
	struct rs_entry e;

	wire_reader_init(&r, p, n);
	if (rs_get_head(&r, &verdict, &was, &reason, &rlen, &count, err) < 0)
		return RS_OPAQUE;
	if (verdict != RS_PURE) {
		/* the stored reason: bytes, though readset_opaque() writes text */
		if (err)
			buf_add(err, reason, rlen);
		return verdict;
	}
	if (was != env) {
		err_fail(err, "another environment");
		return RS_OPAQUE;
	}
	safe = readset_lease_safe();
	for (uint32_t i = 0; i < count; i++) {
		int holds;

		if (rs_get_entry(&r, &e) < 0) {
			err_fail(err, "a malformed read set entry");
			return RS_OPAQUE;
		}
		struct buf why = BUF_INIT;

		holds = rs_holds(&e, safe, t, &why);
		if (holds <= 0) {
			if (why.len)
				err_fail(err, "%s", (char *)why.data);
			else
				err_fail(err, "%s: %.*s", holds < 0 ? "a file open for writing" :
					 e.type == TL_VALUE ? "an input changed" : "a path changed",
					 (int)(e.plen > 200 ? 200 : e.plen), e.path);
			buf_release(&why);
			return RS_OPAQUE;
		}
		buf_release(&why);
	}
	if (r.left) {
		err_fail(err, "trailing bytes after a read set");
		return RS_OPAQUE;
	}
	return RS_PURE;
}
