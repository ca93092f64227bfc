/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_FORMAT_FILE_H
#define GTRACE_FORMAT_FILE_H

/*
 * The container: a file header, then independently zstd-compressed chunks,
 * each with a type, sizes and checksums, ended by an END chunk when the
 * recording finished cleanly. A reader stops at the first chunk that is
 * incomplete or damaged and keeps everything before it.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/buf.h"

#define TR_MAGIC "GTRACE\r\n"		/* 8 bytes; \r\n catches text-mode mangling */
#define TR_VERSION 3			/* of this writer */
#define TR_MIN_READER_VERSION 3		/* a reader older than this must refuse */

#define TR_HEADER_SIZE 32		/* bytes of the file header */
#define TR_CHUNK_HEADER_SIZE 20		/* bytes before each chunk's zstd frame */

/* Bound on a chunk's decompressed size, so a corrupt length cannot claim more. */
#define TR_CHUNK_MAX_RAW (256u << 20)

/*
 * What reading one file may decode, in bytes: the memory of the rows of
 * the tables decoded from it (and of what is built from them, such as
 * parsed cubins), and apart from that its chunks' payloads decompressed
 * (time, and each chunk's buffer), each at most TR_BUDGET_RATIO times the
 * file's size (TR_BUDGET_FLOOR for a small file). A few KB of zstd can
 * claim gigabytes; a recording never comes near (man/gtrace-format.5,
 * READERS, has the figures).
 */
#define TR_BUDGET_RATIO 1024
#define TR_BUDGET_FLOOR (16ull << 20)

struct tr_budget {
	uint64_t limit;		/* bytes; 0: no limit */
	uint64_t used;		/* the rows' memory */
	uint64_t inflated;	/* the payloads decompressed */
	const char *table;	/* the table that would have passed the limit, else NULL */
};

/* The default limit for a file of that many bytes. */
uint64_t tr_budget_limit(uint64_t file_size);
/* Counts bytes of rows in, or returns -TR_ERR_BUDGET counting nothing when they would pass the limit. */
int tr_budget_charge(struct tr_budget *b, uint64_t bytes);
/* The same for bytes of payload about to be decompressed. */
int tr_budget_inflate(struct tr_budget *b, uint64_t bytes);

/* Feature bits in the header: what kinds of data the file may hold. */
enum tr_feature {
	TR_FEAT_CPU_SAMPLES = 1 << 0,
	TR_FEAT_DWARF_STACKS = 1 << 1,
	TR_FEAT_OFFCPU = 1 << 2,
	TR_FEAT_SYMBOLS = 1 << 3,
	TR_FEAT_LANES = 1 << 4,
	TR_FEAT_GPU_PC = 1 << 5,
	TR_FEAT_METRICS = 1 << 6,
};

enum tr_chunk_type {
	TR_CHUNK_TABLES = 1,	/* rows of tables (src/format/tables.h) */
	TR_CHUNK_END = 2,	/* clean end of the recording; empty payload */
};

/* Errors beyond errno, returned negated like errno values. */
enum {
	TR_ERR_NOT_TRACE = 4096,	/* no gtrace magic */
	TR_ERR_VERSION,			/* needs a newer reader */
	TR_ERR_CORRUPT,			/* a checksum or an encoding is wrong */
	TR_ERR_TRUNCATED,		/* the file ends inside a header or chunk */
	TR_ERR_BUDGET,			/* decoding it would pass the reader's budget */
};

/* A message for any value these functions return, errno ones included. */
const char *tr_strerror(int err);

struct tr_writer;

/*
 * Writes the header to a new file beside path and renames it to path
 * (src/util/outfile.h: never through a symbolic link, never into another's
 * file), so that path reads, as a recording of no chunks, from the start.
 * keep_old: a previous path is moved to path.old then, not replaced.
 * Errors: a negative errno or OUTFILE_ERR_*, both worded by tr_strerror.
 */
int tr_writer_create(struct tr_writer **w, const char *path, uint64_t features,
		     bool keep_old);
/* tr_writer_create replacing what is at path. */
int tr_writer_open(struct tr_writer **w, const char *path, uint64_t features);
/* Compresses payload and appends it as one chunk; durable once it returns. */
int tr_writer_put(struct tr_writer *w, uint32_t type, const void *payload, size_t len);
/*
 * Appends one zstd frame, compressed already, as one chunk: the payload is
 * what it decompresses to, which it must state (-EINVAL if not, -EFBIG
 * past TR_CHUNK_MAX_RAW). For tests that make what no payload compresses to.
 */
int tr_writer_put_frame(struct tr_writer *w, uint32_t type, const void *frame, size_t n);
uint64_t tr_writer_bytes(const struct tr_writer *w);	/* written so far */
/* The bytes a chunk's compression makes of a payload; 0 when it fails. */
size_t tr_compressed_size(const void *payload, size_t len);
/* Closes the file; does not write an END chunk by itself. */
int tr_writer_close(struct tr_writer *w);
/* Closes and removes the file, putting back the path.old it moved there. */
void tr_writer_discard(struct tr_writer *w);

struct tr_header {
	uint32_t version;
	uint32_t min_reader_version;
	uint64_t features;
};

struct tr_chunk {
	uint32_t type;
	const uint8_t *payload;	/* decompressed; valid until the next call */
	size_t len;
	size_t compressed_len;
	uint64_t offset;	/* of the chunk header in the file */
};

struct tr_reader;

/* Whether the file at path starts with TR_MAGIC: 1, 0 (shorter too), or a negative errno. */
int tr_file_is_trace(const char *path);

/*
 * Opens path and checks the header: TR_ERR_NOT_TRACE, TR_ERR_VERSION, ...
 * *hdr is filled as far as it was read (with TR_ERR_VERSION, the versions).
 */
int tr_reader_open(struct tr_reader **r, const char *path, struct tr_header *hdr);
/* The same over bytes in memory, which must outlive the reader (fuzzing, tests). */
int tr_reader_open_mem(struct tr_reader **r, const void *data, size_t len,
		       struct tr_header *hdr);
/*
 * Reads the next chunk: 1 with *c filled, 0 at the end of the file, or a
 * negative error (TR_ERR_TRUNCATED, TR_ERR_CORRUPT, TR_ERR_BUDGET) for a
 * chunk that cannot be read, after which the caller keeps what it has.
 */
int tr_reader_next(struct tr_reader *r, struct tr_chunk *c);
uint64_t tr_reader_file_size(const struct tr_reader *r);
/*
 * Back to the first chunk, for a second pass over the same file: the same
 * bytes, whatever happened to the path since. The chunks are inflated
 * again, which the budget does not count twice.
 */
void tr_reader_rewind(struct tr_reader *r);
/*
 * The reader's budget, which each chunk's payload is charged to: its limit
 * is tr_budget_limit of the file's size until the caller sets another, and
 * the caller charges what it decodes from the payloads to it too.
 */
struct tr_budget *tr_reader_budget(struct tr_reader *r);
void tr_reader_close(struct tr_reader *r);

#endif
