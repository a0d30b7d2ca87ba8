/*
 * readset_check.c - may a read set's answer stand for a run now?
 * readset_check() asks the file system whether each entry of a stored
 * read set still holds (answer/readset_check.h), directly or through a
 * table of identities (readset_table.c).
 */
#include "answer/readset_check.h"
#include "answer/readset_table.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/proto.h"
#include "lib/pstate.h"
#include "lib/readset.h"
#include "lib/readset_impl.h"
#include "lib/tracelog.h"

static uint8_t rs_kind(mode_t m)
{
	return S_ISREG(m) ? TL_FILE : S_ISDIR(m) ? TL_DIR : S_ISLNK(m) ? TL_LINK : TL_OTHER;
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
	if (readset_get_head(&r, &verdict, &was, &reason, &rlen, &count, err) < 0)
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

		if (readset_get_entry(&r, &e) < 0) {
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
