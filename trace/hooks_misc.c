/*
 * hooks_misc.c - inputs that are not file lookups, and the calls the
 * tracer does not follow.
 *
 * VALUE: uname ("uname=sysname release version machine"), gethostname
 * ("hostname=" and the whole name, whatever the buffer got), the number
 * of CPUs as the program was told ("nprocs=N": sysconf of the processor
 * counts, get_nprocs, get_nprocs_conf, sched_getaffinity of itself,
 * pthread_getaffinity_np).
 * CLOCK: the first real-time clock reading of each process (time,
 * gettimeofday, clock_gettime of CLOCK_REALTIME, _COARSE, _ALARM, TAI,
 * timespec_get); TL_TO_ANSWER when its standard output or error is the
 * job's pipe (ASYNCCOMPILE_TRACE's OUTDEV:OUTINO:ERRDEV:ERRINO; with
 * those unknown, 0:0, any pipe or socket counts).
 * dlopen: a path is a READ, and the objects it loads are found by the
 * next object scan (objects.c); a bare name already loaded is nothing
 * new, any other bare name (a search of the loader's that the tracer
 * does not replay) is OPAQUE.  The hook is a tail jump so that glibc
 * still sees the program as the caller (its RPATH, RUNPATH, namespace).
 * getppid: the root process's parent as the runner names it (below).
 * OPAQUE: the name service (NSS), character set converters, sockets
 * other than AF_UNIX, connect, listen, sends with an address, shared
 * memory and other IPC, file system statistics, watches, mounts, chroot,
 * handles, catalogues, getdate, host id and domain name, wordexp,
 * dlmopen, process memory access, getpass (the terminal).
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
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <wordexp.h>

#include "trace/trace.h"

/* ---- calls the tracer does not follow ---- */

