/*
 * wire.c - the field primitives every encoding is made of (messages,
 * read sets, records, cache entries): native-endian, bounds-checked on
 * the way in.  wire.h is the manual.
 */
#include "lib/wire.h"

#include <stdlib.h>
#include <string.h>

#include "lib/strv.h"

/* A NULL string on the wire: a length no real payload can have. */
#define STR_NULL UINT64_MAX
/* Cap on strings in one vector; far beyond any argv or environment. */
#define STRV_MAX ((uint32_t)1 << 20)

void wire_put_u8(struct buf *b, uint8_t v)
{
	buf_add(b, &v, sizeof v);
}

void wire_put_u32(struct buf *b, uint32_t v)
{
	buf_add(b, &v, sizeof v);
}

void wire_put_i64(struct buf *b, int64_t v)
{
	buf_add(b, &v, sizeof v);
}

static void wire_put_u64(struct buf *b, uint64_t v)
{
	buf_add(b, &v, sizeof v);
}

void wire_put_bytes(struct buf *b, const void *p, size_t n)
{
	wire_put_u64(b, n);
	if (n)
		buf_add(b, p, n);
}

void wire_put_str(struct buf *b, const char *s)
{
	if (!s) {
		wire_put_u64(b, STR_NULL);
		return;
	}
	wire_put_bytes(b, s, strlen(s));
}

void wire_put_strv(struct buf *b, char *const *v)
{
	uint32_t n = 0;

	while (v && v[n])
		n++;
	wire_put_u32(b, n);
	for (uint32_t i = 0; i < n; i++)
		wire_put_str(b, v[i]);
}

void wire_reader_init(struct wire_reader *r, const void *p, size_t n)
{
	r->p = p;
	r->left = n;
	r->failed = 0;
}

static int wire_take(struct wire_reader *r, void *out, size_t n)
{
	if (r->failed || r->left < n) {
		r->failed = 1;
		memset(out, 0, n);
		return -1;
	}
	memcpy(out, r->p, n);
	r->p += n;
	r->left -= n;
	return 0;
}

uint8_t wire_get_u8(struct wire_reader *r)
{
	uint8_t v;

	wire_take(r, &v, sizeof v);
	return v;
}

uint32_t wire_get_u32(struct wire_reader *r)
{
	uint32_t v;

	wire_take(r, &v, sizeof v);
	return v;
}

int64_t wire_get_i64(struct wire_reader *r)
{
	int64_t v;

	wire_take(r, &v, sizeof v);
	return v;
}

static uint64_t wire_get_u64(struct wire_reader *r)
{
	uint64_t v;

	wire_take(r, &v, sizeof v);
	return v;
}

const void *wire_get_bytes(struct wire_reader *r, size_t *n)
{
	uint64_t len = wire_get_u64(r);
	const void *p;

	*n = 0;
	if (r->failed)
		return NULL;
	if (len > r->left) {
		r->failed = 1;
		return NULL;
	}
	p = r->p;
	r->p += len;
	r->left -= len;
	*n = (size_t)len;
	return p;
}

char *wire_get_str(struct wire_reader *r)
{
	uint64_t len = wire_get_u64(r);
	char *s;

	if (r->failed || len == STR_NULL)
		return NULL;
	/* An embedded NUL would silently shorten the string: reject it. */
	if (len > r->left || memchr(r->p, 0, (size_t)len)) {
		r->failed = 1;
		return NULL;
	}
	s = malloc((size_t)len + 1);
	if (!s) {
		r->failed = 1;
		return NULL;
	}
	memcpy(s, r->p, (size_t)len);
	s[len] = 0;
	r->p += len;
	r->left -= len;
	return s;
}

char **wire_get_strv(struct wire_reader *r)
{
	uint32_t n = wire_get_u32(r);
	char **v;

	if (r->failed)
		return NULL;
	/* Each string costs at least its 8-byte length on the wire. */
	if (n > STRV_MAX || n > r->left / 8) {
		r->failed = 1;
		return NULL;
	}
	v = calloc((size_t)n + 1, sizeof *v);
	if (!v) {
		r->failed = 1;
		return NULL;
	}
	for (uint32_t i = 0; i < n; i++) {
		v[i] = wire_get_str(r);
		if (!v[i]) {
			/* NULL cannot live inside a NULL-terminated vector. */
			r->failed = 1;
			strv_free(v);
			return NULL;
		}
	}
	return v;
}
