/*
 * preload.c - asynccompile-trace.so: the tracer preloaded into every
 * process of a traced command.  It appends to the command's log
 * (lib/tracelog.h) what each process read, listed, ran and changed,
 * so that the runner can decide whether the command's answer may be
 * reused.  The rule above all others: what the tracer cannot see, or
 * does not model, is an OPAQUE event (or missing HELLO/BYE accounting);
 * nothing is guessed.  An OPAQUE only costs speed, a missed input is a
 * wrong answer.
 *
 * Design
 *  - Hooks interpose on the C library's exported functions (LD_PRELOAD);
 *    each calls the real function found with dlsym(RTLD_NEXT) on first
 *    use (trace.h).  Calls the C library makes inside
 *    itself are invisible, so the functions that look files up
 *    internally are modelled (locale, messages, time zone, realpath,
 *    the dynamic loader) or made opaque (NSS, iconv, glob, nftw...).
 *  - An event is built on the stack and appended to the shared log
 *    (lib/tracelog.h, struct tl_shm) with a fetch-add and a copy, no
 *    system call; a log without the header gets one writev(2) on its
 *    O_APPEND description per event.  No allocation, no lock, safe in
 *    fork children and on the way out.  For a writev log, bookkeeping
 *    that emits several events at once (the constructor, the models, an
 *    exec attempt) writes them in as few writes as fit (tr_batch), still
 *    whole and in order.
 *    An event identical to one of the last few this thread wrote is
 *    dropped (nothing it would say is new).  Paths are absolute (the
 *    working directory or the dirfd's /proc/self/fd link, then '/', then
 *    the path as given).
 *  - The constructor checks ASYNCCOMPILE_TRACE against the descriptor
 *    it names (fstat dev:ino); without a match the library does nothing
 *    at all.  It then writes HELLO and what the dynamic loader read, and
 *    hides its variables from the program (env.c); exec and spawn hooks
 *    put them back into every environment passed on, env -i included.
 *  - Our descriptor survives the program: close() of it is a no-op,
 *    dup2/dup3 onto it move the log first, close_range/closefrom skip it
 *    (hooks_fd.c).
 *
 * Modelled (each file's top comment has the details)
 *  - process life: HELLO (constructor), BYE (destructor, exit, _exit,
 *    _Exit; main's return value through __libc_start_main; -1 when the
 *    status is not known), FORK (fork, vfork, _Fork, forkpty),
 *    EXEC/EXECFAIL (the exec family with glibc's PATH walk, each miss a
 *    negative READ), SPAWN (posix_spawn, posix_spawnp, and system() and
 *    popen() re-implemented on it so that their shell is traced);
 *  - the dynamic loader: every loaded object (READ, TL_MAPPED: the runner
 *    scans it for system-call instructions of its own, lib/syscan.h; the
 *    C library, the loader and this library flagged TL_SYSTEM, known by
 *    address), /etc/ld.so.cache,
 *    /etc/ld.so.preload, and the directories it searches (LD_LIBRARY_PATH,
 *    DT_RPATH/DT_RUNPATH with $ORIGIN, the system directories, their
 *    hwcaps subdirectories); objects loaded later (dlopen with a path,
 *    the C library's own dlopens) on the next dlopen, exec or exit;
 *  - lookups: the open, stat, access, readlink, realpath, opendir,
 *    scandir, getdents, chdir, getxattr families (READ, LIST, negatives;
 *    the stat family's READ carries the access time it returned);
 *  - changes: open for writing, creat, rename, unlink, mkdir, link,
 *    symlink, truncate, chmod, chown, utime, mknod, mkfifo, xattrs, bind
 *    of a socket path, mkstemp and tmpfile (WRITE, identity before);
 *  - values: uname, gethostname, the number of CPUs online (VALUE);
 *    every clock but CPU time (CLOCK, once per process: time,
 *    gettimeofday, timespec_get, times, clock_gettime); random bytes
 *    (RANDOM, once per process: getrandom, getentropy, arc4random*);
 *  - acts on other processes and the system (IMPURE, hooks_proc.c):
 *    signals to another process or a group, its priority, affinity,
 *    scheduling or limits, ptrace, System V IPC changes, shared names
 *    removed, the clock, host name, swap, modules, reboot, syslog, utmp;
 *    ahead of need (";ahead" in ASYNCCOMPILE_TRACE) refused with EPERM;
 *  - getppid of the command's root process (the one whose parent is the
 *    runner): the parent the runner names, make for a job run ahead of
 *    need in a pool worker, as $(shell)'s child would see it;
 *  - locale, message catalogues and the time zone (hooks_locale.c).
 * Classified (trace/libc.classes: every function the C library exports
 * is model, opaque, impure or self; classes.c hooks the opaque and impure
 * ones generically, from the list, and makes every run opaque on a C
 * library the list was not made for)
 * Opaque
 *  - fexecve, execveat on a descriptor, clone, daemon, raw syscall() of
 *    anything that touches files, processes or the network, glob, nftw,
 *    ftw, fts, sockets other than AF_UNIX, sendto with an address, dlopen
 *    by a bare name not already loaded, static or setuid programs,
 *    programs with file capabilities, 32-bit or foreign programs,
 *    posix_spawn file actions that open files or change directory,
 *    statfs/statvfs, tempnam, freopen of a stream's own file, code made
 *    at run time (mmap or mprotect with PROT_EXEC by the program, not
 *    the loader) and a file mapped MAP_SHARED with PROT_WRITE
 *    (hooks_mem.c); another process's or the system's state (signal 0,
 *    getpriority, sched_get*, prlimit of another pid, pidfd_open, utmp,
 *    IPC status: hooks_proc.c);
 *  - every function libc.classes calls opaque (NSS, iconv, connect,
 *    listen, IPC, watches, mounts, the system's load and memory, files
 *    the C library opens inside itself, aliases of modelled functions...);
 * Impure
 *  - every function libc.classes calls impure (IPC sends, receives and
 *    removals, terminal settings, modules, I/O ports, login records...),
 *    and the acts on other processes and the system above;
 *  - a hook entered from inside the tracer's own bookkeeping (a signal
 *    handler), and objects loaded by a fork child before it execs;
 *  - anything that cannot be named (a path relative to an unnamed
 *    directory, longer than an event) or whose outcome cannot be
 *    explained (a lookup that failed with neither ENOENT nor an identity).
 * Not events (by the log's definition, tracelog.h): reads and writes
 * through descriptors already open (fstat, fstatfs, read, write,
 * ftruncate...; so an access time read by fstat of an opened file is
 * not compared), the process's own ids, limits, priority, affinity and
 * memory size (the state it started with is the runner's to record,
 * lib/pstate.h; what it changed itself follows from that), and the CPU
 * clocks (clock, getrusage, CLOCK_*_CPUTIME_ID: as and ld read them at
 * every start).
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/trace.h"

static pthread_once_t tr_init_control = PTHREAD_ONCE_INIT;
static int tr_bye_done;
/* what the process is exiting with; -1 until it is known */
static int tr_status = -1;
static char tr_exe[PATH_MAX];