#define TR_OPAQUE_FN(ret, name, params, args)                                              \
	TR_REAL(name);                                                                     \
	TR_HOOK ret name params                                                            \
	{                                                                                  \
		if (tr_active())                                                           \
			tr_opaque("a call the tracer does not follow:", #name);            \
		return TR_CALL(name) args;                                                 \
	}

TR_OPAQUE_FN(struct passwd *, getpwnam, (const char *n), (n))
TR_OPAQUE_FN(struct passwd *, getpwuid, (uid_t u), (u))
TR_OPAQUE_FN(int, getpwnam_r, (const char *n, struct passwd *p, char *b, size_t l,
			       struct passwd **r), (n, p, b, l, r))
TR_OPAQUE_FN(int, getpwuid_r, (uid_t u, struct passwd *p, char *b, size_t l, struct passwd **r),
	     (u, p, b, l, r))
TR_OPAQUE_FN(struct passwd *, getpwent, (void), ())
TR_OPAQUE_FN(int, getpwent_r, (struct passwd *p, char *b, size_t l, struct passwd **r),
	     (p, b, l, r))
TR_OPAQUE_FN(struct group *, getgrnam, (const char *n), (n))
TR_OPAQUE_FN(struct group *, getgrgid, (gid_t g), (g))
TR_OPAQUE_FN(int, getgrnam_r, (const char *n, struct group *g, char *b, size_t l,
			       struct group **r), (n, g, b, l, r))
TR_OPAQUE_FN(int, getgrgid_r, (gid_t i, struct group *g, char *b, size_t l, struct group **r),
	     (i, g, b, l, r))
TR_OPAQUE_FN(struct group *, getgrent, (void), ())
TR_OPAQUE_FN(int, getgrent_r, (struct group *g, char *b, size_t l, struct group **r),
	     (g, b, l, r))
TR_OPAQUE_FN(int, getgrouplist, (const char *u, gid_t g, gid_t *gs, int *n), (u, g, gs, n))
TR_OPAQUE_FN(int, initgroups, (const char *u, gid_t g), (u, g))
TR_OPAQUE_FN(struct spwd *, getspnam, (const char *n), (n))
TR_OPAQUE_FN(int, getspnam_r, (const char *n, struct spwd *s, char *b, size_t l,
			       struct spwd **r), (n, s, b, l, r))
TR_OPAQUE_FN(char *, getlogin, (void), ())
TR_OPAQUE_FN(int, getlogin_r, (char *b, size_t l), (b, l))
TR_OPAQUE_FN(int, getaddrinfo, (const char *n, const char *s, const struct addrinfo *h,
				struct addrinfo **r), (n, s, h, r))
TR_OPAQUE_FN(int, getnameinfo, (const struct sockaddr *sa, socklen_t sl, char *h, socklen_t hl,
				char *s, socklen_t svl, int f), (sa, sl, h, hl, s, svl, f))
TR_OPAQUE_FN(struct hostent *, gethostbyname, (const char *n), (n))
TR_OPAQUE_FN(struct hostent *, gethostbyname2, (const char *n, int af), (n, af))
TR_OPAQUE_FN(int, gethostbyname_r, (const char *n, struct hostent *h, char *b, size_t l,
				    struct hostent **r, int *e), (n, h, b, l, r, e))
TR_OPAQUE_FN(int, gethostbyname2_r, (const char *n, int af, struct hostent *h, char *b, size_t l,
				     struct hostent **r, int *e), (n, af, h, b, l, r, e))
TR_OPAQUE_FN(struct hostent *, gethostbyaddr, (const void *a, socklen_t l, int t), (a, l, t))
TR_OPAQUE_FN(int, gethostbyaddr_r, (const void *a, socklen_t al, int t, struct hostent *h,
				    char *b, size_t l, struct hostent **r, int *e),
	     (a, al, t, h, b, l, r, e))
TR_OPAQUE_FN(struct hostent *, gethostent, (void), ())
TR_OPAQUE_FN(struct servent *, getservbyname, (const char *n, const char *p), (n, p))
TR_OPAQUE_FN(struct servent *, getservbyport, (int port, const char *p), (port, p))
TR_OPAQUE_FN(int, getservbyname_r, (const char *n, const char *p, struct servent *s, char *b,
				    size_t l, struct servent **r), (n, p, s, b, l, r))
TR_OPAQUE_FN(int, getservbyport_r, (int port, const char *p, struct servent *s, char *b,
				    size_t l, struct servent **r), (port, p, s, b, l, r))
TR_OPAQUE_FN(struct protoent *, getprotobyname, (const char *n), (n))
TR_OPAQUE_FN(struct protoent *, getprotobynumber, (int p), (p))
TR_OPAQUE_FN(struct netent *, getnetbyname, (const char *n), (n))
TR_OPAQUE_FN(int, innetgr, (const char *n, const char *h, const char *u, const char *d),
	     (n, h, u, d))
TR_OPAQUE_FN(int, getifaddrs, (struct ifaddrs **r), (r))
TR_OPAQUE_FN(iconv_t, iconv_open, (const char *to, const char *from), (to, from))
TR_OPAQUE_FN(int, connect, (int fd, const struct sockaddr *a, socklen_t l), (fd, a, l))
TR_OPAQUE_FN(int, listen, (int fd, int n), (fd, n))
TR_OPAQUE_FN(int, shm_open, (const char *n, int f, mode_t m), (n, f, m))
TR_OPAQUE_FN(int, shmget, (key_t k, size_t s, int f), (k, s, f))
TR_OPAQUE_FN(int, msgget, (key_t k, int f), (k, f))
TR_OPAQUE_FN(int, semget, (key_t k, int n, int f), (k, n, f))
/*
 * A file system's figures (free blocks, its type) have no identity to
 * check again: an answer is opaque.  A path that is not there is an
 * absence like any other (libselinux asks statfs("/sys/fs/selinux") in
 * every coreutils program, on most machines in vain).
 */
#define TR_STATFS_FN(name, buftype)                                                        \
	TR_REAL(name);                                                                     \
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
TR_OPAQUE_FN(int, inotify_add_watch, (int fd, const char *p, uint32_t m), (fd, p, m))
TR_OPAQUE_FN(int, fanotify_mark, (int fd, unsigned int f, uint64_t m, int d, const char *p),
	     (fd, f, m, d, p))
TR_OPAQUE_FN(int, mount, (const char *s, const char *t, const char *fs, unsigned long f,
			  const void *d), (s, t, fs, f, d))
TR_OPAQUE_FN(int, umount, (const char *t), (t))
TR_OPAQUE_FN(int, umount2, (const char *t, int f), (t, f))
TR_OPAQUE_FN(int, chroot, (const char *p), (p))
TR_OPAQUE_FN(int, name_to_handle_at, (int d, const char *p, struct file_handle *h, int *m,
				      int f), (d, p, h, m, f))
TR_OPAQUE_FN(int, open_by_handle_at, (int m, struct file_handle *h, int f), (m, h, f))
TR_OPAQUE_FN(nl_catd, catopen, (const char *n, int f), (n, f))
TR_OPAQUE_FN(struct tm *, getdate, (const char *s), (s))
TR_OPAQUE_FN(int, getdate_r, (const char *s, struct tm *r), (s, r))
TR_OPAQUE_FN(long, gethostid, (void), ())
TR_OPAQUE_FN(int, getdomainname, (char *n, size_t l), (n, l))
TR_OPAQUE_FN(int, wordexp, (const char *w, wordexp_t *p, int f), (w, p, f))
TR_OPAQUE_FN(void *, dlmopen, (Lmid_t l, const char *f, int m), (l, f, m))
TR_OPAQUE_FN(ssize_t, process_vm_readv, (pid_t p, const struct iovec *l, unsigned long ln,
					 const struct iovec *r, unsigned long rn, unsigned long f),
	     (p, l, ln, r, rn, f))
TR_OPAQUE_FN(int, sysinfo, (struct sysinfo *i), (i))
TR_OPAQUE_FN(char *, getpass, (const char *p), (p))

TR_REAL(sem_open);
TR_HOOK sem_t *sem_open(const char *name, int oflag, ...)
{
	va_list ap;
	mode_t mode;
	unsigned value;

	va_start(ap, oflag);
	mode = va_arg(ap, mode_t);
	value = va_arg(ap, unsigned);
	va_end(ap);
	if (tr_active())
		tr_opaque("a call the tracer does not follow:", "sem_open");
	return TR_CALL(sem_open)(name, oflag, mode, value);
}

TR_REAL(mq_open);
TR_HOOK mqd_t mq_open(const char *name, int oflag, ...)
{
	va_list ap;
	mode_t mode;
	struct mq_attr *attr;

	va_start(ap, oflag);
	mode = va_arg(ap, mode_t);
	attr = va_arg(ap, struct mq_attr *);
	va_end(ap);
	if (tr_active())
		tr_opaque("a call the tracer does not follow:", "mq_open");
	return TR_CALL(mq_open)(name, oflag, mode, attr);
}

TR_REAL(socket);
TR_HOOK int socket(int domain, int type, int protocol)
{
	if (domain != AF_UNIX && tr_active())
		tr_opaque("a network socket", NULL);
	return TR_CALL(socket)(domain, type, protocol);
}

TR_REAL(sendto);
TR_HOOK ssize_t sendto(int fd, const void *buf, size_t len, int flags,
		       const struct sockaddr *dest, socklen_t destlen)
{
	if (dest && tr_active())
		tr_opaque("a message sent to an address", NULL);
	return TR_CALL(sendto)(fd, buf, len, flags, dest, destlen);
}

TR_REAL(sendmsg);
TR_HOOK ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	if (msg && msg->msg_name && tr_active())
		tr_opaque("a message sent to an address", NULL);
	return TR_CALL(sendmsg)(fd, msg, flags);
}

