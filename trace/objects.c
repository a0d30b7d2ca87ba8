/*
 * objects.c - what the dynamic loader read before the program ran, and
 * what it loads later.  Its lookups happen before any hook can see them,
 * so they are modelled:
 *  - every loaded object that has a path: READ (identity of the file the
 *    path names now); the main program's is in its HELLO;
 *  - /etc/ld.so.cache and /etc/ld.so.preload: READ (present or absent);
 *  - every directory the loader may search for a library: LIST.  These
 *    are LD_LIBRARY_PATH's entries, each object's DT_RPATH and DT_RUNPATH
 *    entries ($ORIGIN substituted; any other $TOKEN is opaque), and the
 *    system directories.  A library appearing in one of them would
 *    change what is loaded.  The loader only reaches the system
 *    directories for a library /etc/ld.so.cache does not name, so they
 *    are listed only when some object found by name is not in the cache
 *    (its identity is read anyway: a cache that changes is seen).
 *    Under each, the hwcaps subdirectories the loader tries
 *    (glibc-hwcaps/x86-64-vN and the legacy tls, platform and
 *    capability directories, nested) that exist are LISTed too; those
 *    that do not exist are covered by their parent's LIST.
 * Objects loaded after startup (dlopen, or the C library's own dlopens
 * of libgcc_s, gconv and NSS modules) are found by dl_iterate_phdr's
 * load counter, checked after dlopen, before exec and at exit.  A fork
 * child must not call dl_iterate_phdr (its lock is not reset by fork and
 * may have been held by another thread of the parent): it compares the
 * loader's list, walked without locks (it is the only thread), with what
 * the last scan saw, and a difference is OPAQUE.
 */
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "trace/trace.h"

/* Directories whose subdirectories were probed in this pass (by identity). */
struct tr_dirs {
	uint64_t dev[64], ino[64];
	int n;
};

static const char *tr_exe_path;
static unsigned long long tr_adds_seen;
/* /etc/ld.so.cache as this process's loader saw it (NULL: none) */
static const char *tr_cache;
static size_t tr_cache_len;
/* objects the loader mapped before main: their names are settled */
static int tr_startup_objects = -1;
static int tr_system_listed;
static const char *tr_preload_env;
/*
 * The objects allowed to enter the kernel themselves (TL_SYSTEM): the C
 * library (the object its real openat is in), the dynamic loader (mapped
 * at the kernel's AT_BASE) and this library.  By address, not by name:
 * a SONAME or path says nothing about what an object is.
 */
static const char *tr_libc_name, *tr_self_name;
static uintptr_t tr_ldso_base;
/* the loader's list as the last scan saw it (tr_map_mix), and fork state */
static uint64_t tr_map_sig;
static int tr_forked;

/* The loader's system search path on x86_64 Debian (ld.so --help). */
static const char *const tr_system_dirs[] = {
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib", "/usr/lib", NULL
};
static const char *const tr_hwcaps[] = { "x86-64-v4", "x86-64-v3", "x86-64-v2", NULL };
static const char *const tr_legacy[] = { "tls", "haswell", "xeon_phi", "x86_64", "avx512_1", NULL };

static int tr_dirs_seen(struct tr_dirs *d, const struct stat *st)
{
	for (int i = 0; i < d->n; i++)
		if (d->dev[i] == st->st_dev && d->ino[i] == st->st_ino)
			return 1;
	if (d->n < 64) {
		d->dev[d->n] = st->st_dev;
		d->ino[d->n++] = st->st_ino;
	}
	return 0;
}

/* LIST buf[0..len) if it is a directory; 1 if it is. */
static int tr_list_if_dir(char *buf)
{
	struct stat st;

	if (tr_stat_at(AT_FDCWD, buf, 0, &st) < 0 || !S_ISDIR(st.st_mode))
		return 0;
	tr_emit(TL_LIST, 0, &st, AT_FDCWD, buf);
	return 1;
}

static void tr_probe_legacy(char *buf, size_t len, int depth)
{
	for (int i = 0; tr_legacy[i]; i++) {
		size_t n = strlen(tr_legacy[i]);

		if (len + 1 + n >= PATH_MAX)
			continue;
		buf[len] = '/';
		memcpy(buf + len + 1, tr_legacy[i], n + 1);
		if (tr_list_if_dir(buf) && depth < 3)
			tr_probe_legacy(buf, len + 1 + n, depth + 1);
	}
	buf[len] = 0;
}

