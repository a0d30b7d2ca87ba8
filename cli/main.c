/*
 * main.c - the asynccompile command (asynccompile(1)): ccache's option
 * names for what a user asks of the plugin's store and configuration.
 * Options run in the order given; each is one function of tools.h.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/tools.h"
#include "lib/proto.h"

static const char usage_text[] =
	"usage: asynccompile [options]\n"
	"\n"
	"Options (run in the order given):\n"
	"  -s, --show-stats    hits, misses, opaque and impure runs, time saved,\n"
	"                      and the size of the cache and of the records\n"
	"  -z, --zero-stats    zero the statistics\n"
	"  -C, --clear         remove the answer cache and the speculation records\n"
	"  -p, --show-config   the configuration in force here, and where each\n"
	"                      value came from\n"
	"  -V, --version       the version\n"
	"  -h, --help          this text\n"
	"\n"
	"asynccompile is a GNU Make plugin: `load asynccompile.so` in a makefile.\n"
	"See asynccompile(1), asynccompile(7) and asynccompile.yaml(5).\n";

static const struct option options[] = {
	{ "show-stats", no_argument, NULL, 's' },
	{ "zero-stats", no_argument, NULL, 'z' },
	{ "clear", no_argument, NULL, 'C' },
	{ "show-config", no_argument, NULL, 'p' },
	{ "version", no_argument, NULL, 'V' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* One line per reason on stderr; 0 if there was none. */
static int report(const struct buf *b)
{
	if (!b->len)
		return 0;
	fprintf(stderr, "asynccompile: %s\n", (const char *)b->data);
	return 1;
}

static int run(int opt)
{
	struct buf err = BUF_INIT, warn = BUF_INIT;
	int rc = 0;

	switch (opt) {
	case 's':
		rc = tools_show_stats(NULL, &warn, &err);
		if (warn.len)
			buf_addstr(&warn, ": shown as zero");
		break;
	case 'z':
		rc = tools_zero_stats(NULL, &err);
		break;
	case 'C':
		rc = tools_clear(NULL, &err);
		break;
	case 'p':
		rc = tools_print_config(NULL, 1, &err);
		break;
	case 'V':
		printf("asynccompile %s (protocol %d)\n", ASYNC_VERSION, PROTO_VERSION);
		break;
	}
	fflush(stdout);
	report(&warn);
	if (rc < 0 && !report(&err))
		fputs("asynccompile: failed\n", stderr);
	buf_release(&err);
	buf_release(&warn);
	return rc < 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
	int opt, status = 0;

	opterr = 0; /* the usage says it */
	/* a first pass: a bad option or argument runs nothing */
	while ((opt = getopt_long(argc, argv, "+szCpVh", options, NULL)) != -1) {
		if (opt == 'h') {
			fputs(usage_text, stdout);
			return 0;
		}
		if (opt == '?') {
			if (optopt)
				fprintf(stderr, "asynccompile: unknown option '-%c'\n", optopt);
			else
				fprintf(stderr, "asynccompile: unknown option '%s'\n",
					argv[optind - 1]);
			fputs(usage_text, stderr);
			return 2;
		}
	}
	if (optind < argc || argc < 2) {
		if (optind < argc)
			fprintf(stderr, "asynccompile: unexpected argument '%s'\n", argv[optind]);
		fputs(usage_text, stderr);
		return 2;
	}
	optind = 0; /* glibc: start again from the first argument */
	while ((opt = getopt_long(argc, argv, "+szCpVh", options, NULL)) != -1)
		status |= run(opt);
	return status;
}
