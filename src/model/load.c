/* SPDX-License-Identifier: MIT */
/*
 * Reading a file into the model: its chunks' tables, whole, or folded in
 * a second pass (fold.c); then the indexes.
 */
#include "model/model.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "model/model-internal.h"
#include "util/xalloc.h"

static void read_chunks(struct model *m, struct tr_reader *r, enum tr_decode_part part)
{
	struct tr_chunk c;
	int ret;

	while ((ret = tr_reader_next(r, &c)) > 0) {
		if (c.type == TR_CHUNK_TABLES) {
			int err = tr_tables_decode_part(&m->t, c.payload, c.len,
							tr_reader_budget(r), part);

			if (err) {
				m->damage = err;
				m->damage_offset = c.offset;
				return;
			}
		} else if (c.type == TR_CHUNK_END) {
			m->ended = true;
		}
		/* Other chunk types are a newer writer's extras: skip them. */
		m->chunks++;
		m->compressed_bytes += c.compressed_len;
		m->payload_bytes += c.len;
		if (m->ended)
			return;
	}
	if (ret < 0) {
		m->damage = ret;
		m->damage_offset = c.offset;
	} else if (!m->ended) {
		/* Every chunk whole but no END: the recorder was killed between chunks. */
		m->damage = -TR_ERR_TRUNCATED;
		m->damage_offset = m->file_size;
	}
}

int model_load(struct model *m, const char *path)
{
	return model_load_within(m, path, 0);
}

/* The file's chunks read again, every table: the rows a folded load could not fold. */
static void read_rows_again(struct model *m, struct tr_reader *r)
{
	struct tr_header header = m->header;
	uint64_t file_size = m->file_size, limit = tr_reader_budget(r)->limit;

	model_free(m);
	m->header = header;
	m->file_size = file_size;
	tr_reader_rewind(r);
	*tr_reader_budget(r) = (struct tr_budget){ .limit = limit };
	read_chunks(m, r, TR_DECODE_ALL);
}

/*
 * The second pass of a folded load, after a first that read all but the
 * samples: false when the rows must be read instead.
 */
static bool fold_samples(struct model *m, struct tr_reader *r)
{
	/* The names the samples were taken under, from the first pass. */
	model_index(m);
	return (!m->damage || m->damage == -TR_ERR_TRUNCATED) && model_fold_samples(m, r);
}

static int load(struct model *m, const char *path, uint64_t limit, bool fold)
{
	struct tr_reader *r;
	struct stat st;
	int err;

	memset(m, 0, sizeof(*m));
	if (stat(path, &st) < 0)
		return -errno;
	if (S_ISREG(st.st_mode) && st.st_size == 0)
		return -ENODATA;
	err = tr_reader_open(&r, path, &m->header);
	if (err)
		return err;
	m->file_size = tr_reader_file_size(r);
	if (limit)
		tr_reader_budget(r)->limit = limit;
	read_chunks(m, r, fold ? TR_DECODE_ALL_BUT_SAMPLES : TR_DECODE_ALL);
	if (fold && !(fold = fold_samples(m, r)))
		read_rows_again(m, r);
	m->budget = *tr_reader_budget(r);
	tr_reader_close(r);
	/* Folded, the first pass's indexes are out of date. */
	if (fold)
		model_reindex(m);
	else
		model_index(m);
	m->ranks.v[0].path = xstrdup(path);
	return 0;
}

int model_load_within(struct model *m, const char *path, uint64_t limit)
{
	return load(m, path, limit, false);
}

int model_load_folded(struct model *m, const char *path, uint64_t limit)
{
	return load(m, path, limit, true);
}
