/* SPDX-License-Identifier: MIT */
/*
 * retime IN OUT NS: writes OUT, the recording IN as a machine whose
 * CLOCK_MONOTONIC runs NS (signed) ahead would have made it: every time,
 * and the monotonic half of its clock pairs, moved by NS; its realtime
 * kept. The test setting for aligning recordings from several machines:
 * merged with the original, its times must come back by the clock pairs.
 * Exit status 0, or 1 with a message.
 */
#include <errno.h>
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
static void move_meta(struct tr_meta *row, int64_t ns)
{
	long long real, mono;
	char buf[64];

	if (!strcmp(row->key, "start-ns") || !strcmp(row->key, "end-ns"))
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

static void retime(struct tr_tables *t, int64_t ns)
{
	for (size_t i = 0; i < t->meta.len; i++)
		move_meta(&t->meta.v[i], ns);
	for (size_t i = 0; i < t->tasks.len; i++)
		t->tasks.v[i].ts = moved(t->tasks.v[i].ts, ns);
	for (size_t i = 0; i < t->samples.len; i++)
		t->samples.v[i].ts = moved(t->samples.v[i].ts, ns);
	for (size_t i = 0; i < t->offcpu.len; i++) {
		t->offcpu.v[i].start = moved(t->offcpu.v[i].start, ns);
		t->offcpu.v[i].end = moved(t->offcpu.v[i].end, ns);
	}
	for (size_t i = 0; i < t->spans.len; i++) {
		t->spans.v[i].start = moved(t->spans.v[i].start, ns);
		t->spans.v[i].origin_ts = moved(t->spans.v[i].origin_ts, ns);
	}
	for (size_t i = 0; i < t->losses.len; i++)
		t->losses.v[i].ts = moved(t->losses.v[i].ts, ns);
	for (size_t i = 0; i < t->metric_ticks.len; i++)
		t->metric_ticks.v[i].ts = moved(t->metric_ticks.v[i].ts, ns);
}

int main(int argc, char **argv)
{
	struct tr_writer *w;
	struct gbuf payload = {0};
	struct model m;
	int err;

	if (argc != 4) {
		fprintf(stderr, "usage: retime IN OUT NS\n");
		return 1;
	}
	err = model_load(&m, argv[1]);
	if (err) {
		fprintf(stderr, "retime: cannot read '%s': %s\n", argv[1], tr_strerror(err));
		return 1;
	}
	retime(&m.t, strtoll(argv[3], NULL, 10));
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
