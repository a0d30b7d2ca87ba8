/*
 * hooks_misc.c - inputs that are not file lookups, and the calls the
 * tracer does not follow.
 *
 * VALUE: uname ("uname=sysname release version machine"), gethostname
 * ("hostname=" and the whole name, whatever the buffer got), the number
 * of CPUs online as the program was told ("nprocs=N": sysconf of the
 * processor counts, get_nprocs, get_nprocs_conf).  The CPUs a process may
 * run on (sched_getaffinity of itself, pthread_getaffinity_np) are part
 * of the state it started with, which the runner writes (lib/pstate.h);
 * another process's are OPAQUE.
 * CLOCK: the first clock reading of each process (time, gettimeofday,
 * ftime, timespec_get, times, clock_gettime of any clock but the CPU-time ones);
 * RANDOM: the first request for random bytes (getrandom, getentropy,
 * arc4random, arc4random_buf, arc4random_uniform); each TL_TO_ANSWER
 * when its standard output or error is the job's pipe
 * (ASYNCCOMPILE_TRACE's OUTDEV:OUTINO:ERRDEV:ERRINO; with those unknown,
 * 0:0, any pipe or socket counts).  The C library's own getrandom calls
 * (malloc's, tmpnam's) are internal and not seen: they never reach an
 * answer but through a name the program then uses, which is a path.
 * dlopen: a path is a READ, and the objects it loads are found by the
 * next object scan (objects.c); a bare name already loaded is nothing
 * new, any other bare name (a search of the loader's that the tracer
 * does not replay) is OPAQUE.  The hook is a tail jump so that glibc
 * still sees the program as the caller (its RPATH, RUNPATH, namespace).
 * getppid: the root process's parent as the runner names it (below).
 * OPAQUE: sockets other than AF_UNIX, sends with an address, file
 * system statistics of a path that is there, process memory access.
 * The calls that are opaque or impure whatever their arguments (the name
 * service, converters, connect, listen, IPC, watches, mounts, chroot,
 * handles, catalogues, getdate, the host id...) are trace/libc.classes's
 * generic hooks (classes.c).
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <grp.h>
#include <iconv.h>
#include <ifaddrs.h>
#include <mqueue.h>
#include <netdb.h>
#include <nl_types.h>
#include <pthread.h>
#include <pwd.h>
#include <sched.h>
#include <semaphore.h>
#include <shadow.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysinfo.h>
#include <sys/random.h>
#include <sys/time.h>
#include <sys/times.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <wordexp.h>

#include "trace/trace.h"

/* ---- calls the tracer does not follow ---- */