TR_REAL(sendmmsg);
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

TR_REAL(dlopen);

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

TR_REAL(uname);
TR_REAL(gethostname);
TR_REAL(sysconf);
TR_REAL(get_nprocs);
TR_REAL(get_nprocs_conf);
TR_REAL(sched_getaffinity);
TR_REAL(pthread_getaffinity_np);

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

TR_HOOK int sched_getaffinity(pid_t pid, size_t size, cpu_set_t *mask)
{
	int r = TR_CALL(sched_getaffinity)(pid, size, mask);

	if (r == 0 && tr_active()) {
		if (pid == 0 || pid == tr_pid)
			tr_nprocs(CPU_COUNT_S(size, mask));
		else
			tr_opaque("the CPUs of another process", NULL);
	}
	return r;
}

TR_HOOK int pthread_getaffinity_np(pthread_t t, size_t size, cpu_set_t *mask)
{
	int r = TR_CALL(pthread_getaffinity_np)(t, size, mask);

	if (r == 0 && tr_active())
		tr_nprocs(CPU_COUNT_S(size, mask));
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
TR_REAL(getppid);

TR_HOOK pid_t getppid(void)
{
	pid_t p = TR_CALL(getppid)();

	if (__atomic_load_n(&tr_state, __ATOMIC_ACQUIRE) == TR_ON && tr_env.runner &&
	    (uint64_t)p == tr_env.runner)
		return (pid_t)tr_env.ppid;
	return p;
}

/* ---- the clock ---- */

TR_REAL(time);
TR_REAL(gettimeofday);
TR_REAL(clock_gettime);
TR_REAL(timespec_get);

/* the pid that wrote its CLOCK (a fork child is another process) */
static int tr_clock_pid;

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

static void tr_clock(void)
{
	struct tl_event ev;
	struct tr_guard g;
	int pid = __atomic_load_n(&tr_pid, __ATOMIC_RELAXED);

	if (__atomic_exchange_n(&tr_clock_pid, pid, __ATOMIC_RELAXED) == pid)
		return;
	tr_lock(&g);
	tr_event_init(&ev, TL_CLOCK);
	if (tr_answer_fd(1) || tr_answer_fd(2))
		ev.flags = TL_TO_ANSWER;
	tr_write(&ev, NULL, 0);
	tr_unlock(&g);
}

/* Cheap unless this process has not yet said it read the clock. */
#define TR_CLOCK_READ()                                                                    \
	do {                                                                               \
		if (__builtin_expect(__atomic_load_n(&tr_state, __ATOMIC_RELAXED) != TR_ON || \
					     __atomic_load_n(&tr_clock_pid, __ATOMIC_RELAXED) != \
						     __atomic_load_n(&tr_pid, __ATOMIC_RELAXED), \
				     0) &&                                                 \
		    tr_active())                                                           \
			tr_clock();                                                        \
	} while (0)

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

TR_HOOK int clock_gettime(clockid_t clk, struct timespec *ts)
{
	if (clk == CLOCK_REALTIME || clk == CLOCK_REALTIME_COARSE || clk == CLOCK_TAI ||
	    clk == CLOCK_REALTIME_ALARM)
		TR_CLOCK_READ();
	return TR_CALL(clock_gettime)(clk, ts);
}

TR_HOOK int timespec_get(struct timespec *ts, int base)
{
	if (base == TIME_UTC)
		TR_CLOCK_READ();
	return TR_CALL(timespec_get)(ts, base);
}
