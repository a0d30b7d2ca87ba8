/*
 * Unit tests for lib/syscan.c: system-call instructions in ELF objects.
 * The objects are crafted here, byte by byte: one PT_LOAD (file offset =
 * address), code at CODE, an .eh_frame_hdr table and one CIE with an
 * FDE per function, so that each case says exactly which bytes are an
 * instruction and which are a piece of one.  Then real files: the
 * compiler, the shells and tools the Kbuild probes run must stay clean,
 * and the C library must not (it is what the tracer's exemption is for).
 *
 * `test-syscan.t --write-corpus DIR` writes fuzz/corpus/syscan's seeds.
 */
#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/syscan.h"
#include "corpus.h"
#include "tap.h"

#define CODE 0x400
#define HDR 0x800
#define FRAME 0x900
#define SIZE 0x1000

struct fn {
	unsigned start, len;
};

static unsigned char img[SIZE];

static void put32(unsigned off, uint32_t v)
{
	memcpy(img + off, &v, 4);
}

/* An x86-64 shared object's header, its phnum program headers right after it. */
static void elf_header(Elf64_Ehdr *eh, int phnum)
{
	memset(eh, 0, sizeof *eh);
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = sizeof *eh;
	eh->e_ehsize = sizeof *eh;
	eh->e_phentsize = sizeof(Elf64_Phdr);
	eh->e_phnum = (Elf64_Half)phnum;
}

/*
 * An object whose code is `code` (n bytes at CODE) with one function per
 * fns entry (offsets into code), and a Go note when go is set.
 */
static size_t craft(const unsigned char *code, size_t n, const struct fn *fns, int nfn, int go)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph[3] = { { 0 } };
	unsigned off = FRAME, cie = FRAME;

	memset(img, 0, sizeof img);
	elf_header(&eh, go ? 3 : 2);
	ph[0].p_type = PT_LOAD;
	ph[0].p_flags = PF_R | PF_X;
	ph[0].p_filesz = ph[0].p_memsz = SIZE;
	ph[1].p_type = PT_GNU_EH_FRAME;
	ph[1].p_offset = ph[1].p_vaddr = HDR;
	ph[1].p_filesz = ph[1].p_memsz = 8 + 8 * (unsigned)nfn;
	ph[2].p_type = PT_NOTE;
	ph[2].p_offset = ph[2].p_vaddr = 0x300;
	ph[2].p_filesz = 16;
	memcpy(img, &eh, sizeof eh);
	memcpy(img + sizeof eh, ph, sizeof ph);
	if (go) { /* namesz 3, descsz 0, type 4, "Go\0" */
		put32(0x300, 3);
		put32(0x304, 0);
		put32(0x308, 4);
		memcpy(img + 0x30c, "Go", 3);
	}
	memcpy(img + CODE, code, n);
	/* CIE: "zR", code align 1, data align -8, ra 16, R = pcrel sdata4 */
	{
		static const unsigned char body[] = { 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b, 0, 0, 0 };

		put32(off, sizeof body);
		memcpy(img + off + 4, body, sizeof body);
		off += 4 + sizeof body;
	}
	img[HDR] = 1;
	img[HDR + 1] = 0x1b;
	img[HDR + 2] = 0x03;
	img[HDR + 3] = 0x3b;
	put32(HDR + 4, (uint32_t)(FRAME - (HDR + 4)));
	put32(HDR + 8, (uint32_t)nfn);
	for (int i = 0; i < nfn; i++) {
		/* FDE: length, CIE pointer, pc_begin (pcrel), pc_range, aug length 0 */
		put32(off, 20);
		put32(off + 4, off + 4 - cie);
		put32(off + 8, (uint32_t)(CODE + fns[i].start - (off + 8)));
		put32(off + 12, fns[i].len);
		put32(HDR + 12 + 8 * (unsigned)i, (uint32_t)(CODE + fns[i].start - HDR));
		put32(HDR + 16 + 8 * (unsigned)i, off - HDR);
		off += 24;
	}
	return SIZE;
}

static int scan(const unsigned char *code, size_t n, const struct fn *fns, int nfn, int go)
{
	return syscan_image(img, craft(code, n, fns, nfn, go), fresh_why());
}

