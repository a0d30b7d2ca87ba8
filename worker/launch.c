/*
 * launch.c - how a job's command line is run, and starting it (see
 * launch.h).
 */
#include "launch.h"
#include "board.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

/* make's list (job.c sh_chars), plus other blanks make does not split on. */
static const char launch_metachars[] = "#;\"*?[]&|<>(){}$`'\\!~=%^\n\r\v\f";

/* Reserved words and builtins: exec'ing a program of that name is wrong. */
static const char *const launch_shell_words[] = {
	".", ":", "[[", "alias", "bg", "break", "case", "cd", "command",
	"continue", "declare", "do", "done", "elif", "else", "esac", "eval",
	"exec", "exit", "export", "fc", "fg", "fi", "for", "function",
	"getopts", "hash", "if", "in", "jobs", "let", "local", "login",
	"logout", "popd", "pushd", "read", "readonly", "return", "select",
	"set", "shift", "source", "then", "time", "times", "trap", "type",
	"typeset", "ulimit", "umask", "unalias", "unset", "until", "wait",
	"while", NULL,
};


/* ---- deciding how to run the command ---- */

static int launch_is_shell_word(const char *w, size_t n)
{
	for (const char *const *k = launch_shell_words; *k; k++)
		if (strlen(*k) == n && !memcmp(*k, w, n))
			return 1;
	return 0;
}

int launch_is_simple(const char *shell, char *const *shellflags, const char *command)
{
	const char *p = command;
	size_t n;

	if (!shell || strcmp(shell, "/bin/sh"))
		return 0;
	if (!shellflags || !shellflags[0] || shellflags[1] ||
	    (strcmp(shellflags[0], "-c") && strcmp(shellflags[0], "-ec")))
		return 0;
	if (strpbrk(command, launch_metachars))
		return 0;
	p += strspn(p, " \t");
	n = strcspn(p, " \t");
	if (!n)
		return 0; /* empty: let the shell decide what nothing means */
	return !launch_is_shell_word(p, n);
}

/* Split a simple command on blanks; the vector points into `copy`. */
static char **launch_split(char *copy)
{
	size_t n = 0, cap = 8;
	char **v = malloc(cap * sizeof *v);
	char *p = copy;

	if (!v)
		return NULL;
	for (;;) {
		p += strspn(p, " \t");
		if (!*p)
			break;
		if (n + 2 > cap) {
			char **nv = realloc(v, (cap *= 2) * sizeof *v);

			if (!nv) {
				free(v);
				return NULL;
			}
			v = nv;
		}
		v[n++] = p;
		p += strcspn(p, " \t");
		if (*p)
			*p++ = 0;
	}
	v[n] = NULL;
	return v;
}

/*
 * The inherited environment with the job's entries applied.  Only the
 * pointer array is new; the strings stay where they are.
 */
static char **launch_environ(char *const *extra)
{
	/* the worker's mark (board.h), after the job's own entries */
	static char mark[64];
	size_t n = 0, m = 0, len;
	char **v;

	if (!*mark)
		snprintf(mark, sizeof mark, "%s=%ld", BOARD_MARK, (long)getpid());
	while (environ && environ[n])
		n++;
	while (extra && extra[m])
		m++;
	v = malloc((n + m + 2) * sizeof *v);
	if (!v)
		return NULL;
	if (n)
		memcpy(v, environ, n * sizeof *v);
	for (size_t j = 0; j <= m; j++) {
		const char *e = j < m ? extra[j] : mark;
		size_t i;

		len = strcspn(e, "=");
		for (i = 0; i < n; i++)
			if (!strncmp(v[i], e, len) && v[i][len] == '=')
				break;
		if (!e[len]) { /* "K": unset K */
			if (i < n)
				memmove(v + i, v + i + 1, (--n - i) * sizeof *v);
			continue;
		}
		v[i] = (char *)e;
		if (i == n)
			n++;
	}
	v[n] = NULL;
	return v;
}

static const char *launch_getenv(char *const *envp, const char *key)
{
	size_t len = strlen(key);

	for (; envp && *envp; envp++)
		if (!strncmp(*envp, key, len) && (*envp)[len] == '=')
			return *envp + len + 1;
	return NULL;
}

/*
 * Look `name` up in the job's PATH the way execvp() would, but with the
 * job's environment and relative to the job's directory (posix_spawnp()
 * would use the worker's own PATH).  Returns a malloc'd path or NULL with
 * errno set.
 */
