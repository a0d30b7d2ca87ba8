/* The async-shell record codec: record.h documents the format. */
#include <stdlib.h>
#include <string.h>

#include "answer/record.h"
#include "lib/err.h"
#include "lib/proto.h"
#include "lib/readset.h"
#include "lib/store.h"

static const char record_magic[8] = "ACRECORD";

char **record_env_get(const void *p, size_t n)
{
	struct wire_reader r;
	char **v;

	wire_reader_init(&r, p, n);
	v = wire_get_strv(&r);
	if (!v || r.failed || r.left) {
		strv_free(v);
		return NULL;
	}
	for (char **e = v; *e; e++)
		if (!strchr(*e, '=')) { /* an environment entry is K=V */
			strv_free(v);
			return NULL;
		}
	return v;
}

void record_encode(struct buf *out, const char *key, char *const *environ,
		   const struct record_entry *e, size_t count)
{
	static char *const none[] = { NULL };
	size_t start = out->len;
	struct buf env = BUF_INIT;
	uint64_t sum;

	buf_add(out, record_magic, sizeof record_magic);
	wire_put_u32(out, RECORD_VERSION);
	wire_put_str(out, key);
	wire_put_strv(&env, environ ? environ : none);
	wire_put_bytes(out, env.data, env.len);
	buf_release(&env);
	wire_put_u32(out, (uint32_t)count);
	for (size_t i = 0; i < count; i++) {
		wire_put_bytes(out, e[i].id.data, e[i].id.len);
		wire_put_bytes(out, e[i].rs.data, e[i].rs.len);
		wire_put_bytes(out, e[i].env.data, e[i].env.len);
	}
	sum = store_hash(out->data + start, out->len - start, STORE_HASH_INIT);
	buf_add(out, &sum, sizeof sum);
}

void record_free(struct record_entry *e, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		buf_release(&e[i].id);
		buf_release(&e[i].rs);
		buf_release(&e[i].env);
	}
	free(e);
}

int record_decode(const void *p, size_t n, const char *key, char ***environ,
		  struct record_entry **ents, size_t *count, struct buf *err)
{
	struct wire_reader r;
	uint64_t sum;
	uint32_t cnt;
	char *k, **inv;
	struct record_entry *v;
	const void *envb;
	size_t envlen;

	if (environ)
		*environ = NULL;
	*ents = NULL;
	*count = 0;
	if (n < sizeof record_magic + sizeof sum || memcmp(p, record_magic, sizeof record_magic)) {
		return err_fail(err, "not a record");
	}
	n -= sizeof sum;
	memcpy(&sum, (const unsigned char *)p + n, sizeof sum);
	if (store_hash(p, n, STORE_HASH_INIT) != sum) {
		return err_fail(err, "checksum mismatch (truncated or corrupt)");
	}
	wire_reader_init(&r, (const unsigned char *)p + sizeof record_magic, n - sizeof record_magic);
	if (wire_get_u32(&r) != RECORD_VERSION || r.failed) {
		return err_fail(err, "another version");
	}
	k = wire_get_str(&r);
	if (!k || (key && strcmp(k, key))) {
		err_fail(err, "%s", k ? "recorded for another key" : "malformed key");
		free(k);
		return -1;
	}
	free(k);
	envb = wire_get_bytes(&r, &envlen);
	if (!envb || r.failed || !(inv = record_env_get(envb, envlen)))
		return err_fail(err, "malformed environment");
	cnt = wire_get_u32(&r);
	if (r.failed || cnt > RECORD_MAX_ENTRIES) {
		strv_free(inv);
		return err_fail(err, "malformed count");
	}
	v = calloc(cnt ? cnt : 1, sizeof *v);
	if (!v)
		abort();
	for (uint32_t i = 0; i < cnt; i++) {
		size_t len, rlen, elen;
		const void *b = wire_get_bytes(&r, &len), *rs = wire_get_bytes(&r, &rlen);
		const void *env = wire_get_bytes(&r, &elen);
		struct cmdid id = {0};
		int verdict, bad;
		char **ev = NULL;

		/* cmdid_get() can succeed and a later part still fail, so
		 * the id is released on both paths. */
		bad = !b || !rs || !env || r.failed || cmdid_get(b, len, &id) < 0 ||
		      readset_decode(rs, rlen, &verdict, NULL) < 0 ||
		      !(ev = record_env_get(env, elen));
		strv_free(ev);
		cmdid_release(&id);
		if (bad) {
			record_free(v, i);
			strv_free(inv);
			return err_fail(err, "malformed entry");
		}
		buf_add(&v[i].id, b, len);
		buf_add(&v[i].rs, rs, rlen);
		buf_add(&v[i].env, env, elen);
	}
	if (r.left) {
		record_free(v, cnt);
		strv_free(inv);
		return err_fail(err, "trailing bytes");
	}
	if (environ)
		*environ = inv;
	else
		strv_free(inv);
	*ents = v;
	*count = cnt;
	return 0;
}
