/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_FORMAT_BUF_H
#define GTRACE_FORMAT_BUF_H

#include <stddef.h>
#include <stdint.h>

/* A growable byte buffer that encoders append to. */
struct gbuf {
	uint8_t *data;
	size_t len, cap;
};

void gbuf_reserve(struct gbuf *b, size_t more);
void gbuf_put(struct gbuf *b, const void *p, size_t len);
void gbuf_put_le32(struct gbuf *b, uint32_t v);
void gbuf_put_le64(struct gbuf *b, uint64_t v);
/* LEB128: 7 bits a byte, low bits first. */
void gbuf_put_uvarint(struct gbuf *b, uint64_t v);
/* Zigzag then LEB128, for deltas that may be negative. */
void gbuf_put_svarint(struct gbuf *b, int64_t v);

/* Zigzag: 0, -1, 1, -2, ... become 0, 1, 2, 3, ... */
static inline uint64_t zigzag(int64_t v)
{
	return (uint64_t)v << 1 ^ (uint64_t)(v >> 63);
}

static inline int64_t unzigzag(uint64_t z)
{
	return (int64_t)(z >> 1 ^ -(z & 1));
}
/* A uvarint length then the bytes. */
void gbuf_put_str(struct gbuf *b, const char *s);
void gbuf_reset(struct gbuf *b);
void gbuf_free(struct gbuf *b);

/*
 * A bounds-checked reader over bytes. Reading past the end or a malformed
 * varint sets err and returns 0 from then on, so a decoder checks err once
 * after a run of reads instead of after each.
 */
struct gcursor {
	const uint8_t *p, *end;
	int err;
};

void gcursor_init(struct gcursor *c, const void *p, size_t len);
uint8_t gcursor_u8(struct gcursor *c);
uint32_t gcursor_le32(struct gcursor *c);
uint64_t gcursor_le64(struct gcursor *c);
uint64_t gcursor_uvarint(struct gcursor *c);
int64_t gcursor_svarint(struct gcursor *c);
/* Returns a pointer into the buffer, or NULL with err set. */
const uint8_t *gcursor_bytes(struct gcursor *c, size_t len);
/* Returns a new NUL-terminated copy (caller frees), or NULL with err set. */
char *gcursor_str(struct gcursor *c);
size_t gcursor_left(const struct gcursor *c);

#endif
