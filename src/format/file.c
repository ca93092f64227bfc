/* SPDX-License-Identifier: MIT */
#include "format/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#include "format/crc32c.h"
#include "util/outfile.h"
#include "util/xalloc.h"

/*
 * File header (TR_HEADER_SIZE bytes, little-endian):
 *	0  magic[8]  8 version  12 min_reader_version  16 features (64 bits)
 *	24 reserved (0)  28 crc32c of bytes 0..27
 * Chunk header (TR_CHUNK_HEADER_SIZE bytes), then the zstd frame:
 *	0 type  4 compressed_len  8 raw_len  12 crc32c of the frame
 *	16 crc32c of bytes 0..15
 */
/*
 * A chunk's columns compress 1.6-2% smaller at 4 than at 3, at about the
 * same speed (bench/table-sizes.sh); 5 gains 1% more at a third of it.
 */
#define ZSTD_LEVEL 4

struct tr_writer {
	struct outfile out;
	uint64_t bytes;
	ZSTD_CCtx *cctx;
	struct gbuf chunk;	/* header and frame of the chunk being written */
};

struct tr_reader {
	int fd;			/* -1 when reading from memory */
	const uint8_t *mem;
	uint64_t size;
	uint64_t offset;	/* of the next chunk header */
	int err;		/* sticky: once a chunk fails, so do the rest */
	struct tr_budget budget;
	ZSTD_DCtx *dctx;
	struct gbuf frame;	/* compressed bytes read from fd */
	struct gbuf payload;
};

const char *tr_strerror(int err)
{
	switch (-err) {
	case TR_ERR_NOT_TRACE:
		return "not a gtrace file";
	case TR_ERR_VERSION:
		return "needs a newer gtrace to read it";
	case TR_ERR_CORRUPT:
		return "file is corrupt (a checksum or an encoding is wrong)";
	case TR_ERR_TRUNCATED:
		return "file is truncated";
	case TR_ERR_BUDGET:
		return "file decodes to more than its read limit";
	default:
		return outfile_strerror(err);
	}
}

uint64_t tr_budget_limit(uint64_t file_size)
{
	if (file_size <= TR_BUDGET_FLOOR / TR_BUDGET_RATIO)
		return TR_BUDGET_FLOOR;
	return file_size < UINT64_MAX / TR_BUDGET_RATIO ? file_size * TR_BUDGET_RATIO
							: UINT64_MAX;
}

/* Adds bytes to *count, unless that would take it past limit (0: none). */
static int budget_add(uint64_t limit, uint64_t *count, uint64_t bytes)
{
	if (limit && (bytes > limit || *count > limit - bytes))
		return -TR_ERR_BUDGET;
	*count += bytes;
	return 0;
}

int tr_budget_charge(struct tr_budget *b, uint64_t bytes)
{
	return budget_add(b->limit, &b->used, bytes);
}

