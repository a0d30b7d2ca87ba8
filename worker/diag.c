/* Diagnostics of the worker executable: see diag.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "lib/buf.h"
#include "lib/err.h"
#include "worker/diag.h"

static int diag_worker = -1;

void diag_set_worker(int index)
{
	diag_worker = index;
}

void diag_warn(const char *fmt, ...)
{
	struct buf line = {0};
	int e = errno;
	va_list ap;

	if (diag_worker >= 0)
		buf_addf(&line, "asynccompile-worker %d: ", diag_worker);
	else
		buf_addf(&line, "asynccompile-worker: ");
	errno = e; /* the prefix's allocation may have changed it */
	va_start(ap, fmt);
	err_failv(&line, fmt, ap); /* err.h's trailing-colon rule */
	va_end(ap);
	buf_addf(&line, "\n");
	/* one write, so lines from several workers do not interleave */
	fwrite(line.data, 1, line.len, stderr);
	buf_release(&line);
}