/* A directory the loader searches: LIST it, and its hwcaps subdirectories. */
static void tr_search_dir(struct tr_dirs *seen, const char *dir)
{
	char buf[PATH_MAX];
	size_t len = strlen(dir);
	struct stat st;

	if (tr_stat_at(AT_FDCWD, dir, 0, &st) < 0) {
		tr_lookup(TL_LIST, 0, AT_FDCWD, dir, 0, errno, NULL);
		return;
	}
	tr_emit(TL_LIST, 0, &st, AT_FDCWD, dir);
	if (!S_ISDIR(st.st_mode) || tr_dirs_seen(seen, &st) || len + 40 >= sizeof buf)
		return;
	memcpy(buf, dir, len);
	memcpy(buf + len, "/glibc-hwcaps", 14);
	if (tr_list_if_dir(buf))
		for (int i = 0; tr_hwcaps[i]; i++) {
			buf[len + 13] = '/';
			strcpy(buf + len + 14, tr_hwcaps[i]);
			tr_list_if_dir(buf);
		}
	buf[len] = 0;
	tr_probe_legacy(buf, len, 1);
}

/*
 * One entry of a search path (len bytes at p), with $ORIGIN replaced by
 * origin (a directory); an empty entry is the working directory.
 */
static void tr_search_entry(struct tr_dirs *seen, const char *p, size_t len, const char *origin)
{
	char out[PATH_MAX];
	size_t o = 0;

	if (!len) {
		tr_search_dir(seen, ".");
		return;
	}
	for (size_t i = 0; i < len;) {
		size_t tok = 0;

		if (p[i] == '$') {
			if (len - i >= 7 && !memcmp(p + i, "$ORIGIN", 7))
				tok = 7;
			else if (len - i >= 9 && !memcmp(p + i, "${ORIGIN}", 9))
				tok = 9;
			if (!tok || !origin || (tok == 7 && i + 7 < len && p[i + 7] != '/')) {
				char what[PATH_MAX];
				size_t n = len < sizeof what - 1 ? len : sizeof what - 1;

				memcpy(what, p, n);
				what[n] = 0;
				tr_opaque("a library search path the tracer cannot expand:", what);
				return;
			}
			if (o + strlen(origin) >= sizeof out)
				goto long_path;
			strcpy(out + o, origin);
			o += strlen(origin);
			i += tok;
			continue;
		}
		if (o + 1 >= sizeof out)
			goto long_path;
		out[o++] = p[i++];
	}
	out[o] = 0;
	tr_search_dir(seen, out);
	return;
long_path:
	tr_opaque("a library search path too long", NULL);
}

static void tr_search_path(struct tr_dirs *seen, const char *path, const char *seps,
			   const char *origin)
{
	for (;;) {
		size_t n = strcspn(path, seps);

		tr_search_entry(seen, path, n, origin);
		if (!path[n])
			return;
		path += n + 1;
	}
}

/* Where the loader's d_ptr values point: relocated in place, or not. */
static const char *tr_object_addr(const struct dl_phdr_info *info, ElfW(Addr) v)
{
	int abs_in = 0, rel_in = 0;

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		ElfW(Addr) lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD)
			continue;
		abs_in |= v >= lo && v < lo + ph->p_memsz;
		rel_in |= info->dlpi_addr + v >= lo && info->dlpi_addr + v < lo + ph->p_memsz;
	}
	if (abs_in)
		return (const char *)v;
	return rel_in ? (const char *)(info->dlpi_addr + v) : NULL;
}

static void tr_object_rpaths(struct tr_dirs *seen, const struct dl_phdr_info *info,
			     const char *name)
{
	const ElfW(Dyn) *dyn = NULL;
	ElfW(Addr) strtab = 0;
	const char *str;
	char origin[PATH_MAX];
	const char *slash = strrchr(name, '/');

	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	if (!dyn || !slash || (size_t)(slash - name) >= sizeof origin)
		return;
	memcpy(origin, name, (size_t)(slash - name));
	origin[slash == name ? 1 : slash - name] = 0;
	for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++)
		if (d->d_tag == DT_STRTAB)
			strtab = d->d_un.d_ptr;
	for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++) {
		if (d->d_tag != DT_RPATH && d->d_tag != DT_RUNPATH)
			continue;
		str = strtab ? tr_object_addr(info, strtab) : NULL;
		if (!str) {
			tr_opaque("a library search path the tracer cannot read in", name);
			return;
		}
		tr_search_path(seen, str + d->d_un.d_val, ":", origin);
	}
}

/*
 * Is the string at offset off of the cache s (len > 0 bytes), whole and
 * inside the file?  Its end and last byte first: most keys differ there.
 */
static inline int tr_cache_str_is(uint32_t off, const char *s, size_t len)
{
	return (size_t)off < tr_cache_len && len < tr_cache_len - off &&
	       tr_cache[off + len] == 0 && tr_cache[off + len - 1] == s[len - 1] &&
	       !memcmp(tr_cache + off, s, len);
}

