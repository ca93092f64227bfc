/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_RECORD_WRITER_H
#define GTRACE_RECORD_WRITER_H

/*
 * A thread that encodes, compresses and writes chunks, so that neither
 * compression nor the disk ever holds up the draining of the rings. The
 * recorder fills one set of tables while the thread writes the other.
 */

#include <stdbool.h>

#include "format/file.h"
#include "format/tables.h"

struct chunk_writer;

/* Starts the thread writing to w, which it uses alone until the stop. */
int chunk_writer_start(struct chunk_writer **cw, struct tr_writer *w);

/*
 * Hands the rows of *t to the thread and puts an empty set of tables in
 * their place. If the thread is still busy with the previous chunk, returns
 * false and leaves *t alone, unless wait is set.
 */
bool chunk_writer_hand(struct chunk_writer *cw, struct tr_tables **t, bool wait);

/*
 * Waits for the last chunk, appends the END chunk if end is set, and joins
 * the thread. Returns 0 or the first error of tr_writer_put.
 */
int chunk_writer_stop(struct chunk_writer *cw, bool end);

#endif
