/* SPDX-License-Identifier: MIT */
#include "format/buf.h"

#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

/* A LEB128 encoding of 64 bits takes at most 10 bytes. */
#define UVARINT_MAX_BYTES 10

void gbuf_reserve(struct gbuf *b, size_t more)
{
	size_t cap;

	if (b->cap - b->len >= more)
		return;
	cap = b->cap ? b->cap : 256;
	while (cap - b->len < more)
		cap *= 2;
	b->data = xrealloc(b->data, cap);
	b->cap = cap;
}

void gbuf_put(struct gbuf *b, const void *p, size_t len)
{
	if (!len)
		return;
	gbuf_reserve(b, len);
	memcpy(b->data + b->len, p, len);
	b->len += len;
}

void gbuf_put_le32(struct gbuf *b, uint32_t v)
{
	gbuf_reserve(b, 4);
	for (int i = 0; i < 4; i++)
		b->data[b->len++] = (uint8_t)(v >> (8 * i));
}

void gbuf_put_le64(struct gbuf *b, uint64_t v)
{
	gbuf_reserve(b, 8);
	for (int i = 0; i < 8; i++)
		b->data[b->len++] = (uint8_t)(v >> (8 * i));
}

void gbuf_put_uvarint(struct gbuf *b, uint64_t v)
{
	gbuf_reserve(b, UVARINT_MAX_BYTES);
	while (v >= 0x80) {
		b->data[b->len++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b->data[b->len++] = (uint8_t)v;
}

void gbuf_put_svarint(struct gbuf *b, int64_t v)
{
	gbuf_put_uvarint(b, zigzag(v));
}

void gbuf_put_str(struct gbuf *b, const char *s)
{
	size_t len = s ? strlen(s) : 0;

	gbuf_put_uvarint(b, len);
	gbuf_put(b, s, len);
}

void gbuf_reset(struct gbuf *b)
{
	b->len = 0;
}

void gbuf_free(struct gbuf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

void gcursor_init(struct gcursor *c, const void *p, size_t len)
{
	c->p = p;
	c->end = len ? c->p + len : c->p;	/* NULL + 0 is undefined */
	c->err = 0;
}

size_t gcursor_left(const struct gcursor *c)
{
	return c->err ? 0 : (size_t)(c->end - c->p);
}

const uint8_t *gcursor_bytes(struct gcursor *c, size_t len)
{
	const uint8_t *p = c->p;

	if (c->err || len > (size_t)(c->end - c->p)) {
		c->err = 1;
		return NULL;
	}
	c->p += len;
	return p;
}

uint8_t gcursor_u8(struct gcursor *c)
{
	const uint8_t *p = gcursor_bytes(c, 1);

	return p ? p[0] : 0;
}

uint32_t gcursor_le32(struct gcursor *c)
{
	const uint8_t *p = gcursor_bytes(c, 4);
	uint32_t v = 0;

	for (int i = 0; p && i < 4; i++)
		v |= (uint32_t)p[i] << (8 * i);
	return v;
}

uint64_t gcursor_le64(struct gcursor *c)
{
	const uint8_t *p = gcursor_bytes(c, 8);
	uint64_t v = 0;

	for (int i = 0; p && i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

uint64_t gcursor_uvarint(struct gcursor *c)
{
	uint64_t v = 0;

	for (int shift = 0; !c->err && c->p < c->end; shift += 7) {
		uint8_t byte = *c->p++;

		/* The tenth byte may only carry the top bit of 64. */
		if (shift == 63 && byte > 1)
			break;
		v |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80))
			return v;
	}
	c->err = 1;
	return 0;
}

int64_t gcursor_svarint(struct gcursor *c)
{
	return unzigzag(gcursor_uvarint(c));
}

char *gcursor_str(struct gcursor *c)
{
	uint64_t len = gcursor_uvarint(c);
	const uint8_t *p;

	if (len > gcursor_left(c)) {
		c->err = 1;
		return NULL;
	}
	p = gcursor_bytes(c, (size_t)len);
	/* An embedded NUL would silently shorten the string: refuse it. */
	if (!p || memchr(p, 0, (size_t)len)) {
		c->err = 1;
		return NULL;
	}
	return xstrndup((const char *)p, (size_t)len);
}
