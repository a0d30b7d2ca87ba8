/*
 * vfork.c - a real vfork while tracing (x86_64).
 *
 * Why: gcc's driver runs cc1 and as with vfork.  A fork in its place
 * copies the driver's page tables and then takes a copy-on-write fault
 * for every page the driver writes afterwards: about 0.7 ms of CPU per
 * gcc probe, a third of what tracing a probe costs.
 *
 * The hazard: a vfork child shares its parent's memory until it execs
 * or exits, and the tracer's bookkeeping in the child (its pid, FORK,
 * EXEC and BYE events, a log moved by dup2, the event ring) writes the
 * tracer's own variables.  So, for a single-threaded process only (no
 * other thread can see those variables change), the parent takes a
 * snapshot of every writable byte of this library (its data segment
 * after RELRO, and this thread's thread-local variables) before the
 * vfork, and puts it back when it resumes (snap.h: the bss pages the
 * process never touched are left out, and zeroed again if the child
 * stored to them).  The child's events are in the log; its footprints in
 * our memory are gone.  The program's own
 * memory is the program's business, as with any vfork.  One footprint
 * stays: an environment too large for the stack that the child's exec
 * hook mapped (env.c) is left mapped in the parent, unnamed.
 *
 * A process with threads, one whose snapshot area cannot be set up, or
 * a vfork child (its snapshot would overwrite its parent's) gets the
 * fork of hooks_exec.c instead; an untraced process gets the
 * C library's vfork, untouched.
 *
 * The hook (assembly, below) keeps the program's return address in a
 * register across the system call, as the C library's vfork does: the
 * child's return writes over the stack the parent returns through.
 * Not for a process with shadow stacks enabled (glibc 2.36 enables
 * none).
 */
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/single_threaded.h>
#include <unistd.h>

#include "trace/snap.h"
#include "trace/trace.h"

/* This library's writable bytes past RELRO, and the snapshot's home. */
static struct {
	unsigned char *data;
	size_t size;
	uintptr_t file_end;    /* where the part the file backs ends */
	struct tr_snap snap;   /* its save area mmap'ed: not part of what it saves */
	int ready;             /* 1 set up, -1 cannot be */
	int in_child;          /* 1 in a vfork child, until its parent puts back 0 */
} tr_vf;

static int tr_vf_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t me = (uintptr_t)arg, lo = 0, hi = 0, relro = 0, filed = 0;
	int mine = 0;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + p->p_vaddr;

		if (p->p_type == PT_LOAD && (p->p_flags & PF_W) && me >= a && me < a + p->p_memsz) {
			mine = 1;
			lo = a;
			hi = a + p->p_memsz;
			filed = a + p->p_filesz;
		} else if (p->p_type == PT_GNU_RELRO) {
			relro = a + p->p_memsz;
		}
	}
	if (!mine)
		return 0;
	/* RELRO is read-only once relocated, and never changes */
	if (relro > lo && relro < hi)
		lo = relro;
	tr_vf.data = (unsigned char *)lo;
	tr_vf.size = hi - lo;
	tr_vf.file_end = filed;
	return 1;
}

