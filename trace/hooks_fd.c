/*
 * hooks_fd.c - the log's descriptor outlives the program's housekeeping,
 * and syscall() does not go around the hooks.
 *
 * Programs close descriptors they do not know (shells, daemons,
 * subprocess modules): close() of ours succeeds without closing it;
 * close_range() and closefrom() close around it; dup2() or dup3() onto
 * it first move the log to another descriptor (tr_fd_protect) and the
 * call then proceeds, so the program gets exactly the descriptor it
 * asked for; fcntl(F_SETFD/F_SETFL) and ioctl(FIOCLEX) on ours are
 * ignored (close-on-exec would lose the children, clearing O_APPEND the
 * ordering of events).
 *
 * syscall(): a raw system call bypasses every hook.  The ones that look
 * up or change files, start or replace processes, talk to the network or
 * other processes, or read values the tracer models are OPAQUE (then
 * made); those that act on other processes or the system are IMPURE
 * (tr_proc_syscall, hooks_proc.c: refused ahead of need); close, dup2,
 * dup3, close_range and fcntl get the protection above; anything else
 * passes through.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "trace/trace.h"

/* Is fd the log of a traced process? */
static inline int tr_is_log(long fd)
{
	return fd >= 0 && fd == __atomic_load_n(&tr_logfd, __ATOMIC_RELAXED) &&
	       __atomic_load_n(&tr_state, __ATOMIC_ACQUIRE) == TR_ON;
}

static void tr_protect(int fd)
{
	struct tr_guard g;

	tr_lock(&g);
	tr_fd_protect(fd);
	tr_unlock(&g);
}

TR_HOOK int close(int fd)
{
	if (__builtin_expect(tr_is_log(fd), 0))
		return 0;
	return TR_CALL(close)(fd);
}

TR_HOOK int dup2(int old, int new)
{
	if (tr_is_log(new))
		tr_protect(new);
	return TR_CALL(dup2)(old, new);
}

TR_HOOK int dup3(int old, int new, int flags)
{
	if (tr_is_log(new))
		tr_protect(new);
	return TR_CALL(dup3)(old, new, flags);
}

/* close_range without our descriptor in it */
static int tr_close_range(unsigned first, unsigned last, int flags,
			  int (*real)(unsigned, unsigned, int))
{
	int fd = __atomic_load_n(&tr_logfd, __ATOMIC_RELAXED), r = 0;

	if (!tr_is_log(fd) || first > last || (unsigned)fd < first || (unsigned)fd > last)
		return real(first, last, flags);
	if ((unsigned)fd > first)
		r = real(first, (unsigned)fd - 1, flags);
	if (r == 0 && (unsigned)fd < last)
		r = real((unsigned)fd + 1, last, flags);
	return r;
}

TR_HOOK int close_range(unsigned int first, unsigned int last, int flags)
{
	return tr_close_range(first, last, flags, TR_CALL(close_range));
}

TR_HOOK void closefrom(int lowfd)
{
	int fd = __atomic_load_n(&tr_logfd, __ATOMIC_RELAXED);

	if (!tr_is_log(fd) || fd < lowfd) {
		TR_CALL(closefrom)(lowfd);
		return;
	}
	if (fd > (lowfd < 0 ? 0 : lowfd) &&
	    TR_CALL(close_range)((unsigned)(lowfd < 0 ? 0 : lowfd), (unsigned)fd - 1, 0) < 0)
		for (int i = lowfd < 0 ? 0 : lowfd; i < fd; i++)
			TR_CALL(close)(i);
	TR_CALL(closefrom)(fd + 1);
}

static int tr_fcntl_ignored(int fd, int cmd)
{
	return (cmd == F_SETFD || cmd == F_SETFL) && tr_is_log(fd);
}

/* fcntl and fcntl64 differ only in which real function they go on to */
#define TR_FCNTL_HOOK(name)							\
	TR_HOOK int name(int fd, int cmd, ...)					\
	{									\
		va_list ap;							\
		void *arg;							\
										\
		va_start(ap, cmd);						\
		arg = va_arg(ap, void *);					\
		va_end(ap);							\
		if (__builtin_expect(tr_fcntl_ignored(fd, cmd), 0))		\
			return 0;						\
		return TR_CALL(name)(fd, cmd, arg);				\
	}
TR_FCNTL_HOOK(fcntl)
TR_FCNTL_HOOK(fcntl64)