static void crafted(int decoder)
{
	/* mov $0x50f,%eax; ret: "0f 05" inside an immediate */
	static const unsigned char imm[] = { 0xb8, 0x0f, 0x05, 0x00, 0x00, 0xc3 };
	/* lea 0x80cd(%rax),%rax; ret: "cd 80" inside a displacement */
	static const unsigned char disp[] = { 0x48, 0x8d, 0x80, 0xcd, 0x80, 0x00, 0x00, 0xc3 };
	/* mov $0,%eax; syscall; ret */
	static const unsigned char sys[] = { 0xb8, 0, 0, 0, 0, 0x0f, 0x05, 0xc3 };
	/* nop; int $0x80; ret */
	static const unsigned char int80[] = { 0x90, 0xcd, 0x80, 0xc3 };
	/* sysenter; ret */
	static const unsigned char sysenter[] = { 0x0f, 0x34, 0xc3 };
	/* two functions: the immediate, then a real syscall in the second */
	static const unsigned char two[] = { 0xb8, 0x0f, 0x05, 0x00, 0x00, 0xc3, 0x0f, 0x05, 0xc3 };
	static const struct fn whole[] = { { 0, 16 } };
	static const struct fn split[] = { { 0, 6 }, { 6, 3 } };
	static const struct fn first[] = { { 0, 6 } };
	static const unsigned char clean[] = { 0x31, 0xc0, 0xc3 };
	/* movabs $0x800000cd050f...,%rax; ret: "0f 05" and "cd 80" in one immediate */
	static const unsigned char both[] = { 0x48, 0xb8, 0x0f, 0x05, 0xcd, 0x80, 0, 0, 0, 0, 0xc3 };

	is_int(scan(clean, sizeof clean, whole, 1, 0), SYSCAN_CLEAN,
	       "an object without system-call bytes is clean");
	is_int(scan(clean, sizeof clean, whole, 1, 1), SYSCAN_RAW,
	       "a Go build-id note: raw, whatever its bytes");
	ok(why_text() && strstr(why_text(), "Go"), "... and the reason says Go (%s)", why_text());
	is_int(scan(sys, sizeof sys, NULL, 0, 0), SYSCAN_RAW,
	       "a syscall in code without an unwind entry (decoded from the segment's start)");
	is_int(scan(two, sizeof two, first, 1, 0), SYSCAN_RAW,
	       "a syscall past the end of the function before it (decoded from that end)");
	if (!decoder) {
		printf("ok %d # skip libcapstone cannot be loaded: nothing to confirm with\n",
		       ++tap_n);
		is_int(scan(imm, sizeof imm, whole, 1, 0), SYSCAN_RAW,
		       "without a decoder, a candidate counts as real");
		return;
	}
	is_int(scan(imm, sizeof imm, whole, 1, 0), SYSCAN_CLEAN,
	       "0f 05 inside an immediate is not a system call");
	is_int(scan(disp, sizeof disp, whole, 1, 0), SYSCAN_CLEAN,
	       "cd 80 inside a displacement is not a system call");
	is_int(scan(sys, sizeof sys, whole, 1, 0), SYSCAN_RAW, "a syscall instruction is one");
	ok(why_text() && strstr(why_text(), "0x405"), "... and the reason says where (%s)",
	   why_text());
	is_int(scan(int80, sizeof int80, whole, 1, 0), SYSCAN_RAW, "int $0x80 is one");
	is_int(scan(sysenter, sizeof sysenter, whole, 1, 0), SYSCAN_RAW, "sysenter is one");
	is_int(scan(two, sizeof two, split, 2, 0), SYSCAN_RAW,
	       "a syscall in the second function, after a false pair in the first");
	is_int(scan(imm, sizeof imm, NULL, 0, 0), SYSCAN_CLEAN,
	       "a false pair in code without an unwind entry (crtstuff's) is not one");
	is_int(scan(two, sizeof two, whole, 1, 0), SYSCAN_RAW,
	       "one function: a false pair, then a real syscall (decoding goes on)");
	is_int(scan(both, sizeof both, whole, 1, 0), SYSCAN_CLEAN,
	       "two false pairs inside one instruction, then a ret");
}

