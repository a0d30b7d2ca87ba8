/*
 * classes.c - the generic hooks: one per function trace/libc.classes
 * calls opaque or impure.  Hundreds of them need no look at their
 * arguments, so each is a few instructions of assembly generated from
 * the list (build/trace-classes.h, made by the Makefile): load the
 * address of the name's record, jump to one shared stub.  The stub saves
 * every register an argument may be in (variadic calls included: rax,
 * xmm0-7), calls tr_classified(), which writes the OPAQUE or IMPURE event
 * under the guard and returns the real function, restores the registers
 * and jumps to it with the program's return address still on the stack:
 * the real function sees the call the program made.  The real function
 * is resolved on first call (dlsym, or dlvsym for a function the C
 * library keeps only for old programs), never at start-up, so the list's
 * length costs a process nothing until it calls one of them.
 *
 * The constructor's check that the C library is the one the list was
 * made for is in preload.c (tr_classes_check, below).
 */
#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <string.h>
#include <unistd.h>

#include "trace/trace.h"

enum { TR_OPAQUE = 0, TR_IMPURE = 1 };

struct tr_class {
	struct tr_real real;
	uint32_t version;    /* in tr_symnames; "": the default version */
	int impure;
	int pid;             /* the process that said so already */
};

/* the records the trampolines name, hidden: reached pc-relatively */
#define TR_CLASS(fn, cls, ver)                                                             \
	__attribute__((visibility("hidden"), used)) struct tr_class tr_class_##fn = {      \
		{ 0, offsetof(struct tr_symnames, class_##fn) },                           \
		offsetof(struct tr_symnames, version_##fn), cls, 0                         \
	};
#include "build/trace-classes.h"
#undef TR_CLASS

static void *tr_class_resolve(struct tr_class *c)
{
	void *p;

	if (!*TR_NAME(c->version))
		return tr_real_resolve(&c->real);
	p = dlvsym(RTLD_NEXT, TR_NAME(c->real.name), TR_NAME(c->version));
	if (!p)
		return tr_real_resolve(&c->real); /* says which and aborts */
	__atomic_store_n(&c->real.fn, p, __ATOMIC_RELEASE);
	return p;
}

/*
 * Called by the stub with the arguments saved; returns the function to
 * jump to.  One event per process and function is enough: the run's
 * verdict is already what the first one made it.
 */
void *tr_classified(struct tr_class *c) __attribute__((visibility("hidden"), used));
void *tr_classified(struct tr_class *c)
{
	int saved = errno;
	void *fn = __atomic_load_n(&c->real.fn, __ATOMIC_ACQUIRE);

	if (!fn)
		fn = tr_class_resolve(c);
	if (tr_active()) {
		int pid = __atomic_load_n(&tr_pid, __ATOMIC_RELAXED);

		if (__atomic_exchange_n(&c->pid, pid, __ATOMIC_RELAXED) != pid) {
			struct tr_guard g;

			tr_lock(&g);
			if (c->impure)
				tr_impure("a call that acts outside the command:", TR_NAME(c->real.name));
			else
				tr_opaque("a call the tracer does not follow:", TR_NAME(c->real.name));
			tr_unlock(&g);
		}
	}
	errno = saved;
	return fn;
}

/*
 * The stub: entered by a jump from a trampoline, r11 = the record, the
 * program's return address on top of the stack (so rsp is 8 past a
 * multiple of 16).  Seven pushes and 128 bytes for xmm0-7 make it a
 * multiple of 16 again for the call.
 */
__asm__(".text\n"
	".type tr_class_enter, @function\n"
	"tr_class_enter:\n"
	"	.cfi_startproc\n"
	"	pushq %rdi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %rsi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %rdx\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %rcx\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %r8\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %r9\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %rax\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	subq $128, %rsp\n"
	"	.cfi_adjust_cfa_offset 128\n"
	"	movdqa %xmm0, 0(%rsp)\n"
	"	movdqa %xmm1, 16(%rsp)\n"
	"	movdqa %xmm2, 32(%rsp)\n"
	"	movdqa %xmm3, 48(%rsp)\n"
	"	movdqa %xmm4, 64(%rsp)\n"
	"	movdqa %xmm5, 80(%rsp)\n"
	"	movdqa %xmm6, 96(%rsp)\n"
	"	movdqa %xmm7, 112(%rsp)\n"
	"	movq %r11, %rdi\n"
	"	call tr_classified\n"
	"	movq %rax, %r11\n"
	"	movdqa 0(%rsp), %xmm0\n"
	"	movdqa 16(%rsp), %xmm1\n"
	"	movdqa 32(%rsp), %xmm2\n"
	"	movdqa 48(%rsp), %xmm3\n"
	"	movdqa 64(%rsp), %xmm4\n"
	"	movdqa 80(%rsp), %xmm5\n"
	"	movdqa 96(%rsp), %xmm6\n"
	"	movdqa 112(%rsp), %xmm7\n"
	"	addq $128, %rsp\n"
	"	.cfi_adjust_cfa_offset -128\n"
	"	popq %rax\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %r9\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %r8\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rcx\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rdx\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rsi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rdi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	jmp *%r11\n"
	"	.cfi_endproc\n"
	".size tr_class_enter, .-tr_class_enter\n");

/* the trampolines: exported under the C library's names */
#define TR_CLASS(fn, cls, ver)                                                             \
	__asm__(".text\n"                                                                  \
		".globl " #fn "\n"                                                         \
		".type " #fn ", @function\n" #fn ":\n"                                     \
		"	.cfi_startproc\n"                                                  \
		"	leaq tr_class_" #fn "(%rip), %r11\n"                               \
		"	jmp tr_class_enter\n"                                              \
		"	.cfi_endproc\n"                                                    \
		".size " #fn ", .-" #fn "\n");
#include "build/trace-classes.h"
#undef TR_CLASS

/*
 * A C library the list was not made for may export functions nobody
 * classified, which would pass as harmless: every run is opaque.  The
 * version is the running library's (gnu_get_libc_version reads it from
 * the library itself, not from the headers this was built with).
 */
void tr_classes_check(void)
{
	const char *v = gnu_get_libc_version();

	if (!v || strcmp(v, TR_LIBC_CLASSIFIED))
		tr_opaque("the C library was not classified (trace/libc.classes is for glibc "
			  TR_LIBC_CLASSIFIED "):", v ? v : "unknown");
}
