/* SPDX-License-Identifier: MIT */
#include "format/pb.h"

#include <string.h>

void pb_tag(struct gbuf *b, uint32_t field, enum pb_wire_type type)
{
	gbuf_put_uvarint(b, (uint64_t)field << 3 | type);
}

void pb_varint(struct gbuf *b, uint32_t field, uint64_t v)
{
	pb_tag(b, field, PB_VARINT);
	gbuf_put_uvarint(b, v);
}

void pb_fixed64(struct gbuf *b, uint32_t field, uint64_t v)
{
	pb_tag(b, field, PB_FIXED64);
	gbuf_put_le64(b, v);
}

void pb_double(struct gbuf *b, uint32_t field, double v)
{
	uint64_t bits;

	memcpy(&bits, &v, sizeof(bits));
	pb_fixed64(b, field, bits);
}

void pb_bytes(struct gbuf *b, uint32_t field, const void *p, size_t len)
{
	pb_tag(b, field, PB_LEN);
	gbuf_put_uvarint(b, len);
	gbuf_put(b, p, len);
}

void pb_string(struct gbuf *b, uint32_t field, const char *s)
{
	pb_bytes(b, field, s, strlen(s));
}

size_t pb_varint_size(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

size_t pb_begin(struct gbuf *b, uint32_t field)
{
	pb_tag(b, field, PB_LEN);
	gbuf_reserve(b, 1);
	b->data[b->len++] = 0;	/* the length, if it fits in one byte */
	return b->len;
}

void pb_end(struct gbuf *b, size_t body)
{
	size_t len = b->len - body, n = pb_varint_size(len), end;

	if (n > 1) {
		gbuf_reserve(b, n - 1);
		memmove(b->data + body + n - 1, b->data + body, len);
		b->len += n - 1;
	}
	/* Write the length over the byte pb_begin left, and what it grew into. */
	end = b->len;
	b->len = body - 1;
	gbuf_put_uvarint(b, len);
	b->len = end;
}