#define TR_OPAQUE_FN(ret, name, params, args)                                              \
	TR_HOOK ret name params                                                            \
	{                                                                                  \
		if (tr_active())                                                           \
			tr_opaque("a call the tracer does not follow:", #name);            \
		return TR_CALL(name) args;                                                 \
	}

/*
 * A file system's figures (free blocks, its type) have no identity to
 * check again: an answer is opaque.  A path that is not there is an
 * absence like any other (libselinux asks statfs("/sys/fs/selinux") in
 * every coreutils program, on most machines in vain).
 */
#define TR_STATFS_FN(name, buftype)                                                        \
	TR_HOOK int name(const char *p, buftype *b)                                        \
	{                                                                                  \
		int r = TR_CALL(name)(p, b), e = errno;                                    \
		if (tr_active()) {                                                         \
			if (r < 0 && (e == ENOENT || e == ENOTDIR))                        \
				tr_lookup(TL_READ, 0, AT_FDCWD, p, 0, e, NULL);            \
			else                                                               \
				tr_opaque("a call the tracer does not follow:", #name);    \
		}                                                                          \
		errno = e;                                                                 \
		return r;                                                                  \
	}
TR_STATFS_FN(statfs, struct statfs)
TR_STATFS_FN(statfs64, struct statfs64)
TR_STATFS_FN(statvfs, struct statvfs)
TR_STATFS_FN(statvfs64, struct statvfs64)
TR_OPAQUE_FN(ssize_t, process_vm_readv, (pid_t p, const struct iovec *l, unsigned long ln,
					 const struct iovec *r, unsigned long rn, unsigned long f),
	     (p, l, ln, r, rn, f))
TR_HOOK int socket(int domain, int type, int protocol)
{
	if (domain != AF_UNIX && tr_active())
		tr_opaque("a network socket", NULL);
	return TR_CALL(socket)(domain, type, protocol);
}

TR_HOOK ssize_t sendto(int fd, const void *buf, size_t len, int flags,
		       const struct sockaddr *dest, socklen_t destlen)
{
	if (dest && tr_active())
		tr_opaque("a message sent to an address", NULL);
	return TR_CALL(sendto)(fd, buf, len, flags, dest, destlen);
}

TR_HOOK ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	if (msg && msg->msg_name && tr_active())
		tr_opaque("a message sent to an address", NULL);
	return TR_CALL(sendmsg)(fd, msg, flags);
}

TR_HOOK int sendmmsg(int fd, struct mmsghdr *vec, unsigned int n, int flags)
{
	for (unsigned i = 0; vec && i < n; i++)
		if (vec[i].msg_hdr.msg_name && tr_active()) {
			tr_opaque("a message sent to an address", NULL);
			break;
		}
	return TR_CALL(sendmmsg)(fd, vec, n, flags);
}

/* ---- dlopen ---- */

void *tr_dlopen_pre(const char *file, int mode) __attribute__((visibility("hidden"), used));
void *tr_dlopen_pre(const char *file, int mode)
{
	struct tr_guard g;

	(void)mode;
	if (!file || !tr_active())
		return tr_real_get(&tr_real_dlopen);
	tr_lock(&g);
	tr_objects_scan();
	if (strchr(file, '/')) {
		tr_emit_now(TL_READ, 0, AT_FDCWD, file);
	} else {
		void *h = TR_CALL(dlopen)(file, RTLD_LAZY | RTLD_NOLOAD);

		if (h)
			dlclose(h);
		else
			tr_opaque("a library loaded by name:", file);
	}
	tr_unlock(&g);
	return tr_real_get(&tr_real_dlopen);
}

/*
 * dlopen(file, mode): tr_dlopen_pre, then a jump to the real dlopen with
 * the program's return address still on the stack, as if it had called
 * it directly.
 */
__asm__(".text\n"
	".globl dlopen\n"
	".type dlopen, @function\n"
	"dlopen:\n"
	"	.cfi_startproc\n"
	"	pushq %rdi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %rsi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	subq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	call tr_dlopen_pre\n"
	"	addq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rsi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rdi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	jmp *%rax\n"
	"	.cfi_endproc\n"
	".size dlopen, .-dlopen\n");

/* ---- values ---- */

static void tr_value(const char *name, const char *a, const char *b, const char *c, const char *d)
{
	char buf[4 * sizeof(((struct utsname *)0)->release) + 64];
	const char *parts[4] = { a, b, c, d };
	size_t o = strlen(name);
	struct tr_guard g;

	memcpy(buf, name, o);
	for (int i = 0; i < 4 && parts[i]; i++) {
		size_t n = strnlen(parts[i], 65);

		if (i)
			buf[o++] = ' ';
		memcpy(buf + o, parts[i], n);
		o += n;
	}
	buf[o] = 0;
	tr_lock(&g);
	tr_emit_text(TL_VALUE, 0, buf, NULL);
	tr_unlock(&g);
}

static void tr_nprocs(long n)
{
	char num[24];

	if (n < 0)
		return;
	tr_fmt_u64(num, (uint64_t)n);
	tr_value("nprocs=", num, NULL, NULL, NULL);
}

TR_HOOK int uname(struct utsname *u)
{
	int r = TR_CALL(uname)(u);

	if (r == 0 && tr_active())
		tr_value("uname=", u->sysname, u->release, u->version, u->machine);
	return r;
}

TR_HOOK int gethostname(char *name, size_t len)
{
	int r = TR_CALL(gethostname)(name, len), saved = errno;
	struct utsname u;

	if (tr_active() && TR_CALL(uname)(&u) == 0)
		tr_value("hostname=", u.nodename, NULL, NULL, NULL);
	errno = saved;
	return r;
}

TR_HOOK long sysconf(int name)
{
	long r = TR_CALL(sysconf)(name);

	if ((name == _SC_NPROCESSORS_ONLN || name == _SC_NPROCESSORS_CONF) && tr_active())
		tr_nprocs(r);
	return r;
}

TR_HOOK int get_nprocs(void)
{
	int r = TR_CALL(get_nprocs)();

	if (tr_active())
		tr_nprocs(r);
	return r;
}

TR_HOOK int get_nprocs_conf(void)
{
	int r = TR_CALL(get_nprocs_conf)();

	if (tr_active())
		tr_nprocs(r);
	return r;
}

/* its own CPUs: the state it started with (lib/pstate.h), or its own doing */
TR_HOOK int sched_getaffinity(pid_t pid, size_t size, cpu_set_t *mask)
{
	int r = TR_CALL(sched_getaffinity)(pid, size, mask);

	if (r == 0 && pid != 0 && pid != tr_pid && tr_active())
		tr_opaque("the CPUs of another process", NULL);
	return r;
}

/* ---- the parent ---- */

/*
 * A command run ahead of need in a pool worker has the worker for its
 * parent; under $(shell) it has make.  Every shell reads getppid() at
 * start-up ($PPID), so it cannot be an input that stops reuse: the root
 * process (the one whose parent is the runner that ASYNCCOMPILE_TRACE
 * names) is told the parent the runner names, make's pid.  /proc/self/
 * stat and status name the real one, and stay inputs without identity.
 */
TR_HOOK pid_t getppid(void)
{
	pid_t p = TR_CALL(getppid)();

	if (__atomic_load_n(&tr_state, __ATOMIC_ACQUIRE) == TR_ON && tr_env.runner &&
	    (uint64_t)p == tr_env.runner)
		return (pid_t)tr_env.ppid;
	return p;
}

/* ---- clocks and randomness ---- */

/* the pid that wrote its CLOCK, its RANDOM (a fork child is another process) */
static int tr_clock_pid, tr_random_pid;

static int tr_answer_fd(int fd)
{
	struct stat st;
	uint64_t dev = fd == 1 ? tr_env.out_dev : tr_env.err_dev;
	uint64_t ino = fd == 1 ? tr_env.out_ino : tr_env.err_ino;

	if (fstat(fd, &st) < 0)
		return 0;
	if (!tr_env.pipes || (!dev && !ino))
		return S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode);
	return S_ISFIFO(st.st_mode) && st.st_dev == dev && st.st_ino == ino;
}