/*
 * "N" fields of ASYNCCOMPILE_TRACE: unsigned decimals split by ':', up to
 * the end or to the flags that follow them (TL_ENV_AHEAD), which *ahead
 * reports.
 */
static int tr_parse_env(const char *v, uint64_t *f, int max, int *ahead)
{
	int n = 0;
	const char *flags = strchr(v, ';');

	*ahead = 0;
	if (flags) {
		if (strcmp(flags, TL_ENV_AHEAD))
			return -1;
		*ahead = 1;
	}

	while (n < max) {
		uint64_t x = 0;
		const char *start = v;

		while (*v >= '0' && *v <= '9') {
			if (x > (UINT64_MAX - 9) / 10)
				return -1;
			x = x * 10 + (uint64_t)(*v++ - '0');
		}
		if (v == start)
			return -1;
		f[n++] = x;
		if (!*v || v == flags)
			return n;
		if (*v++ != ':')
			return -1;
	}
	return -1;
}

static void tr_hello(void)
{
	struct tl_event ev;
	struct iovec v;
	struct stat st;
	ssize_t n = TR_CALL(readlink)("/proc/self/exe", tr_exe, sizeof tr_exe - 1);

	tr_event_init(&ev, TL_HELLO);
	ev.aux = (int32_t)TR_CALL(getppid)(); /* the real one: not the hook's answer */
	if (n > 0 && tr_exe[0] == '/' && (size_t)n < sizeof tr_exe - 1) {
		tr_exe[n] = 0;
		if (tr_stat_at(AT_FDCWD, tr_exe, 0, &st) == 0)
			tr_ident(&ev, &st);
		else
			tr_opaque("the program's own file cannot be identified:", tr_exe);
	} else {
		strcpy(tr_exe, "/proc/self/exe");
		tr_opaque("the program's own file cannot be named", NULL);
	}
	v.iov_base = tr_exe;
	v.iov_len = strlen(tr_exe);
	tr_write(&ev, &v, 1);
}

