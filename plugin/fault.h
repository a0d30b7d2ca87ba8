/*
 * fault.h - fault injection for tests, compiled in only with -DASYNC_FAULTS
 * (the Makefile's build/faults/asynccompile.so, built by `make test-build`).
 * In the plugin users load, every hook is the constant 0: no environment
 * is read and the compiler drops the branches.
 *
 * The environment variable ASYNC_COMPILE_FAULTS (read when the engine
 * starts, on make's thread) holds blank-separated words WHAT:NAME, each
 * firing the hook WHAT for the job named NAME:
 *   submit:NAME  the backend refuses the job as on out-of-memory
 *   stop:NAME    once NAME is reported started, the I/O thread stops the
 *                pool as it does when make exits under it
 *   note:NAME    once NAME is reported started, the I/O thread creates the
 *                file fault-started.NAME in make's working directory (a
 *                test's cue that the plugin counts it as running)
 * The hooks' state is static, one copy per file that includes this
 * header: only io.c does (io_init() calls fault_init()).
 */
#ifndef ASYNC_FAULT_H
#define ASYNC_FAULT_H

#ifdef ASYNC_FAULTS
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *fault_spec;
static int fault_stop; /* I/O thread only */

static inline void fault_init(void)
{
	const char *e = getenv("ASYNC_COMPILE_FAULTS");

	free(fault_spec);
	fault_spec = e && *e ? strdup(e) : NULL;
	fault_stop = 0;
}

static inline int fault_hit(const char *what, const char *name)
{
	size_t lw = strlen(what), ln = strlen(name);

	for (const char *p = fault_spec; p && *p;) {
		size_t n = strcspn(p, " ");

		if (n == lw + 1 + ln && !memcmp(p, what, lw) && p[lw] == ':' &&
		    !memcmp(p + lw + 1, name, ln))
			return 1;
		p += n;
		p += strspn(p, " ");
	}
	return 0;
}

static inline void fault_started(const char *name)
{
	fault_stop |= fault_hit("stop", name);
	if (fault_hit("note", name)) {
		char path[300];
		int fd;

		snprintf(path, sizeof path, "fault-started.%s", name);
		fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd >= 0)
			close(fd);
	}
}

static inline int fault_stop_now(void)
{
	return fault_stop;
}
#else
#define fault_init() ((void)0)
#define fault_hit(what, name) 0
#define fault_started(name) ((void)0)
#define fault_stop_now() 0
#endif

#endif