/* A CLOCK or RANDOM event, once per process and type. */
static void tr_nondet(int type, int *once)
{
	struct tl_event ev;
	struct tr_guard g;
	int pid = __atomic_load_n(&tr_pid, __ATOMIC_RELAXED);

	if (__atomic_exchange_n(once, pid, __ATOMIC_RELAXED) == pid)
		return;
	tr_lock(&g);
	tr_event_init(&ev, type);
	if (tr_answer_fd(1) || tr_answer_fd(2))
		ev.flags = TL_TO_ANSWER;
	tr_write(&ev, NULL, 0);
	tr_unlock(&g);
}

/* Cheap unless this process has not yet said it read one. */
#define TR_NONDET(type, once)                                                              \
	do {                                                                               \
		if (__builtin_expect(__atomic_load_n(&tr_state, __ATOMIC_RELAXED) != TR_ON || \
					     __atomic_load_n(&(once), __ATOMIC_RELAXED) !=       \
						     __atomic_load_n(&tr_pid, __ATOMIC_RELAXED), \
				     0) &&                                                 \
		    tr_active())                                                           \
			tr_nondet(type, &(once));                                          \
	} while (0)
#define TR_CLOCK_READ() TR_NONDET(TL_CLOCK, tr_clock_pid)
#define TR_RANDOM_READ() TR_NONDET(TL_RANDOM, tr_random_pid)

TR_HOOK time_t time(time_t *t)
{
	TR_CLOCK_READ();
	return TR_CALL(time)(t);
}

TR_HOOK int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
	TR_CLOCK_READ();
	return TR_CALL(gettimeofday)(tv, tz);
}

/*
 * Every clock but CPU time: the real-time ones, the monotonic and
 * boot-time ones (an uptime, a time stamp, a seed), and a clock device's
 * (negative ids whose low bits are 3, FD_TO_CLOCKID).  CPU-time clocks
 * (the two constants, and the negative ids of clock_getcpuclockid) are
 * not events, as getrusage and clock are not (lib/tracelog.h).
 */
TR_HOOK int clock_gettime(clockid_t clk, struct timespec *ts)
{
	if (clk >= 0 ? clk != CLOCK_PROCESS_CPUTIME_ID && clk != CLOCK_THREAD_CPUTIME_ID
		     : (clk & 7) == 3)
		TR_CLOCK_READ();
	return TR_CALL(clock_gettime)(clk, ts);
}

TR_HOOK int timespec_get(struct timespec *ts, int base)
{
	TR_CLOCK_READ();
	return TR_CALL(timespec_get)(ts, base);
}

/* the legacy real-time clock (its header, sys/timeb.h, is deprecated) */
struct timeb;
int ftime(struct timeb *tp);
TR_HOOK int ftime(struct timeb *tp)
{
	TR_CLOCK_READ();
	return TR_CALL(ftime)(tp);
}

/* Its return value is the elapsed real time in clock ticks. */
TR_HOOK clock_t times(struct tms *buf)
{
	TR_CLOCK_READ();
	return TR_CALL(times)(buf);
}

TR_HOOK ssize_t getrandom(void *buf, size_t len, unsigned int flags)
{
	TR_RANDOM_READ();
	return TR_CALL(getrandom)(buf, len, flags);
}

TR_HOOK int getentropy(void *buf, size_t len)
{
	TR_RANDOM_READ();
	return TR_CALL(getentropy)(buf, len);
}

/* glibc has them from 2.36; an older one's program cannot call them */
#if __GLIBC_PREREQ(2, 36)

TR_HOOK uint32_t arc4random(void)
{
	TR_RANDOM_READ();
	return TR_CALL(arc4random)();
}

TR_HOOK void arc4random_buf(void *buf, size_t n)
{
	TR_RANDOM_READ();
	TR_CALL(arc4random_buf)(buf, n);
}

TR_HOOK uint32_t arc4random_uniform(uint32_t upper)
{
	TR_RANDOM_READ();
	return TR_CALL(arc4random_uniform)(upper);
}
#endif
