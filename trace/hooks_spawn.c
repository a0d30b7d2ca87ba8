/*
 * hooks_spawn.c - posix_spawn, posix_spawnp, system() and popen().
 *
 * posix_spawn: the target is checked (tr_exec_check), the environment
 * gets our variables back, and a success is SPAWN (pid = us, aux = the
 * child, path and identity of the program); a failure is the READ the
 * outcome depended on.  The child's HELLO may reach the log before our
 * SPAWN (the child runs as soon as it has exec'd): the decoder pairs
 * them either way.
 * posix_spawnp: glibc searches PATH in the child, out of our sight, so
 * the same walk is made here with stat: every candidate before the
 * first executable regular file is a negative READ (or a READ of what
 * is there but cannot run), then the real posix_spawnp runs (resolving
 * the path ourselves and calling posix_spawn would not behave the same:
 * EACCES and ENOEXEC candidates, PATH read in the child).
 * File actions run in the child, inside glibc: dup2 and close are
 * harmless, but open, chdir and fchdir are lookups we cannot see, so a
 * spawn with such actions is OPAQUE (the add functions mark them).
 * system() and popen(): glibc spawns /bin/sh with environ, from which
 * our variables are hidden, so its shell would run untraced and unseen.
 * They are re-implemented here on the traced spawn, as glibc 2.36 does
 * them (signals for system, the close of earlier popen streams in the
 * child for popen), and pclose() waits for our own streams.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trace/trace.h"

extern char **environ;

/* ---- file actions the tracer cannot follow ---- */

#define TR_FA_MAX 64
static const void *tr_fa_marked[TR_FA_MAX];
static int tr_fa_overflow;

static void tr_fa_mark(const void *fa)
{
	for (int i = 0; i < TR_FA_MAX; i++) {
		const void *none = NULL;

		if (__atomic_load_n(&tr_fa_marked[i], __ATOMIC_ACQUIRE) == fa)
			return;
		if (__atomic_compare_exchange_n(&tr_fa_marked[i], &none, fa, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			return;
	}
	/* no room: every spawn with file actions is opaque from now on */
	__atomic_store_n(&tr_fa_overflow, 1, __ATOMIC_RELEASE);
}

static void tr_fa_forget(const void *fa)
{
	for (int i = 0; i < TR_FA_MAX; i++) {
		const void *was = fa;

		__atomic_compare_exchange_n(&tr_fa_marked[i], &was, NULL, 0, __ATOMIC_ACQ_REL,
					    __ATOMIC_ACQUIRE);
	}
}

static int tr_fa_is_marked(const void *fa)
{
	if (!fa)
		return 0;
	if (__atomic_load_n(&tr_fa_overflow, __ATOMIC_ACQUIRE))
		return 1;
	for (int i = 0; i < TR_FA_MAX; i++)
		if (__atomic_load_n(&tr_fa_marked[i], __ATOMIC_ACQUIRE) == fa)
			return 1;
	return 0;
}

TR_HOOK int posix_spawn_file_actions_init(posix_spawn_file_actions_t *fa)
{
	tr_fa_forget(fa);
	return TR_CALL(posix_spawn_file_actions_init)(fa);
}

TR_HOOK int posix_spawn_file_actions_destroy(posix_spawn_file_actions_t *fa)
{
	tr_fa_forget(fa);
	return TR_CALL(posix_spawn_file_actions_destroy)(fa);
}

TR_HOOK int posix_spawn_file_actions_addopen(posix_spawn_file_actions_t *fa, int fd,
					     const char *path, int oflag, mode_t mode)
{
	tr_fa_mark(fa);
	return TR_CALL(posix_spawn_file_actions_addopen)(fa, fd, path, oflag, mode);
}

TR_HOOK int posix_spawn_file_actions_addchdir_np(posix_spawn_file_actions_t *fa, const char *path)
{
	tr_fa_mark(fa);
	return TR_CALL(posix_spawn_file_actions_addchdir_np)(fa, path);
}

TR_HOOK int posix_spawn_file_actions_addfchdir_np(posix_spawn_file_actions_t *fa, int fd)
{
	tr_fa_mark(fa);
	return TR_CALL(posix_spawn_file_actions_addfchdir_np)(fa, fd);
}

/* ---- the traced spawn ---- */

/*
 * posix_spawnp's PATH walk, by stat: negatives and non-executables are
 * READs, the first executable regular file goes into buf (returned).
 */
static const char *tr_spawnp_walk(const char *file, char *buf, size_t size)
{
	const char *path = getenv("PATH"), *p, *subp;
	size_t flen = strlen(file);
	struct stat st;

	if (!path)
		path = "/bin:/usr/bin";
	for (p = path;; p = subp + 1) {
		size_t n;

		subp = strchrnul(p, ':');
		n = (size_t)(subp - p);
		if (n + 1 + flen < size) {
			memcpy(buf, p, n);
			buf[n] = '/';
			memcpy(buf + n + (n > 0), file, flen + 1);
			if (tr_stat_at(AT_FDCWD, buf, 0, &st) < 0) {
				tr_lookup(TL_READ, 0, AT_FDCWD, buf, 0, errno, NULL);
			} else if (S_ISREG(st.st_mode) &&
				   TR_CALL(faccessat)(AT_FDCWD, buf, X_OK, AT_EACCESS) == 0) {
				return buf;
			} else {
				tr_emit(TL_READ, 0, &st, AT_FDCWD, buf);
			}
		} else {
			tr_opaque("a PATH entry too long", NULL);
		}
		if (!*subp)
			return NULL;
	}
}

static int tr_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
		    const posix_spawnattr_t *attr, char *const argv[], char *const envp[], int searchp)
{
	char buf[PATH_MAX];
	const char *prog = path;
	struct tr_guard g;
	struct tr_batch b;
	struct tr_envp e;
	struct stat st;
	int present = 0, r;
	pid_t child = 0;

	tr_lock(&g);
	tr_batch_begin(&b);
	tr_objects_scan();
	if (tr_fa_is_marked(fa))
		tr_opaque("posix_spawn file actions that open files or change directory:", path);
	if (searchp && path && !strchr(path, '/'))
		prog = *path ? tr_spawnp_walk(path, buf, sizeof buf) : NULL;
	if (prog) {
		present = tr_stat_at(AT_FDCWD, prog, 0, &st) == 0;
		if (present)
			tr_exec_check(AT_FDCWD, prog);
	}
	if (tr_envp_build(&e, envp) < 0) {
		tr_opaque("no memory to pass the tracer on", NULL);
		e.envp = (char **)envp;
		e.arena = NULL;
	}
	tr_batch_end(&b);
	tr_unlock(&g);
	if (searchp)
		r = TR_CALL(posix_spawnp)(&child, path, fa, attr, argv, e.envp);
	else
		r = TR_CALL(posix_spawn)(&child, path, fa, attr, argv, e.envp);
	tr_lock(&g);
	if (r == 0) {
		struct tr_where w;

		if (!present)
			tr_opaque("a spawned program the tracer cannot identify:", path);
		else if (tr_where(&w, AT_FDCWD, prog) == 0) {
			struct tl_event ev;

			tr_event_init(&ev, TL_SPAWN);
			tr_ident(&ev, &st);
			ev.aux = child;
			tr_write(&ev, w.iov, w.n);
		}
	} else if (prog == path) {
		tr_lookup(TL_READ, 0, AT_FDCWD, path, 0, r, NULL);
	}
	tr_envp_free(&e);
	tr_unlock(&g);
	if (pid)
		*pid = child;
	return r;
}

TR_HOOK int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
			const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	if (!tr_active())
		return TR_CALL(posix_spawn)(pid, path, fa, attr, argv, envp);
	return tr_spawn(pid, path, fa, attr, argv, envp, 0);
}

