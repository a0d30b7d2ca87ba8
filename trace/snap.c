/*
 * snap.c - a copy of a memory region that leaves out the pages nothing
 * has touched (snap.h).
 */
#include "trace/snap.h"

#include <errno.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/* pagemap(5): bit 63 present, bit 62 swapped */
#define TR_SNAP_HELD (UINT64_C(3) << 62)

void tr_snap_init(struct tr_snap *s, void *data, size_t size, uintptr_t file_end, void *save)
{
	uintptr_t hi = (uintptr_t)data + size;

	memset(s, 0, sizeof *s);
	s->data = data;
	s->size = size;
	s->save = save;
	/* the file's last page is part file, part zero-filled by the loader: copied */
	s->anon = (file_end + TR_SNAP_PAGE - 1) & ~(uintptr_t)(TR_SNAP_PAGE - 1);
	if (s->anon < (uintptr_t)data)
		s->anon = ((uintptr_t)data + TR_SNAP_PAGE - 1) & ~(uintptr_t)(TR_SNAP_PAGE - 1);
	if (s->anon < hi)
		s->npages = (hi - s->anon + TR_SNAP_PAGE - 1) / TR_SNAP_PAGE;
	if (s->npages > TR_SNAP_PAGES)
		s->npages = TR_SNAP_PAGES;
}

/* Bit i set: page anon + i is in memory or in swap.  -1: cannot tell. */
static int tr_snap_held(const struct tr_snap *s, int pagemap, uint64_t *held)
{
	uint64_t e[TR_SNAP_PAGES];
	size_t want = s->npages * sizeof *e;
	int saved = errno;
	ssize_t got = pagemap < 0 ? -1 :
		      pread(pagemap, e, want, (off_t)(s->anon / TR_SNAP_PAGE * sizeof *e));

	errno = saved;
	if (got != (ssize_t)want)
		return -1;
	*held = 0;
	for (size_t i = 0; i < s->npages; i++)
		if (e[i] & TR_SNAP_HELD)
			*held |= UINT64_C(1) << i;
	return 0;
}

static uint64_t tr_snap_all(const struct tr_snap *s)
{
	return s->npages >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << s->npages) - 1;
}

/* 1 with *i set if p lies in page anon + i, one that may be left out. */
static int tr_snap_page_of(const struct tr_snap *s, const void *p, size_t *i)
{
	uintptr_t a = (uintptr_t)p;

	if (a < s->anon || (a - s->anon) / TR_SNAP_PAGE >= s->npages)
		return 0;
	*i = (a - s->anon) / TR_SNAP_PAGE;
	return 1;
}

/* 1 if the byte at p lies in a page left out of the copy. */
static int tr_snap_is_left_out(const struct tr_snap *s, uint64_t left_out, const unsigned char *p)
{
	size_t i;

	return tr_snap_page_of(s, p, &i) && (left_out >> i & 1);
}

/* From offset off, the bytes of the region up to the end of off's page. */
static size_t tr_snap_piece(const struct tr_snap *s, size_t off)
{
	size_t k = TR_SNAP_PAGE - ((uintptr_t)(s->data + off) & (TR_SNAP_PAGE - 1));

	return k < s->size - off ? k : s->size - off;
}

/* The region's bytes in page anon + i. */
static void tr_snap_page(const struct tr_snap *s, size_t i, unsigned char **p, size_t *n)
{
	uintptr_t a = s->anon + i * TR_SNAP_PAGE, b = a + TR_SNAP_PAGE;
	uintptr_t lo = (uintptr_t)s->data, hi = lo + s->size;

	if (a < lo)
		a = lo;
	if (b > hi)
		b = hi;
	*p = (unsigned char *)a;
	*n = b > a ? b - a : 0;
}

void tr_snap_take(struct tr_snap *s, int pagemap)
{
	uint64_t held, left_out = 0;
	size_t self;

	if (s->npages && tr_snap_held(s, pagemap, &held) == 0)
		left_out = ~held & tr_snap_all(s);
	/*
	 * A pagemap that calls the page of this very struct (written by
	 * tr_snap_init) untouched describes another memory (an emulator's
	 * pages, a /proc that is not the kernel's): trust none of it.
	 */
	if (tr_snap_page_of(s, s, &self) && (left_out >> self & 1))
		left_out = 0;
	s->left_out = left_out;
	for (size_t off = 0; off < s->size;) {
		size_t k = tr_snap_piece(s, off);

		if (!tr_snap_is_left_out(s, left_out, s->data + off))
			memcpy(s->save + off, s->data + off, k);
		off += k;
	}
}

void tr_snap_restore(struct tr_snap *s, int pagemap)
{
	/* before the page that holds them is written back (with the same values) */
	uint64_t left_out = s->left_out, stored;
	size_t npages = s->npages;

	for (size_t off = 0; off < s->size;) {
		unsigned char *dst = s->data + off;
		const unsigned char *src = s->save + off;
		size_t k = tr_snap_piece(s, off);

		/* an unchanged page is not written: that would fault in a copy of it */
		if (!tr_snap_is_left_out(s, left_out, dst) && memcmp(dst, src, k))
			memcpy(dst, src, k);
		off += k;
	}
	if (!left_out)
		return;
	if (tr_snap_held(s, pagemap, &stored) < 0)
		stored = left_out;
	for (size_t i = 0; i < npages; i++) {
		unsigned char *p;
		size_t n;

		if (!(left_out & stored & (UINT64_C(1) << i)))
			continue;
		tr_snap_page(s, i, &p, &n);
		/* one the child only read may be the shared zero page: a write would fault */
		for (size_t k = 0; k < n; k++)
			if (p[k]) {
				memset(p, 0, n);
				break;
			}
	}
}
