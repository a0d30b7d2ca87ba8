/*
 * The answer cache: keys that see the programs a command names, entries
 * checked on every read, eviction.  cache.h documents the rules.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "answer/cache.h"
#include "answer/readset_check.h"
#include "answer/record.h"
#include "lib/err.h"
#include "lib/proto.h"
#include "lib/readset.h"
#include "lib/store.h"

static const char cache_magic[8] = "ACCACHE1";

/* ---- program identities ---- */

/* A word's identity is looked up once per process per PATH. */
struct ident {
	char *what;             /* PATH, NUL, word */
	size_t len;
	char *id;
	struct ident *next;
};
#define IDENT_SIZE 256
static struct ident *idents[IDENT_SIZE];

static uint64_t cache_file_hash(const char *path)
{
	unsigned char chunk[65536];
	uint64_t h = STORE_HASH_INIT;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	while ((n = read(fd, chunk, sizeof chunk)) > 0)
		h = store_hash(chunk, (size_t)n, h);
	close(fd);
	return n < 0 ? 0 : h;
}

/* "realpath size mtime" (or "realpath #hash"), or NULL if not an executable file. */
static char *cache_identify(const char *path, int content)
{
	struct stat st;
	char real[PATH_MAX];
	struct buf b = BUF_INIT;

	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode) || !(st.st_mode & 0111) ||
	    !realpath(path, real))
		return NULL;
	if (content)
		buf_addf(&b, "%s #%016llx", real, (unsigned long long)cache_file_hash(real));
	else
		buf_addf(&b, "%s %lld %lld.%09ld", real, (long long)st.st_size,
			 (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	return buf_detach(&b, NULL);
}

/* What `word` runs, through PATH unless it holds a slash. */
static char *cache_resolve(const char *word, const char *cwd, const char *path, int content)
{
	struct buf p = BUF_INIT;
	char *id = NULL;

	if (strchr(word, '/')) {
		if (word[0] != '/')
			buf_addf(&p, "%s/", cwd);
		buf_addstr(&p, word);
		id = cache_identify((char *)p.data, content);
		buf_release(&p);
		return id;
	}
	for (const char *d = path; d && !id; d = strchr(d, ':') ? strchr(d, ':') + 1 : NULL) {
		size_t n = strcspn(d, ":");

		buf_reset(&p);
		if (n)
			buf_add(&p, d, n);
		else
			buf_addstr(&p, cwd); /* an empty PATH entry is the current directory */
		buf_addf(&p, "/%s", word);
		id = cache_identify((char *)p.data, content);
	}
	buf_release(&p);
	return id;
}

static const char *cache_ident(const char *word, const char *cwd, const char *path, int content)
{
	struct buf what = BUF_INIT;
	uint64_t h;
	struct ident *e;

	buf_addf(&what, "%d%s", content, path ? path : "");
	buf_addch(&what, 0);
	buf_addstr(&what, word);
	h = store_hash(what.data, what.len, STORE_HASH_INIT);
	for (e = idents[h % IDENT_SIZE]; e; e = e->next)
		if (e->len == what.len && !memcmp(e->what, what.data, what.len)) {
			buf_release(&what);
			return e->id;
		}
	e = calloc(1, sizeof *e);
	if (!e)
		abort();
	e->id = cache_resolve(word, cwd, path, content);
	e->what = buf_detach(&what, &e->len);
	e->next = idents[h % IDENT_SIZE];
	idents[h % IDENT_SIZE] = e;
	return e->id;
}

/*
 * The words of a shell command that may name programs: split at blanks
 * and operators, quotes dropped; options, assignments and words with
 * expansions or globs cannot be resolved here and are skipped.
 */
static void cache_words(const char *cmd, void (*fn)(const char *word, void *ctx), void *ctx)
{
	struct buf w = BUF_INIT;

	for (const char *c = cmd;; c++) {
		if (!*c || strchr(" \t\n;&|()<>`", *c)) {
			if (w.len && w.data[0] != '-' && !strpbrk((char *)w.data, "$*?[")) {
				char *eq = strchr((char *)w.data, '=');
				char *sl = strchr((char *)w.data, '/');
				if (!eq || (sl && sl < eq))
					fn((char *)w.data, ctx);
			}
			buf_reset(&w);
			if (!*c)
				break;
		} else if (*c != '\'' && *c != '"' && *c != '\\') {
			buf_addch(&w, *c);
		}
	}
	buf_release(&w);
}

struct key_ctx {
	struct buf ids;
	uint32_t n;
	const char *cwd, *path;
	int content;
};

static void cache_key_word(const char *word, void *p)
{
	struct key_ctx *k = p;
	const char *id = cache_ident(word, k->cwd, k->path, k->content);

	wire_put_str(&k->ids, word);
	wire_put_str(&k->ids, id ? id : "-");
	k->n++;
}

void cache_key(struct buf *key, const char *shell, char *const *flags, const char *cwd,
	       const char *command, const char *input, char *const *env,
	       char *const *launcher, int check_content)
{
	struct key_ctx k = { BUF_INIT, 0, cwd, getenv("PATH"), check_content };

	for (char *const *e = env; e && *e; e++)
		if (!strncmp(*e, "PATH=", 5))
			k.path = *e + 5;
	wire_put_u32(key, CACHE_VERSION);
	wire_put_str(key, shell);
	wire_put_strv(key, flags);
	wire_put_str(key, cwd);
	wire_put_str(key, command);
	wire_put_str(key, input);
	wire_put_str(key, k.path);
	wire_put_strv(key, env);
	wire_put_strv(key, launcher);
	cache_key_word(shell, &k);
	for (char *const *l = launcher; l && *l; l++)
		cache_key_word(*l, &k);
	cache_words(command, cache_key_word, &k);
	wire_put_u32(key, k.n);
	buf_add(key, k.ids.data, k.ids.len);
	buf_release(&k.ids);
}

int cache_cacheable(int status, uint32_t res_flags)
{
	/* 128+N is how a signal shows: the user's Ctrl-C is not an answer */
	return status >= 0 && status < 128 && !(res_flags & (RES_TIMED_OUT | RES_CRASHED |
		RES_TRUNCATED | RES_SPAWN_FAILED | RES_CANCELLED));
}

/* ---- entries ---- */

void cache_entry_encode(struct buf *out, const struct buf *key, int64_t created,
			int32_t status, int64_t run_ns, const struct buf *o, const struct buf *e,
			const struct buf *rs)
{
	size_t start = out->len;
	uint64_t sum;

	buf_add(out, cache_magic, sizeof cache_magic);
	wire_put_u32(out, CACHE_VERSION);
	wire_put_bytes(out, key->data, key->len);
	wire_put_i64(out, created);
	wire_put_u32(out, (uint32_t)status);
	wire_put_i64(out, run_ns);
	wire_put_bytes(out, o->data, o->len);
	wire_put_bytes(out, e->data, e->len);
	wire_put_bytes(out, rs->data, rs->len);
	sum = store_hash(out->data + start, out->len - start, STORE_HASH_INIT);
	buf_add(out, &sum, sizeof sum);
}

void cache_answer_release(struct cache_answer *a)
{
	buf_release(&a->out);
	buf_release(&a->err);
	buf_release(&a->readset);
}

int cache_entry_decode(const void *p, size_t n, const struct buf *key, int64_t *created,
		       struct cache_answer *a)
{
	struct wire_reader r;
	const void *k, *o, *e, *rs;
	size_t klen, olen, elen, rslen;
	uint64_t sum;
	int32_t status;
	int64_t run_ns;
	int verdict;

	if (n < sizeof cache_magic + sizeof sum || memcmp(p, cache_magic, sizeof cache_magic))
		return -1;
	n -= sizeof sum;
	memcpy(&sum, (const unsigned char *)p + n, sizeof sum);
	if (store_hash(p, n, STORE_HASH_INIT) != sum)
		return -1;
	wire_reader_init(&r, (const unsigned char *)p + sizeof cache_magic, n - sizeof cache_magic);
	if (wire_get_u32(&r) != CACHE_VERSION)
		return -1;
	k = wire_get_bytes(&r, &klen);
	*created = wire_get_i64(&r);
	status = (int32_t)wire_get_u32(&r);
	run_ns = wire_get_i64(&r);
	o = wire_get_bytes(&r, &olen);
	e = wire_get_bytes(&r, &elen);
	rs = wire_get_bytes(&r, &rslen);
	if (r.failed || r.left || !cache_cacheable(status, 0) || run_ns < 0)
		return -1;
	/* only a pure answer is ever kept (readset.h) */
	if (readset_decode(rs, rslen, &verdict, NULL) < 0 || verdict != RS_PURE)
		return -1;
	if (key && (klen != key->len || memcmp(k, key->data, klen)))
		return -1;
	memset(a, 0, sizeof *a);
	a->status = status;
	a->run_ns = run_ns;
	buf_add(&a->out, o, olen);
	buf_add(&a->err, e, elen);
	buf_add(&a->readset, rs, rslen);
	return 0;
}

/* ---- the directory ---- */

/*
 * An entry is named by its key and the digest of the environment its
 * answer was made in: a command asked under two environments in turn
 * (two terminals, make and env make) keeps an answer for each.
 */
static void cache_name(char name[24], const struct buf *key, uint64_t env)
{
	uint64_t h = store_hash(key->data, key->len, STORE_HASH_INIT);

	snprintf(name, 24, "c-%016llx", (unsigned long long)store_hash(&env, sizeof env, h));
}

int cache_open(int store, struct buf *err)
{
	return store_subdir(store, "cache", err);
}

int cache_get(int dir, const struct buf *key, int64_t max_age_ms, uint64_t env,
	      struct rs_table *t, struct cache_answer *a, struct buf *err)
{
	char name[24];
	struct buf data = BUF_INIT;
	int64_t created, now = (int64_t)time(NULL);
	int hit = 0;

	cache_name(name, key, env);
	if (store_read(dir, name, &data, NULL) == 0 && /* no entry: a miss, not news */
	    cache_entry_decode(data.data, data.len, key, &created, a) == 0) {
		/* a clock set back must not make an entry immortal */
		if (created <= now && (now - created) * 1000 <= max_age_ms &&
		    readset_check_in(a->readset.data, a->readset.len, env, t, err) == RS_PURE) {
			hit = 1;
			utimensat(dir, name, NULL, 0); /* recently used */
		} else {
			cache_answer_release(a);
		}
	}
	buf_release(&data);
	return hit;
}

int cache_put(int dir, const struct buf *key, int32_t status, int64_t run_ns,
	      const struct buf *out, const struct buf *errout, const struct buf *rs,
	      struct buf *err)
{
	char name[24];
	struct buf e = BUF_INIT;
	uint64_t env;
	int r;

	if (readset_env(rs->data, rs->len, &env) < 0)
		return err_fail(err, "a malformed read set");
	cache_name(name, key, env);
	cache_entry_encode(&e, key, (int64_t)time(NULL), status, run_ns < 0 ? 0 : run_ns, out,
			   errout, rs);
	r = store_write(dir, name, e.data, e.len, err);
	buf_release(&e);
	return r;
}

struct entry {
	int dir;                /* the directory it is in */
	char name[24];
	int64_t mtime;
	uint64_t size;
};

static int cache_by_age(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	return x->mtime < y->mtime ? -1 : x->mtime > y->mtime;
}

/* Add every file of dir named PREFIX... (shorter than 24) to *v. */
static void cache_list_add(int dir, const char *prefix, struct entry **v, size_t *n,
			   size_t *cap)
{
	int fd = dir >= 0 ? dup(dir) : -1;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	size_t plen = strlen(prefix);

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	rewinddir(d);
	while ((de = readdir(d))) {
		struct stat st;

		if (strncmp(de->d_name, prefix, plen) || strlen(de->d_name) >= 24 ||
		    fstatat(dir, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (*n == *cap) {
			*cap = *cap ? 2 * *cap : 256;
			*v = realloc(*v, *cap * sizeof **v);
			if (!*v)
				abort();
		}
		(*v)[*n].dir = dir;
		strcpy((*v)[*n].name, de->d_name);
		(*v)[*n].mtime = (int64_t)st.st_mtime;
		(*v)[(*n)++].size = (uint64_t)st.st_size;
	}
	closedir(d);
}

/* Every entry file in dir (malloc'd array, or NULL when there is none). */
static struct entry *cache_list(int dir, size_t *n)
{
	struct entry *v = NULL;
	size_t cap = 0;

	*n = 0;
	cache_list_add(dir, "c-", &v, n, &cap);
	return v;
}

void cache_evict(int store, int cache, int64_t max_age_ms, uint64_t max_bytes)
{
	struct stat st;
	int64_t now = (int64_t)time(NULL);
	size_t n = 0, cap = 0;
	struct entry *v = NULL;
	uint64_t total = 0;
	int fd;

	if (fstatat(store, ".evicted", &st, AT_SYMLINK_NOFOLLOW) == 0 && now - st.st_mtime < 3600 &&
	    st.st_mtime <= now)
		return;
	fd = openat(store, ".evicted", O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0) {
		futimens(fd, NULL);
		close(fd);
	}
	cache_list_add(cache, "c-", &v, &n, &cap);
	cache_list_add(store, RECORD_PREFIX, &v, &n, &cap);
	if (n)
		qsort(v, n, sizeof *v, cache_by_age);
	for (size_t i = 0; i < n; i++)
		total += v[i].size;
	for (size_t i = 0; i < n; i++) {
		if ((now - v[i].mtime) * 1000 <= max_age_ms && total <= max_bytes)
			break;
		if (unlinkat(v[i].dir, v[i].name, 0) == 0)
			total -= v[i].size;
	}
	free(v);
}

int cache_expired(int dir, const char *name, int64_t max_age_ms)
{
	struct stat st;
	int64_t now = (int64_t)time(NULL);

	if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 1;
	/* a clock set back must not make a file immortal */
	if (st.st_mtime > now || (now - (int64_t)st.st_mtime) * 1000 > max_age_ms)
		return 1;
	utimensat(dir, name, NULL, AT_SYMLINK_NOFOLLOW); /* recently used */
	return 0;
}

long cache_clear_records(int store)
{
	size_t n = 0, cap = 0;
	struct entry *v = NULL;
	long gone = 0;

	cache_list_add(store, RECORD_PREFIX, &v, &n, &cap);
	for (size_t i = 0; i < n; i++)
		gone += unlinkat(store, v[i].name, 0) == 0;
	free(v);
	return gone;
}

/* "entries=N bytes=N" of the files of dir named PREFIX... */
static void cache_count(int dir, const char *prefix, struct buf *out)
{
	size_t n = 0, cap = 0;
	struct entry *v = NULL;
	uint64_t total = 0;

	cache_list_add(dir, prefix, &v, &n, &cap);
	for (size_t i = 0; i < n; i++)
		total += v[i].size;
	buf_addf(out, "entries=%zu bytes=%llu", n, (unsigned long long)total);
	free(v);
}

void cache_stats(int dir, struct buf *out)
{
	cache_count(dir, "c-", out);
}

void cache_records_stats(int store, struct buf *out)
{
	cache_count(store, RECORD_PREFIX, out);
}

long cache_clear(int dir)
{
	size_t n;
	struct entry *v = cache_list(dir, &n);
	long gone = 0;

	for (size_t i = 0; i < n; i++)
		gone += unlinkat(dir, v[i].name, 0) == 0;
	free(v);
	return gone;
}