/* Each broken structure turns a clean object raw (and nothing faults). */
static void malformed(int decoder)
{
	static const unsigned char sys[] = { 0xb8, 0x0f, 0x05, 0x00, 0x00, 0xc3 };
	static const struct fn whole[] = { { 0, 16 } };
	size_t n = craft(sys, sizeof sys, whole, 1, 0);
	Elf64_Ehdr eh;

	is_int(syscan_image(img, n, NULL), decoder ? SYSCAN_CLEAN : SYSCAN_RAW,
	       "the object the next cases break");

	is_int(syscan_image("#!/bin/sh\n", 10, NULL), SYSCAN_RAW, "not ELF: raw");
	is_int(syscan_image(img, 20, NULL), SYSCAN_RAW, "a truncated header: raw");
	memcpy(&eh, img, sizeof eh);
	eh.e_phoff = SIZE - 8;
	memcpy(img, &eh, sizeof eh);
	is_int(syscan_image(img, n, NULL), SYSCAN_RAW, "program headers past the end: raw");
	craft(sys, sizeof sys, whole, 1, 0);
	put32(HDR + 8, 0x7fffffff);
	is_int(syscan_image(img, n, NULL), decoder ? SYSCAN_CLEAN : SYSCAN_RAW,
	       "an unwind table longer than the file: ignored (decoded from the start)");
	craft(sys, sizeof sys, whole, 1, 0);
	put32(FRAME + 24, 0x7fffffff);
	is_int(syscan_image(img, n, NULL), SYSCAN_RAW, "an FDE pointing at no CIE: raw");
}

static void entries(void)
{
	struct tl_event id = { .dev = 1, .ino = 2, .size = 3, .mtime_ns = 4, .ctime_ns = 5 };
	struct tl_event other = id;
	struct buf b = BUF_INIT, reason = BUF_INIT;
	int result = -1;

	syscan_entry_encode(&b, &id, SYSCAN_RAW, "a syscall at 0x1");
	ok(syscan_entry_decode(b.data, b.len, &id, &result, &reason) == 0 &&
	   result == SYSCAN_RAW && reason.len == 16, "an entry reads back");
	other.ctime_ns = 6;
	ok(syscan_entry_decode(b.data, b.len, &other, &result, &reason) < 0,
	   "an entry for another identity is refused");
	ok(syscan_entry_decode(b.data, b.len - 1, &id, &result, &reason) < 0,
	   "a short entry is refused");
	b.data[0] ^= 1;
	ok(syscan_entry_decode(b.data, b.len, &id, &result, &reason) < 0,
	   "a bad magic is refused");
	buf_reset(&b);
	syscan_entry_encode(&b, &id, SYSCAN_CLEAN, "why?");
	ok(syscan_entry_decode(b.data, b.len, &id, &result, &reason) < 0,
	   "a clean entry with a reason is refused");
	buf_release(&b);
	buf_release(&reason);
}

static int ident(const char *path, struct tl_event *id)
{
	struct stat sb;

	memset(id, 0, sizeof *id);
	if (stat(path, &sb))
		return -1;
	id->kind = TL_FILE;
	id->dev = sb.st_dev;
	id->ino = sb.st_ino;
	id->size = sb.st_size;
	id->mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
	id->ctime_ns = (int64_t)sb.st_ctim.tv_sec * 1000000000 + sb.st_ctim.tv_nsec;
	return 0;
}

/* The programs a compile probe runs stay clean; the C library does not. */
static void real_files(int decoder)
{
	static const char *const clean[] = {
		"/bin/sh", "/bin/bash", "/bin/grep", "/bin/sed", "/usr/bin/make", "/usr/bin/as",
		"/usr/bin/ld", "/usr/bin/gcc", NULL
	};
	char cc1[4096];
	FILE *f = popen("gcc -print-prog-name=cc1 2>/dev/null", "r");
	struct tl_event id;

	if (!f || !fgets(cc1, sizeof cc1, f))
		cc1[0] = 0;
	if (f)
		pclose(f);
	cc1[strcspn(cc1, "\n")] = 0;
	if (!decoder) {
		printf("ok %d # skip libcapstone cannot be loaded: real programs would be raw\n",
		       ++tap_n);
		return;
	}
	for (int i = 0; clean[i]; i++) {
		if (ident(clean[i], &id)) {
			printf("ok %d # skip %s is not installed\n", ++tap_n, clean[i]);
			continue;
		}
		is_int(syscan_object(clean[i], &id, fresh_why()), SYSCAN_CLEAN, clean[i]);
	}
	if (cc1[0] == '/' && !ident(cc1, &id))
		is_int(syscan_object(cc1, &id, fresh_why()), SYSCAN_CLEAN, "cc1");
	else
		printf("ok %d # skip no cc1\n", ++tap_n);
	if (!ident("/lib/x86_64-linux-gnu/libc.so.6", &id))
		is_int(syscan_object("/lib/x86_64-linux-gnu/libc.so.6", &id, fresh_why()),
		       SYSCAN_RAW, "the C library has its own system calls");
	else
		printf("ok %d # skip no /lib/x86_64-linux-gnu/libc.so.6\n", ++tap_n);
}

