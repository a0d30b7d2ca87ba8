/*
 * test-config.c - the YAML configuration: defaults, every key's accepted
 * forms, the exact text of every kind of error, nothing half-applied, and
 * the config_dump() round trip.  Runs under valgrind (make check-valgrind).
 *
 * Over 600 lines: a table of cases per key, one file so valgrind runs it once.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/config.h"
#include "tap.h"

static char tmpdir[] = "/tmp/test-config.XXXXXX";

static void write_file(const char *name, const void *data, size_t n)
{
	int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0 || write(fd, data, n) != (ssize_t)n || close(fd)) {
		perror(name);
		exit(2);
	}
}

static int is_defaults(const struct config *c)
{
	struct config d;
	int same;

	config_defaults(&d);
	same = config_same(c, &d) && !strcmp(c->source, d.source);
	config_release(&d);
	return same;
}

/* Load `text` from the file cfg.yaml (tests run inside tmpdir). */
static int load(const char *text, struct config *c, struct buf *err)
{
	write_file("cfg.yaml", text, strlen(text));
	return config_load_file("cfg.yaml", c, err);
}

static void expect_err(const char *text, const char *want)
{
	struct config c;
	struct buf err = BUF_INIT;
	int rc = load(text, &c, &err);

	ok(rc == -1, "rejected: %s", want);
	if (!ok(err.data && !strcmp((char *)err.data, want), "  message is exact"))
		diag("got:  %s\n# want: %s", err.data ? (char *)err.data : "(none)", want);
	ok(is_defaults(&c), "  result is exactly the defaults");
	config_release(&c);
	buf_release(&err);
}

/* Load text that must succeed; the caller releases *c. */
static int expect_ok(const char *text, struct config *c)
{
	struct buf err = BUF_INIT;
	int rc = load(text, c, &err);

	if (rc)
		diag("unexpected error: %s", (char *)err.data);
	buf_release(&err);
	return rc == 0;
}

/* One key, one accepted spelling: checks the int64 field it lands in. */
static void expect_i64(const char *text, size_t off, int64_t want)
{
	struct config c;
	int loaded = expect_ok(text, &c);

	ok(loaded && *(int64_t *)((char *)&c + off) == want,
	   "'%s' -> %lld", text, (long long)want);
	config_release(&c);
}

static void expect_int(const char *text, size_t off, int want)
{
	struct config c;
	int loaded = expect_ok(text, &c);

	ok(loaded && *(int *)((char *)&c + off) == want, "'%s' -> %d", text, want);
	config_release(&c);
}

#define I64(text, field, want) expect_i64(text, offsetof(struct config, field), want)
#define INT(text, field, want) expect_int(text, offsetof(struct config, field), (int)(want))

static void test_defaults(void)
{
	struct config c;

	config_defaults(&c);
	ok(c.workers == 0, "default workers is auto (0)");
	ok(c.start_method == START_SUBPROCESS, "default start_method subprocess");
	ok(c.warm == 1, "default warm true");
	ok(c.timeout_ms == 0, "default timeout none");
	ok(c.kill_grace_ms == 5000, "default kill_grace 5s");
	ok(c.retries == 1, "default retries 1");
	ok(c.launcher && !c.launcher[0], "default launcher empty, not NULL");
	ok(c.env && !c.env[0], "default env empty, not NULL");
	ok(c.echo == TRI_AUTO, "default echo auto");
	ok(c.progress == PROGRESS_AUTO, "default progress auto");
	ok(c.trace && !strcmp(c.trace, ""), "default trace \"\"");
	ok(c.max_output == 16 << 20, "default max_output 16MiB");
	ok(!strcmp(c.source, "built-in defaults"), "default source");
	ok(config_workers(&c) >= 1 && config_workers(&c) == (int)sysconf(_SC_NPROCESSORS_ONLN),
	   "auto workers is the online CPU count (%d)", config_workers(&c));
	ok(config_workers_max(&c) == 1024, "auto may grow to 1024 workers");
	c.workers = 3;
	ok(config_workers(&c) == 3, "explicit workers are used as is");
	ok(config_workers_max(&c) == 3, "explicit workers are a hard cap");
	config_release(&c);
	ok(!strcmp(config_start_method_name(START_SUBPROCESS), "subprocess") &&
	   !strcmp(config_start_method_name(START_SPAWN), "spawn") &&
	   !strcmp(config_start_method_name(START_FORK), "fork"), "start method names");
}

static void test_empty(void)
{
	static const char *const texts[] = {
		"", "\n\n", "# only a comment\n  # and another\n", "---\n", "---\n...\n",
	};
	struct config c;

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		int loaded = expect_ok(texts[i], &c);
		ok(loaded && c.workers == 0 && c.retries == 1 &&
		   !strcmp(c.source, "cfg.yaml"), "empty document %zu means all defaults", i);
		config_release(&c);
	}
}