static char *launch_find_program(const char *name, char *const *envp, const char *cwd)
{
	const char *path = launch_getenv(envp, "PATH");
	int saw_eacces = 0;
	struct buf cand = BUF_INIT;
	struct stat sb;

	if (strchr(name, '/'))
		return strdup(name);
	if (!path)
		path = "/bin:/usr/bin";
	for (;;) {
		size_t n = strcspn(path, ":");

		buf_reset(&cand);
		if (n == 0 || path[0] != '/') {
			if (cwd && *cwd)
				buf_addf(&cand, "%s/", cwd);
		}
		if (n)
			buf_add(&cand, path, n);
		else
			buf_addch(&cand, '.');
		buf_addf(&cand, "/%s", name);
		if (!access((char *)cand.data, X_OK)) {
			if (!stat((char *)cand.data, &sb) && S_ISREG(sb.st_mode))
				return buf_detach(&cand, NULL);
			saw_eacces = 1;
		} else if (errno == EACCES) {
			saw_eacces = 1;
		}
		if (!path[n])
			break;
		path += n + 1;
	}
	buf_release(&cand);
	errno = saw_eacces ? EACCES : ENOENT;
	return NULL;
}

/* The shell's argv: shell, flags..., command. */
static char **launch_shell_argv(const struct job_msg *job)
{
	size_t n = 0, i = 0;
	char **v;

	while (job->shellflags && job->shellflags[n])
		n++;
	v = malloc((n + 3) * sizeof *v);
	if (!v)
		return NULL;
	v[i++] = job->shell;
	for (size_t j = 0; j < n; j++)
		v[i++] = job->shellflags[j];
	v[i++] = job->command;
	v[i] = NULL;
	return v;
}


/* ---- spawning ---- */

/*
 * What posix_spawn() is told, kept from one job to the next: the actions
 * depend only on the descriptor numbers, which are the same for every job
 * of a worker once it is in its stride, and on the directory.
 */
static struct {
	int valid;
	int in, out, err;
	char *cwd;
	int once;       /* built with a job's own descriptors: not for the next */
	posix_spawn_file_actions_t fa;
} launch_fa;
static int launch_attr_valid;
static posix_spawnattr_t launch_attr;

void launch_release(void)
{
	if (launch_fa.valid)
		posix_spawn_file_actions_destroy(&launch_fa.fa);
	free(launch_fa.cwd);
	launch_fa.cwd = NULL;
	launch_fa.valid = 0;
	if (launch_attr_valid)
		posix_spawnattr_destroy(&launch_attr);
	launch_attr_valid = 0;
}

