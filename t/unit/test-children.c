/*
 * Unit tests for plugin/children.c: a running child counts, a zombie and
 * a child the caller claims do not, nor does a child of another thread.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plugin/children.h"
#include "tap.h"

static int skip_this(void *ctx, pid_t pid)
{
	return pid == *(pid_t *)ctx;
}

/* A child that exits once its stdin (our pipe) reaches end-of-file. */
static pid_t child_until_eof(int *wfd)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe(p) < 0)
		abort();
	pid = fork();
	if (pid == 0) {
		close(p[1]);
		while (read(p[0], &c, 1) > 0)
			;
		_exit(0);
	}
	close(p[0]);
	*wfd = p[1];
	return pid;
}

/* A zombie: the child has exited (waitid without reaping says so). */
static void until_zombie(pid_t pid)
{
	siginfo_t si;

	while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) < 0)
		;
}

/*
 * A thread that starts a child and stays alive until told (a child whose
 * thread has exited passes to another thread of the process).
 */
struct tkid {
	pid_t pid;
	int child_w;       /* the child's stdin */
	int ready[2], go[2];
};

static void *thread_child(void *arg)
{
	struct tkid *t = arg;
	char c = 0;

	t->pid = child_until_eof(&t->child_w);
	if (write(t->ready[1], &c, 1) != 1 || read(t->go[0], &c, 1) < 0)
		abort();
	return NULL;
}

int main(void)
{
	int w;
	pid_t kid;
	pthread_t th;
	struct tkid t;
	char c = 0;

	ok(children_running(NULL, NULL) == 0, "no child: nothing running");
	kid = child_until_eof(&w);
	ok(children_running(NULL, NULL) == 1, "a running child counts");
	ok(children_running(skip_this, &kid) == 0, "a child the caller claims does not");
	close(w);
	until_zombie(kid);
	ok(children_running(NULL, NULL) == 0, "a zombie does not count");
	waitpid(kid, NULL, 0);

	/* the plugin's own thread starts workers: they are not make's jobs */
	if (pipe(t.ready) < 0 || pipe(t.go) < 0 || pthread_create(&th, NULL, thread_child, &t) ||
	    read(t.ready[0], &c, 1) != 1)
		abort();
	ok(children_running(NULL, NULL) == 0, "a child of another thread does not count");
	if (write(t.go[1], &c, 1) != 1 || pthread_join(th, NULL))
		abort();
	close(t.child_w);
	waitpid(t.pid, NULL, 0);
	return done_testing();
}
