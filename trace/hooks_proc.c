/*
 * hooks_proc.c - calls that reach past the process: other processes, and
 * the system's own state.  Not file writes (those are WRITE events), but
 * effects all the same: a $(shell) that sends a signal sends it once per
 * call, so its answer must never be reused nor run ahead of need; and an
 * answer that depends on another process's state (is it alive, its
 * priority) has no identity to check again.
 *
 * Three classes, decided from the arguments:
 *  - own:     acts on or reads this process (pid 0, its pid, one of its
 *             threads): the command's own business, no event;
 *  - reads:   another process's or the system's state: OPAQUE (used
 *             once, as $(shell) uses it);
 *  - acts:    on another process, a process group, every process, or the
 *             system: IMPURE (never run ahead of need, never reused).
 *             Ahead of need (ASYNCCOMPILE_TRACE's ";ahead", tr_env.ahead:
 *             a speculated job, whose answer an IMPURE run makes useless
 *             anyway) the call is not made at all: it fails with EPERM,
 *             and make runs the command for real when it asks for it.
 * A signal to a process of the same command (`sleep 9 & kill $!`) is an
 * act too: telling it apart from another user's process would take a
 * look into /proc racing the pid's reuse; it costs reuse, never an answer.
 *
 * Every symbol hooked here, and its class (for the classification of the
 * C library's symbols):
 *   kill, sigqueue        own: pid is this process; reads: signal 0 to
 *                         another pid, a group, or -1; acts: any other
 *   killpg                reads: signal 0; acts: any other
 *   tgkill                own: tgid is this process; else as kill
 *   pidfd_open            own: this process; reads: another pid
 *   pidfd_getfd           reads (another process's descriptor)
 *   pidfd_send_signal     reads: signal 0; acts: any other
 *   setpriority           own: PRIO_PROCESS of this process or a thread
 *                         of it; acts: another pid, a group, a user
 *   getpriority           own: as setpriority; reads: any other
 *   sched_setaffinity, sched_setscheduler, sched_setparam
 *                         own: pid 0, this process or a thread; acts: other
 *   sched_getscheduler, sched_getparam, sched_rr_get_interval
 *                         own: as above; reads: another pid
 *                         (sched_getaffinity: hooks_misc.c, nothing for
 *                         its own, the runner's state VALUE; OPAQUE)
 *   prlimit, prlimit64    own: pid 0 or this process; acts: setting
 *                         another's; reads: only getting another's
 *   process_vm_writev, process_madvise, process_mrelease, ptrace
 *                         acts (process_vm_readv: hooks_misc.c, OPAQUE)
 *   msgctl, shmctl, semctl
 *                         reads: the STAT, INFO and GET commands; acts:
 *                         IPC_RMID, IPC_SET, SETVAL, SETALL, SHM_LOCK...
 *                         (msgget, shmget, semget: hooks_misc.c, OPAQUE)
 *   msgsnd, msgrcv, semop, semtimedop
 *                         acts (a queue or set others see)
 *   shmat                 reads with SHM_RDONLY; acts otherwise
 *   mq_unlink, sem_unlink, shm_unlink
 *                         acts (names other processes share; the C
 *                         library removes them without a hooked call)
 *   reboot, sethostname, setdomainname, sethostid, settimeofday,
 *   clock_settime, swapon, swapoff, acct, vhangup, init_module,
 *   delete_module, pivot_root, ioperm, iopl, quotactl, lckpwdf
 *                         acts (the system)
 *   adjtime               reads: no delta; acts: a delta
 *   adjtimex, ntp_adjtime, clock_adjtime
 *                         reads: modes 0; acts: any other
 *   klogctl               reads: the size and read-all actions; acts: any
 *                         other (a destructive read, clearing, the console)
 *   syslog, vsyslog, __syslog_chk, __vsyslog_chk
 *                         acts (the system log)
 *   pututline, pututxline, updwtmp, updwtmpx, logwtmp, login, logout
 *                         acts (utmp and wtmp, written without a hooked call)
 *   getutent, getutent_r, getutid, getutid_r, getutline, getutline_r,
 *   getutxent, getutxid, getutxline
 *                         reads (utmp, read without a hooked call)
 *   setns, unshare        reads (what the process sees changes under it:
 *                         its paths no longer name what the log says)
 * Not hooked, and why: raise, pthread_kill, pthread_sigqueue, nice,
 * setpgid, setsid, setrlimit, capset, prctl, personality (this process or
 * its own children); sync, syncfs, sync_file_range (no answer can tell);
 * openlog, closelog (no message sent); tcsetattr, tcflush, tcsendbreak,
 * tcsetpgrp, ioctl (descriptors already open: a traced command's are
 * /dev/null and pipes, and a terminal it opens is a device read, already
 * OPAQUE); stime (no default version to interpose).
 * A raw syscall() of the same calls (hooks_fd.c's hook asks
 * tr_proc_syscall): kill, tkill, tgkill, rt_sigqueueinfo,
 * rt_tgsigqueueinfo, setpriority, sched_setaffinity and prlimit64 are
 * classed by their arguments as above; pidfd_send_signal by its signal;
 * getpriority, sched_get*, pidfd_open, pidfd_getfd, kcmp, setns, unshare
 * read; ptrace, process_vm_writev, process_madvise, process_mrelease,
 * sched_setscheduler, sched_setparam, sched_setattr, ioprio_set, the
 * System V IPC calls but the gets, mq_unlink, reboot, sethostname,
 * setdomainname, settimeofday, clock_settime, adjtimex, clock_adjtime,
 * swapon, swapoff, acct, init_module, finit_module, delete_module,
 * kexec_load, kexec_file_load, syslog, ioperm, iopl, vhangup,
 * migrate_pages and move_pages act, whatever their arguments.
 */
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/io.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/msg.h>
#if __GLIBC_PREREQ(2, 36)
#include <sys/pidfd.h>
#endif
#include <sys/ptrace.h>
#include <sys/quota.h>
#include <sys/reboot.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/swap.h>
#include <sys/syscall.h>
#include <sys/syslog.h>
#include <sys/time.h>
#include <sys/timex.h>
#include <shadow.h>
#include <time.h>
#include <unistd.h>
#include <utmp.h>
#include <utmpx.h>

