/*
 * trace-probe - performs file, process and value operations named on its
 * command line, in order, for t/unit/test-trace.c to trace.  Each
 * operation prints one line ("OP ok", "OP errno N", or a value) so the
 * test can tell what the program saw.  Exits 0 unless an operation's
 * arguments are missing.
 *
 *   open P | openat-rel DIR P | creat P | fopen-w P | stat P | lstat P |
 *   access P | readlink P | realpath P | opendir P | rename A B |
 *   unlink P | mkdir P | rmdir P | chdir D | mkstemp TEMPLATE |
 *   fork-open P | vfork-exec PROG | vfork-open P (the child opens P and
 *   _exits; prints whether its store was seen) | vfork-move-exec PROG (the child dup2s stdout onto the
 *   tracer's descriptor, 1021, then execs) | vfork-vfork (the child vforks
 *   too; both children _exit) | vfork-gettext N DIR MSGID
 *   (setlocale(LC_ALL, ""); the child binds domains vfdom0 ... vfdomN-1
 *   to DIR, asks each for MSGID and _exits, then the parent does) | spawnp NAME | spawn PATH |
 *   execvp NAME ARG... (last) | threads N P (opens P.0 ... P.N-1) |
 *   uname | time | monotonic | boottime | cputime (each prints the
 *   clock) | rusage | getrandom | getentropy (print the bytes) |
 *   affinity | nprocs | getenv VAR | system CMD | popen CMD |
 *   dup2-log | close-log | close-range | closefrom | dlopen P | setlocale |
 *   syscall-open P | tmpfile | getpwnam NAME | scandir P | glob PATTERN |
 *   gettext DOMAIN DIR MSGID (after setlocale(LC_ALL, "")) | kill PID SIG |
 *   kill-self SIG | syscall-kill PID SIG | getpriority PID | setpriority PID PRIO |
 *   exit N | _exit N | getloadavg | shm_unlink NAME | ustat (bound to its old
 *   version: libc keeps it for old programs only) | sem NAME (sem_open with
 *   O_CREAT, value 3: prints the value sem_getvalue reads, then sem_unlink)
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <signal.h>
#include <libintl.h>
#include <limits.h>
#include <pthread.h>
#include <pwd.h>
#include <semaphore.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <locale.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* ustat as a program linked against an old C library calls it (a versioned reference) */
int probe_ustat(dev_t dev, void *buf);
__asm__(".symver probe_ustat, ustat@GLIBC_2.2.5");

/* the descriptor the runner gives the log (lib/tracelog.h) */
#define PROBE_LOG_FD 1021

static void report(const char *op, int ok)
{
	if (ok)
		printf("%s ok\n", op);
	else
		printf("%s errno %d\n", op, errno);
	fflush(stdout);
}

static void *thread_open(void *arg)
{
	int fd = open(arg, O_RDONLY);

	if (fd >= 0)
		close(fd);
	return NULL;
}

static void wait_child(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
}

/* vfork in a function of its own: nothing of main's lives across it */
static __attribute__((noinline)) pid_t vfork_exec(const char *prog)
{
	char *cargv[] = { (char *)prog, (char *)"stat", (char *)"/", NULL };
	pid_t pid = vfork();

	if (pid == 0) {
		execv(prog, cargv);
		_exit(127);
	}
	return pid;
}

/* a store by a vfork child, seen by the parent only if the vfork was real */
static volatile int vfork_shared;

/* the vfork child opens P and _exits: its tracer state lives on the parent's memory */
static __attribute__((noinline)) pid_t vfork_open(const char *p)
{
	pid_t pid = vfork();

	if (pid == 0) {
		vfork_shared = 1;
		_exit(open(p, O_RDONLY) >= 0 ? 0 : 1);
	}
	return pid;
}

/* the vfork child vforks too; the grandchild and then the child _exit */
static __attribute__((noinline)) pid_t vfork_vfork(void)
{
	pid_t pid = vfork();

	if (pid == 0) {
		pid_t g = vfork();

		if (g == 0)
			_exit(0);
		_exit(g > 0 ? 0 : 1);
	}
	return pid;
}

/* n domains bound to dir, each asked for msgid */
static void gettext_domains(int n, const char *dir, const char *msgid)
{
	char dom[32];

	for (int k = 0; k < n; k++) {
		snprintf(dom, sizeof dom, "vfdom%d", k);
		if (bindtextdomain(dom, dir))
			(void)dgettext(dom, msgid);
	}
}