/*
 * The format glibc writes (cache_new: a 48-byte header whose count of
 * entries follows the 20-byte magic, then entries of 24 bytes: flags,
 * then the key, the soname, and the value, the path, as offsets from the
 * start of the file).  The loader looks a library up by its soname, so
 * only an entry whose key is the path's last component is compared:
 * about 650 short compares instead of a search of all 41 KB for each
 * object (cc1's ten took 185 K instructions).  Returns -1 for any other
 * layout, which is then searched whole; a path the entries miss counts
 * as not cached, which only adds the directories' lookups.
 */
#define TR_CACHE_MAGIC "glibc-ld.so.cache1.1"
#define TR_CACHE_HEAD 48
#define TR_CACHE_ENTRY 24
static int tr_cache_entries(const char *name, size_t len)
{
	const char *base = strrchr(name, '/');
	size_t blen;
	uint32_t n;

	if (tr_cache_len < TR_CACHE_HEAD || memcmp(tr_cache, TR_CACHE_MAGIC, 20))
		return -1;
	memcpy(&n, tr_cache + 20, sizeof n);
	if (n > (tr_cache_len - TR_CACHE_HEAD) / TR_CACHE_ENTRY)
		return -1;
	base = base ? base + 1 : name;
	blen = strlen(base);
	if (!blen)
		return 0;
	for (uint32_t i = 0; i < n; i++) {
		const char *e = tr_cache + TR_CACHE_HEAD + (size_t)i * TR_CACHE_ENTRY;
		uint32_t key, value;

		memcpy(&key, e + 4, sizeof key);
		memcpy(&value, e + 8, sizeof value);
		if (tr_cache_str_is(key, base, blen) && tr_cache_str_is(value, name, len))
			return 1;
	}
	return 0;
}

/* Does the cache name this path (a whole NUL-terminated string in it)? */
static int tr_in_cache(const char *name)
{
	size_t len = strlen(name) + 1;
	const char *end = tr_cache + tr_cache_len;
	int r;

	if (!tr_cache)
		return 0;
	if ((r = tr_cache_entries(name, len - 1)) >= 0)
		return r;
	for (const char *p = tr_cache; p && p < end; p++) {
		p = memmem(p, (size_t)(end - p), name, len);
		if (!p)
			break;
		if (p > tr_cache && p[-1] == 0)
			return 1;
	}
	return 0;
}

/* Was name given to the loader as a path (LD_PRELOAD's entries)? */
static int tr_preloaded(const char *name)
{
	size_t n = strlen(name);

	for (const char *p = tr_preload_env; p && *p;) {
		size_t k;

		p += strspn(p, " :");
		k = strcspn(p, " :");
		if (k == n && !memcmp(p, name, n))
			return 1;
		p += k;
	}
	return 0;
}

/* The main program's PT_INTERP: the loader, mapped by the kernel. */
static const char *tr_interp(const struct dl_phdr_info *info)
{
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_INTERP)
			return (const char *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	return NULL;
}

struct tr_pass {
	struct tr_dirs seen;
	unsigned long long adds;
	int index, unsettled;
	const char *interp;
	uint64_t sig;
};

/* A signature of the loader's list: each object's name pointer and base. */
static uint64_t tr_map_mix(uint64_t sig, const void *name, uintptr_t addr)
{
	return (sig ^ (uintptr_t)name ^ (addr << 1)) * 0x100000001b3ull + 1;
}

static int tr_object_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct tr_pass *pass = data;
	const char *name = info->dlpi_name;
	int main_program = !name || !*name;

	if (size >= offsetof(struct dl_phdr_info, dlpi_subs))
		pass->adds = info->dlpi_adds;
	pass->sig = tr_map_mix(pass->sig, info->dlpi_name, info->dlpi_addr);
	if (main_program && pass->index == 0)
		pass->interp = tr_interp(info);
	if (main_program && tr_exe_path && tr_exe_path[0] == '/')
		name = tr_exe_path;
	pass->index++;
	/* the vDSO and the like have no file */
	if (!name || !strchr(name, '/'))
		return 0;
	/* the program itself: its HELLO carries its identity already */
	if (!main_program)
		tr_emit_now(TL_READ,
			    TL_MAPPED | (info->dlpi_name == tr_libc_name ||
					 info->dlpi_name == tr_self_name ||
					 (tr_ldso_base && info->dlpi_addr == tr_ldso_base)
					 ? TL_SYSTEM : 0),
			    AT_FDCWD, name);
	tr_object_rpaths(&pass->seen, info, name);
	/*
	 * Found by a search that may have gone past the cache?  Objects of
	 * startup are judged once, by the startup pass.
	 */
	if (!main_program && (tr_startup_objects < 0 || pass->index > tr_startup_objects) &&
	    !(pass->interp && !strcmp(name, pass->interp)) && !tr_in_cache(name) &&
	    !(tr_startup_objects < 0 && tr_preloaded(name)))
		pass->unsettled = 1;
	return 0;
}

