/*
 * test-snap - the vfork snapshot (trace/snap.h): pages nothing touched are
 * left out and not read, a page left out that was stored to meanwhile is
 * zero again, every other page comes back as it was, and nothing outside
 * the region is written.  Residency is asked of /proc/self/pagemap, as the
 * tracer asks it.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "t/unit/tap.h"
#include "trace/snap.h"

#define PG TR_SNAP_PAGE
#define NPG 16

static unsigned char *map_pages(size_t n)
{
	void *m = mmap(NULL, n * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		abort();
	/* one fault per page: a larger folio would make its neighbours present too */
	(void)madvise(m, n * PG, MADV_NOHUGEPAGE);
	return m;
}

static int pagemap(void)
{
	return open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
}

/* The pagemap entry of the page holding p, or 0 when unknown. */
static uint64_t entry(const void *p)
{
	uint64_t e;
	int fd = pagemap();
	ssize_t n = fd < 0 ? -1 : pread(fd, &e, sizeof e, (off_t)((uintptr_t)p / PG * sizeof e));

	if (fd >= 0)
		close(fd);
	return n == (ssize_t)sizeof e ? e : 0;
}

/* 1 if the page holding p is in memory (or swap), else 0. */
static int resident(const void *p)
{
	return (entry(p) >> 62) != 0;
}

static int all(const unsigned char *p, int c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != c)
			return 0;
	return 1;
}

/*
 * The region: NPG pages at base + off, short by `off` at both ends; the
 * first two pages stand for the file-backed part.  The parent stored to
 * pages 0, 1, 3 and 7 before the vfork.
 */
struct fixture {
	unsigned char *base, *data, *save;
	size_t size;
	struct tr_snap s;
};

static void setup(struct fixture *f, size_t off)
{
	f->base = map_pages(NPG);
	f->save = map_pages(NPG);
	f->data = f->base + off;
	f->size = NPG * PG - 2 * off;
	memset(f->base, 0x11, 2 * PG);
	memset(f->base + 3 * PG, 0x33, PG);
	f->base[7 * PG + 100] = 0x77;
	tr_snap_init(&f->s, f->data, f->size, (uintptr_t)f->base + 2 * PG - 10, f->save);
}

static void teardown(struct fixture *f)
{
	munmap(f->base, NPG * PG);
	munmap(f->save, NPG * PG);
}

static void test_left_out(void)
{
	struct fixture f;
	int fd = pagemap();
	uint64_t want = 0;

	setup(&f, 0);
	is_int((long long)f.s.npages, NPG - 2, "the pages past the file's are the ones that may be left out");
	tr_snap_take(&f.s, fd);
	for (int i = 2; i < NPG; i++)
		if (i != 3 && i != 7)
			want |= UINT64_C(1) << (i - 2);
	is_int((long long)f.s.left_out, (long long)want,
	       "left out: every anonymous page not stored to (not 3, not 7; not the file's 0, 1)");
	ok(resident(f.base + 5 * PG) == 0 && resident(f.save + 5 * PG) == 0,
	   "a page left out is neither read nor copied: not in memory, nor its copy");
	ok(resident(f.save + 0 * PG) == 1 && resident(f.save + 3 * PG) == 1,
	   "the pages kept are copied");

	/* the child, on the shared memory */
	memset(f.base + 0 * PG, 0xc0, 16);
	memset(f.base + 3 * PG + 8, 0xc3, 16);
	memset(f.base + 4 * PG, 0xc4, PG);
	f.base[9 * PG + 4000] = 0xc9;
	tr_snap_restore(&f.s, fd);
	ok(all(f.base, 0x11, 2 * PG) && all(f.base + 3 * PG, 0x33, PG) && f.base[7 * PG + 100] == 0x77,
	   "the pages kept are as they were");
	ok(all(f.base + 4 * PG, 0, PG) && all(f.base + 9 * PG, 0, PG),
	   "a page left out that the child stored to is zero again");
	ok(resident(f.base + 5 * PG) == 0 && resident(f.base + 12 * PG) == 0,
	   "a page left out that nobody touched is still untouched");

	/* a second vfork: pages 4 and 9 are in memory now, so copied */
	tr_snap_take(&f.s, fd);
	ok(!(f.s.left_out >> (4 - 2) & 1) && !(f.s.left_out >> (9 - 2) & 1) &&
	   (f.s.left_out >> (5 - 2) & 1),
	   "the next snapshot keeps what is in memory now and leaves out the rest");
	tr_snap_restore(&f.s, fd);
	teardown(&f);
	if (fd >= 0)
		close(fd);
}