TR_HOOK int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			 const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	if (!tr_active())
		return TR_CALL(posix_spawnp)(pid, file, fa, attr, argv, envp);
	return tr_spawn(pid, file, fa, attr, argv, envp, 1);
}

/* ---- system() ---- */

static pthread_mutex_t tr_sys_lock = PTHREAD_MUTEX_INITIALIZER;
static int tr_sys_refs;
static struct sigaction tr_sys_intr, tr_sys_quit;

static int tr_system(const char *line)
{
	char *argv[] = { (char *)"sh", (char *)"-c", (char *)line, NULL };
	struct sigaction sa;
	sigset_t omask, reset;
	posix_spawnattr_t attr;
	int status = -1, ret;
	pid_t pid;

	sa.sa_handler = SIG_IGN;
	sa.sa_flags = 0;
	sigemptyset(&sa.sa_mask);
	pthread_mutex_lock(&tr_sys_lock);
	if (tr_sys_refs++ == 0) {
		sigaction(SIGINT, &sa, &tr_sys_intr);
		sigaction(SIGQUIT, &sa, &tr_sys_quit);
	}
	pthread_mutex_unlock(&tr_sys_lock);
	sigaddset(&sa.sa_mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &sa.sa_mask, &omask);
	sigemptyset(&reset);
	if (tr_sys_intr.sa_handler != SIG_IGN)
		sigaddset(&reset, SIGINT);
	if (tr_sys_quit.sa_handler != SIG_IGN)
		sigaddset(&reset, SIGQUIT);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigmask(&attr, &omask);
	posix_spawnattr_setsigdefault(&attr, &reset);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
	ret = tr_spawn(&pid, "/bin/sh", NULL, &attr, argv, environ, 0);
	posix_spawnattr_destroy(&attr);
	if (ret == 0) {
		pid_t w;

		while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
			;
		if (w != pid)
			status = -1;
	} else {
		/* as if the shell had exited with 127 */
		status = 127 << 8;
	}
	pthread_mutex_lock(&tr_sys_lock);
	if (--tr_sys_refs == 0) {
		sigaction(SIGINT, &tr_sys_intr, NULL);
		sigaction(SIGQUIT, &tr_sys_quit, NULL);
	}
	pthread_mutex_unlock(&tr_sys_lock);
	sigprocmask(SIG_SETMASK, &omask, NULL);
	if (ret)
		errno = ret;
	return status;
}

