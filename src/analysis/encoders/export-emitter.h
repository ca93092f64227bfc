/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_ANALYSIS_ENCODERS_EXPORT_EMITTER_H
#define GTRACE_ANALYSIS_ENCODERS_EXPORT_EMITTER_H

/*
 * gtrace export's inside: export.c walks the model once and hands every
 * track and event to the emitter of the chosen format (export-chrome.c,
 * export-perfetto.c), which only encodes. Emitters write as they are
 * called: what they keep grows with the model (what was interned, the
 * lanes' slices Chrome lists again after the events), never with the
 * output.
 *
 * Times are ns since the export's zero (model_time_zero). Names and keys are
 * ids in funcs.names. Tracks come before the events on them; a track's
 * parent before the track; tracks are listed in the order of their ids.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/encoders/export.h"

enum export_track_kind {
	TRACK_GLOBAL,		/* the recording's own: metadata, then counters */
	TRACK_PROCESS,
	TRACK_THREAD,
	TRACK_GROUP,		/* lanes of one GPU, under their process */
	TRACK_LANE,		/* spans: a lane, or a part of one (a thread's calls, an overlap) */
	TRACK_COUNTER,
	TRACK_DEVICE,		/* the machine's or a GPU's metrics: a pseudo process, pid its own */
};

struct export_track {
	uint32_t id;		/* 1, 2, ... in the order made */
	uint32_t parent;	/* track id, 0 for none */
	enum export_track_kind kind;
	uint32_t pid, tid;	/* process and thread; lanes: a synthetic tid of their own */
	uint32_t name;
	uint32_t unit;		/* counters: the values' unit, 0 for a plain count */
	/* A lane's row of one thread's calls (parent: that thread's track): the thread. */
	const struct export_track *thread;
};

/* An attribute of an event: a number (value / 10^decimals), or a text when str is set. */
struct export_arg {
	uint32_t key;
	uint64_t value;
	uint32_t decimals;
	const char *str;
};

/* A flow that starts at an event: its id, and a time inside the event (the origin). */
struct export_flow {
	uint64_t id;
	uint64_t ts;
};

struct export_event {
	const struct export_track *track;
	uint64_t ts, dur;	/* dur 0 for an instant */
	uint32_t name;
	uint32_t category;
	const struct export_arg *args;
	size_t nargs;
	const struct export_flow *flows_out;	/* flows that start here */
	size_t nflows_out;
	uint64_t flow_in;	/* a flow ends here: its id, 0 for none */
};

struct exporter;

struct export_emitter {
	void (*begin)(struct exporter *x);
	void (*track)(struct exporter *x, const struct export_track *t);
	/*
	 * A slice. On one track, a slice that starts inside another ends
	 * inside it too, and comes after it.
	 */
	void (*slice)(struct exporter *x, const struct export_event *e);
	void (*instant)(struct exporter *x, const struct export_event *e);
	/* A CPU sample on thread track t, at ts. */
	void (*sample)(struct exporter *x, const struct export_track *t, const struct tr_sample *s,
		       uint64_t ts);
	/*
	 * For a format that also lists the samples apart from the events
	 * (Chrome's "samples"): after them all, the same samples again, in
	 * the same order. NULL: none.
	 */
	void (*profile_sample)(struct exporter *x, const struct export_track *t,
			       const struct tr_sample *s, uint64_t ts);
	/* A counter's value at ts: value / 10^decimals. */
	void (*counter)(struct exporter *x, const struct export_track *t, uint64_t ts,
			uint64_t value, uint32_t decimals);
	void (*end)(struct exporter *x);
	void (*free)(struct exporter *x);
};

struct exporter {
	FILE *out;
	struct funcs *f;
	const struct model *m;
	uint64_t monotonic_zero;	/* the CLOCK_MONOTONIC ns of time 0 */
	bool realtime_known;		/* the recording read its clocks (meta clock-start) */
	uint64_t realtime_zero;		/* then the CLOCK_REALTIME ns of time 0 */
	void *state;		/* the emitter's */
};

extern const struct export_emitter export_chrome;
extern const struct export_emitter export_perfetto;

/*
 * pprof's profile (export-pprof.c): an aggregate, counted in a pass of its
 * own, not an emitter. from, to: the window in CLOCK_MONOTONIC ns, to
 * excluded. 0, or -EIO when out failed.
 */
int export_pprof(FILE *out, struct funcs *f, const struct export_opts *o, uint64_t from,
		 uint64_t to);

/* The key of GPU gpu of process pid: its group track's, its busy row's. */
static inline uint64_t export_gpu_key(uint32_t pid, uint32_t gpu)
{
	return (uint64_t)pid << 32 | gpu;
}

/*
 * When each GPU was busy (export-busy.c): the exported spans of its
 * streams, by GPU (export_gpu_key) then start.
 */
struct export_busy {
	struct busy_span *v;
	size_t n;
};

/* One busy interval of a GPU: the union of spans that overlap or touch. */
struct export_busy_interval {
	uint64_t start, end;
	uint64_t spans;		/* how many */
};

/* Finds them among the exported spans (indexes in m->t.spans). */
void export_busy_find(struct export_busy *b, const struct model *m, const uint32_t *spans,
		      size_t n);
/* Where GPU gpu's spans start, for export_busy_next. */
size_t export_busy_first(const struct export_busy *b, uint64_t gpu);
/* GPU gpu's next busy interval from *at, which it moves past: false after its last. */
bool export_busy_next(const struct export_busy *b, uint64_t gpu, size_t *at,
		      struct export_busy_interval *out);
void export_busy_free(struct export_busy *b);

/*
 * analyze's findings (export-findings.c) as instants on the recording's
 * track global, within the window [from, to); zero: the export's time 0.
 */
void export_findings(struct exporter *x, const struct export_emitter *e,
		     const struct export_track *global, const struct analyze *a, uint64_t zero,
		     uint64_t from, uint64_t to);

/* Whether meta row i is the last of its key: the value that counts. */
bool export_meta_last(const struct model *m, size_t i);

/* The window of o in CLOCK_MONOTONIC ns, [*from, *to), after time 0 zero. */
void export_window(const struct export_opts *o, uint64_t zero, uint64_t *from, uint64_t *to);

/* Whether [start, start + dur) meets the window [from, to); an instant when it is in it. */
static inline bool export_in_window(uint64_t from, uint64_t to, uint64_t start, uint64_t dur)
{
	if (start >= to)
		return false;
	return start >= from || start + dur > from;
}

#endif