/* vfork_gettext's child: the calls, then _exit, on the shared memory */
static __attribute__((noinline)) pid_t vfork_gettext_child(int n, const char *dir,
							    const char *msgid)
{
	pid_t pid = vfork();

	if (pid == 0) {
		gettext_domains(n, dir, msgid);
		_exit(0);
	}
	return pid;
}

/* the vfork child makes the tracer move its log, then execs */
static __attribute__((noinline)) pid_t vfork_move_exec(const char *prog)
{
	char *cargv[] = { (char *)prog, (char *)"stat", (char *)"/", NULL };
	pid_t pid = vfork();

	if (pid == 0) {
		dup2(1, 1021);
		execv(prog, cargv);
		_exit(127);
	}
	return pid;
}

/* the vfork child binds and asks n domains, then the parent does */
static int vfork_gettext(int n, const char *dir, const char *msgid)
{
	pid_t pid;

	if (!setlocale(LC_ALL, ""))
		return 0;
	pid = vfork_gettext_child(n, dir, msgid);
	if (pid < 0)
		return 0;
	wait_child(pid);
	gettext_domains(n, dir, msgid);
	return 1;
}

static int run_threads(int n, const char *base)
{
	pthread_t t[64];
	char names[64][PATH_MAX];

	if (n > 64)
		n = 64;
	for (int i = 0; i < n; i++) {
		snprintf(names[i], sizeof names[i], "%s.%d", base, i);
		if (pthread_create(&t[i], NULL, thread_open, names[i]))
			return 0;
	}
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 1;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *op = argv[i], *a = i + 1 < argc ? argv[i + 1] : NULL;
		const char *b = i + 2 < argc ? argv[i + 2] : NULL;
		struct stat st;
		char buf[PATH_MAX];
		int fd;

#define NEED(k)                                                                            \
	do {                                                                               \
		if (i + (k) >= argc) {                                                     \
			fprintf(stderr, "trace-probe: %s needs %d argument(s)\n", op, k);  \
			return 2;                                                          \
		}                                                                          \
		i += (k);                                                                  \
	} while (0)

		if (!strcmp(op, "open")) {
			NEED(1);
			fd = open(a, O_RDONLY);
			report(op, fd >= 0);
			if (fd >= 0)
				close(fd);
		} else if (!strcmp(op, "openat-rel")) {
			int dfd;

			NEED(2);
			dfd = open(a, O_RDONLY | O_DIRECTORY);
			fd = openat(dfd, b, O_RDONLY);
			report(op, fd >= 0);
			if (fd >= 0)
				close(fd);
			if (dfd >= 0)
				close(dfd);
		} else if (!strcmp(op, "creat")) {
			NEED(1);
			fd = creat(a, 0644);
			report(op, fd >= 0);
			if (fd >= 0)
				close(fd);
		} else if (!strcmp(op, "fopen-w")) {
			FILE *f;

			NEED(1);
			f = fopen(a, "w");
			report(op, f != NULL);
			if (f)
				fclose(f);
		} else if (!strcmp(op, "stat")) {
			NEED(1);
			report(op, stat(a, &st) == 0);
		} else if (!strcmp(op, "lstat")) {
			NEED(1);
			report(op, lstat(a, &st) == 0);
		} else if (!strcmp(op, "access")) {
			NEED(1);
			report(op, access(a, R_OK) == 0);
		} else if (!strcmp(op, "readlink")) {
			NEED(1);
			report(op, readlink(a, buf, sizeof buf) >= 0);
		} else if (!strcmp(op, "realpath")) {
			NEED(1);
			report(op, realpath(a, buf) != NULL);
		} else if (!strcmp(op, "opendir")) {
			DIR *d;

			NEED(1);
			d = opendir(a);
			report(op, d != NULL);
			if (d) {
				while (readdir(d))
					;
				closedir(d);
			}
		} else if (!strcmp(op, "rename")) {
			NEED(2);
			report(op, rename(a, b) == 0);
		} else if (!strcmp(op, "unlink")) {
			NEED(1);
			report(op, unlink(a) == 0);
		} else if (!strcmp(op, "mkdir")) {
			NEED(1);
			report(op, mkdir(a, 0755) == 0);
		} else if (!strcmp(op, "rmdir")) {
			NEED(1);
			report(op, rmdir(a) == 0);
		} else if (!strcmp(op, "chdir")) {
			NEED(1);
			report(op, chdir(a) == 0);
		} else if (!strcmp(op, "mkstemp")) {
			NEED(1);
			snprintf(buf, sizeof buf, "%s", a);
			fd = mkstemp(buf);
			if (fd >= 0) {
				printf("mkstemp %s\n", buf);
				close(fd);
				unlink(buf);
			} else {
				report(op, 0);
			}
		} else if (!strcmp(op, "fork-open")) {
			pid_t pid;

			NEED(1);
			pid = fork();
			if (pid == 0) {
				fd = open(a, O_RDONLY);
				_exit(fd >= 0 ? 0 : 1);
			}
			wait_child(pid);
			report(op, pid > 0);
		} else if (!strcmp(op, "vfork-exec")) {
			pid_t pid;

			NEED(1);
			pid = vfork_exec(a);
			wait_child(pid);
			report(op, pid > 0);
		} else if (!strcmp(op, "vfork-open") || !strcmp(op, "vfork-move-exec")) {
			pid_t pid;

			NEED(1);
			pid = op[6] == 'o' ? vfork_open(a) : vfork_move_exec(a);
			wait_child(pid);
			if (op[6] == 'o')
				printf("vfork shared memory: %d\n", vfork_shared);
			report(op, pid > 0);
		} else if (!strcmp(op, "vfork-vfork")) {
			pid_t pid = vfork_vfork();

			wait_child(pid);
			report(op, pid > 0);
		} else if (!strcmp(op, "vfork-gettext")) {
			const char *c = i + 3 < argc ? argv[i + 3] : NULL;

			NEED(3);
			report(op, vfork_gettext(atoi(a), b, c));
		} else if (!strcmp(op, "spawnp") || !strcmp(op, "spawn")) {
			char *cargv[] = { (char *)a, NULL };
			pid_t pid;
			int r;

			NEED(1);
			r = op[5] == 'p' ? posix_spawnp(&pid, a, NULL, NULL, cargv, environ)
					 : posix_spawn(&pid, a, NULL, NULL, cargv, environ);
			if (r == 0)
				wait_child(pid);
			errno = r;
			report(op, r == 0);
		} else if (!strcmp(op, "execvp")) {
			NEED(1);
			fflush(stdout);
			execvp(a, argv + i);
			report(op, 0);
			return 0;
		} else if (!strcmp(op, "threads")) {
			NEED(2);
			report(op, run_threads(atoi(a), b));
		} else if (!strcmp(op, "uname")) {
			struct utsname u;

			report(op, uname(&u) == 0);
		} else if (!strcmp(op, "time")) {
			printf("time %s\n", time(NULL) > 0 ? "ok" : "bad");
		} else if (!strcmp(op, "monotonic") || !strcmp(op, "boottime") ||
			   !strcmp(op, "cputime")) {
			struct timespec ts;
			clockid_t c = op[0] == 'm' ? CLOCK_MONOTONIC : op[0] == 'b' ?
				      CLOCK_BOOTTIME : CLOCK_PROCESS_CPUTIME_ID;

			clock_gettime(c, &ts);
			printf("%s %lld.%09ld\n", op, (long long)ts.tv_sec, ts.tv_nsec);
		} else if (!strcmp(op, "rusage")) {
			struct rusage ru;

			report(op, getrusage(RUSAGE_SELF, &ru) == 0);
		} else if (!strcmp(op, "getrandom") || !strcmp(op, "getentropy")) {
			unsigned char x[8];
			int r = op[3] == 'r' ? (int)getrandom(x, sizeof x, 0) : getentropy(x, sizeof x);

			printf("%s %s %02x%02x%02x%02x%02x%02x%02x%02x\n", op, r < 0 ? "bad" : "ok",
			       x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]);
		} else if (!strcmp(op, "affinity")) {
			cpu_set_t set;

			report(op, sched_getaffinity(0, sizeof set, &set) == 0);
		} else if (!strcmp(op, "nprocs")) {
			printf("nprocs %ld\n", sysconf(_SC_NPROCESSORS_ONLN));
		} else if (!strcmp(op, "getenv")) {
			const char *v;

			NEED(1);
			v = getenv(a);
			printf("getenv %s=%s\n", a, v ? v : "(unset)");
		} else if (!strcmp(op, "system")) {
			NEED(1);
			fflush(stdout);
			printf("system %d\n", system(a));
		} else if (!strcmp(op, "popen")) {
			FILE *f;

			NEED(1);
			fflush(stdout);
			f = popen(a, "r");
			if (f) {
				size_t n = fread(buf, 1, sizeof buf - 1, f);

				buf[n] = 0;
				printf("popen %d %s", pclose(f), buf);
			} else {
				report(op, 0);
			}
		} else if (!strcmp(op, "dup2-log")) {
			fd = open("/dev/null", O_RDONLY);
			report(op, dup2(fd, PROBE_LOG_FD) == PROBE_LOG_FD);
			close(fd);
		} else if (!strcmp(op, "close-log")) {
			report(op, close(PROBE_LOG_FD) == 0);
		} else if (!strcmp(op, "close-range")) {
			report(op, close_range(3, ~0U, 0) == 0);
		} else if (!strcmp(op, "gettext")) {
			const char *c = i + 3 < argc ? argv[i + 3] : NULL;

			NEED(3);
			if (!setlocale(LC_ALL, "") || !bindtextdomain(a, b) || !textdomain(a))
				report(op, 0);
			else
				printf("gettext %s\n", gettext(c));
		} else if (!strcmp(op, "closefrom")) {
			closefrom(3);
			report(op, 1);
		} else if (!strcmp(op, "getpwnam")) {
			NEED(1);
			report(op, getpwnam(a) != NULL);
		} else if (!strcmp(op, "scandir")) {
			struct dirent **list;
			int n;

			NEED(1);
			n = scandir(a, &list, NULL, alphasort);
			report(op, n >= 0);
			while (n > 0)
				free(list[--n]);
			if (n == 0)
				free(list);
		} else if (!strcmp(op, "glob")) {
			glob_t g;

			NEED(1);
			report(op, glob(a, 0, NULL, &g) == 0);
			globfree(&g);
		} else if (!strcmp(op, "dlopen")) {
			NEED(1);
			report(op, dlopen(a, RTLD_NOW) != NULL);
		} else if (!strcmp(op, "setlocale")) {
			report(op, setlocale(LC_ALL, "") != NULL);
		} else if (!strcmp(op, "syscall-open")) {
			NEED(1);
			fd = (int)syscall(SYS_openat, AT_FDCWD, a, O_RDONLY);
			report(op, fd >= 0);
			if (fd >= 0)
				close(fd);
		} else if (!strcmp(op, "tmpfile")) {
			FILE *f = tmpfile();

			report(op, f != NULL);
			if (f)
				fclose(f);
		} else if (!strcmp(op, "getloadavg")) {
			double l[3];

			report(op, getloadavg(l, 3) > 0);
		} else if (!strcmp(op, "shm_unlink")) {
			NEED(1);
			report(op, shm_unlink(a) == 0);
		} else if (!strcmp(op, "ustat")) {
			char ub[64];

			report(op, probe_ustat(0, ub) == 0 || errno != EFAULT);
		} else if (!strcmp(op, "sem")) {
			sem_t *s;
			int v = -1;

			NEED(1);
			s = sem_open(a, O_CREAT, 0600, 3u);
			if (s == SEM_FAILED) {
				report(op, 0);
			} else {
				sem_getvalue(s, &v);
				printf("sem %d\n", v);
				sem_close(s);
				sem_unlink(a);
			}
		} else if (!strcmp(op, "kill")) {
			NEED(2);
			report(op, kill(atoi(a), atoi(b)) == 0);
		} else if (!strcmp(op, "syscall-kill")) {
			NEED(2);
			report(op, syscall(SYS_kill, atoi(a), atoi(b)) == 0);
		} else if (!strcmp(op, "kill-self")) {
			NEED(1);
			report(op, kill(getpid(), atoi(a)) == 0);
		} else if (!strcmp(op, "getpriority")) {
			int p;

			NEED(1);
			errno = 0;
			p = getpriority(PRIO_PROCESS, (id_t)atoi(a));
			if (errno)
				report(op, 0);
			else
				printf("getpriority %d\n", p);
		} else if (!strcmp(op, "setpriority")) {
			NEED(2);
			report(op, setpriority(PRIO_PROCESS, (id_t)atoi(a), atoi(b)) == 0);
		} else if (!strcmp(op, "exit")) {
			NEED(1);
			fflush(stdout);
			exit(atoi(a));
		} else if (!strcmp(op, "_exit")) {
			NEED(1);
			fflush(stdout);
			_exit(atoi(a));
		} else {
			fprintf(stderr, "trace-probe: unknown operation %s\n", op);
			return 2;
		}
	}
	return 0;
}