static void tr_init_once(void)
{
	const char *v = getenv(TL_ENV);
	uint64_t f[9];
	int ahead;
	int n = v ? tr_parse_env(v, f, 9, &ahead) : -1;
	struct stat st;
	const char *self;
	struct tr_batch b;
	int state = TR_OFF;

	tr_busy = 1;
	if ((n != 3 && n != 7 && n != 9) || f[0] > INT_MAX || fstat((int)f[0], &st) < 0 ||
	    st.st_dev != f[1] || st.st_ino != f[2])
		goto out;
	if (!(self = tr_object_name((void *)tr_init_once)) || strlen(self) >= sizeof tr_env.self)
		goto out;
	tr_real_warm();
	tr_real_get(&tr_real__exit);
	tr_real_get(&tr_real__Exit);
	strcpy(tr_env.self, self);
	tr_env.dev = f[1];
	tr_env.ino = f[2];
	tr_env.ahead = ahead;
	if (n >= 7) {
		tr_env.pipes = 1;
		tr_env.out_dev = f[3];
		tr_env.out_ino = f[4];
		tr_env.err_dev = f[5];
		tr_env.err_ino = f[6];
	}
	if (n == 9 && f[7] && f[7] <= INT_MAX && f[8] && f[8] <= INT_MAX) {
		tr_env.runner = f[7];
		tr_env.ppid = f[8];
	}
	tr_logfd = (int)f[0];
	tr_log_map(tr_logfd, &st);
	tr_pid = getpid();
	tr_batch_begin(&b);
	tr_hello();
	tr_classes_check();
	tr_objects_startup(tr_exe);
	tr_batch_end(&b);
	tr_env_hide();
	state = TR_ON;
out:
	tr_busy = 0;
	__atomic_store_n(&tr_state, state, __ATOMIC_RELEASE);
}

int tr_init(void)
{
	int saved = errno;

	pthread_once(&tr_init_control, tr_init_once);
	errno = saved;
	return __atomic_load_n(&tr_state, __ATOMIC_ACQUIRE);
}

__attribute__((constructor)) static void tr_constructor(void)
{
	tr_init();
}

void tr_bye(int status)
{
	struct tl_event ev;

	if (__atomic_load_n(&tr_state, __ATOMIC_ACQUIRE) != TR_ON ||
	    __atomic_exchange_n(&tr_bye_done, 1, __ATOMIC_ACQ_REL))
		return;
	tr_busy = 1;
	/* objects the C library loaded for itself (libgcc_s, gconv) */
	tr_objects_scan();
	tr_event_init(&ev, TL_BYE);
	ev.aux = status;
	tr_write(&ev, NULL, 0);
	tr_busy = 0;
}

/* The last destructor: exit() and a return from main come through here. */
__attribute__((destructor)) static void tr_destructor(void)
{
	int saved = errno;

	tr_bye(__atomic_load_n(&tr_status, __ATOMIC_RELAXED));
	errno = saved;
}

void tr_after_fork_child(int parent)
{
	struct tl_event ev;

	__atomic_store_n(&tr_pid, getpid(), __ATOMIC_RELAXED);
	__atomic_store_n(&tr_bye_done, 0, __ATOMIC_RELAXED);
	tr_emit_after_fork();
	tr_objects_after_fork();
	tr_event_init(&ev, TL_FORK);
	ev.aux = parent;
	tr_write(&ev, NULL, 0);
}

/* ---- the ways out ---- */

TR_HOOK void exit(int status)
{
	__atomic_store_n(&tr_status, status, __ATOMIC_RELAXED);
	TR_CALL(exit)(status);
	abort();
}

TR_HOOK void _exit(int status)
{
	int saved = errno;

	if (!tr_busy)
		tr_bye(status);
	errno = saved;
	TR_CALL(_exit)(status);
	abort();
}

TR_HOOK void _Exit(int status)
{
	int saved = errno;

	if (!tr_busy)
		tr_bye(status);
	errno = saved;
	TR_CALL(_Exit)(status);
	abort();
}

/* main's return value is the exit status the destructor reports */
static int (*tr_main_real)(int, char **, char **);

static int tr_main(int argc, char **argv, char **envp)
{
	int r = tr_main_real(argc, argv, envp);

	__atomic_store_n(&tr_status, r, __ATOMIC_RELAXED);
	return r;
}

TR_HOOK int __libc_start_main(int (*main)(int, char **, char **), int argc, char **argv,
			      void (*init)(void), void (*fini)(void), void (*rtld_fini)(void),
			      void *stack_end)
{
	if (tr_init() == TR_ON) {
		tr_main_real = main;
		main = tr_main;
	}
	return TR_CALL(__libc_start_main)(main, argc, argv, init, fini, rtld_fini, stack_end);
}
