/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_TESTS_READBACK_H
#define GTRACE_TESTS_READBACK_H

/* Reading back what the recorder wrote: a trace file's rows, and its counters. */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "format/file.h"
#include "format/tables.h"

/*
 * Decodes every TABLES chunk of path into t; *ended says whether the file
 * has its END chunk. Returns 0, or a negative value where the file could
 * not be read to its end.
 */
static inline int readback_tables(const char *path, struct tr_tables *t, bool *ended)
{
	struct tr_reader *r;
	struct tr_header hdr;
	struct tr_chunk chunk;
	int got;

	*ended = false;
	if (tr_reader_open(&r, path, &hdr))
		return -1;
	while ((got = tr_reader_next(r, &chunk)) > 0) {
		if (chunk.type == TR_CHUNK_END) {
			*ended = true;
		} else if (chunk.type == TR_CHUNK_TABLES &&
			   tr_tables_decode(t, chunk.payload, chunk.len)) {
			got = -1;
			break;
		}
	}
	tr_reader_close(r);
	return got;
}

/* The last value of the counter name, or UINT64_MAX when there is none. */
static inline uint64_t readback_counter(const struct tr_tables *t, const char *name)
{
	for (size_t i = t->counters.len; i-- > 0;)
		if (!strcmp(t->strings.v[t->counters.v[i].name - 1], name))
			return t->counters.v[i].value;
	return UINT64_MAX;
}

#endif
