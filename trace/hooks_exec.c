/*
 * hooks_exec.c - new process images and new processes.
 *
 * exec: every attempt is EXEC (the file's identity as found, ABSENT if
 * it is not there) before the real execve, and EXECFAIL (aux = errno)
 * if it returns; a candidate that is not there is also a negative READ.
 * PATH searches (execvp, execvpe, execlp) walk PATH exactly as glibc's
 * execvpe does (empty entry: the working directory; no PATH: /bin:/usr/bin;
 * ENOEXEC: /bin/sh runs the file; EACCES remembered; other errors stop),
 * each candidate through the real execve, so each miss is seen.  Before
 * each attempt the target is checked (tr_exec_check): a program the
 * tracer cannot load into is OPAQUE.  The environment passed on gets our
 * variables back (env.c).
 *
 * fork, _Fork, forkpty: the child writes FORK (aux = the parent).
 * vfork: a real vfork (vfork.c), or, in a process with threads, fork:
 * the child then has its own memory and writes FORK like any other.
 * clone, daemon, fexecve, execveat from a descriptor: OPAQUE.
 */
#include <elf.h>
#include <fcntl.h>
#include <pty.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "trace/trace.h"

extern char **environ;

/* ---- can the tracer follow a program? ---- */

static int tr_check_file(int dirfd, const char *path, int depth);

/* "#!interpreter ..." in buf (n bytes): check the interpreter. */
static void tr_check_script(int dirfd, const char *path, char *buf, size_t n, int depth)
{
	char *p = buf + 2, *end = buf + n, *q;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	for (q = p; q < end && *q != ' ' && *q != '\t' && *q != '\n' && *q; q++)
		;
	if (q == end || q == p) {
		tr_opaque_at("a script whose interpreter the tracer cannot read:", dirfd, path);
		return;
	}
	*q = 0;
	/* the interpreter opens the script: its identity is an input */
	tr_emit_now(TL_READ, 0, dirfd, path);
	if (depth > 0) {
		tr_opaque_at("a script run by a script, not followed:", dirfd, path);
		return;
	}
	tr_emit_now(TL_READ, 0, AT_FDCWD, p);
	tr_check_file(AT_FDCWD, p, depth + 1);
}

/* An ELF file's program headers: OPAQUE unless it loads our library. */
static void tr_check_elf(int fd, int dirfd, const char *path, const unsigned char *buf, size_t n)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)buf;
	Elf64_Phdr ph[16];
	char interp[PATH_MAX];

	if (n < sizeof *eh || buf[EI_CLASS] != ELFCLASS64 || eh->e_machine != EM_X86_64 ||
	    eh->e_phentsize != sizeof(Elf64_Phdr)) {
		tr_opaque_at("a program for another machine or word size:", dirfd, path);
		return;
	}
	for (unsigned i = 0; i < eh->e_phnum; i += 16) {
		unsigned k = eh->e_phnum - i < 16 ? eh->e_phnum - i : 16;
		size_t want = k * sizeof *ph;

		if (pread(fd, ph, want, (off_t)(eh->e_phoff + i * sizeof *ph)) != (ssize_t)want)
			break;
		for (unsigned j = 0; j < k; j++) {
			if (ph[j].p_type != PT_INTERP)
				continue;
			if (ph[j].p_filesz < 2 || ph[j].p_filesz > sizeof interp ||
			    pread(fd, interp, ph[j].p_filesz, (off_t)ph[j].p_offset) !=
				    (ssize_t)ph[j].p_filesz ||
			    interp[ph[j].p_filesz - 1]) {
				tr_opaque_at("a program whose interpreter cannot be read:", dirfd, path);
				return;
			}
			/* the dynamic loader the kernel will map */
			tr_emit_now(TL_READ, 0, AT_FDCWD, interp);
			return;
		}
	}
	tr_opaque_at("a static program (the tracer cannot load into it):", dirfd, path);
}

