#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "job.h"

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

void trace_record(const struct job *j)
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

int trace_write(const char *path)
{
	struct buf b = BUF_INIT, tmp = BUF_INIT;
	int64_t t0 = 0;
	int maxw = -1, fd, ret = 0;
	pid_t pid = getpid();

	pthread_mutex_lock(&trace_lock);
	for (size_t i = 0; i < nspans; i++) {
		if (!t0 || spans[i].queued_ns < t0)
			t0 = spans[i].queued_ns;
		if (spans[i].worker > maxw)
			maxw = spans[i].worker;
	}
	buf_addstr(&b, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
	buf_addf(&b, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
		 "\"args\":{\"name\":\"asynccompile (make %d)\"}},\n", (int)pid, (int)pid);
	buf_addf(&b, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
		 "\"args\":{\"name\":\"queue\"}}", (int)pid);
	for (int w = 0; w <= maxw; w++)
		buf_addf(&b, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
			 "\"args\":{\"name\":\"worker %d\"}}", (int)pid, w + 1, w);
	for (size_t i = 0; i < nspans; i++) {
		const struct span *s = &spans[i];

		buf_addstr(&b, ",\n{\"name\":");
		trace_str(&b, s->name);
		buf_addf(&b, ",\"cat\":\"queue\",\"ph\":\"X\",\"pid\":%d,\"tid\":0,"
			 "\"ts\":%.3f,\"dur\":%.3f}", (int)pid, (s->queued_ns - t0) / 1e3,
			 (s->dispatched_ns - s->queued_ns) / 1e3);
		buf_addstr(&b, ",\n{\"name\":");
		trace_str(&b, s->name);
		buf_addf(&b, ",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,"
			 "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"status\":%d,\"attempts\":%u,"
			 "\"queue_wait_ms\":%.3f,\"token_wait_ms\":%.3f,\"command\":",
			 trace_kinds[s->kind], (int)pid,
			 s->worker >= 0 ? s->worker + 1 : 0, (s->start_ns - t0) / 1e3,
			 (s->end_ns - s->start_ns) / 1e3, s->status, s->attempts,
			 (s->dispatched_ns - s->queued_ns) / 1e6, s->token_wait_ns / 1e6);
		trace_str(&b, s->command);
		buf_addstr(&b, "}}");
	}
	buf_addstr(&b, "\n]}\n");
	pthread_mutex_unlock(&trace_lock);

	/*
	 * Write a sibling file and rename it, so a reader never sees half.
	 * mkostemp: a fresh name that nobody can have planted (a link or a
	 * file of someone else's), created 0600; then readable like any
	 * build output.
	 */
	buf_addf(&tmp, "%s.XXXXXX", path);
	fd = mkostemp((char *)tmp.data, O_CLOEXEC);
	if (fd >= 0)
		(void)fchmod(fd, 0644);
	if (fd < 0) {
		ret = -1;
	} else {
		size_t off = 0;
		while (off < b.len) {
			ssize_t w = write(fd, b.data + off, b.len - off);
			if (w <= 0)
				break;
			off += (size_t)w;
		}
		if (close(fd) < 0 || off < b.len || rename((char *)tmp.data, path) < 0) {
			int e = errno;
			unlink((char *)tmp.data);
			errno = e;
			ret = -1;
		}
	}
	buf_release(&tmp);
	buf_release(&b);
	return ret;
}

void trace_reset(void)
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
