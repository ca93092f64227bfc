/* SPDX-License-Identifier: MIT */
/*
 * Where a recording's bytes go: each chunk decoded and encoded again by
 * this build's writer, then zstd'd as a chunk is, whole and with one table
 * left out: a table's bytes are what the chunk's compressed size loses
 * without it (the marginals need not add up to the total). A column's are
 * its encoded bytes alone, zstd'd a chunk at a time. Re-encoding the same
 * rows is what lets two builds' encodings be compared on one recording.
 *
 * usage: table-sizes FILE   (bench/table-sizes.sh builds and runs it)
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/file.h"
#include "format/tables.h"

/*
 * The integer columns of the tables where a threads recording's bytes go,
 * as this build writes them (man/gtrace-format.5): a column is `head`
 * varints of its own (the on-cpu step), then a varint a row, or a golomb
 * run: its order, its byte count and those bytes.
 */
struct column {
	uint32_t table;		/* id */
	const char *name;
	unsigned head;
	bool golomb;
};

static const struct column columns[] = {
	{ 6, "nodes.parent", 0, false }, { 6, "nodes.loc", 0, false },
	{ 23, "offcpu.tid", 0, false }, { 23, "offcpu.start", 0, true },
	{ 23, "offcpu.end", 0, true }, { 23, "offcpu.reason", 0, false },
	{ 23, "offcpu.node", 0, false },
	{ 22, "samples.pid", 0, false }, { 22, "samples.tid", 0, false },
	{ 22, "samples.ts", 1, true }, { 22, "samples.node", 0, false },
	{ 22, "samples.cpu", 0, false }, { 22, "samples.flags", 0, false },
};
#define NCOLUMNS (sizeof(columns) / sizeof(columns[0]))

/* Each column of the payload's records of tables in columns[] appended to its buffer. */
static void split_columns(const struct gbuf *payload, struct gbuf *col)
{
	struct gcursor c;

	gcursor_init(&c, payload->data, payload->len);
	while (gcursor_left(&c) && !c.err) {
		uint64_t id = gcursor_uvarint(&c), n = gcursor_uvarint(&c);
		uint64_t len = gcursor_uvarint(&c);
		const uint8_t *body = gcursor_bytes(&c, (size_t)len);
		struct gcursor b;

		if (!body)
			return;
		gcursor_init(&b, body, (size_t)len);
		for (size_t i = 0; i < NCOLUMNS && !b.err; i++) {
			const uint8_t *from = b.p;

			if (columns[i].table != id)
				continue;
			for (uint64_t v = 0; v < columns[i].head && !b.err; v++)
				gcursor_uvarint(&b);
			if (columns[i].golomb) {
				gcursor_uvarint(&b);
				gcursor_bytes(&b, (size_t)gcursor_uvarint(&b));
			}
			for (uint64_t v = 0; v < n && !columns[i].golomb && !b.err; v++)
				gcursor_uvarint(&b);
			gbuf_put(&col[i], from, (size_t)(b.p - from));
		}
	}
}

/* A vector of struct tr_tables seen as bytes: its rows and their count. */
struct rows {
	uint8_t *v;
	size_t len;
};

static struct rows *rows_at(struct tr_tables *t, size_t field)
{
	return (struct rows *)((uint8_t *)t + field);
}

#define TABLES(X)                                                              \
	X(meta) X(strings) X(tasks) X(dsos) X(locs) X(nodes) X(samples)        \
	X(offcpu) X(lanes) X(spans) X(counters) X(symbols) X(span_attrs)       \
	X(cubins) X(pc_samples) X(losses) X(metrics) X(metric_ticks)           \
	X(metric_values) X(codes)
#define TABLE_ENTRY(f) { #f, offsetof(struct tr_tables, f) },
static const struct { const char *name; size_t field; } tables[] = { TABLES(TABLE_ENTRY) };
#define NTABLES (sizeof(tables) / sizeof(tables[0]))

static size_t compressed(const struct tr_tables *t, size_t *encoded)
{
	struct gbuf out = {0};
	size_t n;

	tr_tables_encode(t, &out);
	n = out.len ? tr_compressed_size(out.data, out.len) : 0;
	if (encoded)
		*encoded = out.len;
	gbuf_free(&out);
	return n;
}

int main(int argc, char **argv)
{
	size_t total = 0, encoded = 0, table_bytes[NTABLES] = {0}, table_rows[NTABLES] = {0};
	size_t col_bytes[NCOLUMNS] = {0}, col_encoded[NCOLUMNS] = {0}, samples = 0, chunks = 0;
	struct gbuf cols[NCOLUMNS] = {{0}};
	struct tr_reader *r;
	struct tr_header hdr;
	struct tr_chunk c;
	int err;

	if (argc != 2) {
		fprintf(stderr, "usage: table-sizes FILE\n");
		return 2;
	}
	err = tr_reader_open(&r, argv[1], &hdr);
	if (err) {
		fprintf(stderr, "table-sizes: cannot read '%s': %s\n", argv[1], tr_strerror(err));
		return 1;
	}
	tr_reader_budget(r)->limit = 0;
	while ((err = tr_reader_next(r, &c)) > 0) {
		struct tr_tables t = {0};
		struct gbuf payload = {0};
		size_t whole, enc;

		if (c.type != TR_CHUNK_TABLES || tr_tables_decode(&t, c.payload, c.len))
			continue;
		chunks++;
		samples += t.samples.len;
		tr_tables_encode(&t, &payload);
		whole = compressed(&t, &enc);
		total += whole;
		encoded += enc;
		for (size_t i = 0; i < NTABLES; i++) {
			struct rows *rows = rows_at(&t, tables[i].field), kept = *rows;

			table_rows[i] += kept.len;
			if (!kept.len)
				continue;
			rows->len = 0;
			table_bytes[i] += whole - compressed(&t, NULL);
			*rows = kept;
		}
		split_columns(&payload, cols);
		for (size_t i = 0; i < NCOLUMNS; i++) {
			col_bytes[i] += cols[i].len ? tr_compressed_size(cols[i].data, cols[i].len) : 0;
			col_encoded[i] += cols[i].len;
			gbuf_reset(&cols[i]);
		}
		gbuf_free(&payload);
		tr_tables_free(&t);
	}
	tr_reader_close(r);
	printf("%zu chunks, %zu samples: %zu bytes encoded, %zu compressed (%.2f per sample)\n",
	       chunks, samples, encoded, total, samples ? (double)total / (double)samples : 0.0);
	printf("\n%-14s %9s %9s %10s\n", "table", "rows", "bytes", "per-sample");
	for (size_t i = 0; i < NTABLES; i++)
		if (table_rows[i])
			printf("%-14s %9zu %9zu %10.2f\n", tables[i].name, table_rows[i],
			       table_bytes[i],
			       samples ? (double)table_bytes[i] / (double)samples : 0.0);
	printf("\n%-16s %9s %10s %10s\n", "column", "encoded", "compressed", "per-sample");
	for (size_t i = 0; i < NCOLUMNS; i++) {
		printf("%-16s %9zu %10zu %10.2f\n", columns[i].name, col_encoded[i], col_bytes[i],
		       samples ? (double)col_bytes[i] / (double)samples : 0.0);
		gbuf_free(&cols[i]);
	}
	return err < 0;
}