static void test_scalars(void)
{
	INT("workers: auto", workers, 0);
	INT("workers: AUTO", workers, 0);
	INT("workers: 1", workers, 1);
	INT("workers: 1024", workers, 1024);
	INT("workers: \"5\"", workers, 5);
	INT("workers: '7'", workers, 7);
	INT("workers: 007", workers, 7);
	INT("start_method: subprocess", start_method, START_SUBPROCESS);
	INT("start_method: spawn", start_method, START_SPAWN);
	INT("start_method: fork", start_method, START_FORK);
	INT("start_method: \"fork\"", start_method, START_FORK);
	INT("warm: false", warm, 0);
	INT("warm: true", warm, 1);
	INT("warm: no", warm, 0);
	INT("warm: yes", warm, 1);
	INT("warm: off", warm, 0);
	INT("warm: On", warm, 1);
	INT("warm: FALSE", warm, 0);
	INT("echo: auto", echo, TRI_AUTO);
	INT("echo: true", echo, TRI_TRUE);
	INT("echo: off", echo, TRI_FALSE);
	INT("echo: Yes", echo, TRI_TRUE);
	INT("progress: auto", progress, PROGRESS_AUTO);
	INT("progress: always", progress, PROGRESS_ALWAYS);
	INT("progress: never", progress, PROGRESS_NEVER);
	INT("retries: 0", retries, 0);
	INT("retries: 100", retries, 100);
}

static void test_units(void)
{
	I64("timeout: 0", timeout_ms, 0);
	I64("timeout: 0s", timeout_ms, 0);
	I64("timeout: 90", timeout_ms, 90000);
	I64("timeout: 90s", timeout_ms, 90000);
	I64("timeout: 5m", timeout_ms, 300000);
	I64("timeout: 1500ms", timeout_ms, 1500);
	I64("timeout: 2h", timeout_ms, 7200000);
	I64("timeout: 24h", timeout_ms, 86400000);
	I64("timeout: 1440m", timeout_ms, 86400000);
	I64("timeout: 86400000ms", timeout_ms, 86400000);
	I64("timeout: \"30s\"", timeout_ms, 30000);
	INT("daemons: kill", kill_daemons, 1);
	INT("daemons: keep", kill_daemons, 0);
	I64("kill_grace: 0", kill_grace_ms, 0);
	I64("kill_grace: 250ms", kill_grace_ms, 250);
	I64("kill_grace: 10", kill_grace_ms, 10000);
	I64("max_output: 1024", max_output, 1024);
	I64("max_output: 1KiB", max_output, 1024);
	I64("max_output: 1K", max_output, 1024);
	I64("max_output: 1KB", max_output, 1024);
	I64("max_output: 1536B", max_output, 1536);
	I64("max_output: 1M", max_output, 1 << 20);
	I64("max_output: 3MB", max_output, 3 << 20);
	I64("max_output: 16MiB", max_output, 16 << 20);
	I64("max_output: 256MiB", max_output, 256 << 20);
	I64("max_output: 268435456", max_output, 256 << 20);
}

static void test_strings(void)
{
	struct config c;
	int loaded;

	loaded = expect_ok("launcher: []\nenv: {}\ntrace: \"\"\n", &c);
	ok(loaded && !c.launcher[0] && !c.env[0] && !strcmp(c.trace, ""),
	   "explicitly empty launcher, env and trace");
	config_release(&c);

	loaded = expect_ok("launcher: [ccache]\n", &c);
	ok(loaded && !strcmp(c.launcher[0], "ccache") && !c.launcher[1], "flow launcher");
	config_release(&c);

	loaded = expect_ok("launcher:\n  - distcc\n  - \"--x y\"\n  - 'it''s'\n", &c);
	ok(loaded && !strcmp(c.launcher[0], "distcc") && !strcmp(c.launcher[1], "--x y") &&
	   !strcmp(c.launcher[2], "it's") && !c.launcher[3], "block launcher, quoted items");
	config_release(&c);

	loaded = expect_ok("env:\n  CC: gcc\n  N: 5\n  YES: yes\n  EMPTY: \"\"\n"
			   "  _x9: \"a=b c\"\n", &c);
	ok(loaded && !strcmp(c.env[0], "CC=gcc") && !strcmp(c.env[1], "N=5") &&
	   !strcmp(c.env[2], "YES=yes") && !strcmp(c.env[3], "EMPTY=") &&
	   !strcmp(c.env[4], "_x9=a=b c") && !c.env[5],
	   "env in file order, scalars kept as written");
	config_release(&c);

	loaded = expect_ok("trace: build/trace.json  # comment\n", &c);
	ok(loaded && !strcmp(c.trace, "build/trace.json"), "trace path");
	config_release(&c);

	loaded = expect_ok("\xef\xbb\xbfworkers: 2\n", &c);
	ok(loaded && c.workers == 2, "a UTF-8 byte order mark is fine");
	config_release(&c);
}

