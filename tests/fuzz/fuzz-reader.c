/* SPDX-License-Identifier: MIT */
/*
 * Feeds arbitrary bytes to the trace reader and the table decoder, as the
 * loader does with a file: open, read every chunk, decode the tables ones.
 * Any crash, leak or sanitizer report is a bug; errors are expected.
 */
#include <stddef.h>
#include <stdint.h>

#include "format/file.h"
#include "format/tables.h"

/*
 * The reader accepts chunks up to TR_CHUNK_MAX_RAW; a few bytes of zstd can
 * claim that much. Decoding such a chunk is correct but exceeds the fuzzer's
 * memory limit, so the harness leaves payloads this large undecoded.
 */
#define FUZZ_MAX_PAYLOAD (16u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tr_tables t = {0};
	struct tr_reader *r;
	struct tr_header hdr;
	struct tr_chunk c;

	if (tr_reader_open_mem(&r, data, size, &hdr))
		return 0;
	while (tr_reader_next(r, &c) == 1)
		if (c.type == TR_CHUNK_TABLES && c.len <= FUZZ_MAX_PAYLOAD)
			tr_tables_decode(&t, c.payload, c.len);
	tr_reader_close(r);
	tr_tables_free(&t);
	return 0;
}
