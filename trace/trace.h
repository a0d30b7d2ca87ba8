/*
 * trace.h - the tracer's internals, shared by its files (see preload.c for
 * the design, and lib/tracelog.h for the events it writes).
 *
 * Every hook follows one pattern:
 *
 *     if (!tr_active())
 *             return TR_CALL(fn)(args);       pure pass-through
 *     ... bookkeeping before (identity BEFORE a change) ...
 *     r = TR_CALL(fn)(args);                  the real call, unguarded
 *     ... bookkeeping after (errno kept) ...
 *
 * Bookkeeping runs under a thread-local guard (tr_busy) and calls only
 * real functions (TR_CALL) or names this library does not hook, so it
 * never re-enters a hook; the real call itself runs without the guard,
 * so callbacks and constructors it runs (scandir's filter, dlopen's
 * constructors, exit's handlers) are traced as the program's own.
 */
#ifndef ASYNC_TRACE_H
#define ASYNC_TRACE_H

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "lib/tracelog.h"

#define TR_HOOK __attribute__((visibility("default")))
#define TR_UNUSED __attribute__((unused))

/* ---- the real functions ---- */

/*
 * One slot per real function, resolved on first use (a process uses a
 * few dozen of the hooks; resolving all of them up front would cost a
 * dlsym each in every process).  The few the tracer's own bookkeeping
 * and the ways out need are resolved by the constructor, so that a fork
 * child or an exit path is not the first to call dlsym.
 *
 * The slots come from one list, trace/libc.classes: a slot for every
 * function classified model (its hand hook's), and one for every @real
 * line (a function the tracer calls but does not hook).  The Makefile
 * writes them to build/trace-slots.h as TR_SLOT(name) lines; they are
 * declared here and defined once, in emit.c.  So TR_CALL(fn) of a
 * function the list does not name does not compile: classify it first.
 */
struct tr_real {
	void *fn;
	uint32_t name; /* offset in tr_symnames */
};

#define TR_SLOT(fn) extern struct tr_real tr_real_##fn __attribute__((visibility("hidden")));
#include "build/trace-slots.h"
#undef TR_SLOT

/*
 * Every name a slot or a generic hook (classes.c) resolves, as one
 * constant block, defined in emit.c.  A record holds its name's offset
 * here, never a pointer: a pointer is relocated by the loader in every
 * process at start, which writes (and faults in) every page of records
 * whether or not a hook is ever called.  So 700 records cost nothing
 * until their first call.  A version is "" for the default one.
 */
struct tr_symnames {
#define TR_SLOT(fn) char slot_##fn[sizeof #fn];
#include "build/trace-slots.h"
#undef TR_SLOT
#define TR_CLASS(fn, cls, ver) char class_##fn[sizeof #fn]; char version_##fn[sizeof ver];
#include "build/trace-classes.h"
#undef TR_CLASS
};
extern const struct tr_symnames tr_symnames __attribute__((visibility("hidden")));
#define TR_NAME(off) ((const char *)&tr_symnames + (off))

#define TR_CALL(fn) ((__typeof__(&fn))tr_real_get(&tr_real_##fn))

void *tr_real_resolve(struct tr_real *r);
void tr_real_warm(void);

static inline void *tr_real_get(struct tr_real *r)
{
	void *p = __atomic_load_n(&r->fn, __ATOMIC_ACQUIRE);

	return __builtin_expect(p != NULL, 1) ? p : tr_real_resolve(r);
}

/* ---- state ---- */

enum { TR_UNINIT = 0, TR_OFF = 1, TR_ON = 2 };

extern int tr_state;      /* TR_*: set once by tr_init() */
extern int tr_logfd;      /* the log's descriptor (moves, see tr_fd_protect) */
extern int tr_pid;        /* this process's pid (updated in fork children) */
extern __thread int tr_busy __attribute__((tls_model("initial-exec")));

/* what ASYNCCOMPILE_TRACE said (hidden from the program, re-injected) */
struct tr_env {
	uint64_t dev, ino;               /* the log */
	uint64_t out_dev, out_ino;       /* the job's stdout pipe (0: unknown) */
	uint64_t err_dev, err_ino;       /* the job's stderr pipe (0: unknown) */
	int pipes;                       /* the 7-field form was given */
	int ahead;                       /* ";ahead": run ahead of need (hooks_proc.c) */
	/*
	 * The 9-field form: the runner's pid, and the pid to present as the
	 * parent of the command's root process (make's, for a job run ahead
	 * of need in a pool worker); 0 when not given.
	 */
	uint64_t runner, ppid;
	char self[PATH_MAX];             /* this library, as LD_PRELOAD named it */
};
extern struct tr_env tr_env;