static void test_full(void)
{
	struct config c;
	int loaded = expect_ok(
		"# every key\n"
		"workers: 8\n"
		"start_method: spawn\n"
		"warm: false\n"
		"timeout: 5m\n"
		"kill_grace: 2s\n"
		"retries: 3\n"
		"launcher: [ccache]\n"
		"env: {LC_ALL: C}\n"
		"echo: false\n"
		"progress: never\n"
		"trace: t.json\n"
		"max_output: 1MiB\n", &c);

	ok(loaded && c.workers == 8 && c.start_method == START_SPAWN && !c.warm &&
	   c.timeout_ms == 300000 && c.kill_grace_ms == 2000 && c.retries == 3 &&
	   !strcmp(c.launcher[0], "ccache") && !strcmp(c.env[0], "LC_ALL=C") &&
	   c.echo == TRI_FALSE && c.progress == PROGRESS_NEVER &&
	   !strcmp(c.trace, "t.json") && c.max_output == 1 << 20 &&
	   !strcmp(c.source, "cfg.yaml"), "a file setting every key");
	config_release(&c);
}

static void test_value_errors(void)
{
	expect_err("workers: 2\n\nworkers: lots\n",
		   "cfg.yaml:3:1: duplicate key 'workers' (first at line 1)");
	expect_err("retries: 2\n  \nworkers:  lots\n",
		   "cfg.yaml:3:11: workers: expected an integer >= 1 or 'auto', got 'lots'");
	expect_err("workers: 0", "cfg.yaml:1:10: workers: 0 is out of range (1..1024 or 'auto')");
	expect_err("workers: 1025",
		   "cfg.yaml:1:10: workers: 1025 is out of range (1..1024 or 'auto')");
	expect_err("workers: 1.5",
		   "cfg.yaml:1:10: workers: expected an integer >= 1 or 'auto', got '1.5'");
	expect_err("workers: -3",
		   "cfg.yaml:1:10: workers: expected an integer >= 1 or 'auto', got '-3'");
	expect_err("workers: 0x10",
		   "cfg.yaml:1:10: workers: expected an integer >= 1 or 'auto', got '0x10'");
	expect_err("workers: \"\"",
		   "cfg.yaml:1:10: workers: expected an integer >= 1 or 'auto', got ''");
	expect_err("workers: \" 5\"",
		   "cfg.yaml:1:10: workers: expected an integer >= 1 or 'auto', got ' 5'");
	expect_err("workers: [1]",
		   "cfg.yaml:1:10: workers: expected an integer >= 1 or 'auto', got a sequence");
	expect_err("workers: 99999999999999999999999999",
		   "cfg.yaml:1:10: workers: 99999999999999999999999999 is out of range "
		   "(1..1024 or 'auto')");
	expect_err("retries: 101", "cfg.yaml:1:10: retries: 101 is out of range (0..100)");
	expect_err("retries: -1", "cfg.yaml:1:10: retries: expected an integer 0..100, got '-1'");
	expect_err("start_method: thread",
		   "cfg.yaml:1:15: start_method: expected subprocess, spawn or fork, got 'thread'");
	expect_err("warm: 1", "cfg.yaml:1:7: warm: expected true or false, got '1'");
	expect_err("warm: auto", "cfg.yaml:1:7: warm: expected true or false, got 'auto'");
	expect_err("echo: maybe", "cfg.yaml:1:7: echo: expected auto, true or false, got 'maybe'");
	expect_err("progress: {a: 1}",
		   "cfg.yaml:1:11: progress: expected auto, always or never, got a mapping");
	expect_err("progress: sometimes",
		   "cfg.yaml:1:11: progress: expected auto, always or never, got 'sometimes'");
}