static int tr_vf_setup(void)
{
	size_t need;
	void *m;

	if (tr_vf.ready)
		return tr_vf.ready;
	tr_vf.ready = -1;
	if (!dl_iterate_phdr(tr_vf_cb, (void *)&tr_vf) || !tr_vf.size)
		return -1;
	need = tr_vf.size + tr_emit_tls_size();
	m = mmap(NULL, need, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -1;
	tr_snap_init(&tr_vf.snap, tr_vf.data, tr_vf.size, tr_vf.file_end, m);
	tr_vf.ready = 1;
	return 1;
}

static pid_t tr_vf_parent_pid;

/*
 * /proc/self/pagemap for one look, or -1 (snap.h copes).  Opened for each
 * look, so that the child finds the descriptors its program left it.
 */
static int tr_vf_pagemap(void)
{
	int saved = errno, fd = TR_CALL(openat)(AT_FDCWD, "/proc/self/pagemap", O_RDONLY | O_CLOEXEC);

	errno = saved;
	return fd;
}

static void tr_vf_pagemap_done(int fd)
{
	int saved = errno;

	if (fd >= 0)
		TR_CALL(close)(fd);
	errno = saved;
}

/*
 * Called by the hook with the program's return address on the stack:
 * where to jump (the C library's vfork, or the traced fork), or NULL
 * for a real vfork with the snapshot taken.
 */
void *tr_vfork_pick(void) __attribute__((visibility("hidden"), used));
void *tr_vfork_pick(void)
{
	struct tr_guard g;
	int ok;

	if (!tr_active())
		return tr_vfork_real();
	/*
	 * A vfork child's own vfork would take its snapshot into the save
	 * area its parent restores from: the parent would come back with
	 * the child's state.  It forks instead.
	 */
	if (!__libc_single_threaded || tr_vf.in_child)
		return (void *)tr_vfork_traced;
	tr_lock(&g);
	ok = tr_vf_setup() > 0;
	if (ok) {
		tr_vf_parent_pid = tr_before_fork();
		/* what the child's exec and _exit go to, resolved here, not in the child */
		tr_exec_warm();
	}
	tr_unlock(&g);
	if (!ok)
		return (void *)tr_vfork_traced;
	/* last: the snapshot is of the state the parent resumes with */
	{
		int fd = tr_vf_pagemap();

		tr_snap_take(&tr_vf.snap, fd);
		tr_vf_pagemap_done(fd);
	}
	tr_emit_tls_save(tr_vf.snap.save + tr_vf.size);
	return NULL;
}

/* In the child, on the parent's memory: FORK, as a fork child writes it. */
void tr_vfork_child(void) __attribute__((visibility("hidden"), used));
void tr_vfork_child(void)
{
	struct tr_guard g;

	tr_lock(&g);
	tr_after_fork_child(tr_vf_parent_pid);
	tr_vf.in_child = 1;
	tr_unlock(&g);
}

/*
 * In the parent once the child has exec'ed or exited (or the vfork
 * failed: r is then -errno): our memory as it was before.
 */
long tr_vfork_parent(long r) __attribute__((visibility("hidden"), used));
long tr_vfork_parent(long r)
{
	/* the snapshot holds tr_vf too, with the same values */
	int fd = tr_vf_pagemap();

	tr_snap_restore(&tr_vf.snap, fd);
	tr_vf_pagemap_done(fd);
	tr_emit_tls_restore(tr_vf.snap.save + tr_vf.size);
	if (r < 0 && r > -4096) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

/*
 * vfork and __vfork (glibc exports both).  After the pick: the return
 * address is popped into %rdi (the child's calls must not find it on
 * the stack they share), vfork(2), and pushed back in each process;
 * calls keep the stack 16-byte aligned.
 */
__asm__(".text\n"
	".globl vfork\n"
	".type vfork, @function\n"
	".globl __vfork\n"
	".type __vfork, @function\n"
	"vfork:\n"
	"__vfork:\n"
	"	.cfi_startproc\n"
	"	subq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	call tr_vfork_pick\n"
	"	addq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	testq %rax, %rax\n"
	"	jz 1f\n"
	"	jmp *%rax\n"
	"1:\n"
	"	popq %rdi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	.cfi_register %rip, %rdi\n"
	"	movl $58, %eax\n"              /* SYS_vfork */
	"	syscall\n"
	"	pushq %rdi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	.cfi_rel_offset %rip, 0\n"
	"	subq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	testq %rax, %rax\n"
	"	jnz 2f\n"
	"	call tr_vfork_child\n"
	"	addq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	xorl %eax, %eax\n"
	"	ret\n"
	"2:\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	movq %rax, %rdi\n"
	"	call tr_vfork_parent\n"
	"	addq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size vfork, .-vfork\n"
	".size __vfork, .-__vfork\n");
