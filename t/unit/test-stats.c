/*
 * Unit tests for answer/stats.c: the store's stats file, read back as
 * hostile input, and added to by concurrent makes under its lock.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "answer/stats.h"
#include "lib/store.h"
#include "tap.h"

static int decodes(const char *text, struct stats *st)
{
	struct buf why = BUF_INIT;
	int r = stats_decode(text, strlen(text), st, &why);

	if (r < 0 && !why.len)
		r = -2; /* a refusal without a reason */
	buf_release(&why);
	return r;
}

static void test_codec(void)
{
	struct stats st, back;
	struct buf text = BUF_INIT;

	memset(&st, 0, sizeof st);
	for (int i = 0; i < STATS_COUNT; i++)
		st.v[i] = (uint64_t)i * 1000 + 7;
	st.v[STATS_SAVED_MS] = UINT64_MAX;
	stats_encode(&st, &text);
	ok(stats_decode(text.data, text.len, &back, NULL) == 0 && !memcmp(&st, &back, sizeof st),
	   "a file encodes and decodes back to the same counts");
	ok(!strncmp((char *)text.data, "asynccompile-stats 1\ncache_hits 7\n", 34),
	   "the file is text, a header and one counter a line");
	is_int(decodes("asynccompile-stats 1\nmisses 5\ncache_hits 2\n", &st), 0,
	       "counters in any order, some missing");
	ok(st.v[STATS_MISSES] == 5 && st.v[STATS_CACHE_HITS] == 2 && !st.v[STATS_SPEC_HITS],
	   "a counter missing is 0");
	is_int(decodes("asynccompile-stats 1\n", &st), 0, "a header alone is all zeros");
	is_int(decodes("asynccompile-stats 1\nmisses 18446744073709551615\n", &st), 0,
	       "UINT64_MAX is a count");
	buf_release(&text);
}

static void test_refused(void)
{
	static const struct {
		const char *text, *what;
	} bad[] = {
		{ "", "an empty file" },
		{ "asynccompile-stats 2\n", "another version" },
		{ "asynccompile-stats 1", "a header without its newline" },
		{ "asynccompile-stats 1\nmisses 1", "a line without its newline" },
		{ "asynccompile-stats 1\nmisses 1\r\n", "a CR before the newline" },
		{ "asynccompile-stats 1\nbogus 1\n", "an unknown counter" },
		{ "asynccompile-stats 1\nmisses 1\nmisses 1\n", "a counter twice" },
		{ "asynccompile-stats 1\nmisses 01\n", "a leading zero" },
		{ "asynccompile-stats 1\nmisses -1\n", "a sign" },
		{ "asynccompile-stats 1\nmisses \n", "an empty value" },
		{ "asynccompile-stats 1\nmisses  1\n", "two spaces" },
		{ "asynccompile-stats 1\nmisses 18446744073709551616\n", "UINT64_MAX + 1" },
		{ "asynccompile-stats 1\nmisses 99999999999999999999999\n", "23 digits" },
		{ "asynccompile-stats 1\nmisses\n", "a name without a value" },
		{ "asynccompile-stats 1\n\n", "an empty line" },
		{ "asynccompile-stats 1\nmisses 0x10\n", "hexadecimal" },
	};
	struct stats st;
	static const struct stats zero;
	char big[STATS_MAX_FILE + 64];

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		memset(&st, 0xff, sizeof st);
		ok(decodes(bad[i].text, &st) == -1 && !memcmp(&st, &zero, sizeof st),
		   "refused, with a reason, all zeros: %s", bad[i].what);
	}
	/* a NUL inside a line */
	ok(stats_decode("asynccompile-stats 1\nmis\0ses 1\n", 31, &st, NULL) < 0,
	   "refused: a NUL in a name");
	memset(big, 0, sizeof big);
	strcpy(big, "asynccompile-stats 1\n");
	for (size_t n = strlen(big); n + 10 < sizeof big; n += 9)
		memcpy(big + n, "misses 1\n", 9);
	ok(stats_decode(big, sizeof big - 10, &st, NULL) < 0, "refused: larger than 4096 bytes");
}

static int scratch_store(char *dir, size_t n)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, n, "%s/test-stats.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return -1;
	return store_open(dir, 0, NULL);
}

static void scratch_remove(const char *dir)
{
	char cmd[4200];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd))
		diag("could not remove %s", dir);
}

