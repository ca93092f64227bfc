/* SPDX-License-Identifier: MIT */
/*
 * table-bomb: writes a recording of a few KB whose chunks decompress to
 * hundreds of MB of table rows, with the project's writer: one ordinary
 * chunk (meta, a thread, a stack, samples), then CHUNKS chunks of a payload
 * of KIB KiB (default: the most a chunk may have), each one table record of
 * KIND whose columns are all zero bytes but one:
 *
 *   strings   empty strings: a pointer and an allocation for each byte
 *   samples   samples of thread 1 on no stack
 *   tids      samples, each of a thread of its own: the index of threads
 *             grows with them
 *   unknown   a table no reader knows, skipped: decompressing is the cost
 *
 * and, with PAD_KIB, the random bytes of tests/hostile/bomb.h that make the
 * file larger.
 *
 * usage: table-bomb KIND OUT [CHUNKS [KIB [PAD_KIB]]]   (CHUNKS default 1)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/hostile/bomb.h"

#define SAMPLE_COLUMNS 6	/* ts, pid, tid, node, cpu, flags */

static const struct {
	const char *kind;
	uint32_t table, columns;
} kinds[] = {
	{ "strings", 2, 1 },
	{ "samples", 7, SAMPLE_COLUMNS },
	{ "tids", 7, SAMPLE_COLUMNS },
	{ "unknown", BOMB_UNKNOWN_TABLE, 1 },
};

/* One table record of a payload of size bytes. */
static void bomb_payload(struct gbuf *out, size_t size, uint32_t table, uint32_t columns,
			 bool tids)
{
	/* Room for the record's three varints, five bytes each at most. */
	size_t body = size - 15, rows = body / columns;
	uint8_t *p;

	gbuf_put_uvarint(out, table);
	gbuf_put_uvarint(out, rows);
	gbuf_put_uvarint(out, body);
	gbuf_reserve(out, body);
	p = out->data + out->len;
	memset(p, 0, body);
	/* The tid column (the third): each row's tid one above the last's (svarint 1). */
	if (tids)
		memset(p + 2 * rows, 2, rows);
	out->len += body;
}

int main(int argc, char **argv)
{
	struct gbuf payload = {0};
	struct synth s = {0};
	struct tr_writer *w;
	long chunks = argc > 3 ? strtol(argv[3], NULL, 10) : 1;
	long kib = argc > 4 ? strtol(argv[4], NULL, 10) : TR_CHUNK_MAX_RAW >> 10;
	long pad_kib = argc > 5 ? strtol(argv[5], NULL, 10) : 0;
	size_t k = 0;
	int err;

	while (argc > 2 && k < sizeof(kinds) / sizeof(kinds[0]) && strcmp(argv[1], kinds[k].kind))
		k++;
	if (argc < 3 || argc > 6 || k == sizeof(kinds) / sizeof(kinds[0]) || chunks < 1 ||
	    kib < 1 || kib > TR_CHUNK_MAX_RAW >> 10 || pad_kib < 0 ||
	    pad_kib > TR_CHUNK_MAX_RAW >> 10) {
		fprintf(stderr, "usage: table-bomb strings|samples|tids|unknown OUT "
				"[CHUNKS [KIB [PAD_KIB]]]\n");
		return 2;
	}
	err = tr_writer_open(&w, argv[2], TR_FEAT_CPU_SAMPLES | TR_FEAT_SYMBOLS);
	if (!err)
		err = bomb_put_ordinary(&s, w, "table-bomb");
	bomb_payload(&payload, (size_t)kib << 10, kinds[k].table, kinds[k].columns,
		     !strcmp(argv[1], "tids"));
	for (long i = 0; !err && i < chunks; i++)
		err = tr_writer_put(w, TR_CHUNK_TABLES, payload.data, payload.len);
	if (!err)
		err = bomb_put_end(w, (size_t)pad_kib);
	if (w && tr_writer_close(w) && !err)
		err = -EIO;
	gbuf_free(&payload);
	synth_free(&s);
	if (err) {
		fprintf(stderr, "table-bomb: cannot write '%s': %s\n", argv[2], tr_strerror(err));
		return 1;
	}
	return 0;
}