TR_HOOK int system(const char *line)
{
	if (!tr_active())
		return TR_CALL(system)(line);
	if (!line)
		return tr_system("exit 0") == 0;
	return tr_system(line);
}

/* ---- popen() and pclose() ---- */

struct tr_proc {
	FILE *fp;
	pid_t pid;
	struct tr_proc *next;
};

static pthread_mutex_t tr_proc_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tr_proc *tr_procs;

static FILE *tr_popen(const char *command, const char *mode)
{
	char *argv[] = { (char *)"sh", (char *)"-c", (char *)command, NULL };
	int do_read = 0, do_write = 0, do_cloexec = 0, fds[2], pend, cend, cfd, ret;
	posix_spawn_file_actions_t fa;
	struct tr_proc *node;
	pid_t pid;
	FILE *fp = NULL;

	for (const char *m = mode; *m; m++)
		switch (*m) {
		case 'r':
			do_read = 1;
			break;
		case 'w':
			do_write = 1;
			break;
		case 'e':
			do_cloexec = 1;
			break;
		default:
			errno = EINVAL;
			return NULL;
		}
	if (do_read == do_write) {
		errno = EINVAL;
		return NULL;
	}
	node = malloc(sizeof *node);
	if (!node)
		return NULL;
	pthread_mutex_lock(&tr_proc_lock);
	if (pipe2(fds, O_CLOEXEC) < 0)
		goto fail;
	pend = do_read ? 0 : 1;
	cend = 1 - pend;
	cfd = do_read ? 1 : 0;
	/* the child end must not already be the descriptor it becomes */
	if (fds[cend] == cfd) {
		int tmp = TR_CALL(fcntl)(cfd, F_DUPFD_CLOEXEC, 0);

		if (tmp < 0) {
			TR_CALL(close)(fds[0]);
			TR_CALL(close)(fds[1]);
			goto fail;
		}
		TR_CALL(close)(fds[cend]);
		fds[cend] = tmp;
	}
	TR_CALL(posix_spawn_file_actions_init)(&fa);
	ret = TR_CALL(posix_spawn_file_actions_adddup2)(&fa, fds[cend], cfd);
	for (struct tr_proc *p = tr_procs; p && !ret; p = p->next)
		if (fileno(p->fp) != cfd)
			ret = TR_CALL(posix_spawn_file_actions_addclose)(&fa, fileno(p->fp));
	if (!ret)
		ret = tr_spawn(&pid, "/bin/sh", &fa, NULL, argv, environ, 0);
	TR_CALL(posix_spawn_file_actions_destroy)(&fa);
	if (ret) {
		TR_CALL(close)(fds[0]);
		TR_CALL(close)(fds[1]);
		errno = ret;
		goto fail;
	}
	TR_CALL(close)(fds[cend]);
	if (!do_cloexec)
		TR_CALL(fcntl)(fds[pend], F_SETFD, 0);
	fp = fdopen(fds[pend], do_read ? "r" : "w");
	if (!fp) {
		int err = errno;

		TR_CALL(close)(fds[pend]);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		errno = err;
		goto fail;
	}
	node->fp = fp;
	node->pid = pid;
	node->next = tr_procs;
	tr_procs = node;
	pthread_mutex_unlock(&tr_proc_lock);
	return fp;
fail:
	pthread_mutex_unlock(&tr_proc_lock);
	free(node);
	return NULL;
}

TR_HOOK FILE *popen(const char *command, const char *mode)
{
	if (!tr_active())
		return TR_CALL(popen)(command, mode);
	return tr_popen(command, mode);
}

TR_HOOK int pclose(FILE *fp)
{
	struct tr_proc **pp, *node = NULL;
	int status;
	pid_t w;

	pthread_mutex_lock(&tr_proc_lock);
	for (pp = &tr_procs; *pp; pp = &(*pp)->next)
		if ((*pp)->fp == fp) {
			node = *pp;
			*pp = node->next;
			break;
		}
	pthread_mutex_unlock(&tr_proc_lock);
	if (!node)
		return TR_CALL(pclose)(fp);
	fclose(fp);
	while ((w = waitpid(node->pid, &status, 0)) < 0 && errno == EINTR)
		;
	free(node);
	return w < 0 ? -1 : status;
}
