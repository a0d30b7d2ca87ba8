/*
 * pstate.c - the process state a command starts with (pstate.h).
 */
#include "lib/pstate.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lib/store.h"

/* The lines of /proc/thread-self/status that are state, and their words. */
static const struct {
	const char *line, *word;
} pstate_status[] = {
	{ "Umask", "umask" },
	{ "Uid", "uid" },
	{ "Gid", "gid" },
	{ "Groups", "groups" },
	{ "CapInh", "capinh" },
	{ "CapPrm", "capprm" },
	{ "CapEff", "capeff" },
	{ "CapBnd", "capbnd" },
	{ "CapAmb", "capamb" },
	{ "NoNewPrivs", "no_new_privs" },
	{ "Seccomp", "seccomp" },
	{ "Cpus_allowed_list", "cpus" },
};

static const struct {
	int which;
	const char *word;
} pstate_limits[] = {
	{ RLIMIT_CPU, "RLIMIT_CPU" },
	{ RLIMIT_FSIZE, "RLIMIT_FSIZE" },
	{ RLIMIT_DATA, "RLIMIT_DATA" },
	{ RLIMIT_STACK, "RLIMIT_STACK" },
	{ RLIMIT_CORE, "RLIMIT_CORE" },
	{ RLIMIT_RSS, "RLIMIT_RSS" },
	{ RLIMIT_NPROC, "RLIMIT_NPROC" },
	{ RLIMIT_NOFILE, "RLIMIT_NOFILE" },
	{ RLIMIT_MEMLOCK, "RLIMIT_MEMLOCK" },
	{ RLIMIT_AS, "RLIMIT_AS" },
	{ RLIMIT_LOCKS, "RLIMIT_LOCKS" },
	{ RLIMIT_SIGPENDING, "RLIMIT_SIGPENDING" },
	{ RLIMIT_MSGQUEUE, "RLIMIT_MSGQUEUE" },
	{ RLIMIT_NICE, "RLIMIT_NICE" },
	{ RLIMIT_RTPRIO, "RLIMIT_RTPRIO" },
	{ RLIMIT_RTTIME, "RLIMIT_RTTIME" },
};

/* A word's value longer than this is kept as its hash (a long group list). */
#define PSTATE_MAX_VALUE 160

/* " word:value", the value's blanks made commas, or its hash if long. */
static void pstate_word(struct buf *out, const char *word, const char *v, size_t n)
{
	while (n && (*v == ' ' || *v == '\t'))
		v++, n--;
	while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	buf_addf(out, "%s%s:", out->len ? " " : "", word);
	if (n > PSTATE_MAX_VALUE) {
		buf_addf(out, "#%016llx", (unsigned long long)store_hash(v, n, STORE_HASH_INIT));
		return;
	}
	for (size_t i = 0; i < n; i++)
		buf_addch(out, v[i] == ' ' || v[i] == '\t' ? ',' : v[i]);
}

static int pstate_from_status(struct buf *out)
{
	struct buf text = BUF_INIT;
	int fd = open("/proc/thread-self/status", O_RDONLY | O_CLOEXEC);
	size_t found = 0;

	if (fd < 0)
		return -1;
	if (buf_read_fd(&text, fd, 1 << 16) < 0) {
		close(fd);
		buf_release(&text);
		return -1;
	}
	close(fd);
	/* in the table's order, whatever the kernel's */
	for (size_t k = 0; k < sizeof pstate_status / sizeof *pstate_status; k++) {
		size_t klen = strlen(pstate_status[k].line);
		const char *p = (const char *)text.data, *end = p + text.len;

		while (p < end) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

			if (n > klen && !memcmp(p, pstate_status[k].line, klen) && p[klen] == ':') {
				pstate_word(out, pstate_status[k].word, p + klen + 1, n - klen - 1);
				found++;
				break;
			}
			p += n + 1;
		}
	}
	buf_release(&text);
	/* Umask (Linux 4.7) and the rest: a kernel without one cannot vouch */
	return found == sizeof pstate_status / sizeof *pstate_status ? 0 : -1;
}

/* pstate_hold(): the process whose state is read once, and what it read */
static struct {
	pid_t pid;
	int rc;
	struct buf snap;
} pstate_held;

void pstate_hold(void)
{
	pstate_held.pid = getpid();
	buf_reset(&pstate_held.snap);
}

