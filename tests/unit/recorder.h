/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_TESTS_RECORDER_H
#define GTRACE_TESTS_RECORDER_H

/*
 * A recorder's collector and span socket, writing a temporary file, for
 * the tests of the span channel (tests/unit/test-ingest.c,
 * tests/fuzz/fuzz-ingest.c): started, fed through its socket, finished
 * and read back.
 */

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/collect.h"
#include "record/ingest.h"
#include "record/writer.h"
#include "readback.h"

struct recorder {
	char path[sizeof("/tmp/gtrace-test-ingest.XXXXXX")];
	struct tr_writer *w;
	struct chunk_writer *cw;
	struct collector *c;
	struct ingest *in;
};

/* Starts one with this process as its target; 0 or a negative errno. */
static inline int recorder_start(struct recorder *r)
{
	static const struct rec_layout layout = {
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
	};
	int fd, err;

	strcpy(r->path, "/tmp/gtrace-test-ingest.XXXXXX");
	fd = mkstemp(r->path);
	if (fd < 0)
		return -1;
	close(fd);
	err = tr_writer_open(&r->w, r->path, TR_FEAT_LANES);
	if (!err)
		err = chunk_writer_start(&r->cw, r->w);
	if (!err)
		err = collector_new(&r->c, UNWIND_FP, &layout, r->cw);
	if (!err)
		err = ingest_open(&r->in, 0);
	if (!err)
		ingest_start(r->in, r->c, (uint32_t)getpid());
	return err;
}

/*
 * Polls in until every connection is closed (the peers closed theirs
 * first), for a second at most; whether they all were.
 */
static inline bool recorder_drain(struct ingest *in)
{
	struct pollfd p = { .fd = ingest_fd(in), .events = POLLIN };

	ingest_poll(in, true);
	for (int i = 0; i < 100 && !ingest_idle(in); i++) {
		poll(&p, 1, 10);
		ingest_poll(in, true);
	}
	return ingest_idle(in);
}

/*
 * Ends the recording, its span socket closed before, and reads the file
 * back into t, then removes it. Returns 0, or a negative value when the
 * file could not be written or read to its END chunk.
 */
static inline int recorder_finish(struct recorder *r, struct tr_tables *t)
{
	bool ended = false;
	int err;

	collector_flush(r->c, true);
	err = chunk_writer_stop(r->cw, true);
	if (tr_writer_close(r->w) && !err)
		err = -1;
	collector_free(r->c);
	if (!err)
		err = readback_tables(r->path, t, &ended);
	unlink(r->path);
	return err ? err : ended ? 0 : -1;
}

#endif