static void test_unit_errors(void)
{
	expect_err("timeout: soon",
		   "cfg.yaml:1:10: timeout: expected a duration such as 0, 90s, 5m or 1500ms, "
		   "got 'soon'");
	expect_err("timeout: 1.5s",
		   "cfg.yaml:1:10: timeout: expected a duration such as 0, 90s, 5m or 1500ms, "
		   "got '1.5s'");
	expect_err("timeout: 5 s",
		   "cfg.yaml:1:10: timeout: expected a duration such as 0, 90s, 5m or 1500ms, "
		   "got '5 s'");
	expect_err("timeout: 5d",
		   "cfg.yaml:1:10: timeout: expected a duration such as 0, 90s, 5m or 1500ms, "
		   "got '5d'");
	expect_err("timeout: -5s",
		   "cfg.yaml:1:10: timeout: expected a duration such as 0, 90s, 5m or 1500ms, "
		   "got '-5s'");
	expect_err("timeout: 25h", "cfg.yaml:1:10: timeout: 25h is out of range (0..24h)");
	expect_err("cache_dir: build/cache",
		   "cfg.yaml:1:12: cache_dir: expected an absolute path (or \"\" for the default), got 'build/cache'");
	expect_err("timeout: 86400001ms",
		   "cfg.yaml:1:10: timeout: 86400001ms is out of range (0..24h)");
	expect_err("timeout: 99999999999999999999h",
		   "cfg.yaml:1:10: timeout: 99999999999999999999h is out of range (0..24h)");
	expect_err("timeout: 18446744073709551616ms",
		   "cfg.yaml:1:10: timeout: 18446744073709551616ms is out of range (0..24h)");
	expect_err("kill_grace: ms",
		   "cfg.yaml:1:13: kill_grace: expected a duration such as 5s or 500ms, got 'ms'");
	expect_err("kill_grace: 5S",
		   "cfg.yaml:1:13: kill_grace: expected a duration such as 5s or 500ms, got '5S'");
	expect_err("max_output: 1023",
		   "cfg.yaml:1:13: max_output: 1023 is out of range (1KiB..256MiB)");
	expect_err("max_output: 0", "cfg.yaml:1:13: max_output: 0 is out of range (1KiB..256MiB)");
	expect_err("max_output: 257MiB",
		   "cfg.yaml:1:13: max_output: 257MiB is out of range (1KiB..256MiB)");
	expect_err("max_output: 1G", "cfg.yaml:1:13: max_output: 1G is out of range (1KiB..256MiB)");
	expect_err("max_output: 99999999999999999999GiB",
		   "cfg.yaml:1:13: max_output: 99999999999999999999GiB is out of range "
		   "(1KiB..256MiB)");
	expect_err("max_output: 16mb",
		   "cfg.yaml:1:13: max_output: expected a size such as 16MiB, 512KiB or 1048576, "
		   "got '16mb'");
	expect_err("max_output: 1.5M",
		   "cfg.yaml:1:13: max_output: expected a size such as 16MiB, 512KiB or 1048576, "
		   "got '1.5M'");
}

static void test_string_errors(void)
{
	expect_err("launcher: ccache",
		   "cfg.yaml:1:11: launcher: expected a sequence of strings, got 'ccache'");
	expect_err("launcher: {a: b}",
		   "cfg.yaml:1:11: launcher: expected a sequence of strings, got a mapping");
	expect_err("launcher:\n  - ccache\n  - [x]\n",
		   "cfg.yaml:3:5: launcher: item 2: expected a non-empty string, got a sequence");
	expect_err("launcher: [\"\"]",
		   "cfg.yaml:1:12: launcher: item 1: expected a non-empty string, got ''");
	expect_err("launcher: [a, ~]",
		   "cfg.yaml:1:15: launcher: item 2: expected a non-empty string, got nothing");
	expect_err("launcher: [\"a\\0b\"]",
		   "cfg.yaml:1:12: launcher: item 1: 'a\\x00b' contains a NUL byte");
	expect_err("env: [A=1]", "cfg.yaml:1:6: env: expected a mapping, got a sequence");
	expect_err("env: A=1", "cfg.yaml:1:6: env: expected a mapping, got 'A=1'");
	expect_err("env:\n  GOOD: 1\n  BAD-NAME: 2\n",
		   "cfg.yaml:3:3: env: 'BAD-NAME' is not a valid variable name");
	expect_err("env: {1X: a}", "cfg.yaml:1:7: env: '1X' is not a valid variable name");
	expect_err("env: {\"\": a}", "cfg.yaml:1:7: env: '' is not a valid variable name");
	expect_err("env: {[a]: b}", "cfg.yaml:1:7: env: expected variable names as keys, got a sequence");
	expect_err("env: {A: }", "cfg.yaml:1:7: env: A: missing value (use \"\" for empty)");
	expect_err("env: {A: [1]}", "cfg.yaml:1:10: env: A: expected a string, got a sequence");
	expect_err("env: {A: \"x\\0\"}", "cfg.yaml:1:10: env: A: contains a NUL byte");
	expect_err("env:\n  A: 1\n  B: 2\n  A: 3\n",
		   "cfg.yaml:4:3: env: duplicate variable 'A' (first at line 2)");
	expect_err("trace: [a]", "cfg.yaml:1:8: trace: expected a file name, got a sequence");
	expect_err("trace: \"a\\0b\"", "cfg.yaml:1:8: trace: contains a NUL byte");
	/* Long or multi-line values are shown on one bounded line. */
	expect_err("echo: \"line1\\nline2\\tx\\x01\"",
		   "cfg.yaml:1:7: echo: expected auto, true or false, got 'line1\\nline2\\tx\\x01'");
	expect_err("echo: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		   "cfg.yaml:1:7: echo: expected auto, true or false, got "
		   "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...'");
}

