/*
 * tap.h - minimal TAP producer for C unit tests run by prove.
 * ok(cond, fmt, ...) prints one test line; is_int(got, want, what) and
 * is_string(got, want, what) do the same for an equality and, when it
 * fails, say what they got and what they wanted; done_testing() prints
 * the plan and returns the exit status for main().  fresh_why() is an
 * empty reason buffer for one call of a function that fails with one
 * (lib/err.h), why_text() what that call put there (NULL: nothing).
 */
#ifndef ASYNC_TAP_H
#define ASYNC_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lib/buf.h"

static int tap_n, tap_failed;

__attribute__((format(printf, 2, 3)))
static int ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (!cond)
		tap_failed++;
	return cond;
}

__attribute__((format(printf, 1, 2), unused))
static void diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

__attribute__((unused))
static int is_int(long long got, long long want, const char *what)
{
	int r = ok(got == want, "%s", what);

	if (!r)
		diag("  got: %lld, wanted: %lld", got, want);
	return r;
}

__attribute__((unused))
static int is_string(const char *got, const char *want, const char *what)
{
	int r = ok(got && want ? !strcmp(got, want) : got == want, "%s", what);

	if (!r)
		diag("  got: %s%s%s, wanted: \"%s\"", got ? "\"" : "", got ? got : "NULL",
		     got ? "\"" : "", want ? want : "NULL");
	return r;
}

static struct buf tap_why;

__attribute__((unused))
static struct buf *fresh_why(void)
{
	buf_reset(&tap_why);
	return &tap_why;
}

__attribute__((unused))
static const char *why_text(void)
{
	return tap_why.len ? (const char *)tap_why.data : NULL;
}

__attribute__((unused))
static void tap_why_release(void)
{
	buf_release(&tap_why);
}

static int done_testing(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif
