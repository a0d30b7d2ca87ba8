/*
 * tools.c - the asynccompile command's options (tools.h): the
 * configuration in force, the store's counts, clearing the store.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/tools.h"
#include "answer/cache.h"
#include "answer/stats.h"
#include "lib/err.h"
#include "lib/startdir.h"
#include "lib/store.h"

/* Where make would start, seen from here: a recipe's make, or this directory. */
static const char *tools_start_dir(void)
{
	static char *dir;

	if (!dir)
		dir = startdir_find(NULL);
	return dir;
}

/* tools_config(), and which step of the search found the file (*o). */
static int tools_find(const char *file, struct config *c, struct config_origin *o,
		      struct buf *err)
{
	struct config_search s = { file, CONFIG_NAMED, tools_start_dir };

	return config_find_load(&s, c, o, err);
}

int tools_config(const char *file, struct config *c, struct buf *err)
{
	struct config_origin o;
	int r = tools_find(file, c, &o, err);

	config_origin_release(&o);
	return r;
}

int tools_print_config(const char *file, int origins, struct buf *err)
{
	struct config c;
	struct config_origin o;
	struct buf out = BUF_INIT;
	int r = tools_find(file, &c, &o, err);

	if (r == 0 && origins) {
		config_dump_origins(&c, &out);
		/* after the "# from:" line: which step of the search found it */
		buf_addf(&out, "# found by the search: %s\n", config_step_name(o.step));
	} else if (r == 0) {
		config_dump(&c, &out);
	}
	if (out.len) /* out.data is NULL when nothing was written (UBSan) */
		fwrite(out.data, 1, out.len, stdout);
	config_origin_release(&o);
	config_release(&c);
	buf_release(&out);
	return r;
}

/*
 * The store the configuration names, opened with the plugin's checks:
 * its descriptor, or -1 with err; with `create` 0, -2 when there is no
 * store yet (nothing was ever kept).  *path is malloc'd either way.
 */
static int tools_store(const char *file, int create, char **path, struct buf *err)
{
	struct config c;
	struct buf why = BUF_INIT;
	struct stat st;
	int store;

	*path = NULL;
	if (tools_config(file, &c, err) < 0) {
		config_release(&c);
		return -1;
	}
	*path = store_path(c.cache_dir, err);
	if (*path && !create && lstat(*path, &st) < 0 && errno == ENOENT)
		store = -2; /* nothing kept yet; anything else there is checked */
	else if ((store = *path ? store_open(c.cache_dir, create, &why) : -1) < 0 && *path)
		err_fail(err, "%s", (char *)why.data);
	config_release(&c);
	buf_release(&why);
	return store;
}

static void tools_when(const char *what, uint64_t t)
{
	char when[64];
	time_t tt = (time_t)t;
	struct tm tm;

	if (!t || (uint64_t)tt != t || !localtime_r(&tt, &tm) ||
	    !strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm))
		strcpy(when, "never");
	printf("%-22s%s\n", what, when);
}

static void tools_count(const char *what, uint64_t n)
{
	printf("%-22s%llu\n", what, (unsigned long long)n);
}

int tools_show_stats(const char *file, struct buf *warn, struct buf *err)
{
	struct stats st;
	char *path;
	int store = tools_store(file, 0, &path, err), cache = -1;
	uint64_t hits;
	struct buf size = BUF_INIT, records = BUF_INIT;

	if (store == -1) {
		free(path);
		return -1;
	}
	memset(&st, 0, sizeof st);
	if (store >= 0) {
		struct stat cst;

		stats_load(store, &st, warn);
		cache_records_stats(store, &records);
		/* looking creates nothing */
		if (fstatat(store, "cache", &cst, AT_SYMLINK_NOFOLLOW) == 0)
			cache = store_subdir(store, "cache", warn);
		if (cache >= 0)
			cache_stats(cache, &size);
	}
	hits = st.v[STATS_CACHE_HITS] + st.v[STATS_SPEC_HITS] + st.v[STATS_MEMO_HITS];
	printf("%-22s%s%s\n", "store", path, store >= 0 ? "" : " (none yet)");
	tools_when("stats updated", st.v[STATS_UPDATED]);
	tools_when("stats zeroed", st.v[STATS_ZEROED]);
	tools_count("hits", hits);
	tools_count("  cache", st.v[STATS_CACHE_HITS]);
	tools_count("  speculation", st.v[STATS_SPEC_HITS]);
	tools_count("  memo", st.v[STATS_MEMO_HITS]);
	tools_count("misses", st.v[STATS_MISSES]);
	tools_count("  opaque runs", st.v[STATS_OPAQUE]);
	tools_count("  impure runs", st.v[STATS_IMPURE]);
	if (hits + st.v[STATS_MISSES])
		printf("%-22s%.1f %%\n", "hit rate",
		       100.0 * (double)hits / ((double)hits + (double)st.v[STATS_MISSES]));
	printf("%-22s%llu.%03llu s\n", "time saved",
	       (unsigned long long)(st.v[STATS_SAVED_MS] / 1000),
	       (unsigned long long)(st.v[STATS_SAVED_MS] % 1000));
	printf("%-22s%s\n", "cache", size.len ? (char *)size.data : "entries=0 bytes=0");
	printf("%-22s%s\n", "speculation records",
	       records.len ? (char *)records.data : "entries=0 bytes=0");
	if (cache >= 0)
		close(cache);
	if (store >= 0)
		close(store);
	free(path);
	buf_release(&size);
	buf_release(&records);
	return 0;
}

int tools_zero_stats(const char *file, struct buf *err)
{
	char *path;
	int store = tools_store(file, 1, &path, err), rc = -1;

	if (store >= 0 && (rc = stats_zero(store, err)) == 0)
		printf("statistics zeroed in %s\n", path);
	if (store >= 0)
		close(store);
	free(path);
	return rc;
}

int tools_clear(const char *file, struct buf *err)
{
	char *path;
	int store = tools_store(file, 0, &path, err), cache;
	long entries = 0, records;

	if (store == -2) {
		printf("nothing to clear: no store at %s\n", path);
		free(path);
		return 0;
	}
	if (store < 0) {
		free(path);
		return -1;
	}
	cache = store_subdir(store, "cache", err);
	if (cache < 0) {
		close(store);
		free(path);
		return -1;
	}
	entries = cache_clear(cache);
	records = cache_clear_records(store);
	printf("removed %ld cache entries and %ld speculation records from %s\n", entries,
	       records, path);
	close(cache);
	close(store);
	free(path);
	return 0;
}