/* n bytes at p written to path; its identity in id. */
static void write_file(const char *path, const void *p, size_t n, struct tl_event *id)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || write(fd, p, n) != (ssize_t)n || close(fd) || ident(path, id))
		abort();
}

/* The crafted object in img (SIZE bytes) written to path; its identity in id. */
static void write_img(const char *path, struct tl_event *id)
{
	write_file(path, img, SIZE, id);
}

/* The caches: a file judged once; another identity is judged again. */
static void cached(const char *dir)
{
	static const unsigned char sys[] = { 0x0f, 0x05, 0xc3 };
	char path[4096], entry[4096];
	struct tl_event id, stale;

	snprintf(path, sizeof path, "%s/obj", dir);
	craft(sys, sizeof sys, NULL, 0, 0);
	write_img(path, &id);
	stale = id;
	stale.size++;
	is_int(syscan_object(path, &stale, fresh_why()), SYSCAN_RAW,
	       "a file that no longer has the identity the trace saw: raw");
	ok(why_text() && strstr(why_text(), "changed"), "... because it changed (%s)", why_text());
	is_int(syscan_object(path, &id, fresh_why()), SYSCAN_RAW, "a raw object on disk");
	snprintf(entry, sizeof entry, "%s/cache/asynccompile/syscan", dir);
	ok(access(entry, F_OK) == 0, "its result is kept in the store");
	/* the memory cache answers now, even after the file is gone */
	unlink(path);
	is_int(syscan_object(path, &id, fresh_why()), SYSCAN_RAW, "the memory cache answers");
	ok(why_text() && strstr(why_text(), "0x400"), "... with the reason (%s)", why_text());
}

/* A scan of path during which hook changes the file: raw, for one reason. */
static void cut_during(const char *path, const struct tl_event *id, void (*hook)(const char *),
		       const char *what)
{
	syscan_mapped_hook = hook;
	is_int(syscan_object(path, id, fresh_why()), SYSCAN_RAW, what);
	syscan_mapped_hook = NULL;
	ok(why_text() && !strcmp(why_text(), "changed while it was read"),
	   "... with one reason (%s)", why_text());
	/* not kept in memory either: the same identity is judged again, and the file differs */
	syscan_object(path, id, fresh_why());
	ok(why_text() && strstr(why_text(), "changed since"),
	   "... and not remembered: asked again, the file is looked at (%s)", why_text());
}

/* the hook: the file is cut short once mapped, before a byte is read */
static void cut_short(const char *path)
{
	if (truncate(path, 0) != 0)
		abort();
}

/*
 * A file cut shorter while the scan has it mapped (a traced command may
 * do that while the runner scans ahead, lib/run.c): the scan ends with
 * the file judged changed, and this process lives on with its SIGBUS
 * action as it was.
 */
static void cut_while_read(const char *dir)
{
	static const unsigned char code[] = { 0x90, 0xc3 };
	char path[4096];
	struct tl_event id;
	struct sigaction before, after;

	snprintf(path, sizeof path, "%s/cut", dir);
	craft(code, sizeof code, NULL, 0, 0);
	write_img(path, &id);
	sigaction(SIGBUS, NULL, &before);
	cut_during(path, &id, cut_short,
		   "a file cut short while it is scanned: raw, and the process lives");
	sigaction(SIGBUS, NULL, &after);
	ok(before.sa_handler == after.sa_handler && before.sa_flags == after.sa_flags,
	   "... and SIGBUS's action is back as it was");
	/* not kept: the same identity is judged again, whole this time */
	write_img(path, &id);
	is_int(syscan_object(path, &id, fresh_why()), SYSCAN_CLEAN,
	       "the file whole again: judged afresh, clean");
}