#include "trace/trace.h"

/* the C library exports these without declaring them */
int init_module(void *image, unsigned long len, const char *params);
int delete_module(const char *name, unsigned int flags);
int pivot_root(const char *new_root, const char *put_old);
void __syslog_chk(int pri, int flag, const char *fmt, ...);
void __vsyslog_chk(int pri, int flag, const char *fmt, va_list ap);

enum { TR_OWN, TR_READS, TR_ACTS };

/*
 * Is pid this process, or one of its threads?  Runs before the guard (the
 * class decides whether there is bookkeeping at all): errno is kept, as
 * a call that succeeds leaves errno alone (getpriority's callers test it).
 */
static int tr_proc_self(pid_t pid)
{
	char path[48] = "/proc/self/task/";
	struct stat st;
	int saved = errno, r;

	if (pid == __atomic_load_n(&tr_pid, __ATOMIC_RELAXED))
		return 1;
	if (pid <= 0)
		return 0;
	tr_fmt_u64(path + strlen(path), (uint64_t)pid);
	r = tr_stat_at(AT_FDCWD, path, 0, &st) == 0;
	errno = saved;
	return r;
}

/* pid 0 names this process too (the sched_* and prlimit families) */
static int tr_proc_self0(pid_t pid)
{
	return pid == 0 || tr_proc_self(pid);
}

/*
 * Write what a call of name, on pid (or none: TR_NO_PID), is; returns 1
 * when the call must not be made (an act, ahead of need).  Called only
 * when tr_active(); errno is the caller's again after it.
 */