/* 0 if the file exists (whatever it is), -1 if not (the exec will fail). */
static int tr_check_file(int dirfd, const char *path, int depth)
{
	unsigned char buf[256];
	struct stat st;
	ssize_t n;
	int fd;

	/* only a regular file is opened: a fifo would block, a device act */
	if (tr_stat_at(dirfd, path, 0, &st) < 0)
		return -1;
	if (!S_ISREG(st.st_mode))
		return 0;     /* the exec fails (EACCES) */
	fd = TR_CALL(openat)(dirfd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			tr_opaque_at("a program the tracer cannot inspect:", dirfd, path);
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		TR_CALL(close)(fd);
		return 0;
	}
	n = pread(fd, buf, sizeof buf, 0);
	if (n >= 2 && buf[0] == '#' && buf[1] == '!') {
		/* Linux ignores set-id bits on scripts */
		tr_check_script(dirfd, path, (char *)buf, (size_t)n, depth);
	} else if (n >= 4 && !memcmp(buf, ELFMAG, SELFMAG)) {
		if ((st.st_mode & S_ISUID) || ((st.st_mode & S_ISGID) && (st.st_mode & S_IXGRP)))
			tr_opaque_at("a setuid or setgid program:", dirfd, path);
		else if (fgetxattr(fd, "security.capability", NULL, 0) >= 0)
			tr_opaque_at("a program with file capabilities:", dirfd, path);
		else
			tr_check_elf(fd, dirfd, path, buf, (size_t)n);
	}
	/* anything else: ENOEXEC, or binfmt_misc (its HELLO shows, or not) */
	TR_CALL(close)(fd);
	return 0;
}

void tr_exec_check(int dirfd, const char *path)
{
	tr_check_file(dirfd, path, 0);
}

/* ---- exec ---- */

/*
 * One attempt: EXEC, the check, the real call, and on return EXECFAIL
 * (and a negative READ if the file was not there).  Returns -1 with errno.
 */
static int tr_exec_one(int dirfd, const char *path, char *const argv[], char *const envp[],
		       int flags, int at)
{
	int nofollow = flags & AT_SYMLINK_NOFOLLOW ? TL_NOFOLLOW : 0, present, err;
	struct tr_guard g;
	struct tr_batch b;
	struct tl_event ev;
	struct stat st;

	tr_lock(&g);
	tr_batch_begin(&b);
	tr_objects_scan();
	present = tr_stat_at(dirfd, path, nofollow, &st) == 0;
	if (!present && errno != ENOENT && errno != ENOTDIR)
		tr_opaque_at("a program the tracer cannot identify:", dirfd, path);
	tr_emit(TL_EXEC, nofollow, present ? &st : NULL, dirfd, path);
	if (present)
		tr_exec_check(dirfd, path);
	/* written before the exec: a successful one never returns */
	tr_batch_end(&b);
	tr_unlock(&g);
	if (at)
		TR_CALL(execveat)(dirfd, path, argv, envp, flags);
	else
		TR_CALL(execve)(path, argv, envp);
	err = errno;
	tr_lock(&g);
	tr_batch_begin(&b);
	if (!present && (err == ENOENT || err == ENOTDIR))
		tr_emit(TL_READ, nofollow, NULL, dirfd, path);
	tr_event_init(&ev, TL_EXECFAIL);
	ev.aux = err;
	tr_write(&ev, NULL, 0);
	tr_batch_end(&b);
	tr_unlock(&g);
	errno = err;
	return -1;
}

/* glibc's maybe_script_execute: /bin/sh FILE ARGS... */
static void tr_exec_script(const char *file, char *const argv[], char *const envp[])
{
	size_t argc = 0;

	while (argv && argv[argc])
		argc++;
	{
		char *nargv[argc > 1 ? argc + 2 : 3];

		nargv[0] = (char *)"/bin/sh";
		nargv[1] = (char *)file;
		if (argc > 1)
			memcpy(nargv + 2, argv + 1, argc * sizeof *nargv);
		else
			nargv[2] = NULL;
		tr_exec_one(AT_FDCWD, "/bin/sh", nargv, envp, 0, 0);
	}
}