static void test_null_errors(void)
{
	expect_err("timeout:\n", "cfg.yaml:1:1: timeout: missing value (use 0 for none)");
	expect_err("workers: ~\n", "cfg.yaml:1:1: workers: missing value");
	expect_err("retries: 1\nwarm: null\n", "cfg.yaml:2:1: warm: missing value");
	expect_err("launcher:\n", "cfg.yaml:1:1: launcher: missing value (use [] for none)");
	expect_err("env:\n", "cfg.yaml:1:1: env: missing value (use {} for none)");
	expect_err("trace:\n", "cfg.yaml:1:1: trace: missing value (use \"\" for none)");
	expect_err("max_output: NULL\n", "cfg.yaml:1:1: max_output: missing value");
}

static void test_structure_errors(void)
{
	expect_err("worker: 4\n", "cfg.yaml:1:1: unknown key 'worker' (did you mean 'workers'?)");
	expect_err("workers: 4\nworker: 4\n",
		   "cfg.yaml:2:1: unknown key 'worker' (did you mean 'workers'?)");
	expect_err("tiemout: 4\n", "cfg.yaml:1:1: unknown key 'tiemout' (did you mean 'timeout'?)");
	expect_err("max-output: 1M\n",
		   "cfg.yaml:1:1: unknown key 'max-output' (did you mean 'max_output'?)");
	expect_err("Echo: true\n", "cfg.yaml:1:1: unknown key 'Echo' (did you mean 'echo'?)");
	expect_err("kill_grace_ms: 1\n",
		   "cfg.yaml:1:1: unknown key 'kill_grace_ms' (did you mean 'kill_grace'?)");
	expect_err("ecoh: true\n", "cfg.yaml:1:1: unknown key 'ecoh' (did you mean 'echo'?)");
	expect_err("  launchr: []\n",
		   "cfg.yaml:1:3: unknown key 'launchr' (did you mean 'launcher'?)");
	expect_err("jobs: 4\n",
		   "cfg.yaml:1:1: unknown key 'jobs' (valid keys: workers, start_method, warm, "
		   "timeout, kill_grace, daemons, retries, launcher, env, echo, progress, trace, "
		   "max_output, speculate, cache_dir, cache, cache_max_age, cache_max_size, "
		   "cache_check)");
	expect_err("cache_max_size: 1000KiB\n",
		   "cfg.yaml:1:17: cache_max_size: 1000KiB is out of range (1MiB..1024GiB)");
	expect_err("cache_max_size: 1025GiB\n",
		   "cfg.yaml:1:17: cache_max_size: 1025GiB is out of range (1MiB..1024GiB)");
	expect_err("cache_max_size: lots\n",
		   "cfg.yaml:1:17: cache_max_size: expected a size such as 256MiB or 2GiB, got 'lots'");
	expect_err("[a]: 1\n", "cfg.yaml:1:1: keys must be names, got a sequence");
	expect_err("cache_max_age: 0\n", "cfg.yaml:1:16: cache_max_age: 0 is out of range (1s..3650d)");
	expect_err("cache_max_age: 3651d\n",
		   "cfg.yaml:1:16: cache_max_age: 3651d is out of range (1s..3650d)");
	expect_err("cache_check: hash\n",
		   "cfg.yaml:1:14: cache_check: expected mtime or content, got 'hash'");
	expect_err("- workers\n", "cfg.yaml:1:1: top level must be a mapping of keys");
	expect_err("just text\n", "cfg.yaml:1:1: top level must be a mapping of keys");
	expect_err("\"\"\n", "cfg.yaml:1:1: top level must be a mapping of keys");
	expect_err("workers: 2\n---\nworkers: 3\n",
		   "cfg.yaml:2:1: only one YAML document is allowed");
	expect_err("workers: 2\nretries: 1\ntrace: x\n  echo: true\n",
		   "cfg.yaml:4:7: YAML syntax error: mapping values are not allowed in this context");
	expect_err("workers: 2\nlauncher: [a, b\n",
		   "cfg.yaml:3:1: YAML syntax error: did not find expected ',' or ']' "
		   "(while parsing a flow sequence at line 2, column 11)");
	expect_err("trace: \"abc\n",
		   "cfg.yaml:2:1: YAML syntax error: found unexpected end of stream "
		   "(while scanning a quoted scalar at line 1, column 8)");
	expect_err("workers: 2\n\ttimeout: 1\n",
		   "cfg.yaml:2:1: YAML syntax error: found a tab character that violates "
		   "indentation (while scanning a plain scalar at line 1, column 10)");
	expect_err("workers: *x\n", "cfg.yaml:1:10: YAML syntax error: found undefined alias");
	expect_err("retries: 1\nworkers: 2\x01\n",
		   "cfg.yaml:2:11: YAML syntax error: control characters are not allowed");
	expect_err("trace: \"\xff\"\n",
		   "cfg.yaml:1:9: YAML syntax error: invalid leading UTF-8 octet");
}