/*
 * An object of one code segment at SEAM_CODE, n bytes, all instructions
 * that hold no candidate (10-byte movabs, then nops), but for syscall
 * ("0f 05") at each offset in at (file offsets), each on an instruction
 * boundary.  No unwind table: decoding starts at the segment.
 */
#define SEAM_CODE 0x1000
static unsigned char *seam_img(size_t n, const size_t *at, int nat)
{
	static const unsigned char movabs[10] = { 0x48, 0xb8 };
	unsigned char *p = calloc(1, SEAM_CODE + n);
	Elf64_Ehdr eh;
	Elf64_Phdr ph = { 0 };
	size_t i = SEAM_CODE;

	if (!p)
		abort();
	elf_header(&eh, 1);
	ph.p_type = PT_LOAD;
	ph.p_flags = PF_R | PF_X;
	ph.p_offset = ph.p_vaddr = SEAM_CODE;
	ph.p_filesz = ph.p_memsz = n;
	memcpy(p, &eh, sizeof eh);
	memcpy(p + sizeof eh, &ph, sizeof ph);
	for (int k = 0; k <= nat; k++) {
		size_t stop = k < nat ? at[k] : SEAM_CODE + n;

		for (; i + sizeof movabs <= stop; i += sizeof movabs)
			memcpy(p + i, movabs, sizeof movabs);
		memset(p + i, 0x90, stop - i);
		i = stop;
		if (k < nat) {
			p[i] = 0x0f;
			p[i + 1] = 0x05;
			i += 2;
		}
	}
	return p;
}

/*
 * A file's pair pass reads it a chunk at a time (SYSCAN_READ_CHUNK): a
 * pair across a seam, or in a segment's last two bytes, is found there,
 * and judged as the same bytes in memory are.
 */
static void seams(const char *dir, int decoder)
{
	const size_t n = 2 * SYSCAN_READ_CHUNK + 4096;
	/* reads of a chunk each from the segment's start: a pair at k * CHUNK - 1 straddles */
	const size_t seam1 = SEAM_CODE + SYSCAN_READ_CHUNK - 1;
	const size_t seam2 = SEAM_CODE + 2 * SYSCAN_READ_CHUNK - 1;
	const struct {
		const char *what;
		size_t at;
	} cases[] = {
		{ "a pair across the first read's seam", seam1 },
		{ "a pair across the second read's seam", seam2 },
		{ "a pair in the segment's last two bytes", SEAM_CODE + n - 2 },
		{ "a pair just before the first seam", seam1 - 1 },
	};

	for (size_t c = 0; c <= sizeof cases / sizeof cases[0]; c++) {
		int none = c == sizeof cases / sizeof cases[0];
		unsigned char *p = seam_img(n, none ? NULL : &cases[c].at, none ? 0 : 1);
		char path[4096], where[64];
		struct tl_event id;
		int mem;

		snprintf(path, sizeof path, "%s/seam%zu", dir, c);
		write_file(path, p, SEAM_CODE + n, &id);
		mem = syscan_image(p, SEAM_CODE + n, fresh_why());
		if (none) {
			is_int(syscan_object(path, &id, fresh_why()), SYSCAN_CLEAN,
			       "a large object with no pair, read in chunks: clean");
			is_int(mem, SYSCAN_CLEAN, "... and in memory");
		} else {
			is_int(syscan_object(path, &id, fresh_why()), SYSCAN_RAW, cases[c].what);
			snprintf(where, sizeof where, "0x%zx", cases[c].at);
			if (decoder)
				ok(why_text() && strstr(why_text(), where), "... found where it is (%s)",
				   why_text());
			else
				ok(why_text() && strstr(why_text(), "no decoder"),
				   "... a candidate without a decoder (%s)", why_text());
			is_int(mem, SYSCAN_RAW, "... and in memory");
		}
		free(p);
	}
}

