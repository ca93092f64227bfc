/* SPDX-License-Identifier: MIT */
/*
 * Feeds arbitrary bytes to the table decoder directly, as a TABLES chunk's
 * payload. Through fuzz-reader the checksums and zstd shield the decoder
 * from most mutations; here every byte reaches it.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/buf.h"
#include "format/tables.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tr_tables t = {0}, again = {0};
	struct gbuf first = {0}, second = {0};

	/* What decodes must re-encode to bytes that decode to the same rows. */
	if (!tr_tables_decode(&t, data, size)) {
		tr_tables_encode(&t, &first);
		if (tr_tables_decode(&again, first.data, first.len))
			abort();
		tr_tables_encode(&again, &second);
		if (first.len != second.len ||
		    (first.len && memcmp(first.data, second.data, first.len)))
			abort();
	}
	gbuf_free(&first);
	gbuf_free(&second);
	tr_tables_free(&t);
	tr_tables_free(&again);
	return 0;
}
