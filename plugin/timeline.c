#include "plugin/timeline.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "lib/err.h"
#include "plugin/job.h"

struct span {
	char *name, *command;
	int64_t queued_ns, dispatched_ns, start_ns, end_ns, token_wait_ns;
	int worker, status, kind;
	uint32_t attempts;
};

/* the "cat" of each job kind's span; speculated jobs are marked as such */
static const char *const trace_kinds[] = {
	[JOB_COMPILE] = "compile", [JOB_TRY] = "try", [JOB_SHELL] = "shell",
	[JOB_SPEC] = "speculated",
};

static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static struct span *spans;
static size_t nspans, capspans;

void timeline_record(const struct job *j)
{
	struct span *s;

	pthread_mutex_lock(&trace_lock);
	if (nspans == capspans) {
		size_t cap = capspans ? capspans * 2 : 256;
		struct span *n = realloc(spans, cap * sizeof *n);
		if (!n) {
			pthread_mutex_unlock(&trace_lock);
			return;
		}
		spans = n;
		capspans = cap;
	}
	s = &spans[nspans++];
	s->name = strdup(j->name);
	s->command = strdup(j->command);
	s->queued_ns = j->queued_ns;
	s->dispatched_ns = j->dispatched_ns;
	s->start_ns = j->res.start_ns ? j->res.start_ns : j->dispatched_ns;
	s->end_ns = j->res.end_ns ? j->res.end_ns : proto_now_ns();
	s->token_wait_ns = j->token_wait_ns;
	s->worker = j->res.worker;
	s->status = j->res.status;
	s->kind = j->kind;
	s->attempts = j->res.attempts;
	pthread_mutex_unlock(&trace_lock);
}

static void trace_str(struct buf *b, const char *s)
{
	buf_addch(b, '"');
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			buf_addf(b, "\\%c", c);
		else if (c < 0x20)
			buf_addf(b, "\\u%04x", c);
		else
			buf_addch(b, c);
	}
	buf_addch(b, '"');
}

/* This process image's mark on its lines: a pid alone repeats across a re-exec. */
static void trace_owner(char *out, size_t n)
{
	static int64_t born;

	if (!born)
		born = proto_now_ns();
	snprintf(out, n, "%d-%lld", (int)getpid(), (long long)born);
}

/* This make's events, one per line, each ending in a newline. */
static void trace_events(struct buf *b)
{
	char owner[64], *cwd = getcwd(NULL, 0);
	const char *level = getenv("MAKELEVEL");
	int maxw = -1, pid = (int)getpid();

	trace_owner(owner, sizeof owner);
	for (size_t i = 0; i < nspans; i++)
		if (spans[i].worker > maxw)
			maxw = spans[i].worker;
	buf_addf(b, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"ac\":\"%s\","
		 "\"args\":{\"name\":", pid, owner);
	{
		struct buf name = BUF_INIT;

		buf_addf(&name, "make[%s] %d in %s", level && *level ? level : "0", pid,
			 cwd ? cwd : "?");
		trace_str(b, (char *)name.data);
		buf_release(&name);
	}
	buf_addstr(b, "}}\n");
	buf_addf(b, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"ac\":\"%s\","
		 "\"args\":{\"name\":\"queue\"}}\n", pid, owner);
	for (int w = 0; w <= maxw; w++)
		buf_addf(b, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"ac\":\"%s\","
			 "\"args\":{\"name\":\"worker %d\"}}\n", pid, w + 1, owner, w);
	/* times are CLOCK_MONOTONIC, one clock for every make of the build */
	for (size_t i = 0; i < nspans; i++) {
		const struct span *s = &spans[i];

		buf_addstr(b, "{\"name\":");
		trace_str(b, s->name);
		buf_addf(b, ",\"cat\":\"queue\",\"ph\":\"X\",\"pid\":%d,\"tid\":0,\"ac\":\"%s\","
			 "\"ts\":%.3f,\"dur\":%.3f}\n", pid, owner, s->queued_ns / 1e3,
			 (s->dispatched_ns - s->queued_ns) / 1e3);
		buf_addstr(b, "{\"name\":");
		trace_str(b, s->name);
		buf_addf(b, ",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ac\":\"%s\","
			 "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"status\":%d,\"attempts\":%u,"
			 "\"queue_wait_ms\":%.3f,\"token_wait_ms\":%.3f,\"command\":",
			 trace_kinds[s->kind], pid, s->worker >= 0 ? s->worker + 1 : 0, owner,
			 s->start_ns / 1e3, (s->end_ns - s->start_ns) / 1e3, s->status,
			 s->attempts, (s->dispatched_ns - s->queued_ns) / 1e6, s->token_wait_ns / 1e6);
		trace_str(b, s->command);
		buf_addstr(b, "}}\n");
	}
	free(cwd);
}

