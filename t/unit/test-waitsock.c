/*
 * test-waitsock.c - the recipe waits' private socket (plugin/waitsock.h):
 * where it is made, what a new one sweeps away, what it leaves alone.
 *
 * listen() is this file's own: when armed, it lets a sibling make (a
 * forked child calling waitsock_listen(), which sweeps the directory)
 * run at the one moment the socket is bound and not yet listening, as
 * two sub-makes starting side by side can.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plugin/waitsock.h"
#include "tap.h"

static char tmpdir[] = "/tmp/test-waitsock.XXXXXX";
static int sibling_armed;
static int sibling_status = -1;

int listen(int fd, int backlog)
{
	if (sibling_armed) {
		pid_t pid;

		sibling_armed = 0;
		pid = fork();
		if (pid == 0) {
			struct buf err = BUF_INIT;

			_exit(waitsock_listen(&err) < 0 ? 1 : 0);
		}
		if (pid > 0 && waitpid(pid, &sibling_status, 0) != pid)
			sibling_status = -1;
	}
	return (int)syscall(SYS_listen, fd, backlog);
}

static void unix_addr(struct sockaddr_un *sa, const char *path)
{
	memset(sa, 0, sizeof *sa);
	sa->sun_family = AF_UNIX;
	snprintf(sa->sun_path, sizeof sa->sun_path, "%s", path);
}

/* connect() to path: 0, or the errno it failed with. */
static int try_connect(const char *path)
{
	struct sockaddr_un sa;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), e = 0;

	unix_addr(&sa, path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
		e = errno;
	close(fd);
	return e;
}

/* A socket file nobody listens on, as a make that is gone leaves it. */
static int dead_socket(const char *path)
{
	struct sockaddr_un sa;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), rc;

	unix_addr(&sa, path);
	rc = bind(fd, (struct sockaddr *)&sa, sizeof sa);
	close(fd);
	return rc;
}

static int is_socket(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

static void test_sibling_sweep(const char *dir)
{
	struct buf err = BUF_INIT;
	char path[200];
	int fd;

	sibling_armed = 1;
	fd = waitsock_listen(&err);
	ok(fd >= 0, "a socket is made (%s)", err.len ? (char *)err.data : "no error");
	is_int(sibling_status, 0, "a sibling make's socket is made while ours is bound, not listening");
	ok(is_socket(waitsock_path()), "the sibling's sweep left ours: %s", waitsock_path());
	is_int(try_connect(waitsock_path()), 0, "a collector can connect to it");
	ok(!strncmp(waitsock_path(), dir, strlen(dir)), "it is in XDG_RUNTIME_DIR/asynccompile-UID");
	snprintf(path, sizeof path, "%s", waitsock_path());
	waitsock_close(fd);
	ok(!is_socket(path) && !waitsock_path()[0], "closing it removes its file");
	buf_release(&err);
}

static void test_sweep_dead(const char *dir)
{
	struct buf err = BUF_INIT;
	char dead[256], pending[256];
	int fd;

	snprintf(dead, sizeof dead, "%s/m1.deadbeef", dir);
	snprintf(pending, sizeof pending, "%s/t1.deadbeef", dir);
	ok(dead_socket(dead) == 0 && dead_socket(pending) == 0, "two sockets nobody listens on");
	fd = waitsock_listen(&err);
	ok(fd >= 0, "a new socket is made");
	ok(!is_socket(dead), "the sweep removed a dead make's socket");
	ok(is_socket(pending), "the sweep left a socket not yet renamed (t...)");
	waitsock_close(fd);
	unlink(pending);
	buf_release(&err);
}

static void test_dir_refused(const char *dir)
{
	struct buf err = BUF_INIT;

	chmod(dir, 0755);
	is_int(waitsock_listen(&err), -1, "a directory others may enter is refused");
	ok(err.len && strstr((char *)err.data, "others may enter it"), "... saying so: %s",
	   err.len ? (char *)err.data : "");
	chmod(dir, 0700);
	buf_release(&err);
}

/*
 * A collector the check cannot look at (make is out of descriptors) is
 * not called "not a process of this make": the reason is said.
 */
static void test_peer_out_of_fds(void)
{
	struct sockaddr_un sa;
	struct buf err = BUF_INIT;
	struct rlimit old, low;
	char path[240];
	int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), a = -1, r = 0, hole;
	pid_t child;

	snprintf(path, sizeof path, "%s/peer.sock", tmpdir);
	unix_addr(&sa, path);
	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof sa) < 0 ||
	    syscall(SYS_listen, l, 1) < 0) {
		ok(0, "a listening socket: %s", strerror(errno));
		return;
	}
	child = fork();
	if (child == 0) {
		int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		char ch;

		/* connected: wait for the end of the test (EOF), then go */
		if (connect(c, (struct sockaddr *)&sa, sizeof sa) == 0)
			while (read(c, &ch, 1) > 0)
				;
		_exit(0);
	}
	a = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	/* the lowest free descriptor becomes the limit: every open fails */
	hole = dup(0);
	if (hole >= 0)
		close(hole);
	getrlimit(RLIMIT_NOFILE, &old);
	low = old;
	low.rlim_cur = (rlim_t)(hole >= 0 ? hole : 0);
	if (a >= 0 && hole >= 0 && setrlimit(RLIMIT_NOFILE, &low) == 0) {
		r = waitsock_peer_check(a, &err);
		setrlimit(RLIMIT_NOFILE, &old);
	}
	ok(a >= 0 && r < 0 && err.len && strstr((char *)err.data, "cannot tell") &&
	   strstr((char *)err.data, strerror(EMFILE)),
	   "out of descriptors: the check says it cannot tell (%s)",
	   err.len ? (char *)err.data : "no refusal");
	buf_release(&err);
	if (a >= 0)
		close(a);
	close(l);
	if (child > 0)
		waitpid(child, NULL, 0);
}

int main(void)
{
	char dir[200], rm[240];

	if (!mkdtemp(tmpdir)) {
		perror(tmpdir);
		return 2;
	}
	setenv("XDG_RUNTIME_DIR", tmpdir, 1);
	snprintf(dir, sizeof dir, "%s/asynccompile-%lu", tmpdir, (unsigned long)geteuid());
	test_sibling_sweep(dir);
	test_sweep_dead(dir);
	test_dir_refused(dir);
	test_peer_out_of_fds();
	snprintf(rm, sizeof rm, "rm -rf '%s'", tmpdir);
	if (system(rm) != 0)
		diag("could not remove %s", tmpdir);
	return done_testing();
}
