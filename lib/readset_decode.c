/*
 * readset_decode.c - a read set read back (readset.h): readset_decode()
 * checks every byte of an untrusted encoding (it is fuzzed), and the
 * helpers both halves of the module ask (readset_impl.h): what a VALUE
 * input is now, and whether a file is open for writing.  Checking a read
 * set against the file system, for reuse, is the answer cache's
 * (answer/readset_check.c).
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

int readset_get_head(struct wire_reader *r, int *verdict, uint64_t *env, const char **reason,
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

int readset_get_entry(struct wire_reader *r, struct rs_entry *e)
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
	if (readset_get_head(&r, verdict, &env, &reason, &rlen, &count, err) < 0)
		return -1;
	for (uint32_t i = 0; i < count; i++)
		if (readset_get_entry(&r, &e) < 0)
			return err_fail(err, "a malformed read set entry");
	if (r.left)
		return err_fail(err, "trailing bytes after a read set");
	return 0;
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

int readset_env(const void *p, size_t n, uint64_t *env)
{
	struct wire_reader r;
	const char *reason;
	size_t rlen;
	uint32_t count;
	int verdict;

	wire_reader_init(&r, p, n);
	return readset_get_head(&r, &verdict, env, &reason, &rlen, &count, NULL);
}

int readset_verdict(const void *p, size_t n)
{
	int verdict;

	return readset_decode(p, n, &verdict, NULL) < 0 ? RS_OPAQUE : verdict;
}