/* How many entries a store directory holds (-1: none). */
static int entries_in(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

/* the hook: the file keeps its headers and loses its code once mapped */
static void cut_code(const char *path)
{
	if (truncate(path, SEAM_CODE + 100) != 0)
		abort();
}

/* the hook: the file grows by a byte once mapped (a rewrite in place) */
static void grow(const char *path)
{
	int fd = open(path, O_WRONLY | O_APPEND);

	if (fd < 0 || write(fd, "", 1) != 1 || close(fd))
		abort();
}

/*
 * A file written to while it is scanned: the bytes judged may be neither
 * the old ones nor the new, so raw, and not kept.
 */
static void written_while_read(const char *dir)
{
	char path[4096];
	struct tl_event id;

	snprintf(path, sizeof path, "%s/grown", dir);
	craft((const unsigned char *)"\x90\xc3", 2, NULL, 0, 0);
	write_img(path, &id);
	cut_during(path, &id, grow, "a file written to while it is scanned: raw");
}

/*
 * A file that loses its code while the pair pass reads it (no page of
 * the mapping past the new end is touched: the read comes back short):
 * raw for the same reason as a SIGBUS, and not kept.
 */
static void cut_while_paired(const char *dir)
{
	const size_t n = SYSCAN_READ_CHUNK + 4096;
	unsigned char *p = seam_img(n, NULL, 0);
	char path[4096], store[4096];
	struct tl_event id;
	int before;

	snprintf(path, sizeof path, "%s/cutcode", dir);
	snprintf(store, sizeof store, "%s/cache/asynccompile/syscan", dir);
	write_file(path, p, SEAM_CODE + n, &id);
	before = entries_in(store);
	cut_during(path, &id, cut_code, "a file whose code goes while the pairs are read: raw");
	is_int(entries_in(store), before, "... and not kept in the store");
	free(p);
}

/*
 * More candidates than a scan confirms (100,000), reached in a later read
 * than the first: "too many", from the file and from memory alike, and
 * nothing written past the room for them (ASan, `make check-asan`).
 * Exactly that many, the last across a seam, is judged as usual.
 */
static void budget(const char *dir)
{
	const size_t n = 3 * SYSCAN_READ_CHUNK;
	const struct {
		const char *what;
		size_t per[3]; /* pairs from the start of each read's span */
		size_t seam;   /* and one more across the first seam (0: none) */
	} cases[] = {
		{ "90,000 + 20,000 + 1,000 pairs in three reads: too many", { 90000, 20000, 1000 }, 0 },
		{ "exactly 100,000 pairs, the last across a seam: judged", { 99999, 0, 0 }, 1 },
	};

	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		size_t room = cases[c].per[0] + cases[c].per[1] + cases[c].per[2] + 1, nat = 0;
		size_t *at = malloc(room * sizeof *at);
		unsigned char *p;
		char path[4096];
		struct tl_event id;
		int mem;

		if (!at)
			abort();
		for (int r = 0; r < 3; r++)
			for (size_t k = 0; k < cases[c].per[r]; k++)
				at[nat++] = SEAM_CODE + (size_t)r * SYSCAN_READ_CHUNK + 2 * k;
		if (cases[c].seam)
			at[nat++] = SEAM_CODE + SYSCAN_READ_CHUNK - 1;
		p = seam_img(n, at, (int)nat);
		snprintf(path, sizeof path, "%s/budget%zu", dir, c);
		write_file(path, p, SEAM_CODE + n, &id);
		is_int(syscan_object(path, &id, fresh_why()), SYSCAN_RAW, cases[c].what);
		if (cases[c].seam)
			ok(why_text() && !strstr(why_text(), "too many"), "... on its candidates (%s)",
			   why_text());
		else
			ok(why_text() && strstr(why_text(), "too many"), "... (%s)", why_text());
		mem = syscan_image(p, SEAM_CODE + n, fresh_why());
		is_int(mem, SYSCAN_RAW, "... and in memory");
		ok(why_text() && !strstr(why_text(), "too many") == !!cases[c].seam,
		   "... for the same reason (%s)", why_text());
		free(p);
		free(at);
	}
}

