/* The held-tokens record: see heldtok.h. */
#include "lib/heldtok.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char heldtok_hexd[] = "0123456789abcdef";

uint16_t heldtok_pair(unsigned char tok)
{
	char c[2] = { heldtok_hexd[tok >> 4], heldtok_hexd[tok & 15] };
	uint16_t v;

	memcpy(&v, c, 2);
	return v;
}

static int heldtok_unhex(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int heldtok_unpair(const char c[2], unsigned char *tok)
{
	int hi = heldtok_unhex(c[0]), lo = heldtok_unhex(c[1]);

	if (hi >= 0 && lo >= 0) {
		*tok = (unsigned char)(hi << 4 | lo);
		return 1;
	}
	/* a half-written pair counts as free: see plugin/reexec.c */
	return (hi >= 0 || c[0] == '-') && (lo >= 0 || c[1] == '-') ? 0 : -1;
}

char *heldtok_parse(char *rec, long *pid, unsigned long long *start)
{
	static const char name[] = HELDTOK_NAME "=";
	char *end;

	if (strncmp(rec, name, sizeof name - 1))
		return NULL;
	rec += sizeof name - 1;
	errno = 0;
	*pid = strtol(rec, &end, 10);
	if (errno || end == rec || *end != '.' || *pid <= 0)
		return NULL;
	rec = end + 1;
	*start = strtoull(rec, &end, 10);
	if (errno || end == rec || *end != ':')
		return NULL;
	return end + 1;
}

int heldtok_guarded(const char *slots)
{
	return strlen(slots) == 2 * HELDTOK_MAX + 1 && slots[2 * HELDTOK_MAX] == HELDTOK_GUARDED;
}

size_t heldtok_take_all(uint16_t *slots, unsigned char *tok)
{
	size_t n = 0;

	for (int i = 0; i < HELDTOK_MAX; i++) {
		uint16_t v = __atomic_exchange_n(&slots[i], HELDTOK_EMPTY, __ATOMIC_SEQ_CST);
		char c[2];

		memcpy(c, &v, 2);
		if (heldtok_unpair(c, &tok[n]) == 1)
			n++;
	}
	return n;
}

int heldtok_write(int fd, const unsigned char *tok, size_t n)
{
	while (n) {
		ssize_t w = write(fd, tok, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		tok += w;
		n -= (size_t)w;
	}
	return 0;
}

int heldtok_proc(long pid, char *state, unsigned long *flags, unsigned long long *start)
{
	char path[64], buf[1024];
	const char *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	/* "pid (comm) S ppid ...": comm may hold anything, count after the last ')' */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %lu", state, flags) != 2)
		return -1;
	/* field 22, starttime; p is on field 2 */
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (!p)
		return -1;
	*start = strtoull(p + 1, NULL, 10);
	return 0;
}