int tr_budget_inflate(struct tr_budget *b, uint64_t bytes)
{
	return budget_add(b->limit, &b->inflated, bytes);
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static void set_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static int pwrite_all(int fd, const uint8_t *p, size_t len, uint64_t off)
{
	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* Writes the buffer at the end of the file, or leaves the file as it was. */
static int append(struct tr_writer *w, const struct gbuf *b)
{
	int err = pwrite_all(w->out.fd, b->data, b->len, w->bytes);

	if (err) {
		/* Cut a partial chunk so the file stays readable to its end. */
		if (ftruncate(w->out.fd, (off_t)w->bytes) < 0)
			return -errno;
		return err;
	}
	w->bytes += b->len;
	return 0;
}

int tr_writer_create(struct tr_writer **wp, const char *path, uint64_t features,
		     bool keep_old)
{
	struct tr_writer *w;
	int err;

	*wp = NULL;
	w = xcalloc(1, sizeof(*w));
	err = outfile_create(&w->out, path, 0644, keep_old);
	if (err) {
		free(w);
		return err;
	}
	w->cctx = ZSTD_createCCtx();
	if (!w->cctx) {
		tr_writer_close(w);
		return -ENOMEM;
	}

	gbuf_put(&w->chunk, TR_MAGIC, 8);
	gbuf_put_le32(&w->chunk, TR_VERSION);
	gbuf_put_le32(&w->chunk, TR_MIN_READER_VERSION);
	gbuf_put_le64(&w->chunk, features);
	gbuf_put_le32(&w->chunk, 0);
	gbuf_put_le32(&w->chunk, crc32c(w->chunk.data, w->chunk.len));
	err = append(w, &w->chunk);
	/* A file whose header is whole reads: from now on it has its name. */
	if (!err)
		err = outfile_place(&w->out);
	if (err) {
		tr_writer_close(w);
		return err;
	}
	*wp = w;
	return 0;
}

int tr_writer_open(struct tr_writer **wp, const char *path, uint64_t features)
{
	return tr_writer_create(wp, path, features, false);
}

size_t tr_compressed_size(const void *payload, size_t len)
{
	size_t bound = ZSTD_compressBound(len), n;
	void *frame = xmalloc(bound);

	n = ZSTD_compress(frame, bound, payload, len, ZSTD_LEVEL);
	free(frame);
	return ZSTD_isError(n) ? 0 : n;
}

/* Appends the chunk in w->chunk: its header, then its frame of n bytes. */
static int put_chunk(struct tr_writer *w, uint32_t type, size_t n, size_t len)
{
	uint8_t *hdr = w->chunk.data;

	set_le32(hdr, type);
	set_le32(hdr + 4, (uint32_t)n);
	set_le32(hdr + 8, (uint32_t)len);
	set_le32(hdr + 12, crc32c(hdr + TR_CHUNK_HEADER_SIZE, n));
	set_le32(hdr + 16, crc32c(hdr, 16));
	w->chunk.len = TR_CHUNK_HEADER_SIZE + n;
	return append(w, &w->chunk);
}

int tr_writer_put(struct tr_writer *w, uint32_t type, const void *payload, size_t len)
{
	size_t bound = ZSTD_compressBound(len), n;

	if (len > TR_CHUNK_MAX_RAW)
		return -EFBIG;
	gbuf_reset(&w->chunk);
	gbuf_reserve(&w->chunk, TR_CHUNK_HEADER_SIZE + bound);
	n = ZSTD_compressCCtx(w->cctx, w->chunk.data + TR_CHUNK_HEADER_SIZE, bound, payload, len,
			      ZSTD_LEVEL);
	if (ZSTD_isError(n))
		return -ENOMEM;	/* the only way compressing into a bound-sized buffer fails */
	return put_chunk(w, type, n, len);
}

int tr_writer_put_frame(struct tr_writer *w, uint32_t type, const void *frame, size_t n)
{
	unsigned long long len = ZSTD_getFrameContentSize(frame, n);

	if (len == ZSTD_CONTENTSIZE_UNKNOWN || len == ZSTD_CONTENTSIZE_ERROR)
		return -EINVAL;
	if (len > TR_CHUNK_MAX_RAW || n > ZSTD_compressBound((size_t)len))
		return -EFBIG;
	gbuf_reset(&w->chunk);
	gbuf_reserve(&w->chunk, TR_CHUNK_HEADER_SIZE + n);
	memcpy(w->chunk.data + TR_CHUNK_HEADER_SIZE, frame, n);
	return put_chunk(w, type, n, (size_t)len);
}

uint64_t tr_writer_bytes(const struct tr_writer *w)
{
	return w->bytes;
}

int tr_writer_close(struct tr_writer *w)
{
	int err;

	if (!w)
		return 0;
	err = outfile_close(&w->out);
	ZSTD_freeCCtx(w->cctx);
	gbuf_free(&w->chunk);
	free(w);
	return err;
}

void tr_writer_discard(struct tr_writer *w)
{
	if (!w)
		return;
	outfile_discard(&w->out);
	tr_writer_close(w);
}

/*
 * Points *p at len bytes from off: into the mapped memory, or read into buf.
 * The caller has checked that they lie inside the file.
 */
static int read_at(struct tr_reader *r, uint64_t off, size_t len, struct gbuf *buf,
		   const uint8_t **p)
{
	size_t done = 0;

	if (r->mem) {
		*p = r->mem + off;
		return 0;
	}
	gbuf_reset(buf);
	gbuf_reserve(buf, len);
	while (done < len) {
		ssize_t n = pread(r->fd, buf->data + done, len - done, (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)	/* the file shrank under us */
			return -TR_ERR_TRUNCATED;
		done += (size_t)n;
	}
	*p = buf->data;
	return 0;
}

static int check_header(struct tr_reader *r, struct tr_header *hdr)
{
	size_t have = r->size < TR_HEADER_SIZE ? (size_t)r->size : TR_HEADER_SIZE;
	const uint8_t *p;
	int err;

	memset(hdr, 0, sizeof(*hdr));
	if (!have)
		return -TR_ERR_TRUNCATED;
	err = read_at(r, 0, have, &r->frame, &p);
	if (err)
		return err;
	if (memcmp(p, TR_MAGIC, have < 8 ? have : 8))
		return -TR_ERR_NOT_TRACE;
	if (have < TR_HEADER_SIZE)
		return -TR_ERR_TRUNCATED;
	hdr->version = get_le32(p + 8);
	hdr->min_reader_version = get_le32(p + 12);
	hdr->features = (uint64_t)get_le32(p + 16) | (uint64_t)get_le32(p + 20) << 32;
	/* Before the checksum: a newer layout may checksum differently. */
	if (hdr->min_reader_version > TR_VERSION)
		return -TR_ERR_VERSION;
	if (get_le32(p + 28) != crc32c(p, 28))
		return -TR_ERR_CORRUPT;
	r->offset = TR_HEADER_SIZE;
	r->budget.limit = tr_budget_limit(r->size);
	return 0;
}

static int open_reader(struct tr_reader *r, struct tr_reader **rp, struct tr_header *hdr)
{
	int err;

	r->dctx = ZSTD_createDCtx();
	err = r->dctx ? check_header(r, hdr) : -ENOMEM;
	if (err) {
		tr_reader_close(r);
		return err;
	}
	*rp = r;
	return 0;
}

int tr_file_is_trace(const char *path)
{
	char magic[sizeof(TR_MAGIC) - 1];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = pread(fd, magic, sizeof(magic), 0);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n < 0)
		return (int)n;
	return n == (ssize_t)sizeof(magic) && !memcmp(magic, TR_MAGIC, sizeof(magic));
}

int tr_reader_open(struct tr_reader **rp, const char *path, struct tr_header *hdr)
{
	struct tr_reader *r;
	struct stat st;
	int err;

	*rp = NULL;
	r = xcalloc(1, sizeof(*r));
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0 || fstat(r->fd, &st) < 0) {
		err = -errno;
		tr_reader_close(r);
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		tr_reader_close(r);
		return S_ISDIR(st.st_mode) ? -EISDIR : -TR_ERR_NOT_TRACE;
	}
	r->size = (uint64_t)st.st_size;
	return open_reader(r, rp, hdr);
}

int tr_reader_open_mem(struct tr_reader **rp, const void *data, size_t len,
		       struct tr_header *hdr)
{
	struct tr_reader *r;

	*rp = NULL;
	r = xcalloc(1, sizeof(*r));
	r->fd = -1;
	/* A non-NULL base even for no bytes, so read_at can tell memory from fd. */
	r->mem = len ? data : (const uint8_t *)"";
	r->size = len;
	return open_reader(r, rp, hdr);
}

static int read_chunk(struct tr_reader *r, struct tr_chunk *c)
{
	uint64_t left = r->size - r->offset;
	uint32_t compressed_len, raw_len, frame_crc;
	const uint8_t *p;
	size_t n;
	int err;

	if (left < TR_CHUNK_HEADER_SIZE)
		return -TR_ERR_TRUNCATED;
	err = read_at(r, r->offset, TR_CHUNK_HEADER_SIZE, &r->frame, &p);
	if (err)
		return err;
	if (get_le32(p + 16) != crc32c(p, 16))
		return -TR_ERR_CORRUPT;
	c->type = get_le32(p);
	compressed_len = get_le32(p + 4);
	raw_len = get_le32(p + 8);
	frame_crc = get_le32(p + 12);
	if (raw_len > TR_CHUNK_MAX_RAW || compressed_len > ZSTD_compressBound(raw_len))
		return -TR_ERR_CORRUPT;
	if (left - TR_CHUNK_HEADER_SIZE < compressed_len)
		return -TR_ERR_TRUNCATED;
	err = read_at(r, r->offset + TR_CHUNK_HEADER_SIZE, compressed_len, &r->frame, &p);
	if (err)
		return err;
	if (crc32c(p, compressed_len) != frame_crc)
		return -TR_ERR_CORRUPT;
	/* Before the decompressing, whose buffer is what a bomb would cost. */
	err = tr_budget_inflate(&r->budget, raw_len);
	if (err)
		return err;

	gbuf_reset(&r->payload);
	gbuf_reserve(&r->payload, raw_len ? raw_len : 1);
	n = ZSTD_decompressDCtx(r->dctx, r->payload.data, raw_len, p, compressed_len);
	if (ZSTD_isError(n) || n != raw_len)
		return -TR_ERR_CORRUPT;
	c->payload = r->payload.data;
	c->len = raw_len;
	c->compressed_len = compressed_len;
	c->offset = r->offset;
	r->offset += TR_CHUNK_HEADER_SIZE + compressed_len;
	return 1;
}

int tr_reader_next(struct tr_reader *r, struct tr_chunk *c)
{
	int ret;

	memset(c, 0, sizeof(*c));
	if (!r->err && r->offset == r->size)
		return 0;
	ret = r->err ? r->err : read_chunk(r, c);
	if (ret < 0) {
		/* Sticky, and pointing at where the damage starts. */
		memset(c, 0, sizeof(*c));
		c->offset = r->offset;
		r->err = ret;
	}
	return ret;
}

void tr_reader_rewind(struct tr_reader *r)
{
	r->offset = TR_HEADER_SIZE;
	r->err = 0;
	r->budget.inflated = 0;
}

uint64_t tr_reader_file_size(const struct tr_reader *r)
{
	return r->size;
}

struct tr_budget *tr_reader_budget(struct tr_reader *r)
{
	return &r->budget;
}

void tr_reader_close(struct tr_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	ZSTD_freeDCtx(r->dctx);
	gbuf_free(&r->frame);
	gbuf_free(&r->payload);
	free(r);
}