/* One good key and then a bad one must leave no trace of the good one. */
static void test_nothing_half_applied(void)
{
	expect_err("workers: 7\nlauncher: [ccache]\nenv: {A: b}\ntrace: t.json\n"
		   "max_output: 1K\nretries: 5\nwarm: maybe\n",
		   "cfg.yaml:7:7: warm: expected true or false, got 'maybe'");
	expect_err("env: {A: 1, B: [x]}\n",
		   "cfg.yaml:1:16: env: B: expected a string, got a sequence");
	expect_err("launcher: [a, b, \"\"]\n",
		   "cfg.yaml:1:18: launcher: item 3: expected a non-empty string, got ''");
	expect_err("workers: 3\n---\n",
		   "cfg.yaml:2:1: only one YAML document is allowed");
}

static void test_files(void)
{
	struct config c;
	struct buf err = BUF_INIT;
	struct buf big = BUF_INIT;
	int rc;

	rc = config_load_file("nosuch.yaml", &c, &err);
	ok(rc == -1 && !strcmp((char *)err.data, "nosuch.yaml: cannot open: No such file or directory"),
	   "missing file: %s", err.data);
	ok(is_defaults(&c), "  result is the defaults");
	config_release(&c);
	buf_reset(&err);

	if (mkdir("adir", 0755) && errno != EEXIST)
		perror("mkdir");
	rc = config_load_file("adir", &c, &err);
	ok(rc == -1 && !strcmp((char *)err.data, "adir: cannot read: not a regular file (a directory)"),
	   "directory: %s", err.data);
	ok(is_defaults(&c), "  result is the defaults");
	config_release(&c);
	buf_reset(&err);
	rmdir("adir");

	/* open() of a FIFO without a writer would block: the alarm ends a hang */
	if (mkfifo("ff.yaml", 0644) && errno != EEXIST)
		perror("mkfifo");
	alarm(20);
	rc = config_load_file("ff.yaml", &c, &err);
	alarm(0);
	ok(rc == -1 && !strcmp((char *)err.data, "ff.yaml: cannot read: not a regular file (a FIFO)"),
	   "FIFO: refused at once: %s", err.data);
	ok(is_defaults(&c), "  result is the defaults");
	config_release(&c);
	buf_reset(&err);
	unlink("ff.yaml");

	rc = config_load_file("/dev/null", &c, &err);
	ok(rc == -1 && !strcmp((char *)err.data,
			       "/dev/null: cannot read: not a regular file (a character device)"),
	   "character device: %s", err.data);
	config_release(&c);
	buf_reset(&err);

	buf_addstr(&big, "workers: 3\n");
	while (big.len < (1 << 20) - 64)
		buf_addstr(&big, "# padding padding padding padding padding padding\n");
	while (big.len < 1 << 20)
		buf_addch(&big, '\n');
	write_file("big.yaml", big.data, big.len);
	rc = config_load_file("big.yaml", &c, &err);
	ok(rc == 0 && c.workers == 3, "a file of exactly 1 MiB loads");
	config_release(&c);
	buf_reset(&err);

	buf_addch(&big, '\n');
	write_file("big.yaml", big.data, big.len);
	rc = config_load_file("big.yaml", &c, &err);
	ok(rc == -1 && !strcmp((char *)err.data, "big.yaml: cannot read: larger than 1 MiB"),
	   "one byte more is refused: %s", err.data);
	ok(is_defaults(&c), "  result is the defaults");
	config_release(&c);
	unlink("big.yaml");
	buf_release(&big);
	buf_reset(&err);

	buf_addstr(&err, "earlier: ");
	rc = config_load_mem(NULL, "x: 1", 4, &c, &err);
	ok(rc == -1 && !strncmp((char *)err.data, "earlier: <config>:1:1: unknown key 'x'", 38) &&
	   !strchr((char *)err.data, '\n'),
	   "the message is appended as one line without a newline; NULL name is <config>");
	config_release(&c);
	buf_release(&err);

	rc = config_load_mem("mem", "retries: 4\0garbage", 10, &c, &err);
	ok(rc == 0 && c.retries == 4 && !strcmp(c.source, "mem"),
	   "load_mem reads exactly n bytes and records the name as source");
	config_release(&c);
	buf_release(&err);
}

static void round_trip(const char *text, const char *label)
{
	struct config a, b;
	struct buf out = BUF_INIT, again = BUF_INIT, err = BUF_INIT;
	int loaded = expect_ok(text, &a), reloaded;

	config_dump(&a, &out);
	reloaded = config_load_mem("dump", out.data, out.len, &b, &err);
	if (reloaded)
		diag("reload failed: %s\n%s", err.data, out.data);
	ok(loaded && !reloaded && config_same(&a, &b), "round trip: %s", label);
	config_dump(&b, &again);
	ok(!strcmp(strchr((char *)out.data, '\n'), strchr((char *)again.data, '\n')),
	   "  dumping the reloaded config gives the same text");
	config_release(&a);
	config_release(&b);
	buf_release(&out);
	buf_release(&again);
	buf_release(&err);
}