static int pstate_read(struct buf *out);

int pstate_get(struct buf *out)
{
	/* a fork child (a fork worker) is another process: it reads its own */
	if (pstate_held.pid && pstate_held.pid == getpid()) {
		if (!pstate_held.snap.len)
			pstate_held.rc = pstate_read(&pstate_held.snap);
		buf_add(out, pstate_held.snap.data, pstate_held.snap.len);
		return pstate_held.rc;
	}
	return pstate_read(out);
}

static int pstate_read(struct buf *out)
{
	size_t start = out->len;
	struct buf words = BUF_INIT;
	struct sched_param sp;
	char num[64];
	int rc = pstate_from_status(&words), v;
	long io;

	errno = 0;
	v = getpriority(PRIO_PROCESS, 0);
	snprintf(num, sizeof num, "%d", errno ? 99 : v);
	pstate_word(&words, "nice", num, strlen(num));
	v = sched_getscheduler(0);
	if (v < 0 || sched_getparam(0, &sp) < 0)
		rc = -1;
	snprintf(num, sizeof num, "%d,%d", v, sp.sched_priority);
	pstate_word(&words, "sched", num, strlen(num));
	io = syscall(SYS_ioprio_get, 1 /* IOPRIO_WHO_PROCESS */, 0);
	snprintf(num, sizeof num, "%ld", io);
	pstate_word(&words, "ioprio", num, strlen(num));
	snprintf(num, sizeof num, "%x", (unsigned)personality(0xffffffff));
	pstate_word(&words, "personality", num, strlen(num));
	for (size_t k = 0; k < sizeof pstate_limits / sizeof *pstate_limits; k++) {
		struct rlimit rl;

		if (getrlimit(pstate_limits[k].which, &rl) < 0) {
			rc = -1;
			continue;
		}
		snprintf(num, sizeof num, "%llu,%llu", (unsigned long long)rl.rlim_cur,
			 (unsigned long long)rl.rlim_max);
		pstate_word(&words, pstate_limits[k].word, num, strlen(num));
	}
	buf_add(out, words.data, words.len);
	buf_release(&words);
	if (rc < 0) {
		/* equal only to this process's own: its state cannot change under it */
		static struct timespec born;

		if (!born.tv_sec && !born.tv_nsec)
			clock_gettime(CLOCK_MONOTONIC, &born);
		buf_addf(out, "%sunreadable:%d.%lld.%ld", out->len > start ? " " : "",
			 (int)getpid(), (long long)born.tv_sec, born.tv_nsec);
	}
	return rc;
}

/* The next word of [*p, end): its name (up to ':') and its value. */
static int pstate_next(const char **p, const char *end, const char **name, size_t *nlen,
		       const char **val, size_t *vlen)
{
	const char *s = *p, *sp, *colon;

	if (s >= end)
		return 0;
	sp = memchr(s, ' ', (size_t)(end - s));
	if (!sp)
		sp = end;
	colon = memchr(s, ':', (size_t)(sp - s));
	if (!colon)
		colon = sp;
	*name = s;
	*nlen = (size_t)(colon - s);
	*val = colon < sp ? colon + 1 : sp;
	*vlen = (size_t)(sp - *val);
	*p = sp < end ? sp + 1 : end;
	return 1;
}

void pstate_diff(const char *a, size_t n, const char *b, size_t m, struct buf *why)
{
	const char *pa = a, *pb = b, *ea = a + n, *eb = b + m;
	const char *na, *va, *nb, *vb;
	size_t nal, val, nbl, vbl;

	for (;;) {
		int ha = pstate_next(&pa, ea, &na, &nal, &va, &val);
		int hb = pstate_next(&pb, eb, &nb, &nbl, &vb, &vbl);

		if (!ha && !hb)
			return;
		if (!ha || !hb || nal != nbl || memcmp(na, nb, nal)) {
			buf_addf(why, "%.*s", (int)(hb ? nbl : nal), hb ? nb : na);
			return;
		}
		if (val != vbl || memcmp(va, vb, val)) {
			buf_addf(why, "%.*s %.*s, was %.*s", (int)nal, na, (int)(vbl > 80 ? 80 : vbl),
				 vb, (int)(val > 80 ? 80 : val), va);
			return;
		}
	}
}