static void tr_objects_pass(void)
{
	struct tr_pass pass;
	struct tr_batch b;

	memset(&pass, 0, sizeof pass);
	tr_batch_begin(&b);
	dl_iterate_phdr(tr_object_cb, &pass);
	if (tr_startup_objects < 0)
		tr_startup_objects = pass.index;
	__atomic_store_n(&tr_adds_seen, pass.adds, __ATOMIC_RELAXED);
	__atomic_store_n(&tr_map_sig, pass.sig, __ATOMIC_RELAXED);
	if (pass.unsettled && !tr_system_listed) {
		tr_system_listed = 1;
		for (int i = 0; tr_system_dirs[i]; i++)
			tr_search_dir(&pass.seen, tr_system_dirs[i]);
	}
	tr_batch_end(&b);
}

static void tr_cache_map(void)
{
	int fd = TR_CALL(openat)(AT_FDCWD, "/etc/ld.so.cache", O_RDONLY | O_CLOEXEC);
	struct stat st;
	void *p;

	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && st.st_size > 0) {
		p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p != MAP_FAILED) {
			tr_cache = p;
			tr_cache_len = (size_t)st.st_size;
		}
	}
	TR_CALL(close)(fd);
}

struct tr_addr_query {
	uintptr_t addr;
	const char *name;
};

static int tr_addr_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct tr_addr_query *q = arg;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + p->p_vaddr;

		if (p->p_type == PT_LOAD && q->addr >= a && q->addr < a + p->p_memsz) {
			q->name = info->dlpi_name;
			return 1;
		}
	}
	return 0;
}

/*
 * The loader's name (l_name, the very pointer dlpi_name is) of the object
 * that holds addr, or NULL.  Not dladdr(): that one also looks the
 * nearest symbol up, a walk of the whole symbol table, and this
 * library's is long (every hook).
 */
const char *tr_object_name(const void *addr)
{
	struct tr_addr_query q = { (uintptr_t)addr, NULL };

	dl_iterate_phdr(tr_addr_cb, &q);
	return q.name;
}

void tr_objects_startup(const char *exe)
{
	struct tr_dirs seen = { .n = 0 };
	const char *llp = getenv("LD_LIBRARY_PATH");
	char origin[PATH_MAX];
	const char *slash = strrchr(exe, '/');
	struct tr_batch b;

	tr_exe_path = exe;
	tr_preload_env = getenv("LD_PRELOAD");
	tr_libc_name = tr_object_name((void *)tr_real_get(&tr_real_openat));
	tr_self_name = tr_object_name((void *)tr_objects_startup);
	tr_ldso_base = (uintptr_t)getauxval(AT_BASE);
	tr_cache_map();
	tr_batch_begin(&b);
	tr_emit_now(TL_READ, 0, AT_FDCWD, "/etc/ld.so.preload");
	tr_emit_now(TL_READ, 0, AT_FDCWD, "/etc/ld.so.cache");
	if (llp && *llp) {
		size_t n = slash ? (size_t)(slash - exe) : 0;

		memcpy(origin, exe, n);
		origin[n ? n : 1] = 0;
		if (!n)
			origin[0] = '/';
		tr_search_path(&seen, llp, ":;", slash ? origin : NULL);
	}
	tr_objects_pass();
	tr_batch_end(&b);
	/* LD_PRELOAD is about to be rewritten (env.c): only startup needed it */
	tr_preload_env = NULL;
}

static int tr_adds_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs))
		*(unsigned long long *)data = info->dlpi_adds;
	return 1;
}

void tr_objects_after_fork(void)
{
	tr_forked = 1;
}

void tr_objects_scan(void)
{
	unsigned long long adds = 0;

	if (tr_forked) {
		uint64_t sig = 0;

		for (const struct link_map *l = _r_debug.r_map; l; l = l->l_next)
			sig = tr_map_mix(sig, l->l_name, l->l_addr);
		if (sig != tr_map_sig) {
			tr_map_sig = sig;
			tr_opaque("a forked child loaded objects the tracer cannot name", NULL);
		}
		return;
	}
	dl_iterate_phdr(tr_adds_cb, &adds);
	if (adds != __atomic_load_n(&tr_adds_seen, __ATOMIC_RELAXED))
		tr_objects_pass();
}