/*
 * The events other makes of the build wrote into `path`: every line that
 * looks like one of ours (an object with an "ac" owner) and is not this
 * process's.  Anything else in the file is dropped.
 */
static void trace_others(const char *path, const char *owner, struct buf *out)
{
	struct buf old = BUF_INIT, mark = BUF_INIT;
	char tmp[65536];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	struct stat st;

	if (fd < 0)
		return;
	/* a fifo or a device named as the trace is not read */
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		while ((n = read(fd, tmp, sizeof tmp)) > 0)
			buf_add(&old, tmp, (size_t)n);
	close(fd);
	buf_addf(&mark, "\"ac\":\"%s\"", owner);
	char *start = (char *)old.data, *stop = start + old.len;

	for (char *line = start, *end; line && line < stop; line = end + 1) {
		size_t len;

		end = memchr(line, '\n', (size_t)(stop - line));
		if (!end)
			end = stop;
		len = (size_t)(end - line);
		if (len && line[len - 1] == ',')
			len--;
		if (len < 2 || line[0] != '{' || line[len - 1] != '}' ||
		    !memmem(line, len, "\"ac\":\"", 6) || memmem(line, len, mark.data, mark.len) ||
		    memchr(line, 0, len))
			continue;
		buf_add(out, line, len);
		buf_addch(out, '\n');
	}
	buf_release(&old);
	buf_release(&mark);
}

/*
 * Replace `path` with `events` (lines) as a trace file: a sibling
 * written and renamed, so a reader never sees half.  mkostemp: a fresh
 * name nobody can have planted (a link, someone else's file), created
 * 0600, then made readable like any build output.
 */
static int trace_replace(const char *path, const struct buf *events, struct buf *err)
{
	struct buf b = BUF_INIT, tmp = BUF_INIT;
	size_t off = 0;
	int fd, ret = 0;

	buf_addstr(&b, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
	const char *first = (const char *)events->data, *stop = first + events->len;

	for (const char *l = first; l && l < stop;) {
		const char *e = memchr(l, '\n', (size_t)(stop - l));

		if (l != first)
			buf_addstr(&b, ",\n");
		buf_add(&b, l, (size_t)(e - l));
		l = e + 1;
	}
	buf_addstr(&b, "\n]}\n");
	buf_addf(&tmp, "%s.XXXXXX", path);
	fd = mkostemp((char *)tmp.data, O_CLOEXEC);
	if (fd < 0) {
		ret = err_fail(err, "cannot create the temporary file %s beside it:",
			       (char *)tmp.data);
	} else {
		(void)fchmod(fd, 0644);
		while (off < b.len) {
			ssize_t w = write(fd, b.data + off, b.len - off);
			if (w <= 0)
				break;
			off += (size_t)w;
		}
		if (off < b.len || close(fd) < 0)
			ret = err_fail(err, "cannot write %s:", (char *)tmp.data);
		else if (rename((char *)tmp.data, path) < 0)
			ret = err_fail(err, "cannot rename %s to it:", (char *)tmp.data);
		if (ret < 0) {
			if (off < b.len)
				close(fd);
			unlink((char *)tmp.data);
			ret = -1;
		}
	}
	buf_release(&tmp);
	buf_release(&b);
	return ret;
}

/*
 * Every make of a build writes into one file: each one, holding a lock on
 * the file's directory (no lock file left behind), reads what the others
 * wrote, replaces its own lines and renames the result into place.
 */
static int trace_update(const char *path, int fresh, struct buf *err)
{
	struct buf events = BUF_INIT;
	char owner[64], *dir = strdup(path), *slash;
	int dfd, ret;

	if (!dir)
		abort();
	slash = strrchr(dir, '/');
	if (!slash)
		strcpy(dir, ".");
	else
		slash[slash == dir] = 0;
	trace_owner(owner, sizeof owner);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		err_fail(err, "cannot open its directory %s:", dir);
		free(dir);
		return -1;
	}
	free(dir);
	while (flock(dfd, LOCK_EX) < 0 && errno == EINTR)
		;
	if (!fresh)
		trace_others(path, owner, &events);
	pthread_mutex_lock(&trace_lock);
	trace_events(&events);
	pthread_mutex_unlock(&trace_lock);
	ret = trace_replace(path, &events, err);
	close(dfd); /* and the lock with it */
	buf_release(&events);
	return ret;
}

int timeline_write(const char *path, struct buf *err)
{
	return trace_update(path, 0, err);
}

int timeline_begin(const char *path, struct buf *err)
{
	return trace_update(path, 1, err);
}

void timeline_reset(void)
{
	pthread_mutex_lock(&trace_lock);
	for (size_t i = 0; i < nspans; i++) {
		free(spans[i].name);
		free(spans[i].command);
	}
	free(spans);
	spans = NULL;
	nspans = capspans = 0;
	pthread_mutex_unlock(&trace_lock);
}