static int launch_get_attr(void)
{
	sigset_t none, all;
	int rc;

	if (launch_attr_valid)
		return 0;
	if ((rc = posix_spawnattr_init(&launch_attr)))
		return rc;
	sigemptyset(&none);
	sigfillset(&all);
	sigdelset(&all, SIGKILL);
	sigdelset(&all, SIGSTOP);
	rc = posix_spawnattr_setflags(&launch_attr, POSIX_SPAWN_SETSID |
				      POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	if (!rc)
		rc = posix_spawnattr_setsigmask(&launch_attr, &none);
	if (!rc)
		rc = posix_spawnattr_setsigdefault(&launch_attr, &all);
	if (rc)
		posix_spawnattr_destroy(&launch_attr);
	else
		launch_attr_valid = 1;
	return rc;
}

/*
 * child_in -1: /dev/null.  cwd NULL or "": the worker's own.  fds: the
 * job's own descriptors (job_msg.fds), opened in the child after every
 * other descriptor is closed.
 */
static int launch_get_actions(int child_in, int child_out, int child_err, const char *cwd,
			      char *const *fds)
{
	posix_spawn_file_actions_t *fa = &launch_fa.fa;
	int rc, own = fds && *fds;

	if (!cwd)
		cwd = "";
	if (launch_fa.valid && !launch_fa.once && !own && launch_fa.in == child_in &&
	    launch_fa.out == child_out && launch_fa.err == child_err &&
	    !strcmp(launch_fa.cwd, cwd))
		return 0;
	if (launch_fa.valid)
		posix_spawn_file_actions_destroy(fa);
	free(launch_fa.cwd);
	launch_fa.valid = 0;
	if (!(launch_fa.cwd = strdup(cwd)))
		return ENOMEM;
	if ((rc = posix_spawn_file_actions_init(fa)))
		return rc;
	if (child_in >= 0)
		rc = posix_spawn_file_actions_adddup2(fa, child_in, 0);
	else
		rc = posix_spawn_file_actions_addopen(fa, 0, "/dev/null", O_RDONLY, 0);
	if (!rc)
		rc = posix_spawn_file_actions_adddup2(fa, child_out, 1);
	if (!rc)
		rc = posix_spawn_file_actions_adddup2(fa, child_err, 2);
	if (!rc && *cwd)
		rc = posix_spawn_file_actions_addchdir_np(fa, cwd);
	if (!rc)
		rc = posix_spawn_file_actions_addclosefrom_np(fa, 3);
	for (char *const *f = fds; !rc && f && *f; f++) {
		char *end;
		int fd = (int)strtol(*f, &end, 10); /* checked by msg_get_job */

		rc = posix_spawn_file_actions_addopen(fa, fd, end + 1,
						      (*end == '<' ? O_RDONLY : O_WRONLY), 0);
	}
	launch_fa.once = own;
	if (rc) {
		posix_spawn_file_actions_destroy(fa);
		return rc;
	}
	launch_fa.in = child_in;
	launch_fa.out = child_out;
	launch_fa.err = child_err;
	launch_fa.valid = 1;
	return 0;
}

/* Returns 0 or an errno value. */
static int launch_spawn(pid_t *pid, const char *path, char **argv, char **envp,
			const char *cwd, int child_in, int child_out, int child_err,
			char *const *fds)
{
	int rc = launch_get_attr();

	if (!rc)
		rc = launch_get_actions(child_in, child_out, child_err, cwd, fds);
	if (!rc)
		rc = posix_spawn(pid, path, &launch_fa.fa, &launch_attr, argv, envp);
	return rc;
}

static void launch_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

int launch_start(const struct job_msg *job, struct launch *l, struct buf *why)
{
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, err[2] = { -1, -1 };
	char **envp = NULL, **argv = NULL, *copy = NULL, *path = NULL;
	const char *what = job->command;
	int rc = 0, direct;

	l->pid = -1;
	if ((job->has_input && pipe2(in, O_CLOEXEC)) ||
	    pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC) ||
	    !(envp = launch_environ(job->env))) {
		rc = errno ? errno : ENOMEM;
		buf_addf(why, "asynccompile: cannot set up the command: %s\n", strerror(rc));
		goto out;
	}
	direct = launch_is_simple(job->shell, job->shellflags, job->command);
	if (direct) {
		copy = strdup(job->command);
		argv = copy ? launch_split(copy) : NULL;
		if (!argv) {
			rc = ENOMEM;
		} else {
			what = argv[0];
			path = launch_find_program(argv[0], envp, job->cwd);
			rc = path ? launch_spawn(&l->pid, path, argv, envp, job->cwd,
						 in[0], out[1], err[1], job->fds) : errno;
		}
		/* A script without #! is the shell's to run, as for execvp(). */
		if (rc == ENOEXEC)
			direct = 0;
	}
	if (!direct) {
		free(argv);
		free(path);
		what = job->shell;
		argv = launch_shell_argv(job);
		path = argv ? launch_find_program(job->shell, envp, job->cwd) : NULL;
		if (!argv)
			rc = ENOMEM;
		else
			rc = path ? launch_spawn(&l->pid, path, argv, envp, job->cwd,
						 in[0], out[1], err[1], job->fds) : errno;
	}
	if (rc) {
		struct stat sb;

		if (job->cwd && *job->cwd && stat(job->cwd, &sb))
			buf_addf(why, "asynccompile: cannot change to directory '%s': %s\n",
				 job->cwd, strerror(errno));
		else
			buf_addf(why, "asynccompile: cannot run '%s': %s\n", what, strerror(rc));
	}
out:
	free(argv);
	free(copy);
	free(path);
	free(envp);
	launch_close(&in[0]);
	if (rc) {
		launch_close(&out[1]);
		launch_close(&err[1]);
		launch_close(&in[1]);
		launch_close(&out[0]);
		launch_close(&err[0]);
		return -1;
	}
	/* only the worker's ends: the command's stay blocking */
	if (in[1] >= 0)
		fcntl(in[1], F_SETFL, O_NONBLOCK);
	fcntl(out[0], F_SETFL, O_NONBLOCK);
	fcntl(err[0], F_SETFL, O_NONBLOCK);
	l->in_fd = in[1];
	l->out_fd = out[0];
	l->err_fd = err[0];
	l->out_w = out[1];
	l->err_w = err[1];
	return 0;
}