/* glibc's __execvpe_common, each attempt traced. */
static int tr_execvpe(const char *file, char *const argv[], char *const envp[], int script)
{
	const char *path, *p, *subp;
	size_t file_len, path_len;
	int got_eacces = 0;

	if (!*file) {
		errno = ENOENT;
		return -1;
	}
	if (strchr(file, '/')) {
		tr_exec_one(AT_FDCWD, file, argv, envp, 0, 0);
		if (errno == ENOEXEC && script)
			tr_exec_script(file, argv, envp);
		return -1;
	}
	path = getenv("PATH");
	if (!path)
		path = "/bin:/usr/bin";
	file_len = strnlen(file, NAME_MAX) + 1;
	path_len = strnlen(path, PATH_MAX - 1) + 1;
	if (file_len - 1 > NAME_MAX) {
		errno = ENAMETOOLONG;
		return -1;
	}
	{
		char buffer[path_len + file_len + 1];

		for (p = path;; p = subp) {
			char *pend;

			subp = strchrnul(p, ':');
			if ((size_t)(subp - p) >= path_len) {
				if (!*subp)
					break;
				continue;
			}
			pend = mempcpy(buffer, p, (size_t)(subp - p));
			*pend = '/';
			memcpy(pend + (p < subp), file, file_len);
			tr_exec_one(AT_FDCWD, buffer, argv, envp, 0, 0);
			if (errno == ENOEXEC && script)
				tr_exec_script(buffer, argv, envp);
			switch (errno) {
			case EACCES:
				got_eacces = 1;
				/* fall through */
			case ENOENT:
			case ESTALE:
			case ENOTDIR:
			case ENODEV:
			case ETIMEDOUT:
				break;
			default:
				return -1;
			}
			if (*subp++ == '\0')
				break;
		}
	}
	if (got_eacces)
		errno = EACCES;
	return -1;
}

/* Run f with envp completed by our variables. */
#define TR_WITH_ENV(envp, call)                                                            \
	do {                                                                               \
		struct tr_envp e_;                                                         \
		int err_;                                                                  \
		if (tr_envp_build(&e_, (envp)) < 0) {                                      \
			tr_opaque("no memory to pass the tracer on", NULL);                \
			e_.envp = (char **)(envp);                                         \
			e_.arena = NULL;                                                   \
		}                                                                          \
		{                                                                          \
			char *const *env_ = e_.envp;                                       \
			call;                                                              \
		}                                                                          \
		err_ = errno;                                                              \
		tr_envp_free(&e_);                                                         \
		errno = err_;                                                              \
	} while (0)

static int tr_execve(const char *path, char *const argv[], char *const envp[])
{
	if (!tr_active())
		return TR_CALL(execve)(path, argv, envp);
	TR_WITH_ENV(envp, tr_exec_one(AT_FDCWD, path, argv, env_, 0, 0));
	return -1;
}

static int tr_execvp_env(const char *file, char *const argv[], char *const envp[])
{
	if (!tr_active())
		return TR_CALL(execvpe)(file, argv, envp);
	TR_WITH_ENV(envp, tr_execvpe(file, argv, env_, 1));
	return -1;
}

TR_HOOK int execve(const char *path, char *const argv[], char *const envp[])
{
	return tr_execve(path, argv, envp);
}

TR_HOOK int execv(const char *path, char *const argv[])
{
	return tr_execve(path, argv, environ);
}

TR_HOOK int execvpe(const char *file, char *const argv[], char *const envp[])
{
	return tr_execvp_env(file, argv, envp);
}

TR_HOOK int execvp(const char *file, char *const argv[])
{
	return tr_execvp_env(file, argv, environ);
}

/* the execl family: the arguments into an array, as glibc does */
#define TR_ARGS(first, ap, argv, tail)                                                     \
	size_t argc_ = 1;                                                                  \
	va_list cp_;                                                                       \
	va_copy(cp_, ap);                                                                  \
	while (va_arg(cp_, char *))                                                        \
		argc_++;                                                                   \
	va_end(cp_);                                                                       \
	char *argv[argc_ + 1];                                                             \
	argv[0] = (char *)(first);                                                         \
	for (size_t i_ = 1; i_ <= argc_; i_++)                                             \
		argv[i_] = va_arg(ap, char *);                                             \
	tail

TR_HOOK int execl(const char *path, const char *arg, ...)
{
	va_list ap;

	va_start(ap, arg);
	TR_ARGS(arg, ap, argv, va_end(ap));
	return tr_execve(path, argv, environ);
}

TR_HOOK int execlp(const char *file, const char *arg, ...)
{
	va_list ap;

	va_start(ap, arg);
	TR_ARGS(arg, ap, argv, va_end(ap));
	return tr_execvp_env(file, argv, environ);
}