int tr_init(void);
/* Map the log if it is a shared one (lib/tracelog.h); else events are written. */
void tr_log_map(int fd, const struct stat *st);
void tr_reentered(void);
void tr_emit_after_fork(void);

/*
 * 1 if this call is to be traced.  A hook entered while this thread is
 * inside the tracer's own bookkeeping (a signal handler, an allocator
 * the tracer's libc calls ran into) passes through: it is not seen, so
 * the run is marked opaque.  Before the constructor has run, the first
 * hook to be called runs it (another library's constructor may open
 * files before ours runs).
 */
static inline int tr_active(void)
{
	int s = __atomic_load_n(&tr_state, __ATOMIC_ACQUIRE);

	if (__builtin_expect(s == TR_ON, 1)) {
		if (__builtin_expect(tr_busy, 0)) {
			tr_reentered();
			return 0;
		}
		return 1;
	}
	if (s == TR_OFF || tr_busy)
		return 0;
	return tr_init() == TR_ON;
}

/* The guard around bookkeeping; errno is the caller's again after it. */
struct tr_guard {
	int saved_errno;
};
static inline void tr_lock(struct tr_guard *g)
{
	g->saved_errno = errno;
	tr_busy = 1;
}
static inline void tr_unlock(struct tr_guard *g)
{
	tr_busy = 0;
	errno = g->saved_errno;
}

/* ---- paths ---- */

/*
 * A path as the log spells it: absolute, in up to three pieces (the
 * working directory or the directory of a dirfd, "/", the path as given)
 * so that nothing is copied.  tr_where() returns 0, or -1 when the path
 * cannot be made absolute (it then wrote an OPAQUE event).
 */
struct tr_where {
	struct iovec iov[3];
	int n;
	size_t len;
	char dir[PATH_MAX];
};
int tr_where(struct tr_where *w, int dirfd, const char *path);
/* The same path in one NUL-terminated string; -1 if it does not fit. */
int tr_where_str(const struct tr_where *w, char *buf, size_t size);

/* ---- events ---- */

void tr_ident(struct tl_event *ev, const struct stat *st);
void tr_event_init(struct tl_event *ev, int type);
/* Append one event (header and path pieces): to the shared log, or one writev(2). */
void tr_write(struct tl_event *ev, const struct iovec *iov, int n);
/* Several events from one piece of bookkeeping, in as few writes. */
struct tr_batch {
	size_t len;
	unsigned char buf[2048];
};
void tr_batch_begin(struct tr_batch *b);
void tr_batch_end(struct tr_batch *b);
/* An event naming w, identity st (NULL: absent). */
void tr_emit_where(int type, int flags, const struct stat *st, const struct tr_where *w);
/* An event naming (dirfd, path), identity st (NULL: absent). */
void tr_emit(int type, int flags, const struct stat *st, int dirfd, const char *path);
/* An event naming (dirfd, path) with the identity it has now. */
void tr_emit_now(int type, int flags, int dirfd, const char *path);
/*
 * The same for the lookups of a model (realpath's walk, locale and
 * message catalogues), through a memo of this process's earlier answers
 * for absolute paths (emit.c says why that is sound).
 */
void tr_emit_model(int type, int flags, const char *path);
int tr_stat_model(const char *path, int nofollow, struct stat *st);
/* An event with a text: OPAQUE reasons, VALUEs. */
void tr_emit_text(int type, int32_t aux, const char *a, const char *b);
void tr_opaque(const char *why, const char *what);
/* the run acted outside itself (TL_IMPURE): never ahead of need, never reused */
void tr_impure(const char *why, const char *what);
void tr_opaque_at(const char *why, int dirfd, const char *path);
/*
 * A raw syscall(nr, a...) that reaches another process or the system
 * (hooks_proc.c): writes its OPAQUE or IMPURE; 1 when the call must not
 * be made (ahead of need).
 */
int tr_proc_syscall(long nr, const long *a);

/*
 * After a lookup of (dirfd, path) that the program made: ok says whether
 * it succeeded, err its errno, st the identity it returned (NULL: look it
 * up again).  Writes the READ (or LIST) the outcome depended on: the
 * identity, kind ABSENT for ENOENT/ENOTDIR, or OPAQUE when even the
 * tracer's own stat cannot tell.
 */
void tr_lookup(int type, int nofollow, int dirfd, const char *path, int ok, int err,
	       const struct stat *st);
