/* Diagnostics of the worker executable: see diag.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "worker/diag.h"

static int diag_worker = -1;

void diag_set_worker(int index)
{
	diag_worker = index;
}

void diag_warn(const char *fmt, ...)
{
	char msg[1024];
	int e = errno;
	size_t n;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	n = strlen(fmt);
	if (diag_worker >= 0)
		fprintf(stderr, "asynccompile-worker %d: ", diag_worker);
	else
		fputs("asynccompile-worker: ", stderr);
	if (n && fmt[n - 1] == ':')
		fprintf(stderr, "%s %s\n", msg, strerror(e));
	else
		fprintf(stderr, "%s\n", msg);
}