TR_HOOK int ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (__builtin_expect(request == FIOCLEX && tr_is_log(fd), 0))
		return 0;
	return TR_CALL(ioctl)(fd, request, arg);
}

/* ---- syscall() ---- */

static int tr_raw_close_range(unsigned first, unsigned last, int flags)
{
	return (int)TR_CALL(syscall)(SYS_close_range, first, last, flags);
}

/* 1 for the system calls the tracer would have to see to vouch for a run. */
static int tr_sys_opaque(long nr, long a0)
{
	switch (nr) {
	case SYS_open: case SYS_openat: case SYS_creat: case SYS_stat: case SYS_lstat:
	case SYS_newfstatat: case SYS_statx: case SYS_access: case SYS_faccessat:
	case SYS_execve: case SYS_execveat: case SYS_clone: case SYS_fork: case SYS_vfork:
	case SYS_rename: case SYS_renameat: case SYS_renameat2: case SYS_unlink:
	case SYS_unlinkat: case SYS_mkdir: case SYS_mkdirat: case SYS_rmdir: case SYS_link:
	case SYS_linkat: case SYS_symlink: case SYS_symlinkat: case SYS_chdir: case SYS_fchdir:
	case SYS_chroot: case SYS_getdents: case SYS_getdents64: case SYS_readlink:
	case SYS_readlinkat: case SYS_truncate: case SYS_chmod: case SYS_fchmodat:
	case SYS_chown: case SYS_lchown: case SYS_fchownat: case SYS_utime: case SYS_utimes:
	case SYS_utimensat: case SYS_futimesat: case SYS_mknod: case SYS_mknodat:
	case SYS_connect: case SYS_bind: case SYS_listen: case SYS_sendto: case SYS_sendmsg:
	case SYS_sendmmsg: case SYS_accept: case SYS_accept4: case SYS_uname:
	case SYS_sched_getaffinity: case SYS_inotify_add_watch: case SYS_fanotify_mark:
	case SYS_name_to_handle_at: case SYS_open_by_handle_at: case SYS_mount:
	case SYS_umount2: case SYS_pivot_root: case SYS_statfs: case SYS_setxattr:
	case SYS_lsetxattr: case SYS_getxattr: case SYS_lgetxattr: case SYS_listxattr:
	case SYS_llistxattr: case SYS_removexattr: case SYS_lremovexattr: case SYS_exit:
	case SYS_exit_group: case SYS_process_vm_readv: case SYS_shmget: case SYS_msgget:
	case SYS_semget: case SYS_mq_open: case SYS_gettimeofday: case SYS_time:
	case SYS_clock_gettime: case SYS_uselib: case SYS_sysinfo:
	case SYS_io_uring_setup: case SYS_io_uring_enter: case SYS_io_uring_register:
#ifdef SYS_openat2
	case SYS_openat2:
#endif
#ifdef SYS_clone3
	case SYS_clone3:
#endif
#ifdef SYS_faccessat2
	case SYS_faccessat2:
#endif
#ifdef SYS_pidfd_getfd
	case SYS_pidfd_getfd:
#endif
#ifdef SYS_open_tree
	case SYS_open_tree: case SYS_move_mount: case SYS_fsopen: case SYS_fspick:
#endif
		return 1;
	case SYS_socket:
		return a0 != AF_UNIX;
	default:
		return 0;
	}
}

TR_HOOK long syscall(long nr, ...)
{
	va_list ap;
	long a[6];

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	/* arguments are ints and unsigned ints in long registers: cast down */
	if (tr_is_log((int)a[0])) {
		if (nr == SYS_close)
			return 0;
		if (nr == SYS_fcntl && (a[1] == F_SETFD || a[1] == F_SETFL))
			return 0;
	}
	if ((nr == SYS_dup2 || nr == SYS_dup3) && tr_is_log((int)a[1]))
		tr_protect((int)a[1]);
	if (nr == SYS_close_range)
		return tr_close_range((unsigned)a[0], (unsigned)a[1], (int)a[2], tr_raw_close_range);
	if (tr_proc_syscall(nr, a)) {
		errno = EPERM;
		return -1;
	}
	if (tr_sys_opaque(nr, (int)a[0]) && tr_active()) {
		char num[24];

		tr_fmt_u64(num, (uint64_t)nr);
		tr_opaque("a raw system call the tracer does not follow:", num);
	}
	return TR_CALL(syscall)(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