TR_HOOK int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	char *const *envp;

	va_start(ap, arg);
	TR_ARGS(arg, ap, argv, envp = va_arg(ap, char *const *); va_end(ap));
	return tr_execve(path, argv, envp);
}

TR_HOOK int fexecve(int fd, char *const argv[], char *const envp[])
{
	if (!tr_active())
		return TR_CALL(fexecve)(fd, argv, envp);
	tr_opaque("fexecve runs a program by descriptor", NULL);
	TR_WITH_ENV(envp, TR_CALL(fexecve)(fd, argv, env_));
	return -1;
}

TR_HOOK int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
		     int flags)
{
	if (!tr_active())
		return TR_CALL(execveat)(dirfd, path, argv, envp, flags);
	if ((flags & AT_EMPTY_PATH) || !tr_maybe_null(path) ||
	    (dirfd != AT_FDCWD && path[0] != '/')) {
		tr_opaque("execveat runs a program by descriptor", NULL);
		TR_WITH_ENV(envp, TR_CALL(execveat)(dirfd, path, argv, env_, flags));
		return -1;
	}
	TR_WITH_ENV(envp, tr_exec_one(dirfd, path, argv, env_, flags, 1));
	return -1;
}

/* ---- new processes ---- */

/*
 * Before any fork: the objects loaded since the last scan are read now,
 * in the parent, so that the child (which may not call dl_iterate_phdr)
 * compares its list with an up to date one.  Returns our pid.
 */
int tr_before_fork(void)
{
	struct tr_guard g;

	tr_lock(&g);
	tr_objects_scan();
	tr_unlock(&g);
	return tr_pid;
}

static void tr_child(int parent)
{
	struct tr_guard g;

	tr_lock(&g);
	tr_after_fork_child(parent);
	tr_unlock(&g);
}

TR_HOOK pid_t fork(void)
{
	int parent;
	pid_t r;

	if (!tr_active())
		return TR_CALL(fork)();
	parent = tr_before_fork();
	r = TR_CALL(fork)();
	if (r == 0)
		tr_child(parent);
	return r;
}

/* vfork as fork, for a process vfork.c cannot give a real vfork to */
pid_t tr_vfork_traced(void)
{
	int parent = tr_before_fork();
	pid_t r = TR_CALL(fork)();

	if (r == 0)
		tr_child(parent);
	return r;
}

void *tr_vfork_real(void)
{
	return tr_real_get(&tr_real_vfork);
}

void tr_exec_warm(void)
{
	tr_real_get(&tr_real_execve);
	tr_real_get(&tr_real_openat);
	tr_real_get(&tr_real_close);
}

TR_HOOK pid_t _Fork(void)
{
	int parent;
	pid_t r;

	if (!tr_active())
		return TR_CALL(_Fork)();
	parent = tr_before_fork();
	r = TR_CALL(_Fork)();
	if (r == 0)
		tr_child(parent);
	return r;
}

TR_HOOK pid_t forkpty(int *amaster, char *name, const struct termios *termp,
		      const struct winsize *winp)
{
	int parent;
	pid_t r;

	if (!tr_active())
		return TR_CALL(forkpty)(amaster, name, termp, winp);
	parent = tr_before_fork();
	r = TR_CALL(forkpty)(amaster, name, termp, winp);
	if (r == 0)
		tr_child(parent);
	return r;
}

TR_HOOK int daemon(int nochdir, int noclose)
{
	int parent, r;

	if (!tr_active())
		return TR_CALL(daemon)(nochdir, noclose);
	tr_opaque("daemon() leaves the command", NULL);
	parent = tr_before_fork();
	r = TR_CALL(daemon)(nochdir, noclose);
	if (r == 0)
		tr_child(parent);
	return r;
}

TR_HOOK int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	va_list ap;
	void *ptid, *tls, *ctid;

	va_start(ap, arg);
	ptid = va_arg(ap, void *);
	tls = va_arg(ap, void *);
	ctid = va_arg(ap, void *);
	va_end(ap);
	if (tr_active())
		tr_opaque("clone() starts a task the tracer does not follow", NULL);
	return TR_CALL(clone)(fn, stack, flags, arg, ptid, tls, ctid);
}
