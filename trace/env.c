/*
 * env.c - the tracer's two variables, hidden from the program and put
 * back into every environment it passes on.
 *
 * The program must not see ASYNCCOMPILE_TRACE, nor our library in
 * LD_PRELOAD: a command's answer must not depend on being traced (a
 * program that prints its environment, or passes LD_PRELOAD on to a
 * sanitizer check).  So the constructor removes both from environ
 * (in place: no allocation, the program's own setenv still works), and
 * the exec and spawn hooks add them to the envp they pass on, whatever
 * the program built (env -i included).  Our library goes last in
 * LD_PRELOAD, as the runner puts it (lib/launch.c): a sanitizer's
 * runtime must stay first.  The log's descriptor may have moved
 * (tr_fd_protect), so the variable is rebuilt each time.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "trace/trace.h"

extern char **environ;

#define TR_PRELOAD "LD_PRELOAD="

static uint64_t tr_self_dev, tr_self_ino;
static char tr_preload_buf[PATH_MAX * 2];

static int tr_starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* Is the LD_PRELOAD entry at p (n bytes) this library? */
static int tr_is_self(const char *p, size_t n)
{
	char path[PATH_MAX];
	struct stat st;

	if (n == strlen(tr_env.self) && !memcmp(p, tr_env.self, n))
		return 1;
	if (!memchr(p, '/', n) || n >= sizeof path || !tr_self_ino)
		return 0;
	memcpy(path, p, n);
	path[n] = 0;
	return tr_stat_at(AT_FDCWD, path, 0, &st) == 0 && st.st_dev == tr_self_dev &&
	       st.st_ino == tr_self_ino;
}

/*
 * value without this library's entries, into out (size bytes); each
 * entry kept keeps the separators before it, so "A:B:self" becomes "A:B"
 * again.  Returns the length, or -1 if it does not fit.
 */
static long tr_preload_strip(const char *value, char *out, size_t size)
{
	size_t o = 0;
	const char *p = value;

	while (*p) {
		const char *sep = p;
		size_t nsep, n;

		p += strspn(p, " :");
		nsep = (size_t)(p - sep);
		n = strcspn(p, " :");
		if (n && !tr_is_self(p, n)) {
			size_t lead = o ? nsep : 0;

			if (o + lead + n >= size)
				return -1;
			/* memmove: the in-place use overlaps */
			memmove(out + o, sep + nsep - lead, lead);
			memmove(out + o + lead, p, n);
			o += lead + n;
		}
		p += n;
	}
	out[o] = 0;
	return (long)o;
}

static void tr_env_remove(size_t i)
{
	for (; environ[i]; i++)
		environ[i] = environ[i + 1];
}

void tr_env_hide(void)
{
	struct stat st;

	if (tr_stat_at(AT_FDCWD, tr_env.self, 0, &st) == 0) {
		tr_self_dev = st.st_dev;
		tr_self_ino = st.st_ino;
	}
	if (!environ)
		return;
	for (size_t i = 0; environ[i];) {
		if (tr_starts(environ[i], TL_ENV "="))
			tr_env_remove(i);
		else
			i++;
	}
	for (size_t i = 0; environ[i]; i++) {
		char *value;
		long n;

		if (!tr_starts(environ[i], TR_PRELOAD))
			continue;
		value = environ[i] + strlen(TR_PRELOAD);
		memcpy(tr_preload_buf, TR_PRELOAD, strlen(TR_PRELOAD));
		n = tr_preload_strip(value, tr_preload_buf + strlen(TR_PRELOAD),
				     sizeof tr_preload_buf - strlen(TR_PRELOAD));
		if (n == 0)
			tr_env_remove(i);
		else if (n > 0)
			environ[i] = tr_preload_buf;
		else if (tr_preload_strip(value, value, strlen(value) + 1) == 0)
			tr_env_remove(i);   /* too long for our copy: shortened in place */
		break;
	}
}

/*
 * "ASYNCCOMPILE_TRACE=FD:DEV:INO[:OUTDEV:OUTINO:ERRDEV:ERRINO[:RUNNER:PPID]][;ahead]"
 * into buf.
 */
static size_t tr_trace_var(char *buf)
{
	uint64_t f[9] = { (uint64_t)__atomic_load_n(&tr_logfd, __ATOMIC_SEQ_CST), tr_env.dev,
			  tr_env.ino, tr_env.out_dev, tr_env.out_ino, tr_env.err_dev,
			  tr_env.err_ino, tr_env.runner, tr_env.ppid };
	size_t o = strlen(TL_ENV "=");

	memcpy(buf, TL_ENV "=", o);
	for (int i = 0; i < (tr_env.runner ? 9 : tr_env.pipes ? 7 : 3); i++) {
		if (i)
			buf[o++] = ':';
		o += tr_fmt_u64(buf + o, f[i]);
	}
	if (tr_env.ahead) {
		memcpy(buf + o, TL_ENV_AHEAD, strlen(TL_ENV_AHEAD));
		o += strlen(TL_ENV_AHEAD);
	}
	buf[o] = 0;
	return o;
}

int tr_envp_build(struct tr_envp *out, char *const *envp)
{
	size_t n = 0, strs, oldlen, self = strlen(tr_env.self), pre = strlen(TR_PRELOAD);
	const char *old = NULL;
	char **v, *s;
	size_t k = 0;
	long len;

	for (; envp && envp[n]; n++)
		if (!old && tr_starts(envp[n], TR_PRELOAD))
			old = envp[n] + pre;
	/* arena: the array, "LD_PRELOAD=old:self", the trace variable */
	oldlen = old ? strlen(old) : 0;
	strs = pre + oldlen + 1 + self + 1 + 240; /* the trace variable: 9 fields */
	out->size = (n + 3) * sizeof(char *) + strs;
	out->arena = NULL;
	if (out->size <= sizeof out->buf) {
		v = (char **)out->buf;
	} else {
		out->arena = mmap(NULL, out->size, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (out->arena == MAP_FAILED) {
			out->arena = NULL;
			return -1;
		}
		v = out->arena;
	}
	s = (char *)(v + n + 3);
	memcpy(s, TR_PRELOAD, pre);
	len = old ? tr_preload_strip(old, s + pre, oldlen + 1) : 0;
	if (len < 0)
		len = 0;
	if (len)
		s[pre + len++] = ':';
	memcpy(s + pre + len, tr_env.self, self + 1);
	for (size_t i = 0; i < n; i++) {
		if (tr_starts(envp[i], TL_ENV "="))
			continue;
		if (tr_starts(envp[i], TR_PRELOAD)) {
			if (envp[i] + pre == old)
				v[k++] = s;
			continue;
		}
		v[k++] = envp[i];
	}
	if (!old)
		v[k++] = s;
	s += pre + (size_t)len + self + 1;
	tr_trace_var(s);
	v[k++] = s;
	v[k] = NULL;
	out->envp = v;
	return 0;
}

void tr_envp_free(struct tr_envp *e)
{
	if (e->arena)
		munmap(e->arena, e->size);
	e->arena = NULL;
}
