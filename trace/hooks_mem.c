/*
 * hooks_mem.c - memory the program maps: code it makes at run time, and
 * files it shares writably.
 *
 * The runner looks for system-call instructions in every object the
 * dynamic loader mapped (lib/syscan.h).  Code that appears any other
 * way was never looked at, and may enter the kernel by itself (a JIT, a
 * loader of its own, a memfd): OPAQUE when the program
 *  - maps anonymous memory executable (mmap, mmap64 with PROT_EXEC),
 *  - maps a file executable itself (the loader's own mappings, of
 *    dlopen too, go through its internal mmap, never through these
 *    exported names: t/unit/test-trace.c checks a dlopen stays pure),
 *  - makes memory executable (mprotect, pkey_mprotect with PROT_EXEC;
 *    the loader's RELRO and stack changes are internal too).
 * And a regular file mapped MAP_SHARED with PROT_WRITE is OPAQUE: its
 * writes go to the file with no call the tracer could see.
 *
 * The tracer's own mappings (env.c's arena, vfork.c's save area,
 * objects.c's view of ld.so.cache) are made under its guard and are
 * neither executable nor shared: they pass through.  A hooked call under
 * the guard that would count (a signal handler's) is tr_reentered().
 */
#include <sys/mman.h>

#include "trace/trace.h"

/* Does this mapping need a word?  1: executable, 2: a file shared writably. */
static int tr_map_kind(int prot, int flags, int fd)
{
	struct stat st;

	if (prot & PROT_EXEC)
		return 1;
	if ((flags & MAP_TYPE) != MAP_PRIVATE && (prot & PROT_WRITE) && !(flags & MAP_ANONYMOUS) &&
	    fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		return 2;
	return 0;
}

/* After a mapping succeeded; errno is the caller's again afterwards. */
static void tr_mapped(int prot, int flags, int fd)
{
	struct tr_guard g;
	char path[PATH_MAX];
	int kind;

	if (__builtin_expect(tr_busy, 0)) {
		/* ours pass; anything else under the guard was not seen */
		int saved = errno;

		if (tr_map_kind(prot, flags, fd))
			tr_reentered();
		errno = saved;
		return;
	}
	if (!tr_active())
		return;
	tr_lock(&g);
	kind = tr_map_kind(prot, flags, fd);
	if (kind == 1 && (flags & MAP_ANONYMOUS))
		tr_opaque("code made at run time (executable anonymous memory)", NULL);
	else if (kind == 1)
		tr_opaque("a file mapped as code by the program, not the loader:",
			  tr_fd_path(fd, path, sizeof path) == 0 ? path : "(unnamed)");
	else if (kind == 2)
		tr_opaque("a file mapped shared and writable:",
			  tr_fd_path(fd, path, sizeof path) == 0 ? path : "(unnamed)");
	tr_unlock(&g);
}

static void tr_protected(int prot)
{
	struct tr_guard g;

	if (!(prot & PROT_EXEC))
		return;
	if (__builtin_expect(tr_busy, 0)) {
		tr_reentered();
		return;
	}
	if (!tr_active())
		return;
	tr_lock(&g);
	tr_opaque("code made at run time (memory made executable)", NULL);
	tr_unlock(&g);
}

TR_HOOK void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *r = TR_CALL(mmap)(addr, len, prot, flags, fd, off);

	if (r != MAP_FAILED && (prot & (PROT_EXEC | PROT_WRITE)))
		tr_mapped(prot, flags, fd);
	return r;
}

TR_HOOK void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *r = TR_CALL(mmap64)(addr, len, prot, flags, fd, off);

	if (r != MAP_FAILED && (prot & (PROT_EXEC | PROT_WRITE)))
		tr_mapped(prot, flags, fd);
	return r;
}

TR_HOOK int mprotect(void *addr, size_t len, int prot)
{
	int r = TR_CALL(mprotect)(addr, len, prot);

	if (r == 0)
		tr_protected(prot);
	return r;
}

TR_HOOK int pkey_mprotect(void *addr, size_t len, int prot, int pkey)
{
	int r = TR_CALL(pkey_mprotect)(addr, len, prot, pkey);

	if (r == 0)
		tr_protected(prot);
	return r;
}
