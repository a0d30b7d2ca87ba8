/*
 * Unit test for pool/pool.c with a pid board (board.h), the way the
 * plugin's spawn and fork start methods run it: a worker that dies before
 * it reports STARTED leaves a job only the board knows about, and the pool
 * must end it.
 *
 * The worker executable is ASYNC_COMPILE_WORKER or worker/asynccompile-
 * worker (run from the top of the tree, as `make check-unit` does).  It is
 * started with --started-after 60000, so STARTED never comes in time.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/board.h"
#include "pool/pool.h"
#include "pool/pool_impl.h"
#include "pool/start.h"
#include "tap.h"

extern char **environ;

static const char *worker_exe;
static struct pool *pool;
static int results, starteds;
static struct result_msg last;
static volatile pid_t job_pid;

/* The job outlived its worker: say so, and do not leave it running. */
static void t_timeout(int sig)
{
	static const char msg[] = "not ok - the orphaned job was not killed within 20 s\n";

	(void)sig;
	if (job_pid > 0)
		kill(-job_pid, SIGKILL);
	(void)!write(1, msg, sizeof msg - 1);
	_exit(1);
}

static int t_start(void *ctx, int index, int *to, int *from, pid_t *pid)
{
	int board = pool_board(pool);
	char *argv[] = { (char *)worker_exe, "--worker", "0", "--started-after", "60000",
			 "--pid-board", "3", NULL };

	(void)ctx;
	(void)index;
	if (board < 0)
		return -1;
	return start_worker(worker_exe, argv, NULL, board, 0, to, from, pid);
}

static void t_result(void *ctx, int64_t id, struct result_msg *res)
{
	(void)ctx;
	(void)id;
	results++;
	last.status = res->status;
	last.flags = res->flags;
}

static void t_started(void *ctx, int64_t id, const struct started_msg *m)
{
	(void)ctx;
	(void)id;
	(void)m;
	starteds++;
}

static void t_reap(void *ctx, pid_t pid)
{
	(void)ctx;
	waitpid(pid, NULL, 0);
}

int main(void)
{
	static const struct pool_ops ops = { t_start, t_result, t_started, t_reap, NULL, NULL };
	const char *env = getenv("ASYNC_COMPILE_WORKER");
	char cmd[300], dir[] = "/tmp/test-pool.XXXXXX", fifo[64];
	struct job_msg job;
	struct buf payload = BUF_INIT;
	char *flags[] = { "-c", NULL };
	int st = 0;

	worker_exe = env && *env ? env : "worker/asynccompile-worker";
	if (access(worker_exe, X_OK)) {
		printf("1..0 # SKIP no worker executable at %s (run from the top of the tree)\n",
		       worker_exe);
		return 0;
	}
	/* orphans come here, so the job's end can be waited for, not polled */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	signal(SIGALRM, t_timeout);
	alarm(20); /* a job the pool failed to kill would hang the wait below */

	/*
	 * The job kills its worker only once the worker has written the
	 * board (the test lets it go through a fifo): between its spawn and
	 * that write a worker's death would leave a job nobody knows.
	 */
	if (!mkdtemp(dir))
		abort();
	snprintf(fifo, sizeof fifo, "%s/go", dir);
	if (mkfifo(fifo, 0600))
		abort();
	memset(&job, 0, sizeof job);
	snprintf(cmd, sizeof cmd, "read go < %s; kill -9 $PPID; exec sleep 1208.%d", fifo,
		 (int)getpid());
	job.shell = "/bin/sh";
	job.shellflags = flags;
	job.command = cmd;
	job.kill_grace_ms = 1000;
	job.cwd = getcwd(NULL, 0);
	msg_put_job(&payload, &job);

	pool = pool_new(1, &ops, NULL);
	ok(pool && pool_board(pool) >= 0, "a pool gets a board");
	ok(pool_submit(pool, 1, payload.data, payload.len, &(struct job_head){ 0, 0 }, POOL_LEND) == 0,
	   "job submitted, no retries");
	ok(pool_find(pool, 1) && pool_find(pool, 1)->payload == payload.data,
	   "a lent job's bytes stay the owner's: the pool copies nothing");
	while (!results) {
		struct pollfd fds[8];
		int timeout = -1;
		size_t n = pool_pollfds(pool, fds, 8, &timeout);

		/* the board wakes nobody (that is its point): look at it */
		/*
		 * BOARD_STARTING (-1) is not a pid yet: keep looking until the
		 * worker has written the real one.
		 */
		pid_t seen = job_pid ? 0 : board_get(pool_board(pool), 0);
		if (seen > 0) {
			int fd = open(fifo, O_WRONLY); /* the job opens the other end */

			job_pid = seen;
			if (fd < 0 || write(fd, "go\n", 3) != 3)
				abort();
			close(fd);
		}
		if (!job_pid && (timeout < 0 || timeout > 1))
			timeout = 1;
		if (poll(fds, n, timeout) < 0 && errno != EINTR)
			break;
		pool_events(pool, fds, n);
	}
	ok(results == 1 && last.status == 125 && (last.flags & RES_CRASHED),
	   "the job whose worker died is reported crashed (status %d)", last.status);
	ok(starteds == 0, "no STARTED came: only the board had the job's pid");
	ok(job_pid > 0, "the worker wrote its job's pid on the board (%d)", (int)job_pid);
	if (job_pid > 0) {
		/* the job is ours now (subreaper): its status says who ended it */
		ok(waitpid(job_pid, &st, 0) == job_pid && WIFSIGNALED(st) &&
		   WTERMSIG(st) == SIGKILL, "the pool killed the orphaned job");
	}
	{
		/* given: the pool frees it (ASan and valgrind see a leak or a double free) */
		unsigned char *given = malloc(payload.len);
		int before = results;

		if (!given)
			abort();
		memcpy(given, payload.data, payload.len);
		ok(pool_submit(pool, 2, given, payload.len, &(struct job_head){ 0, 0 }, POOL_GIVE) == 0 &&
		   pool_find(pool, 2)->payload == given, "a given job's bytes are the pool's, not copied");
		ok(pool_cancel(pool, 2) == 0 && results == before + 1 && (last.flags & RES_CANCELLED),
		   "cancelled before it started, it is reported and its bytes freed");
	}
	pool_destroy(pool, 0);
	unlink(fifo);
	rmdir(dir);
	buf_release(&payload);
	free(job.cwd);
	return done_testing();
}