static void test_dump(void)
{
	struct config c;
	struct buf out = BUF_INIT;

	config_defaults(&c);
	config_dump(&c, &out);
	ok(!strcmp((char *)out.data,
		   "# from: built-in defaults\n"
		   "workers: auto\n"
		   "start_method: subprocess\n"
		   "warm: true\n"
		   "timeout: 0\n"
		   "kill_grace: 5s\n"
		   "daemons: keep\n"
		   "retries: 1\n"
		   "launcher: []\n"
		   "env: {}\n"
		   "echo: auto\n"
		   "progress: auto\n"
		   "trace: \"\"\n"
		   "max_output: 16MiB\n"
		   "speculate: true\n"
		   "cache_dir: \"\"\n"
		   "cache: false\n"
		   "cache_max_age: 7d\n"
		   "cache_max_size: 256MiB\n"
		   "cache_check: mtime\n"), "dump of the defaults, keys in contract order");
	config_release(&c);
	buf_release(&out);

	expect_ok("workers: 12\nstart_method: fork\nwarm: off\ntimeout: 90000ms\n"
		  "kill_grace: 1500ms\ndaemons: kill\nretries: 0\nlauncher: [ccache, \"x y\"]\n"
		  "env: {CC: gcc, E: \"\"}\necho: true\nprogress: always\ntrace: \"t.json\"\n"
		  "max_output: 1536\nspeculate: no\ncache_dir: /tmp/c\ncache: yes\n"
		  "cache_max_age: 36h\ncache_max_size: 3GiB\ncache_check: content\n", &c);
	config_dump(&c, &out);
	ok(!strcmp((char *)out.data,
		   "# from: cfg.yaml\n"
		   "workers: 12\n"
		   "start_method: fork\n"
		   "warm: false\n"
		   "timeout: 90s\n"
		   "kill_grace: 1500ms\n"
		   "daemons: kill\n"
		   "retries: 0\n"
		   "launcher: [\"ccache\", \"x y\"]\n"
		   "env:\n"
		   "  CC: \"gcc\"\n"
		   "  E: \"\"\n"
		   "echo: true\n"
		   "progress: always\n"
		   "trace: \"t.json\"\n"
		   "max_output: 1536\n"
		   "speculate: false\n"
		   "cache_dir: \"/tmp/c\"\n"
		   "cache: true\n"
		   "cache_max_age: 36h\n"
		   "cache_max_size: 3GiB\n"
		   "cache_check: content\n"), "dump of a full config");
	config_release(&c);
	buf_release(&out);

	round_trip("", "defaults");
	round_trip("workers: 3\ntimeout: 2h\nkill_grace: 61s\nmax_output: 3KiB\n", "units");
	round_trip("timeout: 1441s\nkill_grace: 1ms\nmax_output: 1025\n", "odd units");
	round_trip("echo: false\nprogress: never\nwarm: no\nstart_method: spawn\n", "words");
	round_trip("cache: on\ncache_max_age: 10d\ncache_check: content\nspeculate: off\n", "cache keys");
	round_trip("cache_max_age: 25h\n", "an age in hours");
	round_trip("cache_max_size: 1048577\n", "a store size in bytes");
	round_trip("launcher: [\"a\\\"b\", \"c\\\\d\", \"tab\\there\", \"nl\\nx\", \"\\x7f\\x01\"]\n",
		   "escapes in launcher");
	round_trip("env: {A: \"caf\xc3\xa9\", B: \"\\x85\\u2028\\u2029\\ufeff\\x80\\x9f\", "
		   "C: \"\\U0001F600 ok\", D: \"'#: {}[],&*!|>%@`\", NULL: yes, y: on}\n",
		   "unicode and YAML-special characters in env");
	round_trip("trace: \"  leading and trailing  \"\n", "spaces in trace");
	round_trip("trace: \"# not a comment\"\nlauncher: [\"-\", \"? x\", \"~\", \"null\", \"\\r\"]\n",
		   "values that would be special unquoted");
}

/* config_dump_origins(): which line set each key, "default" for the rest */
static void test_origins(void)
{
	struct config c, back;
	struct buf out = BUF_INIT, err = BUF_INIT;

	expect_ok("# a comment\nworkers: 3\n\nenv:\n  A: b\ncache_max_size: 2GiB\n", &c);
	config_dump_origins(&c, &out);
	ok(strstr((char *)out.data, "\nworkers: 3  # cfg.yaml:2\n") != NULL,
	   "a key the file set: its file and line");
	ok(strstr((char *)out.data, "\nenv:  # cfg.yaml:4\n  A: \"b\"\n") != NULL,
	   "a mapping: the comment on its first line only");
	ok(strstr((char *)out.data, "\ncache_max_size: 2GiB  # cfg.yaml:6\n") != NULL,
	   "cache_max_size: its line");
	ok(strstr((char *)out.data, "\ntimeout: 0  # default\n") != NULL &&
	   strstr((char *)out.data, "\ncache_check: mtime  # default\n") != NULL,
	   "keys the file left out: default");
	ok(config_load_mem("dump", out.data, out.len, &back, &err) == 0 && config_same(&c, &back),
	   "the annotated dump loads back to the same values");
	if (err.len)
		diag("%s", (char *)err.data);
	config_release(&back);
	config_release(&c);
	buf_release(&out);
	buf_release(&err);
}