static void test_no_pagemap(void)
{
	struct fixture f;

	setup(&f, 0);
	tr_snap_take(&f.s, -1);
	is_int((long long)f.s.left_out, 0, "without pagemap nothing is left out");
	f.base[5 * PG] = 0xc5;
	f.base[3 * PG] = 0xc3;
	tr_snap_restore(&f.s, -1);
	ok(f.base[5 * PG] == 0 && f.base[3 * PG] == 0x33, "... and every page comes back");
	teardown(&f);

	/* pagemap on taking, not on putting back: every page left out is zeroed */
	{
		int fd = pagemap();

		if (fd < 0)
			return;
		setup(&f, 0);
		tr_snap_take(&f.s, fd);
		f.base[6 * PG + 1] = 0xc6;
		tr_snap_restore(&f.s, -1);
		ok(f.s.left_out != 0 && all(f.base + 6 * PG, 0, PG) && all(f.base + 3 * PG, 0x33, PG),
		   "pagemap lost before putting back: each page left out is zeroed");
		teardown(&f);
		if (fd >= 0)
			close(fd);
	}
}

/* A region that starts and ends inside a page: nothing outside it is written. */
static void test_unaligned(void)
{
	struct fixture f;
	int fd = pagemap();
	size_t off = 100;

	setup(&f, off);
	tr_snap_take(&f.s, fd);
	ok(f.s.left_out >> (NPG - 1 - 2) & 1, "the region's last, partial page may be left out");
	/* the child stores inside the last page, and so does someone outside the region */
	f.base[NPG * PG - off - 1] = 0xcc;
	f.base[NPG * PG - off / 2] = 0xee;
	f.base[0] = 0xee;
	tr_snap_restore(&f.s, fd);
	ok(f.base[NPG * PG - off - 1] == 0, "the region's bytes in it are zero again");
	ok(f.base[NPG * PG - off / 2] == 0xee && f.base[0] == 0xee,
	   "the bytes past either end of the region are not the snapshot's: left alone");
	teardown(&f);
	if (fd >= 0)
		close(fd);
}

/*
 * The struct inside the region it saves, as vfork.c's is: it comes back
 * as it was, and a pagemap that calls its page untouched is not believed.
 */
static void test_inside(void)
{
	struct fixture f;
	struct tr_snap *s;
	int fd = pagemap(), fake;
	uint64_t want;

	setup(&f, 0);
	s = (struct tr_snap *)(f.base + 3 * PG + 512);
	tr_snap_init(s, f.data, f.size, (uintptr_t)f.base + 2 * PG - 10, f.save);
	tr_snap_take(s, fd);
	want = s->left_out;
	f.base[4 * PG + 8] = 0xc4;
	memset(f.base + 3 * PG, 0xc3, 256);
	tr_snap_restore(s, fd);
	ok(s->left_out == want && s->data == f.data && s->save == f.save && all(f.base + 4 * PG, 0, PG) &&
	   all(f.base + 3 * PG, 0x33, 256),
	   "the struct inside the region: itself as it was, the pages around it put back");

	/* a pagemap file that says nothing is in memory: the struct's own page says it lies */
	fake = memfd_create("fake-pagemap", MFD_CLOEXEC);
	if (fake < 0 || ftruncate(fake, (off_t)(((uintptr_t)f.base / PG + 2 * NPG) * 8)) < 0)
		abort();
	tr_snap_take(s, fake);
	is_int((long long)s->left_out, 0, "a pagemap that calls the struct's own page untouched: nothing left out");
	tr_snap_restore(s, fake);
	close(fake);
	teardown(&f);
	if (fd >= 0)
		close(fd);
}

/*
 * A page left out that the child only read (the zero page, on kernels
 * that map it) holds zeros: restore() looks before it writes.
 */
static void test_read_only(void)
{
	struct fixture f;
	int fd = pagemap();
	volatile unsigned char sink;

	setup(&f, 0);
	tr_snap_take(&f.s, fd);
	sink = f.base[10 * PG + 5];
	(void)sink;
	f.base[11 * PG + 5] = 0xcb;
	tr_snap_restore(&f.s, fd);
	ok(all(f.base + 10 * PG, 0, PG) && all(f.base + 11 * PG, 0, PG),
	   "a page left out that the child read holds zeros; one it wrote is zeroed");
	teardown(&f);
	if (fd >= 0)
		close(fd);
}

int main(void)
{
	int fd = pagemap();
	uint64_t e;

	if (fd < 0 || pread(fd, &e, sizeof e, 0) != (ssize_t)sizeof e) {
		ok(1, "# SKIP /proc/self/pagemap cannot be read here");
		test_no_pagemap();
		return done_testing();
	}
	close(fd);
	test_left_out();
	test_no_pagemap();
	test_unaligned();
	test_inside();
	test_read_only();
	return done_testing();
}