/*
 * tr_lookup with tracelog.h flags: TL_ATIME when st is what the program
 * got.  A directory's access time is kept only with TR_ATIME_ASKED too
 * (statx asked for STATX_ATIME): every listing after a change moves it
 * (make lists its directory, try-run's scratch files change it), and a
 * plain stat of "." or an include directory never looks at it.
 */
#define TR_ATIME_ASKED 0x80
void tr_lookup_flags(int type, int flags, int dirfd, const char *path, int ok, int err,
		     const struct stat *st);
/* Before a change to (dirfd, path): a WRITE with what is there now. */
void tr_before_write(int dirfd, const char *path);
/* 1 for the one path whose writes are not worth an event. */
int tr_is_devnull(const char *path);

/* ---- descriptors and small helpers ---- */

/*
 * A pointer the C library's headers declare nonnull may still be NULL at
 * run time (the kernel answers EFAULT); hide the attribute from the
 * optimiser before testing it.
 */
static inline const char *tr_maybe_null(const char *p)
{
	__asm__("" : "+r"(p));
	return p;
}

int tr_fd_path(int fd, char *buf, size_t size);
int tr_stat_at(int dirfd, const char *path, int nofollow, struct stat *st);
int tr_fd_protect(int fd);
size_t tr_fmt_u64(char *buf, uint64_t v);

/* ---- the process ---- */

void tr_bye(int status);
void tr_env_hide(void);
void tr_objects_startup(const char *exe);
/* The loader's name of the object holding addr (dlpi_name), or NULL. */
const char *tr_object_name(const void *addr);
void tr_classes_check(void);               /* OPAQUE on a C library not classified */
void tr_after_fork_child(int parent);
void tr_objects_scan(void);
void tr_objects_after_fork(void);
int tr_before_fork(void);                 /* before any fork: returns our pid */
pid_t tr_vfork_traced(void);               /* vfork as fork */
void *tr_vfork_real(void);                 /* the C library's vfork */
void tr_exec_warm(void);                   /* resolves what an exec calls */
/* this thread's variables of emit.c, for vfork.c's snapshot */
size_t tr_emit_tls_size(void);
void tr_emit_tls_save(void *to);
void tr_emit_tls_restore(const void *from);
/*
 * The environment to pass on: envp plus our variables, in the caller's
 * buffer when it fits (the usual case), else in an mmap'ed arena (no
 * malloc: this runs in fork children).
 */
struct tr_envp {
	char **envp;
	void *arena;      /* mmap'ed, or NULL */
	size_t size;
	char buf[4096] __attribute__((aligned(16)));
};
int tr_envp_build(struct tr_envp *out, char *const *envp);
void tr_envp_free(struct tr_envp *e);
/* Can the tracer follow path into its next image?  Writes OPAQUE if not. */
void tr_exec_check(int dirfd, const char *path);

/* ---- locale, messages, time zone (hooks_locale.c, hooks_intl.c) ---- */

#define TR_ALIAS_FILE "/usr/share/locale/locale.alias"
typedef void (*tr_variant_fn)(const char *variant, void *ctx);
/* Every variant of a locale name glibc tries, and of its alias. */
void tr_names(const char *name, tr_variant_fn fn, void *ctx);
int tr_join(char *buf, size_t size, const char *const *parts);
int tr_is_c(const char *name);
void tr_gconv(void);
void tr_alias_read(void);
int tr_once(const char *const *parts, int n);
void tr_messages_model(const char *domain);

/* ---- glibc entry points that its headers no longer declare ---- */

int __xstat(int ver, const char *path, struct stat *st);
int __xstat64(int ver, const char *path, struct stat64 *st);
int __lxstat(int ver, const char *path, struct stat *st);
int __lxstat64(int ver, const char *path, struct stat64 *st);
int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags);
int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *st, int flags);
int __xmknod(int ver, const char *path, mode_t mode, dev_t *dev);
int __xmknodat(int ver, int dirfd, const char *path, mode_t mode, dev_t *dev);
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);
char *__realpath_chk(const char *path, char *resolved, size_t resolvedlen);
ssize_t __readlink_chk(const char *path, char *buf, size_t size, size_t buflen);
ssize_t __readlinkat_chk(int dirfd, const char *path, char *buf, size_t size, size_t buflen);
char *__dcgettext(const char *domain, const char *msgid, int category);
int __libc_start_main(int (*main)(int, char **, char **), int argc, char **argv,
		      void (*init)(void), void (*fini)(void), void (*rtld_fini)(void),
		      void *stack_end);

#endif
