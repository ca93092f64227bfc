/* SPDX-License-Identifier: MIT */
/*
 * retime IN OUT NS [monotonic|realtime]: writes OUT, the recording IN as
 * another machine would have made it, the test setting for aligning
 * recordings of several machines.
 *   monotonic (default): a machine whose CLOCK_MONOTONIC runs NS (signed)
 *     ahead: every time, and the monotonic half of its clock pairs, moved
 *     by NS. Merged with the original, its times come back by the pairs.
 *   realtime: a machine whose CLOCK_REALTIME is NS off (its time sync is):
 *     the realtime half of its clock pairs moved, nothing else. The pairs
 *     misplace it by NS; only its collectives can tell.
 * Exit status 0, or 1 with a message.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/buf.h"
#include "format/file.h"
#include "model/model.h"

static uint64_t moved(uint64_t ts, int64_t ns)
{
	return ts ? ts + (uint64_t)ns : 0;
}

/* A meta value holding a time (start-ns) or a clock pair (clock-start). */
static void move_meta(struct tr_meta *row, int64_t ns, bool realtime)
{
	long long real, mono;
	char buf[64];

	if (realtime && (!strcmp(row->key, "clock-start") || !strcmp(row->key, "clock-end")) &&
	    sscanf(row->value, "%lld %lld", &real, &mono) == 2)
		snprintf(buf, sizeof(buf), "%lld %lld", real + (long long)ns, mono);
	else if (realtime)
		return;
	else if (!strcmp(row->key, "start-ns") || !strcmp(row->key, "end-ns"))
		snprintf(buf, sizeof(buf), "%llu",
			 (unsigned long long)moved(strtoull(row->value, NULL, 10), ns));
	else if ((!strcmp(row->key, "clock-start") || !strcmp(row->key, "clock-end")) &&
		 sscanf(row->value, "%lld %lld", &real, &mono) == 2)
		snprintf(buf, sizeof(buf), "%lld %lld", real, mono + (long long)ns);
	else
		return;
	free(row->value);
	row->value = strdup(buf);
}

/* Its rows' times move as the model moves a rank's; its meta here. */
static void retime(struct model *m, int64_t ns, bool realtime)
{
	for (size_t i = 0; i < m->t.meta.len; i++)
		move_meta(&m->t.meta.v[i], ns, realtime);
	if (!realtime)
		model_shift_ranks(m, (int64_t[]){ ns });
}

int main(int argc, char **argv)
{
	bool realtime = argc == 5 && !strcmp(argv[4], "realtime");
	struct gbuf payload = {0};
	struct tr_writer *w;
	struct model m;
	int err;

	if (argc != 4 && !(argc == 5 && (realtime || !strcmp(argv[4], "monotonic")))) {
		fprintf(stderr, "usage: retime IN OUT NS [monotonic|realtime]\n");
		return 1;
	}
	err = model_load(&m, argv[1]);
	if (err) {
		fprintf(stderr, "retime: cannot read '%s': %s\n", argv[1], tr_strerror(err));
		return 1;
	}
	retime(&m, strtoll(argv[3], NULL, 10), realtime);
	tr_tables_encode(&m.t, &payload);
	err = tr_writer_open(&w, argv[2], m.header.features);
	if (!err)
		err = tr_writer_put(w, TR_CHUNK_TABLES, payload.data, payload.len);
	if (!err)
		err = tr_writer_put(w, TR_CHUNK_END, NULL, 0);
	if (!err)
		err = tr_writer_close(w);
	if (err)
		fprintf(stderr, "retime: cannot write '%s': %s\n", argv[2], tr_strerror(err));
	gbuf_free(&payload);
	model_free(&m);
	return err ? 1 : 0;
}
