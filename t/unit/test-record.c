/*
 * Unit tests for answer/record.c (the async-shell record codec) and
 * lib/store.c (the per-user store's guards and atomic writes).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "answer/record.h"
#include "lib/proto.h"
#include "lib/readset.h"
#include "lib/store.h"
#include "tap.h"

static char *flags1[] = { "-c", NULL };
static char *flags2[] = { "-e", "-c", NULL };

static void sample(struct buf *rec, struct record_entry ids[3])
{
	memset(ids, 0, 3 * sizeof *ids);
	cmdid_put(&ids[0].id, "/bin/sh", flags1, "/src", "cc -Werror -fno-plt -c -x c /dev/null");
	cmdid_put(&ids[1].id, "/bin/bash", flags2, "/src", "echo $HOME, \"x\"");
	cmdid_put(&ids[2].id, "/bin/sh", flags1, "/", "");
	static char *env[] = { "PATH=/usr/bin:/bin", "HOME=/root", NULL };
	static char *made[] = { "PATH=/usr/bin:/bin", "OLDPWD=/tmp", NULL };

	for (int i = 0; i < 3; i++) {
		readset_opaque(&ids[i].rs, i ? "wrote /x" : "the command was not traced");
		wire_put_strv(&ids[i].env, i == 1 ? env : NULL);
	}
	record_encode(rec, "/src|4.3|Makefile", made, ids, 3);
}

static int decodes(const void *p, size_t n, const char *key)
{
	struct record_entry *ids;
	size_t count;

	if (record_decode(p, n, key, NULL, &ids, &count, NULL) < 0)
		return 0;
	record_free(ids, count);
	return 1;
}

static void test_codec(void)
{
	struct buf rec = BUF_INIT;
	struct record_entry ids[3], *got;
	size_t count, bad = 0;
	struct cmdid id;
	char **made;

	sample(&rec, ids);
	ok(record_decode(rec.data, rec.len, "/src|4.3|Makefile", &made, &got, &count, NULL) == 0 &&
	   count == 3, "a record decodes for its key");
	ok(made && made[0] && !strcmp(made[0], "PATH=/usr/bin:/bin") && made[1] &&
	   !strcmp(made[1], "OLDPWD=/tmp") && !made[2], "make's environment comes back");
	strv_free(made);
	ok(count == 3 && got[1].id.len == ids[1].id.len &&
	   !memcmp(got[1].id.data, ids[1].id.data, ids[1].id.len) &&
	   got[1].rs.len == ids[1].rs.len && !memcmp(got[1].rs.data, ids[1].rs.data, ids[1].rs.len) &&
	   got[1].env.len == ids[1].env.len && !memcmp(got[1].env.data, ids[1].env.data, ids[1].env.len),
	   "entries come back byte for byte, in order");
	ok(cmdid_get(got[1].id.data, got[1].id.len, &id) == 0 && !strcmp(id.shell, "/bin/bash") &&
	   !strcmp(id.flags[0], "-e") && !strcmp(id.flags[1], "-c") && !id.flags[2] &&
	   !strcmp(id.cwd, "/src") && !strcmp(id.command, "echo $HOME, \"x\""),
	   "an entry's fields decode");
	cmdid_release(&id);
	record_free(got, count);

	ok(!decodes(rec.data, rec.len, "/src|4.3|Makefile2"), "another key is refused");
	for (size_t n = 0; n < rec.len; n++)
		bad += decodes(rec.data, n, NULL);
	ok(bad == 0, "every truncation is refused (%zu accepted)", bad);
	bad = 0;
	for (size_t i = 0; i < rec.len; i++) {
		rec.data[i] ^= 0x20;
		bad += decodes(rec.data, rec.len, NULL);
		rec.data[i] ^= 0x20;
	}
	ok(bad == 0, "every flipped byte is refused (%zu accepted)", bad);
	ok(!decodes("", 0, NULL), "an empty file is refused");

	/* a well-checksummed record of another version */
	{
		struct buf other = BUF_INIT;
		uint64_t sum;

		buf_add(&other, rec.data, rec.len);
		other.data[8]++; /* the version, right after the magic */
		sum = store_hash(other.data, other.len - 8, STORE_HASH_INIT);
		memcpy(other.data + other.len - 8, &sum, 8);
		ok(!decodes(other.data, other.len, NULL), "another version is refused");
		buf_release(&other);
	}
	for (int i = 0; i < 3; i++) {
		buf_release(&ids[i].id);
		buf_release(&ids[i].rs);
		buf_release(&ids[i].env);
	}
	buf_release(&rec);
}

static void test_store(void)
{
	char dir[] = "/tmp/asynccompile-store.XXXXXX", path[256];
	struct buf why = BUF_INIT, data = BUF_INIT;
	struct stat st;
	int fd;

	if (!mkdtemp(dir))
		abort();
	snprintf(path, sizeof path, "%s/a/b/store", dir);
	fd = store_open(path, 1, &why);
	ok(fd >= 0 && stat(path, &st) == 0 && (st.st_mode & 0777) == 0700,
	   "store_open creates the store 0700 (%s)", why.len ? (char *)why.data : "");
	ok(store_write(fd, "f", "hello", 5, &why) == 0, "a write");
	ok(store_read(fd, "f", &data, &why) == 0 && data.len == 5 && !memcmp(data.data, "hello", 5),
	   "reads back");
	ok(fstatat(fd, "f", &st, 0) == 0 && (st.st_mode & 0777) == 0600, "files are 0600");
	ok(store_write(fd, "f", "bye", 3, &why) == 0, "a rewrite");
	buf_reset(&data);
	ok(store_read(fd, "f", &data, &why) == 0 && data.len == 3, "replaces the whole file");
	fchmodat(fd, "f", 0620, 0);
	buf_reset(&why);
	ok(store_read(fd, "f", &data, &why) < 0 && strstr((char *)why.data, "may write"),
	   "a group-writable file is refused: %s", (char *)why.data);
	symlinkat("f", fd, "link");
	fchmodat(fd, "f", 0600, 0);
	buf_reset(&why);
	ok(store_read(fd, "link", &data, &why) < 0, "a symlink is not followed: %s", (char *)why.data);
	mkfifoat(fd, "fifo", 0600);
	buf_reset(&why);
	ok(store_read(fd, "fifo", &data, &why) < 0 && strstr((char *)why.data, "regular"),
	   "a fifo is refused without blocking: %s", (char *)why.data);
	close(fd);
	chmod(path, 0770);
	buf_reset(&why);
	fd = store_open(path, 1, &why);
	ok(fd < 0 && strstr((char *)why.data, "may write"), "a group-writable store is refused: %s",
	   (char *)why.data);
	chmod(path, 0700);
	snprintf(path, sizeof path, "%s/file", dir);
	close(open(path, O_WRONLY | O_CREAT, 0600));
	snprintf(path, sizeof path, "%s/file/store", dir);
	buf_reset(&why);
	ok(store_open(path, 1, &why) < 0 && why.len, "a store that cannot be created: %s", (char *)why.data);
	buf_release(&why);
	buf_release(&data);
	snprintf(path, sizeof path, "rm -rf '%s'", dir);
	if (system(path))
		abort();
}

int main(void)
{
	test_codec();
	test_store();
	return done_testing();
}
