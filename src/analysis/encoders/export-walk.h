/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_ANALYSIS_ENCODERS_EXPORT_WALK_H
#define GTRACE_ANALYSIS_ENCODERS_EXPORT_WALK_H

/*
 * What export.c's walk shares with export-lanes.c, which walks the lanes
 * for it: the walk's state, and the helpers both parts call.
 */

#include <stdbool.h>
#include <stdint.h>

#include "analysis/encoders/export-emitter.h"
#include "util/hashmap.h"
#include "util/vec.h"

/* An attribute key as exported: its name, and its values' names if it holds an enum. */
struct arg_key {
	uint32_t name;			/* names id, 0 not made yet */
	uint32_t nvalues;
	const char *const *values;	/* attr_value_names */
};

struct walk {
	struct exporter x;
	const struct export_emitter *e;
	const struct export_opts *o;
	uint64_t zero;
	uint64_t from, to;		/* the window in CLOCK_MONOTONIC ns, to excluded */
	uint32_t tracks;		/* made so far */
	uint32_t extra_tids;		/* synthetic tids given to lane tracks past the lanes' */
	struct export_track global;
	struct u64map processes;	/* pid -> track id */
	struct u64map groups;		/* pid << 32 | GPU number -> track id */
	struct u64map devices;		/* rank index << 32 | GPU NVML index + 1 (0 the
					   machine) -> track id */
	bool ranks;			/* several ranks loaded */
	struct export_track *threads;	/* by real thread index; id 0: not exported */
	VEC(struct export_arg) args;
	struct arg_key *keys;		/* by string id */
	uint32_t bytes_key;		/* the string id of bytes, 0 none */
	uint32_t gbps_name;		/* names id of a copy's GB/s, 0 not made yet */
	uint32_t cat_offcpu, cat_origin, cat_meta;
	uint32_t queue_key;		/* names id of the queue delay, 0 not made yet */
	struct api_launches launches;
	struct export_busy busy;
	VEC(struct export_flow) flows;
};

/* The names id of s, interned in the export's names. */
uint32_t walk_name_id(struct walk *w, const char *s);
/* Makes t the next track, of kind under parent, named name. */
void walk_new_track(struct walk *w, struct export_track *t, enum export_track_kind kind,
		    uint32_t parent, uint32_t name);
/* Whether [start, start + dur) meets the window. */
bool walk_in_window(const struct walk *w, uint64_t start, uint64_t dur);
/* The track id of process pid, made (with its name) when first asked. */
uint32_t walk_process_track(struct walk *w, uint32_t pid);
/* The track of thread tid, NULL when it is not exported. */
const struct export_track *walk_thread_track(const struct walk *w, uint32_t tid);
/* Every selected lane's spans in the window, and their flows and queue lengths. */
void walk_lanes(struct walk *w);

#endif