static void test_store(void)
{
	char dir[4096], path[4200];
	struct stats d, st;
	struct buf why = BUF_INIT;
	int store = scratch_store(dir, sizeof dir), lock, r;
	time_t before = time(NULL);

	if (!ok(store >= 0, "a scratch store"))
		return;
	ok(stats_load(store, &st, NULL) == 0 && !st.v[STATS_MISSES] && !st.v[STATS_UPDATED],
	   "no file yet: zeros, no error");
	memset(&d, 0, sizeof d);
	d.v[STATS_MISSES] = 2;
	d.v[STATS_SAVED_MS] = 1500;
	d.v[STATS_UPDATED] = 12345; /* not added: set to now */
	ok(stats_add(store, &d, NULL) == 0 && stats_add(store, &d, NULL) == 0,
	   "two makes add their counts");
	ok(stats_load(store, &st, NULL) == 0 && st.v[STATS_MISSES] == 4 &&
	   st.v[STATS_SAVED_MS] == 3000, "the counts are summed");
	ok(st.v[STATS_UPDATED] >= (uint64_t)before && st.v[STATS_UPDATED] < (uint64_t)before + 60,
	   "updated is the time of the last add");
	snprintf(path, sizeof path, "%s/stats", dir);
	r = chmod(path, 0620) == 0 && stats_load(store, &st, &why) < 0 && why.len &&
	    !st.v[STATS_MISSES];
	ok(r, "a file others may write is refused: %s", why.len ? (char *)why.data : "?");
	ok(chmod(path, 0600) == 0, "the file is ours again");
	/* saturation */
	d.v[STATS_MISSES] = UINT64_MAX;
	ok(stats_add(store, &d, NULL) == 0 && stats_load(store, &st, NULL) == 0 &&
	   st.v[STATS_MISSES] == UINT64_MAX, "a count saturates at UINT64_MAX");
	/* a hostile file: replaced by the next make's counts */
	ok(store_write(store, "stats", "junk\n", 5, NULL) == 0, "a malformed file written");
	buf_reset(&why);
	ok(stats_load(store, &st, &why) < 0 && strstr((char *)why.data, "line 1"),
	   "a malformed file: refused, the reason names the line");
	d.v[STATS_MISSES] = 1;
	ok(stats_add(store, &d, NULL) == 0 && stats_load(store, &st, NULL) == 0 &&
	   st.v[STATS_MISSES] == 1, "the next add starts again from its own counts");
	ok(stats_zero(store, NULL) == 0 && stats_load(store, &st, NULL) == 0 &&
	   !st.v[STATS_MISSES] && !st.v[STATS_SAVED_MS] && st.v[STATS_ZEROED] >= (uint64_t)before,
	   "zeroing clears every count and says when");
	/* the lock: another open file description holds it */
	snprintf(path, sizeof path, "%s/stats.lock", dir);
	lock = open(path, O_RDWR | O_CLOEXEC);
	ok(lock >= 0 && flock(lock, LOCK_EX) == 0, "the lock taken by someone else");
	buf_reset(&why);
	ok(stats_add(store, &d, &why) < 0 && strstr((char *)why.data, "not locked"),
	   "an add gives up after STATS_LOCK_MS, saying so");
	close(lock);
	ok(stats_add(store, &d, NULL) == 0, "and succeeds once the lock is free");
	buf_release(&why);
	close(store);
	scratch_remove(dir);
}

/* Makes at once: no count is lost. */
static void test_concurrent(void)
{
	char dir[4096];
	int store = scratch_store(dir, sizeof dir), status, failed = 0;
	struct stats d, st;
	enum { KIDS = 4, ADDS = 50 };

	if (!ok(store >= 0, "a scratch store for concurrent adds"))
		return;
	memset(&d, 0, sizeof d);
	d.v[STATS_CACHE_HITS] = 1;
	d.v[STATS_SAVED_MS] = 10;
	for (int k = 0; k < KIDS; k++) {
		pid_t pid = fork();

		if (pid == 0) {
			for (int i = 0; i < ADDS; i++)
				if (stats_add(store, &d, NULL) < 0)
					_exit(1);
			_exit(0);
		}
		if (pid < 0)
			failed++;
	}
	for (int k = 0; k < KIDS; k++)
		if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			failed++;
	ok(!failed, "%d processes add %d times each", KIDS, ADDS);
	status = stats_load(store, &st, NULL);
	ok(status == 0 && st.v[STATS_CACHE_HITS] == KIDS * ADDS &&
	   st.v[STATS_SAVED_MS] == 10 * KIDS * ADDS, "no add is lost (%llu of %d)",
	   (unsigned long long)st.v[STATS_CACHE_HITS], KIDS * ADDS);
	close(store);
	scratch_remove(dir);
}

int main(void)
{
	test_codec();
	test_refused();
	test_store();
	test_concurrent();
	return done_testing();
}
