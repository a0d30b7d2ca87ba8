/*
 * wire.h - the field primitives of every encoding (proto.h's messages,
 * readset.h's read sets, syscan.h's entries; and answer/'s records,
 * cache entries and command identities), in native byte order: what one
 * process writes, another on the same machine reads.
 *
 * wire_put_* append to a struct buf and cannot fail (buf.h aborts on
 * allocation failure).  wire_get_* read from a struct wire_reader that
 * never runs past its input: a short or malformed field sets the
 * reader's sticky `failed` and reads as 0 or NULL, so a decoder checks
 * once, after its last field.
 */
#ifndef ASYNC_WIRE_H
#define ASYNC_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"

void wire_put_u8(struct buf *b, uint8_t v);
void wire_put_u32(struct buf *b, uint32_t v);
void wire_put_i64(struct buf *b, int64_t v);
/* u64 length + bytes */
void wire_put_bytes(struct buf *b, const void *p, size_t n);
/* NULL is encoded distinctly from "" (length UINT64_MAX). */
void wire_put_str(struct buf *b, const char *s);
/* u32 count + that many wire_put_str; argv may be NULL (count 0). */
void wire_put_strv(struct buf *b, char *const *v);

struct wire_reader {
	const unsigned char *p;
	size_t left;
	int failed; /* sticky: any short read sets it */
};

void wire_reader_init(struct wire_reader *r, const void *p, size_t n);
uint8_t wire_get_u8(struct wire_reader *r);
uint32_t wire_get_u32(struct wire_reader *r);
int64_t wire_get_i64(struct wire_reader *r);
/* Points into the payload (no copy); *n gets the length. */
const void *wire_get_bytes(struct wire_reader *r, size_t *n);
/* Fresh malloc'd NUL-terminated copy, or NULL if it was NULL or on error. */
char *wire_get_str(struct wire_reader *r);
/* Fresh NULL-terminated malloc'd vector of malloc'd strings (count <= 1M). */
char **wire_get_strv(struct wire_reader *r);

#endif
