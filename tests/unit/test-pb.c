/* SPDX-License-Identifier: MIT */
/* The Protocol Buffers writer (src/format/pb.c), byte for byte against the wire format. */
#include "format/pb.h"

#include "test.h"

/* b holds exactly the n bytes of want. */
static int same(const struct gbuf *b, const uint8_t *want, size_t n)
{
	return b->len == n && !memcmp(b->data, want, n);
}

#define CHECK_BYTES(b, ...)                                                    \
	do {                                                                   \
		static const uint8_t want_[] = { __VA_ARGS__ };                \
		CHECK(same(b, want_, sizeof(want_)));                          \
	} while (0)

static void test_varint_fields(void)
{
	struct gbuf b = {0};

	pb_varint(&b, 1, 150);		/* the protobuf documentation's example */
	CHECK_BYTES(&b, 0x08, 0x96, 0x01);
	gbuf_reset(&b);
	pb_varint(&b, 2, 0);
	pb_varint(&b, 15, 127);
	pb_varint(&b, 16, 128);		/* the first two-byte tag */
	CHECK_BYTES(&b, 0x10, 0x00, 0x78, 0x7f, 0x80, 0x01, 0x80, 0x01);
	gbuf_reset(&b);
	pb_varint(&b, 1, UINT64_MAX);	/* ten bytes; an int64 of -1 too */
	CHECK_BYTES(&b, 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01);
	gbuf_reset(&b);
	pb_varint(&b, 60, 1);		/* TracePacket.track_descriptor's number, as a varint */
	CHECK_BYTES(&b, 0xe0, 0x03, 0x01);
	CHECK_EQ_U64(pb_varint_size(0), 1);
	CHECK_EQ_U64(pb_varint_size(127), 1);
	CHECK_EQ_U64(pb_varint_size(128), 2);
	CHECK_EQ_U64(pb_varint_size(16383), 2);
	CHECK_EQ_U64(pb_varint_size(16384), 3);
	CHECK_EQ_U64(pb_varint_size(UINT64_MAX), 10);
	gbuf_free(&b);
}

static void test_fixed_and_bytes(void)
{
	struct gbuf b = {0};

	pb_fixed64(&b, 47, 0x0102030405060708ull);
	CHECK_BYTES(&b, 0xf9, 0x02, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01);
	gbuf_reset(&b);
	pb_double(&b, 1, 1.0);
	CHECK_BYTES(&b, 0x09, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f);
	gbuf_reset(&b);
	pb_string(&b, 2, "testing");
	CHECK_BYTES(&b, 0x12, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g');
	gbuf_reset(&b);
	pb_string(&b, 2, "");
	CHECK_BYTES(&b, 0x12, 0x00);
	gbuf_free(&b);
}

/* Nested lengths: one byte up to 127, then the body moves to make room. */
static void test_nested_lengths(void)
{
	struct gbuf b = {0};
	size_t outer, inner;
	char text[300];

	outer = pb_begin(&b, 3);
	pb_varint(&b, 1, 150);
	pb_end(&b, outer);
	CHECK_BYTES(&b, 0x1a, 0x03, 0x08, 0x96, 0x01);

	gbuf_reset(&b);
	outer = pb_begin(&b, 1);
	pb_end(&b, outer);
	CHECK_BYTES(&b, 0x0a, 0x00);

	/* 2 + 126 bytes: the body of 128 takes a two-byte length. */
	memset(text, 'x', sizeof(text));
	text[126] = '\0';
	gbuf_reset(&b);
	outer = pb_begin(&b, 1);
	pb_string(&b, 2, text);
	pb_end(&b, outer);
	CHECK_EQ_U64(b.len, 1 + 2 + 128);
	CHECK(b.data[0] == 0x0a && b.data[1] == 0x80 && b.data[2] == 0x01);
	CHECK(b.data[3] == 0x12 && b.data[4] == 126 && b.data[5] == 'x' && b.data[130] == 'x');

	/* Inside a message that grows too: each length counts the moved bytes. */
	text[200] = '\0';
	memset(text, 'y', 200);
	gbuf_reset(&b);
	outer = pb_begin(&b, 1);
	pb_varint(&b, 8, 5);
	inner = pb_begin(&b, 11);
	pb_string(&b, 23, text);	/* tag 0xba 0x01, length 0xc8 0x01, 200 bytes */
	pb_end(&b, inner);
	pb_varint(&b, 10, 1);
	pb_end(&b, outer);
	/* inner body 204 bytes; outer 2 (field 8) + 1 + 2 + 204 (field 11) + 2 (field 10) = 211 */
	CHECK_EQ_U64(b.len, 1 + 2 + 211);
	CHECK(b.data[0] == 0x0a && b.data[1] == 0xd3 && b.data[2] == 0x01);
	CHECK(b.data[3] == 0x40 && b.data[4] == 5);
	CHECK(b.data[5] == 0x5a && b.data[6] == 0xcc && b.data[7] == 0x01);
	CHECK(b.data[8] == 0xba && b.data[9] == 0x01 && b.data[10] == 0xc8 && b.data[11] == 0x01);
	CHECK(b.data[12] == 'y' && b.data[211] == 'y');
	CHECK(b.data[212] == 0x50 && b.data[213] == 0x01);
	gbuf_free(&b);
}

int main(void)
{
	RUN(test_varint_fields);
	RUN(test_fixed_and_bytes);
	RUN(test_nested_lengths);
	return test_summary();
}
