/*
 * syscan.c - system-call instructions in an ELF object (syscan.h): the
 * scan, its confirmation by a decoder, and the caches by identity.
 * Every byte of the object is untrusted: each read is bounds-checked
 * (sc_get), and a structure that does not parse makes its candidates
 * count as real.
 *
 * Longer than 600 lines because the ELF reader, the unwind-table reader,
 * the decoder's glue and the caches share one lock and one bounds rule;
 * split, each part would export internals only the others use.
 */
#include "lib/syscan.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/store.h"
#include "lib/wire.h"
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#if defined(__has_include)
#if __has_include(<capstone/capstone.h>)
#include <capstone/capstone.h>
#define SC_CAPSTONE 1
#endif
#endif

#define SC_MAX_PHNUM 512
#define SC_PE_OMIT 0xff     /* SC_PE_OMIT */
/* candidates of one object confirmed at most; past that, RAW */
#define SC_MAX_CANDIDATES 100000

struct sc_range {
	uint64_t off, end;      /* file offsets */
	uint64_t vaddr;         /* of off */
};

struct sc_elf {
	const unsigned char *p;
	size_t n;
	int fd;                 /* the file p maps, for the pair pass; -1: none */
	Elf64_Ehdr eh;
	struct sc_range load[SC_MAX_PHNUM]; /* every PT_LOAD (for addresses) */
	int nload;
	struct sc_range code[SC_MAX_PHNUM]; /* PT_LOAD with PF_X */
	int ncode;
	int have_sections;
	uint64_t hdr_off, hdr_vaddr;        /* .eh_frame_hdr (0: none) */
	uint64_t table_off, nfde;           /* its binary-search table */
	int go;
};

static int sc_get(const struct sc_elf *e, uint64_t off, void *out, size_t len)
{
	if (off > e->n || len > e->n - off)
		return -1;
	memcpy(out, e->p + off, len);
	return 0;
}

/* The file offset of vaddr, in a PT_LOAD's file bytes; -1 if none. */
static int sc_off(const struct sc_elf *e, uint64_t vaddr, uint64_t *off)
{
	for (int i = 0; i < e->nload; i++) {
		const struct sc_range *r = &e->load[i];

		if (vaddr >= r->vaddr && vaddr - r->vaddr < r->end - r->off) {
			*off = r->off + (vaddr - r->vaddr);
			return 0;
		}
	}
	return -1;
}

static int sc_phdrs(struct sc_elf *e)
{
	if (e->eh.e_phentsize != sizeof(Elf64_Phdr) || e->eh.e_phnum > SC_MAX_PHNUM)
		return -1;
	for (int i = 0; i < e->eh.e_phnum; i++) {
		Elf64_Phdr ph;
		struct sc_range r;

		if (sc_get(e, e->eh.e_phoff + (uint64_t)i * sizeof ph, &ph, sizeof ph))
			return -1;
		if (ph.p_type == PT_GNU_EH_FRAME)
			e->hdr_vaddr = ph.p_vaddr;
		if (ph.p_type != PT_LOAD)
			continue;
		if (ph.p_offset > e->n)
			return -1;
		r.off = ph.p_offset;
		r.end = ph.p_filesz > e->n - ph.p_offset ? e->n : ph.p_offset + ph.p_filesz;
		r.vaddr = ph.p_vaddr;
		e->load[e->nload++] = r;
		if (ph.p_flags & PF_X)
			e->code[e->ncode++] = r;
	}
	return 0;
}

/* Go's build-id note: name "Go", type 4 (cmd/link). */
static void sc_go_notes(struct sc_elf *e, uint64_t off, uint64_t size)
{
	uint64_t end = off + size;

	while (!e->go && off + 12 <= end) {
		uint32_t h[3];
		char name[4];

		if (sc_get(e, off, h, sizeof h))
			return;
		if (h[0] == 3 && h[2] == 4 && !sc_get(e, off + 12, name, 3) &&
		    !memcmp(name, "Go", 3))
			e->go = 1;
		off += 12 + (((uint64_t)h[0] + 3) & ~3ull) + (((uint64_t)h[1] + 3) & ~3ull);
	}
}

