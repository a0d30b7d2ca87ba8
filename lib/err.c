/* Failure reasons: see err.h. */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "lib/err.h"

int err_failv(struct buf *err, const char *fmt, va_list ap)
{
	int e = errno;
	size_t n = strlen(fmt);
	struct buf msg = {0};

	if (!err)
		return -1;
	/* formatted apart first, so "%s" of err's own text stays valid */
	buf_vaddf(&msg, fmt, ap);
	if (msg.len)
		buf_add(err, msg.data, msg.len);
	if (n && fmt[n - 1] == ':')
		buf_addf(err, " %s", strerror(e));
	buf_release(&msg);
	errno = e;
	return -1;
}

int err_fail(struct buf *err, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = err_failv(err, fmt, ap);
	va_end(ap);
	return ret;
}
