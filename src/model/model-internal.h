/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_MODEL_MODEL_INTERNAL_H
#define GTRACE_MODEL_MODEL_INTERNAL_H

/* Shared by the files of src/model/: not for the commands. */

#include "model/model.h"

/* The tables whose rows carry times, in struct model_rank's rows[]. */
enum model_timed {
	TIMED_TASKS, TIMED_SAMPLES, TIMED_OFFCPU, TIMED_SPANS, TIMED_LOSSES,
	TIMED_METRIC_TICKS, TIMED_TABLES
};

/*
 * A time moved by shift ns, modulo 2^64 as the clocks wrap (never a signed
 * add that overflows, whatever a hostile recording's shift); 0, unknown,
 * stays 0.
 */
static inline uint64_t model_shifted(uint64_t ts, int64_t shift)
{
	return ts ? ts + (uint64_t)shift : 0;
}

/* Widens [*first, *last] to ts; 0, an unknown time, is left out. */
void model_see_ts(uint64_t *first, uint64_t *last, uint64_t ts);

/*
 * The second pass of model_load_folded, over r's chunks again with m
 * indexed from the first: folds the samples and off-CPU rows into m.
 * False when a chunk reads or decodes differently from the first pass,
 * or its rows would pass the read limit that model_load_within keeps to.
 */
bool model_fold_samples(struct model *m, struct tr_reader *r);

/*
 * Adds off-CPU interval o to the sums of sums, whose entries index keeps by
 * thread, stack and reason (pairs counts the pairs of thread and stack).
 */
struct offcpu_summer {
	struct u64map pairs;	/* (tid, node) pair ids */
	struct u64map index;	/* pair id << 2 | reason -> index in the sums */
};
void model_offcpu_add(struct offcpu_summer *sm, struct model_offcpu_sums *sums,
		      uint32_t tid, uint32_t node, uint32_t reason, uint64_t ns,
		      uint64_t intervals);
void model_offcpu_summer_free(struct offcpu_summer *sm);

/* A recording's rank, place and times from its meta rows (shift_ns set first). */
void model_rank_facts(struct model_rank *r, const struct tr_meta *meta, size_t n, size_t index);

/* Indexes string id's text for model_string_id, if none before had it. */
void model_add_text(struct model *m, uint32_t id);

/* Each lane's class and each CUDA stream span name's (lanes.c), after index_lanes. */
void model_classify_lanes(struct model *m);

/* Frees the indexes of model_index, keeping the tables, and builds them again. */
void model_reindex(struct model *m);

#endif