static void sc_notes(struct sc_elf *e)
{
	for (int i = 0; i < e->eh.e_phnum; i++) {
		Elf64_Phdr ph;

		if (sc_get(e, e->eh.e_phoff + (uint64_t)i * sizeof ph, &ph, sizeof ph))
			return;
		if (ph.p_type == PT_NOTE && ph.p_offset <= e->n && ph.p_filesz <= e->n - ph.p_offset)
			sc_go_notes(e, ph.p_offset, ph.p_filesz);
	}
}

static int sc_section(const struct sc_elf *e, int i, Elf64_Shdr *sh)
{
	return sc_get(e, e->eh.e_shoff + (uint64_t)i * sizeof *sh, sh, sizeof *sh);
}

/* The section table, when there is a sane one: Go's sections. */
static void sc_sections(struct sc_elf *e)
{
	Elf64_Shdr str;
	static const char *const go[] = { ".go.buildinfo", ".gopclntab", ".note.go.buildid" };

	if (!e->eh.e_shoff || e->eh.e_shentsize != sizeof(Elf64_Shdr) || !e->eh.e_shnum ||
	    e->eh.e_shstrndx >= e->eh.e_shnum ||
	    sc_section(e, e->eh.e_shnum - 1, &str) || sc_section(e, e->eh.e_shstrndx, &str) ||
	    str.sh_offset > e->n || str.sh_size > e->n - str.sh_offset)
		return;
	e->have_sections = 1;
	for (int i = 0; i < e->eh.e_shnum; i++) {
		Elf64_Shdr sh;
		const char *name;

		if (sc_section(e, i, &sh) || sh.sh_name >= str.sh_size)
			continue;
		name = (const char *)e->p + str.sh_offset + sh.sh_name;
		for (size_t k = 0; k < sizeof go / sizeof *go; k++) {
			size_t len = strlen(go[k]) + 1;

			if (str.sh_size - sh.sh_name >= len && !memcmp(name, go[k], len))
				e->go = 1;
		}
		if (sh.sh_type == SHT_NOTE && sh.sh_offset <= e->n &&
		    sh.sh_size <= e->n - sh.sh_offset)
			sc_go_notes(e, sh.sh_offset, sh.sh_size);
	}
}

/*
 * The start (file offset) of the executable section that holds off, in
 * *sec; without a section table, the start of its segment.  -1: off is
 * in a section of data.
 */
