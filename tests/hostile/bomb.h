/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_TESTS_HOSTILE_BOMB_H
#define GTRACE_TESTS_HOSTILE_BOMB_H

/*
 * Shared by the tools that write recordings whose few bytes decode to
 * much: the ordinary chunk they start with, and their end.
 */

#include <stdlib.h>

#include "tests/unit/synth.h"

/* A table id no reader knows: its records are skipped. */
#define BOMB_UNKNOWN_TABLE 99

/*
 * What a short recording of one thread holds, in a first chunk: meta, a
 * stack, samples. s goes on numbering the rows of the chunks after it.
 */
static inline int bomb_put_ordinary(struct synth *s, struct tr_writer *w, const char *command)
{
	uint32_t app, loc;

	synth_meta(s, "command", command);
	synth_meta(s, "frequency", "999");
	app = synth_dso(s, "/usr/bin/app");
	loc = synth_loc(s, app, 0x1000, "main");
	synth_comm(s, 1, 1, "app");
	synth_samples(s, 1, 1, synth_stack(s, &loc, 1), 10);
	synth_counter(s, "samples", 10);
	return synth_put_chunk(s, w);
}

/*
 * The END chunk, after pad_kib KiB of random bytes in a table no reader
 * knows, which compression cannot shrink: a larger file, whose read limit
 * is its size times TR_BUDGET_RATIO rather than TR_BUDGET_FLOOR.
 */
static inline int bomb_put_end(struct tr_writer *w, size_t pad_kib)
{
	struct gbuf pad = {0};
	int err = 0;

	if (pad_kib) {
		gbuf_put_uvarint(&pad, BOMB_UNKNOWN_TABLE);
		gbuf_put_uvarint(&pad, 1);
		gbuf_put_uvarint(&pad, pad_kib << 10);
		srand(1);
		for (size_t i = 0; i < pad_kib << 10; i++)
			gbuf_put(&pad, &(uint8_t){ (uint8_t)rand() }, 1);
		err = tr_writer_put(w, TR_CHUNK_TABLES, pad.data, pad.len);
		gbuf_free(&pad);
	}
	return err ? err : synth_put_end(w);
}

#endif