/*
 * config_same() (the round trips, the fuzzer and is_defaults() rely on
 * it) tells every key apart: each line of a file that sets every key to
 * something else than its default, alone, differs from the defaults.
 */
static void test_same(void)
{
	static const char *const lines[] = {
		"workers: 12", "start_method: fork", "warm: off", "timeout: 90000ms",
		"kill_grace: 1500ms", "daemons: kill", "retries: 0", "launcher: [ccache]",
		"env: {CC: gcc}", "echo: true", "progress: always", "trace: t.json",
		"max_output: 1536", "speculate: no", "cache_dir: /tmp/c", "cache: yes",
		"cache_max_age: 36h", "cache_max_size: 3GiB", "cache_check: content",
	};
	const size_t n = sizeof(lines) / sizeof(lines[0]);
	struct buf all = BUF_INIT, out = BUF_INIT, err = BUF_INIT;
	struct config c, d;
	size_t differ = 0;

	config_defaults(&d);
	for (size_t i = 0; i < n; i++) {
		buf_addf(&all, "%s\n", lines[i]);
		buf_reset(&err);
		if (config_load_mem("one.yaml", lines[i], strlen(lines[i]), &c, &err) == 0 &&
		    !config_same(&c, &d))
			differ++;
		else
			diag("%s: %s", lines[i], err.len ? (char *)err.data : "same as the default");
		config_release(&c);
	}
	ok(differ == n, "config_same() tells each of %zu keys from its default", n);
	ok(config_load_mem("all.yaml", all.data, all.len, &c, &err) == 0, "all the lines load");
	config_dump_origins(&c, &out);
	ok(out.len && !strstr((char *)out.data, "# default"),
	   "  and set every key of the table");
	if (out.len && strstr((char *)out.data, "# default"))
		diag("%s", (char *)out.data);
	ok(config_same(&c, &c) && !config_same(&c, &d), "config_same(): itself, not the defaults");
	config_release(&c);
	config_release(&d);
	buf_release(&all);
	buf_release(&out);
	buf_release(&err);
}

/* config_trusted() through config_load_file(): whose file, who may write it */
static void test_trust(void)
{
	struct config c;
	struct buf err = BUF_INIT;
	char want[256];

	write_file("cfg.yaml", "workers: 2\n", 11);
	chmod("cfg.yaml", 0664);
	ok(config_load_file("cfg.yaml", &c, &err) == -1 &&
	   !strcmp((char *)err.data, "cfg.yaml: refused: group or others may write to it "
		   "(chmod go-w cfg.yaml)"), "group-writable file refused: %s", err.data);
	ok(is_defaults(&c), "  result is the defaults");
	config_release(&c);
	buf_reset(&err);
	chmod("cfg.yaml", 0644);
	ok(config_load_file("cfg.yaml", &c, &err) == 0 && c.workers == 2, "0644 and ours: loads");
	config_release(&c);
	buf_reset(&err);
	if (geteuid() != 0) {
		ok(1, "# skip chown to another user needs root");
	} else if (chown("cfg.yaml", 65534, (gid_t)-1) == 0) {
		snprintf(want, sizeof want, "cfg.yaml: refused: owned by another user (uid 65534), "
			 "not by this one (uid %ld)", (long)geteuid());
		ok(config_load_file("cfg.yaml", &c, &err) == -1 && !strcmp((char *)err.data, want),
		   "another user's file refused: %s", err.data);
		config_release(&c);
	} else {
		ok(0, "chown cfg.yaml: %s", strerror(errno));
	}
	buf_release(&err);
	unlink("cfg.yaml");
}

int main(void)
{
	if (!mkdtemp(tmpdir) || chdir(tmpdir)) {
		perror(tmpdir);
		return 2;
	}
	test_defaults();
	test_empty();
	test_scalars();
	test_units();
	test_strings();
	test_full();
	test_value_errors();
	test_unit_errors();
	test_string_errors();
	test_null_errors();
	test_structure_errors();
	test_nothing_half_applied();
	test_files();
	test_dump();
	test_origins();
	test_same();
	test_trust();
	unlink("cfg.yaml");
	if (chdir("/") || rmdir(tmpdir))
		perror(tmpdir);
	return done_testing();
}
