/*
 * The store's stats file: its codec, and adding to it under a lock.
 * stats.h documents the format and the rules.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "answer/stats.h"
#include "lib/err.h"
#include "lib/store.h"

static const char stats_file[] = "stats";
static const char stats_lock_file[] = "stats.lock";
static const char stats_header[] = "asynccompile-stats 1\n";

static const char *const stats_names[STATS_COUNT] = {
	[STATS_CACHE_HITS] = "cache_hits",
	[STATS_SPEC_HITS] = "spec_hits",
	[STATS_MEMO_HITS] = "memo_hits",
	[STATS_MISSES] = "misses",
	[STATS_OPAQUE] = "opaque",
	[STATS_IMPURE] = "impure",
	[STATS_SAVED_MS] = "saved_ms",
	[STATS_UPDATED] = "updated",
	[STATS_ZEROED] = "zeroed",
};

const char *stats_name(enum stats_counter c)
{
	return (unsigned)c < STATS_COUNT ? stats_names[c] : "?";
}

void stats_encode(const struct stats *st, struct buf *out)
{
	buf_addstr(out, stats_header);
	for (int i = 0; i < STATS_COUNT; i++)
		buf_addf(out, "%s %llu\n", stats_names[i], (unsigned long long)st->v[i]);
}

/* Decimal digits s[0..n) into *v: 0, or -1 if not a canonical u64. */
static int stats_number(const char *s, size_t n, uint64_t *v)
{
	*v = 0;
	if (!n || n > 20 || (n > 1 && s[0] == '0'))
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned char)s[i] - '0';

		if (d > 9 || *v > (UINT64_MAX - d) / 10)
			return -1;
		*v = *v * 10 + d;
	}
	return 0;
}

static int stats_refuse(struct stats *st, struct buf *err, size_t line, const char *why)
{
	memset(st, 0, sizeof *st);
	return err_fail(err, "stats file, line %zu: %s", line, why);
}

int stats_decode(const void *p, size_t n, struct stats *st, struct buf *err)
{
	const char *s = p, *end = s + n;
	size_t hlen = sizeof stats_header - 1, line = 1;
	unsigned seen = 0;

	memset(st, 0, sizeof *st);
	if (n > STATS_MAX_FILE)
		return stats_refuse(st, err, 0, "larger than 4096 bytes");
	if (n < hlen || memcmp(s, stats_header, hlen))
		return stats_refuse(st, err, 1, "not an asynccompile-stats 1 file");
	for (s += hlen; s < end; s++) {
		const char *nl = memchr(s, '\n', (size_t)(end - s)), *sp;
		int i;
		uint64_t v;

		line++;
		if (!nl)
			return stats_refuse(st, err, line, "no newline at the end");
		sp = memchr(s, ' ', (size_t)(nl - s));
		if (!sp)
			return stats_refuse(st, err, line, "not NAME VALUE");
		for (i = 0; i < STATS_COUNT; i++)
			if ((size_t)(sp - s) == strlen(stats_names[i]) &&
			    !memcmp(s, stats_names[i], (size_t)(sp - s)))
				break;
		if (i == STATS_COUNT)
			return stats_refuse(st, err, line, "unknown counter");
		if (seen & 1u << i)
			return stats_refuse(st, err, line, "counter given twice");
		if (stats_number(sp + 1, (size_t)(nl - sp - 1), &v) < 0)
			return stats_refuse(st, err, line, "value not a decimal 64-bit count");
		seen |= 1u << i;
		st->v[i] = v;
		s = nl;
	}
	return 0;
}

int stats_load(int store, struct stats *st, struct buf *err)
{
	struct buf data = BUF_INIT, why = BUF_INIT;
	struct stat sb;
	int rc = -1;

	memset(st, 0, sizeof *st);
	if (store_read(store, stats_file, &data, &why) == 0)
		rc = stats_decode(data.data, data.len, st, err);
	else if (fstatat(store, stats_file, &sb, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
		rc = 0; /* no make has counted anything yet */
	else
		err_fail(err, "%s", why.len ? (char *)why.data : stats_file);
	buf_release(&data);
	buf_release(&why);
	return rc;
}

/*
 * The lock file, held exclusively: a descriptor (close it to unlock), or
 * -1 with err.  Waited for at most STATS_LOCK_MS: a make at exit never
 * hangs on a stopped holder.
 */
static int stats_lock(int store, struct buf *err)
{
	struct timespec pause = { 0, 1000000 };
	struct stat st;
	int fd = openat(store, stats_lock_file,
			O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);

	if (fd < 0)
		return err_fail(err, "%s:", stats_lock_file);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022)) {
		close(fd);
		return err_fail(err, "%s: refused: not a file of ours", stats_lock_file);
	}
	for (int waited = 0; flock(fd, LOCK_EX | LOCK_NB) < 0; waited++) {
		if ((errno != EWOULDBLOCK && errno != EINTR) || waited >= STATS_LOCK_MS) {
			err_fail(err, "%s: not locked:", stats_lock_file);
			close(fd);
			return -1;
		}
		nanosleep(&pause, NULL);
	}
	return fd;
}

/* Write st under the lock held.  0, or -1 with err. */
static int stats_store(int store, const struct stats *st, struct buf *err)
{
	struct buf text = BUF_INIT;
	int rc;

	stats_encode(st, &text);
	rc = store_write(store, stats_file, text.data, text.len, err);
	buf_release(&text);
	return rc;
}

int stats_add(int store, const struct stats *delta, struct buf *err)
{
	struct stats st;
	int lock = stats_lock(store, err), rc;

	if (lock < 0)
		return -1;
	/* an unreadable file starts again from this make's counts */
	stats_load(store, &st, NULL);
	for (int i = 0; i < STATS_COUNT; i++) {
		if (i == STATS_UPDATED || i == STATS_ZEROED)
			continue;
		st.v[i] = st.v[i] > UINT64_MAX - delta->v[i] ? UINT64_MAX : st.v[i] + delta->v[i];
	}
	st.v[STATS_UPDATED] = (uint64_t)time(NULL);
	rc = stats_store(store, &st, err);
	close(lock);
	return rc;
}

int stats_zero(int store, struct buf *err)
{
	struct stats st;
	int lock = stats_lock(store, err), rc;

	if (lock < 0)
		return -1;
	memset(&st, 0, sizeof st);
	st.v[STATS_ZEROED] = (uint64_t)time(NULL);
	rc = stats_store(store, &st, err);
	close(lock);
	return rc;
}
