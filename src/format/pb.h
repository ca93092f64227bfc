/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_FORMAT_PB_H
#define GTRACE_FORMAT_PB_H

/*
 * Protocol Buffers' wire format, written into a gbuf: each field is a tag
 * (field number << 3 | wire type) and a value, varints LEB128 as in
 * gbuf_put_uvarint. A nested message is a length-delimited field whose
 * length is known only at its end: pb_begin leaves one byte for it and
 * pb_end moves the body when the length needs more, so every length is
 * encoded in the fewest bytes, as protoc's encoders do.
 *
 *	size_t at = pb_begin(b, 11);		// TrackEvent track_event = 11
 *	pb_varint(b, 9, 1);			// type = TYPE_SLICE_BEGIN
 *	pb_end(b, at);
 */

#include <stddef.h>
#include <stdint.h>

#include "format/buf.h"

enum pb_wire_type {
	PB_VARINT = 0,
	PB_FIXED64 = 1,
	PB_LEN = 2,
	PB_FIXED32 = 5,
};

void pb_tag(struct gbuf *b, uint32_t field, enum pb_wire_type type);
/* uint32, uint64, enum and bool fields; an int64 as its two's complement. */
void pb_varint(struct gbuf *b, uint32_t field, uint64_t v);
void pb_fixed64(struct gbuf *b, uint32_t field, uint64_t v);
void pb_double(struct gbuf *b, uint32_t field, double v);
void pb_bytes(struct gbuf *b, uint32_t field, const void *p, size_t len);
void pb_string(struct gbuf *b, uint32_t field, const char *s);

/* Opens nested message field; returns where its body starts, for pb_end. */
size_t pb_begin(struct gbuf *b, uint32_t field);
/* Closes the message that pb_begin opened at body: writes its length. */
void pb_end(struct gbuf *b, size_t body);

/* The bytes the varint encoding of v takes: 1 to 10. */
size_t pb_varint_size(uint64_t v);

#endif