#define TR_NO_PID ((long)INT32_MIN - 1)
static int tr_proc_say(int class, const char *name, long pid)
{
	char what[64];
	size_t o;
	struct tr_guard g;
	int refuse = 0;

	if (class == TR_OWN)
		return 0;
	tr_lock(&g);
	o = strnlen(name, 40);
	memcpy(what, name, o);
	what[o] = 0;
	if (pid != TR_NO_PID) {
		what[o++] = ' ';
		if (pid < 0)
			what[o++] = '-';
		tr_fmt_u64(what + o, (uint64_t)(pid < 0 ? -pid : pid));
	}
	if (class == TR_READS) {
		tr_opaque("read another process's or the system's state:", what);
	} else {
		tr_impure("acted on another process or the system:", what);
		refuse = tr_env.ahead;
	}
	tr_unlock(&g);
	return refuse;
}

/*
 * A hook: class is evaluated only when tracing; a refused call returns
 * fail with errno EPERM, as the kernel refuses an unprivileged caller.
 */
#define TR_PROC_FN(ret, fail, name, params, args, class, pid)                              \
	TR_HOOK ret name params                                                            \
	{                                                                                  \
		if (tr_active() && tr_proc_say((class), #name, (pid))) {                   \
			errno = EPERM;                                                     \
			return fail;                                                       \
		}                                                                          \
		return TR_CALL(name) args;                                                 \
	}
#define TR_ACTS_FN(ret, name, params, args)                                                \
	TR_PROC_FN(ret, -1, name, params, args, TR_ACTS, TR_NO_PID)
#define TR_READS_FN(ret, fail, name, params, args)                                         \
	TR_PROC_FN(ret, fail, name, params, args, TR_READS, TR_NO_PID)

/* ---- signals ---- */

/* A signal to pid (kill's meaning: 0 its group, -1 everyone, < -1 a group). */
static int tr_signal_class(pid_t pid, int sig)
{
	if (pid > 0 && tr_proc_self(pid))
		return TR_OWN;
	return sig == 0 ? TR_READS : TR_ACTS;
}

TR_PROC_FN(int, -1, kill, (pid_t pid, int sig), (pid, sig), tr_signal_class(pid, sig), pid)
TR_PROC_FN(int, -1, sigqueue, (pid_t pid, int sig, const union sigval v), (pid, sig, v),
	   tr_signal_class(pid, sig), pid)
TR_PROC_FN(int, -1, killpg, (pid_t pg, int sig), (pg, sig), sig == 0 ? TR_READS : TR_ACTS,
	   -(long)pg)
TR_PROC_FN(int, -1, tgkill, (pid_t tgid, pid_t tid, int sig), (tgid, tid, sig),
	   tr_signal_class(tgid, sig), tgid)
/* glibc 2.36 exports (and declares) the pidfd calls, process_madvise, process_mrelease */
#if __GLIBC_PREREQ(2, 36)
TR_PROC_FN(int, -1, pidfd_send_signal, (int fd, int sig, siginfo_t *info, unsigned int flags),
	   (fd, sig, info, flags), sig == 0 ? TR_READS : TR_ACTS, TR_NO_PID)
TR_PROC_FN(int, -1, pidfd_open, (pid_t pid, unsigned int flags), (pid, flags),
	   tr_proc_self(pid) ? TR_OWN : TR_READS, pid)
TR_READS_FN(int, -1, pidfd_getfd, (int pidfd, int fd, unsigned int flags), (pidfd, fd, flags))
#endif

/* ---- scheduling and limits of other processes ---- */

/* PRIO_PROCESS of this process or a thread of it (who 0 is the caller). */
static int tr_prio_own(int which, id_t who)
{
	return which == PRIO_PROCESS && (who == 0 || tr_proc_self((pid_t)who));
}

TR_PROC_FN(int, -1, setpriority, (__priority_which_t which, id_t who, int prio),
	   (which, who, prio), tr_prio_own((int)which, who) ? TR_OWN : TR_ACTS, (long)who)
TR_PROC_FN(int, -1, getpriority, (__priority_which_t which, id_t who), (which, who),
	   tr_prio_own((int)which, who) ? TR_OWN : TR_READS, (long)who)
TR_PROC_FN(int, -1, sched_setaffinity, (pid_t pid, size_t size, const cpu_set_t *set),
	   (pid, size, set), tr_proc_self0(pid) ? TR_OWN : TR_ACTS, pid)
TR_PROC_FN(int, -1, sched_setscheduler, (pid_t pid, int policy, const struct sched_param *p),
	   (pid, policy, p), tr_proc_self0(pid) ? TR_OWN : TR_ACTS, pid)
TR_PROC_FN(int, -1, sched_setparam, (pid_t pid, const struct sched_param *p), (pid, p),
	   tr_proc_self0(pid) ? TR_OWN : TR_ACTS, pid)
TR_PROC_FN(int, -1, sched_getscheduler, (pid_t pid), (pid),
	   tr_proc_self0(pid) ? TR_OWN : TR_READS, pid)
TR_PROC_FN(int, -1, sched_getparam, (pid_t pid, struct sched_param *p), (pid, p),
	   tr_proc_self0(pid) ? TR_OWN : TR_READS, pid)
TR_PROC_FN(int, -1, sched_rr_get_interval, (pid_t pid, struct timespec *t), (pid, t),
	   tr_proc_self0(pid) ? TR_OWN : TR_READS, pid)

/* prlimit: pid 0 or this process is its own; setting another's acts. */
#define TR_PRLIMIT_CLASS(pid, nl) \
	(tr_proc_self0(pid) ? TR_OWN : (nl) ? TR_ACTS : TR_READS)
TR_PROC_FN(int, -1, prlimit, (pid_t pid, enum __rlimit_resource r, const struct rlimit *nl,
			      struct rlimit *ol), (pid, r, nl, ol), TR_PRLIMIT_CLASS(pid, nl), pid)
TR_PROC_FN(int, -1, prlimit64, (pid_t pid, enum __rlimit_resource r,
				const struct rlimit64 *nl, struct rlimit64 *ol),
	   (pid, r, nl, ol), TR_PRLIMIT_CLASS(pid, nl), pid)

/* ---- another process's memory and execution ---- */

TR_PROC_FN(ssize_t, -1, process_vm_writev, (pid_t pid, const struct iovec *l, unsigned long ln,
					     const struct iovec *r, unsigned long rn,
					     unsigned long f),
	   (pid, l, ln, r, rn, f), tr_proc_self(pid) ? TR_OWN : TR_ACTS, pid)
#if __GLIBC_PREREQ(2, 36)
TR_ACTS_FN(ssize_t, process_madvise, (int fd, const struct iovec *v, size_t n, int advice,
				      unsigned int flags), (fd, v, n, advice, flags))
TR_ACTS_FN(int, process_mrelease, (int fd, unsigned int flags), (fd, flags))
#endif

TR_HOOK long ptrace(enum __ptrace_request req, ...)
{
	va_list ap;
	pid_t pid;
	void *addr, *data;

	/* what the C library's ptrace reads, whatever the request */
	va_start(ap, req);
	pid = va_arg(ap, pid_t);
	addr = va_arg(ap, void *);
	data = va_arg(ap, void *);
	va_end(ap);
	if (tr_active() && tr_proc_say(TR_ACTS, "ptrace", pid)) {
		errno = EPERM;
		return -1;
	}
	return TR_CALL(ptrace)(req, pid, addr, data);
}

/* ---- System V IPC: objects every process of the machine may see ---- */

static int tr_msgctl_class(int cmd)
{
	switch (cmd) {
	case IPC_STAT: case IPC_INFO: case MSG_STAT: case MSG_INFO:
#ifdef MSG_STAT_ANY
	case MSG_STAT_ANY:
#endif
		return TR_READS;
	default:
		return TR_ACTS;
	}
}

static int tr_shmctl_class(int cmd)
{
	switch (cmd) {
	case IPC_STAT: case IPC_INFO: case SHM_STAT: case SHM_INFO:
#ifdef SHM_STAT_ANY
	case SHM_STAT_ANY:
#endif
		return TR_READS;
	default:
		return TR_ACTS;
	}
}

static int tr_semctl_class(int cmd)
{
	switch (cmd) {
	case IPC_STAT: case IPC_INFO: case SEM_STAT: case SEM_INFO: case GETVAL: case GETALL:
	case GETPID: case GETNCNT: case GETZCNT:
#ifdef SEM_STAT_ANY
	case SEM_STAT_ANY:
#endif
		return TR_READS;
	default:
		return TR_ACTS;
	}
}

TR_PROC_FN(int, -1, msgctl, (int id, int cmd, struct msqid_ds *b), (id, cmd, b),
	   tr_msgctl_class(cmd), TR_NO_PID)
TR_PROC_FN(int, -1, shmctl, (int id, int cmd, struct shmid_ds *b), (id, cmd, b),
	   tr_shmctl_class(cmd), TR_NO_PID)

/* semctl's fourth argument, as the C library reads it (sem.h leaves it to us) */
union tr_semun {
	int val;
	void *buf;
	unsigned short *array;
};

TR_HOOK int semctl(int id, int num, int cmd, ...)
{
	union tr_semun arg = { 0 };
	va_list ap;

	/* only the commands that take it: the caller passed nothing for the others */
	switch (cmd) {
	case SETVAL: case GETALL: case SETALL: case IPC_STAT: case IPC_SET: case SEM_STAT:
	case IPC_INFO: case SEM_INFO:
#ifdef SEM_STAT_ANY
	case SEM_STAT_ANY:
#endif
		va_start(ap, cmd);
		arg = va_arg(ap, union tr_semun);
		va_end(ap);
		break;
	default:
		break;
	}
	if (tr_active() && tr_proc_say(tr_semctl_class(cmd), "semctl", TR_NO_PID)) {
		errno = EPERM;
		return -1;
	}
	return TR_CALL(semctl)(id, num, cmd, arg);
}

TR_ACTS_FN(int, msgsnd, (int id, const void *m, size_t n, int f), (id, m, n, f))
TR_ACTS_FN(ssize_t, msgrcv, (int id, void *m, size_t n, long t, int f), (id, m, n, t, f))
TR_ACTS_FN(int, semop, (int id, struct sembuf *ops, size_t n), (id, ops, n))
TR_ACTS_FN(int, semtimedop, (int id, struct sembuf *ops, size_t n, const struct timespec *t),
	   (id, ops, n, t))
TR_PROC_FN(void *, (void *)-1, shmat, (int id, const void *a, int f), (id, a, f),
	   (f & SHM_RDONLY) ? TR_READS : TR_ACTS, TR_NO_PID)
TR_ACTS_FN(int, mq_unlink, (const char *n), (n))
TR_ACTS_FN(int, sem_unlink, (const char *n), (n))
TR_ACTS_FN(int, shm_unlink, (const char *n), (n))

/* ---- the system ---- */

TR_ACTS_FN(int, reboot, (int how), (how))
TR_ACTS_FN(int, sethostname, (const char *n, size_t l), (n, l))
TR_ACTS_FN(int, setdomainname, (const char *n, size_t l), (n, l))
TR_ACTS_FN(int, sethostid, (long id), (id))
TR_ACTS_FN(int, settimeofday, (const struct timeval *tv, const struct timezone *tz), (tv, tz))
TR_ACTS_FN(int, clock_settime, (clockid_t c, const struct timespec *t), (c, t))
TR_ACTS_FN(int, swapon, (const char *p, int f), (p, f))
TR_ACTS_FN(int, swapoff, (const char *p), (p))
TR_ACTS_FN(int, acct, (const char *p), (p))
TR_ACTS_FN(int, vhangup, (void), ())
TR_ACTS_FN(int, init_module, (void *m, unsigned long l, const char *p), (m, l, p))
TR_ACTS_FN(int, delete_module, (const char *n, unsigned int f), (n, f))
TR_ACTS_FN(int, pivot_root, (const char *n, const char *o), (n, o))
TR_ACTS_FN(int, ioperm, (unsigned long from, unsigned long num, int on), (from, num, on))
TR_ACTS_FN(int, iopl, (int level), (level))
TR_ACTS_FN(int, quotactl, (int cmd, const char *dev, int id, caddr_t addr),
	   (cmd, dev, id, addr))
TR_ACTS_FN(int, lckpwdf, (void), ())
/* modes 0 only reads; t may be NULL at run time (EFAULT) whatever the header says */
static int tr_timex_class(const struct timex *t)
{
	__asm__("" : "+r"(t));
	return t && t->modes ? TR_ACTS : TR_READS;
}

TR_PROC_FN(int, -1, adjtime, (const struct timeval *d, struct timeval *o), (d, o),
	   d ? TR_ACTS : TR_READS, TR_NO_PID)
TR_PROC_FN(int, -1, adjtimex, (struct timex *t), (t), tr_timex_class(t),
	   TR_NO_PID)
TR_PROC_FN(int, -1, ntp_adjtime, (struct timex *t), (t), tr_timex_class(t),
	   TR_NO_PID)
TR_PROC_FN(int, -1, clock_adjtime, (clockid_t c, struct timex *t), (c, t),
	   tr_timex_class(t), TR_NO_PID)
/* 3 read all, 9 size unread, 10 size of the buffer; 0 and 1 do nothing */
TR_PROC_FN(int, -1, klogctl, (int type, char *b, int l), (type, b, l),
	   (type == 0 || type == 1 || type == 3 || type == 9 || type == 10) ? TR_READS : TR_ACTS,
	   TR_NO_PID)
TR_READS_FN(int, -1, setns, (int fd, int type), (fd, type))
TR_READS_FN(int, -1, unshare, (int flags), (flags))

/* ---- the system log ---- */

TR_HOOK void vsyslog(int pri, const char *fmt, va_list ap)
{
	if (!tr_active() || !tr_proc_say(TR_ACTS, "syslog", TR_NO_PID))
		TR_CALL(vsyslog)(pri, fmt, ap);
}

TR_HOOK void syslog(int pri, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsyslog(pri, fmt, ap);
	va_end(ap);
}

TR_HOOK void __vsyslog_chk(int pri, int flag, const char *fmt, va_list ap)
{
	if (!tr_active() || !tr_proc_say(TR_ACTS, "syslog", TR_NO_PID))
		TR_CALL(__vsyslog_chk)(pri, flag, fmt, ap);
}

TR_HOOK void __syslog_chk(int pri, int flag, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	__vsyslog_chk(pri, flag, fmt, ap);
	va_end(ap);
}

/* ---- the login records ---- */

TR_PROC_FN(struct utmp *, NULL, pututline, (const struct utmp *u), (u), TR_ACTS, TR_NO_PID)
TR_PROC_FN(struct utmpx *, NULL, pututxline, (const struct utmpx *u), (u), TR_ACTS, TR_NO_PID)

#define TR_ACTS_VOID_FN(name, params, args)                                                \
	TR_HOOK void name params                                                           \
	{                                                                                  \
		if (!tr_active() || !tr_proc_say(TR_ACTS, #name, TR_NO_PID))               \
			TR_CALL(name) args;                                                \
	}
TR_ACTS_VOID_FN(updwtmp, (const char *f, const struct utmp *u), (f, u))
TR_ACTS_VOID_FN(updwtmpx, (const char *f, const struct utmpx *u), (f, u))
TR_ACTS_VOID_FN(logwtmp, (const char *l, const char *n, const char *h), (l, n, h))
TR_ACTS_VOID_FN(login, (const struct utmp *u), (u))
TR_ACTS_FN(int, logout, (const char *l), (l))

TR_READS_FN(struct utmp *, NULL, getutent, (void), ())
TR_READS_FN(int, -1, getutent_r, (struct utmp *b, struct utmp **r), (b, r))
TR_READS_FN(struct utmp *, NULL, getutid, (const struct utmp *u), (u))
TR_READS_FN(int, -1, getutid_r, (const struct utmp *u, struct utmp *b, struct utmp **r),
	    (u, b, r))
TR_READS_FN(struct utmp *, NULL, getutline, (const struct utmp *u), (u))
TR_READS_FN(int, -1, getutline_r, (const struct utmp *u, struct utmp *b, struct utmp **r),
	    (u, b, r))
TR_READS_FN(struct utmpx *, NULL, getutxent, (void), ())
TR_READS_FN(struct utmpx *, NULL, getutxid, (const struct utmpx *u), (u))
TR_READS_FN(struct utmpx *, NULL, getutxline, (const struct utmpx *u), (u))

/* ---- raw system calls ---- */

static int tr_sys_class(long nr, const long *a)
{
	switch (nr) {
	case SYS_kill: case SYS_tkill: case SYS_rt_sigqueueinfo:
		return tr_signal_class((pid_t)a[0], (int)a[1]);
	case SYS_tgkill: case SYS_rt_tgsigqueueinfo:
		return tr_signal_class((pid_t)a[0], (int)a[2]);
#ifdef SYS_pidfd_send_signal
	case SYS_pidfd_send_signal:
		return a[1] == 0 ? TR_READS : TR_ACTS;
	case SYS_pidfd_open:
#endif
#ifdef SYS_pidfd_getfd
	case SYS_pidfd_getfd:
#endif
	case SYS_setpriority:
		return tr_prio_own((int)a[0], (id_t)a[1]) ? TR_OWN : TR_ACTS;
	case SYS_sched_setaffinity:
		return tr_proc_self0((pid_t)a[0]) ? TR_OWN : TR_ACTS;
	case SYS_prlimit64:
		return TR_PRLIMIT_CLASS((pid_t)a[0], a[2]);
	case SYS_getpriority: case SYS_sched_getscheduler: case SYS_sched_getparam:
	case SYS_sched_rr_get_interval: case SYS_sched_getattr: case SYS_kcmp: case SYS_setns:
	case SYS_unshare:
		return TR_READS;
#ifdef SYS_process_madvise
	case SYS_process_madvise:
#endif
#ifdef SYS_process_mrelease
	case SYS_process_mrelease:
#endif
	case SYS_ptrace: case SYS_process_vm_writev: case SYS_sched_setscheduler: case SYS_sched_setparam:
	case SYS_sched_setattr: case SYS_ioprio_set: case SYS_msgctl: case SYS_semctl:
	case SYS_shmctl: case SYS_msgsnd: case SYS_msgrcv: case SYS_semop:
	case SYS_semtimedop: case SYS_shmat: case SYS_mq_unlink: case SYS_reboot:
	case SYS_sethostname: case SYS_setdomainname: case SYS_settimeofday:
	case SYS_clock_settime: case SYS_adjtimex: case SYS_clock_adjtime: case SYS_swapon:
	case SYS_swapoff: case SYS_acct: case SYS_init_module: case SYS_finit_module:
	case SYS_delete_module: case SYS_kexec_load: case SYS_kexec_file_load:
	case SYS_syslog: case SYS_ioperm: case SYS_iopl: case SYS_vhangup:
	case SYS_migrate_pages: case SYS_move_pages:
		return TR_ACTS;
	default:
		return TR_OWN;
	}
}

int tr_proc_syscall(long nr, const long *a)
{
	int class = tr_sys_class(nr, a);

	return class != TR_OWN && tr_active() && tr_proc_say(class, "syscall", nr);
}
