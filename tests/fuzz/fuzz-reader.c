/* SPDX-License-Identifier: MIT */
/*
 * Feeds arbitrary bytes to the trace reader and the table decoder, as the
 * loader does with a file: open, read every chunk, decode the tables ones,
 * all within the reader's budget (a few bytes of zstd can claim 256 MiB).
 * Any crash, leak or sanitizer report is a bug; errors are expected.
 */
#include <stddef.h>
#include <stdint.h>

#include "format/file.h"
#include "format/tables.h"

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
		if (c.type == TR_CHUNK_TABLES &&
		    tr_tables_decode_within(&t, c.payload, c.len, tr_reader_budget(r)))
			break;
	tr_reader_close(r);
	tr_tables_free(&t);
	return 0;
}