static int sc_code_section(const struct sc_elf *e, const struct sc_range *code, uint64_t off,
			   uint64_t *sec)
{
	*sec = code->off;
	if (!e->have_sections)
		return 0;
	for (int i = 0; i < e->eh.e_shnum; i++) {
		Elf64_Shdr sh;

		if (sc_section(e, i, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		if ((sh.sh_flags & SHF_EXECINSTR) && off >= sh.sh_offset &&
		    off - sh.sh_offset < sh.sh_size) {
			if (sh.sh_offset > code->off)
				*sec = sh.sh_offset;
			return 0;
		}
	}
	return -1;
}

/* ---- .eh_frame_hdr and the FDEs it points at ---- */

static int sc_uleb(const struct sc_elf *e, uint64_t *off, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		uint8_t b;

		if (sc_get(e, (*off)++, &b, 1))
			return -1;
		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 0;
	}
	return -1;
}

/* A DW_EH_PE_* value's bytes at *off (the format only: the low nibble). */
static int sc_encoded(const struct sc_elf *e, uint64_t *off, uint8_t enc, uint64_t *v)
{
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;

	switch (enc & 0x0f) {
	case 0x01: case 0x09:
		return sc_uleb(e, off, v);
	case 0x02: case 0x0a:
		if (sc_get(e, *off, &u16, 2))
			return -1;
		*off += 2;
		*v = (enc & 0x08) ? (uint64_t)(int64_t)(int16_t)u16 : u16;
		return 0;
	case 0x03: case 0x0b:
		if (sc_get(e, *off, &u32, 4))
			return -1;
		*off += 4;
		*v = (enc & 0x08) ? (uint64_t)(int64_t)(int32_t)u32 : u32;
		return 0;
	case 0x00: case 0x04: case 0x0c:
		if (sc_get(e, *off, &u64, 8))
			return -1;
		*off += 8;
		*v = u64;
		return 0;
	default:
		return -1;
	}
}

static void sc_eh_frame_hdr(struct sc_elf *e)
{
	uint8_t h[4];
	uint64_t off, v;

	if (!e->hdr_vaddr || sc_off(e, e->hdr_vaddr, &e->hdr_off) ||
	    sc_get(e, e->hdr_off, h, 4) || h[0] != 1)
		return;
	/* the table as every linker writes it: datarel sdata4 pairs */
	off = e->hdr_off + 4;
	if (h[1] == SC_PE_OMIT || h[2] == SC_PE_OMIT || h[3] != 0x3b ||
	    sc_encoded(e, &off, h[1], &v) || sc_encoded(e, &off, h[2], &e->nfde) ||
	    e->nfde > (e->n - (off < e->n ? off : e->n)) / 8) {
		e->nfde = 0;
		return;
	}
	e->table_off = off;
}

/* The augmentation's FDE pointer encoding ('R') of the CIE at off. */
static int sc_cie_enc(const struct sc_elf *e, uint64_t off, uint8_t *enc)
{
	uint32_t h[2];
	uint8_t ver, c;
	char aug[16];
	uint64_t v;
	size_t k = 0;

	*enc = 0; /* absptr */
	if (sc_get(e, off, h, 8) || h[0] == 0xffffffffu || h[1] != 0 ||
	    sc_get(e, off + 8, &ver, 1))
		return -1;
	off += 9;
	do {
		if (k == sizeof aug || sc_get(e, off++, &aug[k], 1))
			return -1;
	} while (aug[k++]);
	if (strstr(aug, "eh"))
		off += 8;
	if (sc_uleb(e, &off, &v) || sc_uleb(e, &off, &v)) /* code and data alignment */
		return -1;
	if (ver == 1)
		off++;
	else if (sc_uleb(e, &off, &v))
		return -1;
	if (aug[0] != 'z')
		return 0;
	if (sc_uleb(e, &off, &v))
		return -1;
	for (const char *a = aug + 1; *a; a++) {
		switch (*a) {
		case 'R':
			return sc_get(e, off, enc, 1);
		case 'P':
			if (sc_get(e, off++, &c, 1) || sc_encoded(e, &off, c, &v))
				return -1;
			break;
		case 'L':
			off++;
			break;
		case 'S': case 'B': case 'G':
			break;
		default:
			return -1;
		}
	}
	return 0;
}

/* The address range of the FDE at vaddr fde: its pc_range. */
static int sc_fde_range(const struct sc_elf *e, uint64_t fde, uint64_t *range)
{
	uint64_t off, v;
	uint32_t h[2];
	uint8_t enc;

	if (sc_off(e, fde, &off) || sc_get(e, off, h, 8) || h[0] == 0xffffffffu || !h[1] ||
	    h[1] > off + 4 || sc_cie_enc(e, off + 4 - h[1], &enc))
		return -1;
	off += 8;
	return sc_encoded(e, &off, enc, &v) || sc_encoded(e, &off, enc & 0x0f, range) ? -1 : 0;
}

/*
 * Where decoding starts to reach vaddr: the start of the function whose
 * unwind entry covers it; else the end of the last function before it,
 * or floor (its section's start), whichever is later: code without an
 * unwind entry (crtstuff's __do_global_dtors_aux is in every program;
 * assembly without CFI) is decoded the way objdump does, from the last
 * boundary known.  -1 when an entry does not parse.
 */
static int sc_start(const struct sc_elf *e, uint64_t vaddr, uint64_t floor, uint64_t *start)
{
	uint64_t lo = 0, hi = e->nfde, range, fn;
	int32_t ent[2];

	*start = floor;
	/* the last entry whose start is <= vaddr */
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (sc_get(e, e->table_off + mid * 8, ent, 8))
			return -1;
		if (e->hdr_vaddr + (uint64_t)(int64_t)ent[0] <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return 0;
	if (sc_get(e, e->table_off + (lo - 1) * 8, ent, 8))
		return -1;
	fn = e->hdr_vaddr + (uint64_t)(int64_t)ent[0];
	if (sc_fde_range(e, e->hdr_vaddr + (uint64_t)(int64_t)ent[1], &range))
		return -1;
	if (vaddr - fn < range)
		*start = fn;
	else if (fn + range > floor)
		*start = fn + range;
	return 0;
}

/* ---- the decoder ---- */

#ifdef SC_CAPSTONE
#define SC_STR(x) #x
#define SC_XSTR(x) SC_STR(x)
static struct {
	int tried;
	csh handle;
	cs_err (*open)(cs_arch, cs_mode, csh *);
	cs_insn *(*malloc_insn)(csh);
	/*
	 * The one instruction buffer, for the process's life like the handle:
	 * a SIGBUS that ends a scan mid-decode (sc_file) frees nothing.
	 */
	cs_insn *in;
	bool (*iter)(csh, const uint8_t **, size_t *, uint64_t *, cs_insn *);
} sc_cs;

/* Under sc_lock. */
static int sc_decoder(void)
{
	void *h;

	if (sc_cs.tried)
		return sc_cs.handle != 0;
	sc_cs.tried = 1;
	h = dlopen("libcapstone.so." SC_XSTR(CS_API_MAJOR), RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return 0;
	sc_cs.open = (cs_err (*)(cs_arch, cs_mode, csh *))dlsym(h, "cs_open");
	sc_cs.malloc_insn = (cs_insn *(*)(csh))dlsym(h, "cs_malloc");
	sc_cs.iter = (bool (*)(csh, const uint8_t **, size_t *, uint64_t *, cs_insn *))
		dlsym(h, "cs_disasm_iter");
	if (!sc_cs.open || !sc_cs.malloc_insn || !sc_cs.iter ||
	    sc_cs.open(CS_ARCH_X86, CS_MODE_64, &sc_cs.handle) != CS_ERR_OK ||
	    !(sc_cs.in = sc_cs.malloc_insn(sc_cs.handle))) {
		sc_cs.handle = 0;
		return 0;
	}
	return 1;
}

/*
 * Where decoding stands: candidates are confirmed in address order, and
 * the next one in the same function (same start) goes on from the last
 * instruction decoded, not from the function's start again: cc1's 161
 * candidates cost one pass over the functions that hold them.
 */
struct sc_cursor {
	uint64_t start;           /* the function (or gap) decoded from */
	const uint8_t *p;
	size_t left;
	uint64_t addr;            /* of p */
	int valid;
};

/*
 * Decode from the function's start (file offset fo, address start) to
 * vaddr; 1 if the instruction covering vaddr enters the kernel, or the
 * decoder stopped first.
 */
static int sc_decode(const struct sc_elf *e, const struct sc_range *code, uint64_t fo,
		     uint64_t start, uint64_t vaddr, struct sc_cursor *cur)
{
	cs_insn *in = sc_cs.in;

	if (!cur->valid || cur->start != start || cur->addr > vaddr) {
		cur->valid = 1;
		cur->start = start;
		cur->p = e->p + fo;
		cur->left = (size_t)(code->end - fo);
		cur->addr = start;
	}
	while (sc_cs.iter(sc_cs.handle, &cur->p, &cur->left, &cur->addr, in)) {
		if (in->address + in->size <= vaddr)
			continue;
		return in->id == X86_INS_SYSCALL || in->id == X86_INS_SYSENTER ||
		       (in->id == X86_INS_INT && in->size >= 2 && in->bytes[in->size - 2] == 0xcd &&
			in->bytes[in->size - 1] == 0x80);
	}
	cur->valid = 0;
	return 1;
}
#else
struct sc_cursor {
	int unused;
};

static int sc_decoder(void)
{
	return 0;
}

static int sc_decode(const struct sc_elf *e, const struct sc_range *code, uint64_t fo,
		     uint64_t start, uint64_t vaddr, struct sc_cursor *cur)
{
	(void)e, (void)code, (void)fo, (void)start, (void)vaddr, (void)cur;
	return 1;
}

#endif

static pthread_mutex_t sc_lock = PTHREAD_MUTEX_INITIALIZER;

int syscan_have_decoder(void)
{
	int r;

	pthread_mutex_lock(&sc_lock);
	r = sc_decoder();
	pthread_mutex_unlock(&sc_lock);
	return r;
}

/* Is the candidate at file offset off (in code) a real system call? */
static int sc_confirm(const struct sc_elf *e, const struct sc_range *code, uint64_t off,
		      uint64_t sec, struct sc_cursor *cur, struct buf *why)
{
	uint64_t vaddr = code->vaddr + (off - code->off), start, fo;

	if (sc_start(e, vaddr, code->vaddr + (sec - code->off), &start) ||
	    sc_off(e, start, &fo) || fo < code->off || fo > off) {
		err_fail(why, "system-call bytes at 0x%" PRIx64 " in code whose unwind "
			 "entry does not parse", vaddr);
		return 1;
	}
	if (!sc_decoder()) {
		err_fail(why, "system-call bytes at 0x%" PRIx64 " and no decoder (libcapstone) "
			 "to tell an instruction from data", vaddr);
		return 1;
	}
	if (sc_decode(e, code, fo, start, vaddr, cur)) {
		err_fail(why, "a system-call instruction at 0x%" PRIx64, vaddr);
		return 1;
	}
	return 0;
}

static int sc_is_pair(unsigned char a, unsigned char b)
{
	return (a == 0x0f && (b == 0x05 || b == 0x34)) || (a == 0xcd && b == 0x80);
}

/*
 * One pass over the bytes, sixteen at a time where SSE2 is there: three
 * memmem() passes took 300 ms over libLLVM's 100 MB, the larger part of
 * a first run that loads it (bench/README.md, "First runs: scans off the
 * call's path").
 */
size_t syscan_pairs(const unsigned char *p, size_t n, uint64_t base, uint64_t *out, size_t max)
{
	size_t i = 0, k = 0;

#ifdef __SSE2__
	const __m128i f = _mm_set1_epi8(0x0f), cd = _mm_set1_epi8((char)0xcd);
	const __m128i s05 = _mm_set1_epi8(0x05), s34 = _mm_set1_epi8(0x34);
	const __m128i s80 = _mm_set1_epi8((char)0x80);

	/* a pair's second byte is the next lane's first: i + 16 < n */
	for (; i + 17 <= n; i += 16) {
		__m128i a = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
		__m128i b = _mm_loadu_si128((const __m128i *)(const void *)(p + i + 1));
		__m128i m = _mm_or_si128(
			_mm_and_si128(_mm_cmpeq_epi8(a, f),
				      _mm_or_si128(_mm_cmpeq_epi8(b, s05), _mm_cmpeq_epi8(b, s34))),
			_mm_and_si128(_mm_cmpeq_epi8(a, cd), _mm_cmpeq_epi8(b, s80)));
		unsigned bits = (unsigned)_mm_movemask_epi8(m);

		while (bits) {
			if (k == max)
				return max + 1;
			out[k++] = base + i + (unsigned)__builtin_ctz(bits);
			bits &= bits - 1;
		}
	}
#endif
	for (; i + 2 <= n; i++)
		if (sc_is_pair(p[i], p[i + 1])) {
			if (k == max)
				return max + 1;
			out[k++] = base + i;
		}
	return k;
}

/*
 * The pair pass over a file's segment reads it with pread(2) into a
 * buffer that stays in the cache, not through the mapping: a first touch
 * of a mapped page costs a fault and a TLB miss, and cc1's 33 MB took
 * 26 ms mapped, 7 ms read (bench/README.md, "First runs").  The last byte
 * of each chunk is carried into the next, so a pair across the seam is
 * found once.  (size_t)-1 when the file no longer has the bytes, or a
 * read fails (sc_short says which).
 */
#define SC_CHUNK SYSCAN_READ_CHUNK
/*
 * Under sc_lock: the last sc_image's file changed or lost bytes as it was
 * read (-1), or a read of it failed (its errno); 0 otherwise.
 */
static int sc_short;

static size_t sc_pairs_read(const struct sc_elf *e, const struct sc_range *c, uint64_t *out,
			    size_t max)
{
	static unsigned char buf[SC_CHUNK + 1]; /* under sc_lock */
	uint64_t pos = c->off;                   /* the file offset of buf[0] */
	size_t have = 0, k = 0;

	while (pos + have < c->end) {
		uint64_t left = c->end - (pos + have);
		size_t want = left < SC_CHUNK ? (size_t)left : SC_CHUNK;
		ssize_t r = pread(e->fd, buf + have, want, (off_t)(pos + have));
		size_t len, got;

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			sc_short = r < 0 ? errno : -1;
			return (size_t)-1;
		}
		len = have + (size_t)r;
		got = syscan_pairs(buf, len, pos, out + k, max - k);
		if (got > max - k)
			return max + 1;
		k += got;
		buf[0] = buf[len - 1];
		pos += len - 1;
		have = 1;
	}
	return k;
}

/* One executable segment: its candidates, in address order. */
static int sc_scan_range(const struct sc_elf *e, const struct sc_range *c, long *budget,
			 struct buf *why)
{
	static uint64_t offs[SC_MAX_CANDIDATES]; /* under sc_lock */
	struct sc_cursor cur;
	size_t max = (size_t)(*budget > 0 ? *budget : 0);
	size_t n = e->fd >= 0 ? sc_pairs_read(e, c, offs, max)
			      : syscan_pairs(e->p + c->off, (size_t)(c->end - c->off), c->off, offs, max);
	int r = 0;

	if (n == (size_t)-1)
		return 1; /* sc_file says why (sc_short) */
	if (n > max)
		return err_fail(why, "too many system-call byte pairs"), 1;
	*budget -= (long)n;
	memset(&cur, 0, sizeof cur);
	for (size_t i = 0; !r && i < n; i++) {
		uint64_t sec;

		if (!sc_code_section(e, c, offs[i], &sec))
			r = sc_confirm(e, c, offs[i], sec, &cur, why);
	}
	return r ? 1 : 0;
}

static int sc_scan(const struct sc_elf *e, struct buf *why)
{
	long budget = SC_MAX_CANDIDATES;

	for (int i = 0; i < e->ncode; i++)
		if (sc_scan_range(e, &e->code[i], &budget, why))
			return 1;
	return 0;
}

/* Under sc_lock.  fd: the file p maps (the pair pass reads it), or -1. */
static int sc_image(const void *p, size_t n, int fd, struct buf *why)
{
	static struct sc_elf e; /* large: under sc_lock, not on the stack */
	int r;

	memset(&e, 0, sizeof e);
	e.p = p;
	e.n = n;
	e.fd = fd;
	sc_short = 0;
	if (n < sizeof e.eh || memcmp(p, ELFMAG, SELFMAG)) {
		r = err_fail(why, "not an ELF object");
		goto out;
	}
	memcpy(&e.eh, p, sizeof e.eh);
	if (e.eh.e_ident[EI_CLASS] != ELFCLASS64 || e.eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    e.eh.e_machine != EM_X86_64) {
		r = err_fail(why, "not an x86-64 ELF object");
		goto out;
	}
	if (sc_phdrs(&e)) {
		r = err_fail(why, "an ELF object whose program headers do not parse");
		goto out;
	}
	sc_notes(&e);
	sc_sections(&e);
	if (e.go) {
		r = err_fail(why, "a Go program (Go makes its own system calls)");
		goto out;
	}
	sc_eh_frame_hdr(&e);
	r = sc_scan(&e, why);
out:
	return r ? SYSCAN_RAW : SYSCAN_CLEAN;
}

int syscan_image(const void *p, size_t n, struct buf *why)
{
	int r;

	pthread_mutex_lock(&sc_lock);
	r = sc_image(p, n, -1, why);
	pthread_mutex_unlock(&sc_lock);
	return r;
}

/* ---- the caches ---- */

#define SC_SLOTS 1024
#define SC_REASON 160

struct sc_slot {
	int used, result;
	uint64_t dev, ino;
	int64_t size, mtime_ns, ctime_ns;
	char reason[SC_REASON];
};
static struct sc_slot sc_slots[SC_SLOTS];

static uint64_t sc_id_hash(const struct tl_event *id)
{
	int64_t v[5] = { (int64_t)id->dev, (int64_t)id->ino, id->size, id->mtime_ns, id->ctime_ns };

	return store_hash(v, sizeof v, STORE_HASH_INIT);
}

static struct sc_slot *sc_slot(const struct tl_event *id)
{
	return &sc_slots[sc_id_hash(id) % SC_SLOTS];
}

static int sc_slot_is(const struct sc_slot *s, const struct tl_event *id)
{
	return s->used && s->dev == id->dev && s->ino == id->ino && s->size == id->size &&
	       s->mtime_ns == id->mtime_ns && s->ctime_ns == id->ctime_ns;
}

static void sc_slot_put(const struct tl_event *id, int result, const char *reason, size_t len)
{
	struct sc_slot *s = sc_slot(id);

	s->used = 1;
	s->result = result;
	s->dev = id->dev;
	s->ino = id->ino;
	s->size = id->size;
	s->mtime_ns = id->mtime_ns;
	s->ctime_ns = id->ctime_ns;
	if (len >= sizeof s->reason)
		len = sizeof s->reason - 1;
	memcpy(s->reason, reason, len);
	s->reason[len] = 0;
}

void syscan_entry_encode(struct buf *out, const struct tl_event *id, int result,
			 const char *reason)
{
	wire_put_u8(out, SYSCAN_MAGIC);
	wire_put_i64(out, (int64_t)id->dev);
	wire_put_i64(out, (int64_t)id->ino);
	wire_put_i64(out, id->size);
	wire_put_i64(out, id->mtime_ns);
	wire_put_i64(out, id->ctime_ns);
	wire_put_u8(out, (uint8_t)result);
	wire_put_str(out, reason);
}

int syscan_entry_decode(const void *p, size_t n, const struct tl_event *id, int *result,
			struct buf *reason)
{
	struct wire_reader r;
	const void *text;
	size_t len = 0;
	int ok;

	wire_reader_init(&r, p, n);
	ok = wire_get_u8(&r) == SYSCAN_MAGIC;
	ok &= (uint64_t)wire_get_i64(&r) == id->dev;
	ok &= (uint64_t)wire_get_i64(&r) == id->ino;
	ok &= wire_get_i64(&r) == id->size;
	ok &= wire_get_i64(&r) == id->mtime_ns;
	ok &= wire_get_i64(&r) == id->ctime_ns;
	*result = wire_get_u8(&r);
	text = wire_get_bytes(&r, &len);
	if (!ok || r.failed || r.left || (*result != SYSCAN_CLEAN && *result != SYSCAN_RAW) ||
	    !text || len >= SC_REASON || memchr(text, 0, len) ||
	    (*result == SYSCAN_RAW) != (len > 0))
		return -1;
	buf_add(reason, text, len);
	return 0;
}

/*
 * Under sc_lock: the store's subdirectory for the results, or -1 (then
 * none is kept).  The per-user store is used only if it exists (the
 * record and the cache make it): a scan never creates it.  Opened once
 * per process (about 0.5 ms of checks); a process forked from this one
 * shares the descriptor, which only reads and writes whole files by name.
 */
static int sc_store(void)
{
	static int sub = -2;
	int dirfd;

	if (sub != -2)
		return sub;
	sub = -1;
	dirfd = store_open("", 0, NULL);
	if (dirfd >= 0) {
		sub = store_subdir(dirfd, "syscan", NULL);
		close(dirfd);
	}
	return sub;
}

static void sc_store_name(char *name, size_t size, const struct tl_event *id)
{
	snprintf(name, size, "%016" PRIx64, sc_id_hash(id));
}

/* Under sc_lock: the store's result for id, into the memory cache. */
static int sc_store_get(int sub, const struct tl_event *id)
{
	struct buf b = BUF_INIT, reason = BUF_INIT;
	char name[32];
	int result, r = -1;

	sc_store_name(name, sizeof name, id);
	if (store_read(sub, name, &b, NULL) == 0 &&
	    syscan_entry_decode(b.data, b.len, id, &result, &reason) == 0) {
		sc_slot_put(id, result, reason.len ? (char *)reason.data : "", reason.len);
		r = 0;
	}
	buf_release(&b);
	buf_release(&reason);
	return r;
}

static void sc_store_put(int sub, const struct tl_event *id, int result, const char *reason)
{
	struct buf b = BUF_INIT;
	char name[32];

	sc_store_name(name, sizeof name, id);
	syscan_entry_encode(&b, id, result, reason);
	store_write(sub, name, b.data, b.len, NULL);
	buf_release(&b);
}

void (*syscan_mapped_hook)(const char *path);

/*
 * A file cut shorter while it is mapped raises SIGBUS on its pages past
 * the new end.  The scan runs in make's own thread, while the traced
 * command still runs too (run.h), and a command may do that to a file it
 * mapped.  So for the scan's length a SIGBUS in the scanning thread ends
 * the scan instead (the file is then judged changed: raw, not kept); one
 * in any other thread gets its old action back and happens again under
 * it.  The scan is under sc_lock: one thread at a time arms this.
 */
static sigjmp_buf sc_bus_env;
static pthread_t sc_bus_thread;
static volatile sig_atomic_t sc_bus_armed;
static struct sigaction sc_bus_old;

static void sc_bus(int sig, siginfo_t *si, void *ctx)
{
	(void)sig, (void)si, (void)ctx;
	if (sc_bus_armed && pthread_equal(pthread_self(), sc_bus_thread))
		siglongjmp(sc_bus_env, 1);
	sigaction(SIGBUS, &sc_bus_old, NULL);
}

/*
 * Is the file behind fd still the one the trace saw (id), its stat in
 * *sb?  Asked before the scan and again after it: a file written to as
 * it was scanned had bytes judged that may be neither the old nor the new.
 */
static int sc_is_id(int fd, const struct tl_event *id, struct stat *sb)
{
	return fstat(fd, sb) == 0 && S_ISREG(sb->st_mode) && (uint64_t)sb->st_dev == id->dev &&
	       (uint64_t)sb->st_ino == id->ino && sb->st_size == id->size &&
	       (int64_t)sb->st_mtim.tv_sec * 1000000000 + sb->st_mtim.tv_nsec == id->mtime_ns &&
	       (int64_t)sb->st_ctim.tv_sec * 1000000000 + sb->st_ctim.tv_nsec == id->ctime_ns;
}

/* Under sc_lock: scan the file, if it still is what the trace saw. */
static int sc_file(const char *path, const struct tl_event *id, struct buf *why)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct sigaction sa;
	struct stat sb, after;
	size_t mark = why->len;
	void *p;
	volatile int r; /* set between sigsetjmp and a SIGBUS: volatile, as C requires */

	if (fd < 0)
		return err_fail(why, "cannot be read to look for system calls:"), -1;
	if (!sc_is_id(fd, id, &sb) || sb.st_size <= 0 || (uint64_t)sb.st_size > SIZE_MAX) {
		close(fd);
		return err_fail(why, "changed since the command ran it"), -1;
	}
	p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		close(fd);
		return err_fail(why, "cannot be mapped to look for system calls:"), -1;
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = sc_bus;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sc_bus_thread = pthread_self();
	if (sigsetjmp(sc_bus_env, 1) == 0) {
		sigaction(SIGBUS, &sa, &sc_bus_old);
		sc_bus_armed = 1;
		if (syscan_mapped_hook)
			syscan_mapped_hook(path);
		r = sc_image(p, (size_t)sb.st_size, fd, why);
		if (!sc_short && !sc_is_id(fd, id, &after))
			sc_short = -1;
	} else {
		sc_short = -1; /* SIGBUS: the file lost bytes under the scan */
	}
	sc_bus_armed = 0;
	sigaction(SIGBUS, &sc_bus_old, NULL);
	if (sc_short) {
		why->len = mark; /* a reason half written by the scan goes */
		errno = sc_short > 0 ? sc_short : 0;
		err_fail(why, sc_short > 0 ? "cannot be read to look for system calls:"
					   : "changed while it was read");
		r = -1;
	}
	munmap(p, (size_t)sb.st_size);
	close(fd);
	return r;
}

int syscan_object(const char *path, const struct tl_event *id, struct buf *why)
{
	struct buf reason = BUF_INIT;
	struct sc_slot *s;
	int r, sub;

	pthread_mutex_lock(&sc_lock);
	s = sc_slot(id);
	if (!sc_slot_is(s, id)) {
		sub = sc_store();
		if (sub < 0 || sc_store_get(sub, id) < 0) {
			r = sc_file(path, id, &reason);
			if (r < 0) {
				/* not what the trace saw: judged, not kept */
				pthread_mutex_unlock(&sc_lock);
				if (why)
					buf_add(why, reason.data, reason.len);
				buf_release(&reason);
				return SYSCAN_RAW;
			}
			buf_addch(&reason, 0);
			sc_slot_put(id, r, (char *)reason.data, reason.len - 1);
			if (sub >= 0)
				sc_store_put(sub, id, r, s->reason);
		}
	}
	r = s->result;
	if (r == SYSCAN_RAW && why)
		buf_addstr(why, s->reason);
	pthread_mutex_unlock(&sc_lock);
	buf_release(&reason);
	return r;
}
