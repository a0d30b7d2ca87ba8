#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wordstat.h"

/* Reads the whole file (or standard input for "-") into a new buffer. */
static int read_file(const char *path, char **buf, size_t *len)
{
	FILE *fp = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	size_t cap = 4096, n = 0, got;
	char *b, *nb;
	int err = 0;

	if (!fp)
		return -1;
	if (!(b = malloc(cap)))
		err = ENOMEM;
	while (!err && (got = fread(b + n, 1, cap - n, fp)) > 0) {
		n += got;
		if (n == cap) {
			if ((nb = realloc(b, cap *= 2)))
				b = nb;
			else
				err = ENOMEM;
		}
	}
	if (!err && ferror(fp))
		err = errno ? errno : EIO;
	if (fp != stdin)
		fclose(fp);
	if (err) {
		free(b);
		errno = err;
		return -1;
	}
	*buf = b;
	*len = n;
	return 0;
}

int main(int argc, char **argv)
{
	struct counts total = { 0 };
	struct freq *f = freq_new();
	struct freq_entry *top;
	size_t ntop;
	int status = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: wordstat FILE...  (- is standard input)\n");
		return 2;
	}
	if (!f) {
		fprintf(stderr, "wordstat: out of memory\n");
		return 1;
	}
	for (int i = 1; i < argc; i++) {
		struct counts c = { 0 };
		char *buf;
		size_t len;

		if (read_file(argv[i], &buf, &len) < 0) {
			fprintf(stderr, "wordstat: %s: %s\n", argv[i], strerror(errno));
			status = 1;
			continue;
		}
		count_buffer(&c, buf, len);
		if (freq_add_words(f, buf, len) < 0) {
			fprintf(stderr, "wordstat: out of memory\n");
			status = 1;
		}
		free(buf);
		report_counts(argv[i], &c);
		total.lines += c.lines;
		total.words += c.words;
		total.bytes += c.bytes;
		if (c.longest > total.longest)
			total.longest = c.longest;
	}
	if (argc > 2)
		report_counts("total", &total);
	top = freq_sorted(f, &ntop);
	report_top(top, ntop, 5);
	free(top);
	freq_free(f);
	return status;
}