/* the finder of candidates against the plain definition, every alignment */
static void t_pairs(void)
{
	static unsigned char b[4096 + 64];
	static uint64_t got[4096 + 1], want[4096];
	static const unsigned char lead[] = { 0x0f, 0x0f, 0xcd, 0x0f, 0xcd, 0x05, 0x80 };
	static const unsigned char next[] = { 0x05, 0x34, 0x80, 0x80, 0x05, 0x0f, 0xcd };
	/* each case ends where a page no read may touch begins */
	long pg = sysconf(_SC_PAGESIZE);
	unsigned char *m = mmap(NULL, 3 * (size_t)pg, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char *end;
	unsigned seed = 12345;
	int bad = 0, over = 0, cases = 0;

	if (m == MAP_FAILED || mprotect(m + 2 * pg, (size_t)pg, PROT_NONE))
		abort();
	end = m + 2 * pg;
	for (int round = 0; round < 240; round++) {
		/* every length from 0 to 40, then longer ones */
		size_t n = round <= 40 ? (size_t)round : (size_t)(round * 37 % 4096) + (size_t)(round % 33);
		size_t w = 0, k;
		const unsigned char *p = end - n;

		if (n > 2 * (size_t)pg)
			n = 2 * (size_t)pg, p = m;
		for (size_t i = 0; i < sizeof b; i++) {
			seed = seed * 1103515245u + 12345u;
			/* dense in the bytes that matter, so pairs cross every lane */
			b[i] = (seed >> 16) % 4 ? lead[(seed >> 8) % 7] : next[(seed >> 20) % 7];
		}
		memcpy((unsigned char *)p, b + round % 17, n < sizeof b - 17 ? n : sizeof b - 17);
		for (size_t i = 0; i + 2 <= n; i++) {
			unsigned char x = p[i], y = p[i + 1];

			if ((x == 0x0f && (y == 0x05 || y == 0x34)) || (x == 0xcd && y == 0x80))
				want[w++] = 100 + i;
		}
		got[w] = 0xfeed; /* nothing is written past what is returned */
		k = syscan_pairs(p, n, 100, got, 4096);
		cases++;
		if (k != w || memcmp(got, want, w * sizeof want[0]) || (w < 4096 && got[w] != 0xfeed))
			bad++;
		/* one fewer than there are: says "more", writes no further */
		if (w) {
			got[w - 1] = 0xfeed;
			if (syscan_pairs(p, n, 100, got, w - 1) != w || got[w - 1] != 0xfeed)
				over++;
		}
	}
	munmap(m, 3 * (size_t)pg);
	ok(!bad, "the candidate finder agrees with the definition (%d of %d cases differ)", bad, cases);
	ok(!over, "it says when there are more candidates than room (%d cases wrong)", over);
	ok(syscan_pairs((const unsigned char *)"\x0f", 1, 0, got, 4) == 0 &&
	   syscan_pairs((const unsigned char *)"\x0f\x05", 2, 7, got, 4) == 1 && got[0] == 7,
	   "a pair needs both its bytes in the range");
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/asynccompile-syscan.XXXXXX";
	char cache[4096];
	int decoder = syscan_have_decoder();

	if (argc == 3 && !strcmp(argv[1], "--write-corpus")) {
		static const unsigned char imm[] = { 0xb8, 0x0f, 0x05, 0x00, 0x00, 0xc3, 0x0f, 0x05 };
		static const struct fn fns[] = { { 0, 6 } };
		struct buf b = BUF_INIT;
		struct tl_event id = { .dev = 1 };

		buf_add(&b, img, craft(imm, sizeof imm, fns, 1, 0));
		corpus_file(argv[2], "elf-two-candidates", 0, &b);
		buf_reset(&b);
		syscan_entry_encode(&b, &id, SYSCAN_RAW, "reason");
		corpus_file(argv[2], "entry", 1, &b);
		buf_release(&b);
		return 0;
	}
	if (!mkdtemp(dir))
		return 1;
	/* the store exists (the record makes it): scans are kept there */
	snprintf(cache, sizeof cache, "%s/cache", dir);
	setenv("XDG_CACHE_HOME", cache, 1);
	if (mkdir(cache, 0700))
		return 1;
	snprintf(cache, sizeof cache, "%s/cache/asynccompile", dir);
	if (mkdir(cache, 0700))
		return 1;
	t_pairs();
	crafted(decoder);
	malformed(decoder);
	entries();
	real_files(decoder);
	cached(dir);
	cut_while_read(dir);
	seams(dir, decoder);
	cut_while_paired(dir);
	written_while_read(dir);
	budget(dir);
	snprintf(cache, sizeof cache, "rm -rf '%s'", dir);
	if (system(cache))
		diag("could not remove %s", dir);
	return done_testing();
}
