/* SPDX-License-Identifier: MIT */
/*
 * Recordings shaped to hurt the readers of the offline commands
 * (tests/e2e/hostile-readers.sh), written with the project's writer:
 *
 *   reader-recordings regions OUT N      N kernels of long names and N
 *                                        kernel regions, one a kernel: each
 *                                        region's kernel time looked up
 *   reader-recordings long-names OUT N   a kernel's regions lane whose name,
 *                                        and its region's, are 256 KiB
 *                                        long, and N collects of the region
 *   reader-recordings bad-ids OUT        string id 0 and ids past the last
 *                                        string wherever a name or kind is
 *                                        expected: lanes, spans, attributes,
 *                                        tasks, dsos, symbols, PC samples,
 *                                        metrics, counters
 *   reader-recordings sums OUT           durations whose sums pass 2^64 ns:
 *                                        a lane's spans, a kernel's, a
 *                                        region's collects, the waits and
 *                                        off-CPU time of a thread
 *   reader-recordings span-ends OUT      an NVTX range and a CUDA call of
 *                                        thread TID whose start and length
 *                                        add up past 2^64 ns
 *   reader-recordings counters OUT N     N counters of distinct names, which
 *                                        the ranks of a job add up by name
 *   reader-recordings job DIR N          N recordings, ranks 0 to N - 1, in
 *                                        DIR: 16 threads, 4 counters of its
 *                                        own and 2 NCCL collectives each
 *   reader-recordings clocks OUT RANK    rank 0 of clocks that agree, or
 *                                        rank 1 whose clock pairs, start-ns
 *                                        and end-ns reach the ends of int64
 *   reader-recordings collectives OUT RANK
 *                                        NCCL kernels whose ends on rank 0
 *                                        and 1 are 2^63 - 1 ns apart, one
 *                                        way then the other
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/synth.h"

#define PID 100
#define TID 100
/* Past the last string of any of these recordings. */
#define BAD_ID 0xfffffff0u
/* Two of these add up to 2^64 + 2. */
#define HALF_PAST (UINT64_MAX / 2 + 2)

/*
 * Thread TID of PID, named comm, sampled n times in main of /usr/bin/app
 * (cpu-clock, 1 kHz); that stack's node.
 */
static uint32_t sampled_thread(struct synth *s, const char *comm, unsigned n)
{
	uint32_t loc = synth_loc(s, synth_dso(s, "/usr/bin/app"), 0x1000, "main");
	uint32_t node = synth_stack(s, &loc, 1);

	synth_meta(s, "event", "cpu-clock");
	synth_meta(s, "frequency", "1000");
	synth_comm(s, PID, TID, comm);
	synth_samples(s, PID, TID, node, n);
	return node;
}

/* The meta row of a job's rank. */
static void rank_meta(struct synth *s, unsigned long rank)
{
	char value[32];

	snprintf(value, sizeof(value), "%lu", rank);
	synth_meta(s, "rank", value);
}

/* A kernel region's summary span on its lane, as the agent writes one. */
static void region_summary(struct synth *s, uint32_t lane, const char *region,
			   uint64_t start, uint64_t sum_ns)
{
	synth_span(s, lane, region, start, 1000);
	synth_span_attr(s, "instances", 4);
	synth_span_attr(s, "sum_ns", sum_ns);
	synth_span_attr(s, "min_ns", 10);
	synth_span_attr(s, "max_ns", sum_ns);
	synth_span_attr(s, "median_ns", 20);
	synth_span_attr(s, "lanes", 2);
}

/*
 * n kernels "kernel_xxx...<i>" on a stream, and a regions lane of each:
 * every region row's kernel time is asked of every kernel row.
 */
static void regions(struct synth *s, unsigned long n)
{
	uint32_t stream = synth_lane(s, PID, "GPU0 stream 7");

	synth_comm(s, PID, TID, "regions");
	for (unsigned long i = 0; i < n; i++) {
		char kernel[128], lane[160];

		snprintf(kernel, sizeof(kernel), "kernel_%0100lu", i);
		snprintf(lane, sizeof(lane), "%s regions", kernel);
		synth_span(s, stream, kernel, SYNTH_T0 + i * 1000, 500);
		region_summary(s, synth_lane_kind(s, PID, "kernel-region-stats", lane), "loop",
			       SYNTH_T0 + i * 1000, 100);
	}
}

/* One regions lane and region of long names: each collect names them again. */
static void long_names(struct synth *s, unsigned long n)
{
	size_t len = 256 << 10;
	char *lane = xmalloc(len + sizeof(" regions")), *region = xmalloc(len + 1);
	uint32_t stats;

	memset(lane, 'k', len);
	strcpy(lane + len, " regions");
	memset(region, 'r', len);
	region[len] = '\0';
	synth_comm(s, PID, TID, "long-names");
	stats = synth_lane_kind(s, PID, "kernel-region-stats", lane);
	lane[len] = '\0';
	synth_span(s, synth_lane(s, PID, "GPU0 stream 7"), lane, SYNTH_T0, 500);
	for (unsigned long i = 0; i < n; i++)
		region_summary(s, stats, region, SYNTH_T0 + i * 1000, 100);
	free(lane);
	free(region);
}

/* A row of each table whose string ids are id: 0 (none), or past the last string. */
static void bad_rows(struct synth *s, uint32_t id)
{
	uint32_t kinds[] = {
		synth_str(s, "cuda"), synth_str(s, "cuda-api"), synth_str(s, "cuda-wait"),
		synth_str(s, "kernel-region-stats"), id,
	};
	uint32_t dso = synth_dso(s, "/usr/bin/app"), loc, node;
	struct tr_pc_sample *b;
	struct tr_metric *mt;

	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		struct tr_lane *lane = VEC_PUSH(&s->t.lanes);
		uint32_t l = s->lanes_out + (uint32_t)s->t.lanes.len;

		lane->pid = PID;
		lane->kind = kinds[k];
		lane->name = id;
		/* A span of no name, then one of a name, on a lane of no name. */
		for (int named = 0; named < 2; named++) {
			region_summary(s, l, "loop", SYNTH_T0, 100);
			s->t.spans.v[s->t.spans.len - 1].name = named ? synth_str(s, "k") : id;
			synth_span_attr(s, "correlation", 7);
			synth_span_attr(s, "bytes", 4096);
			synth_span_attr(s, "grid.x", 1);
			s->t.span_attrs.v[s->t.span_attrs.len - 1].key = id;
		}
	}
	/* A regions lane of a kernel's name whose summary has none. */
	region_summary(s, synth_lane_kind(s, PID, "kernel-region-stats", "k regions"), "loop",
		       SYNTH_T0, 100);
	s->t.spans.v[s->t.spans.len - 1].name = id;

	synth_task(s, TR_TASK_COMM, PID, TID + 1, id, SYNTH_T0);
	synth_task(s, TR_TASK_EXEC, PID, TID + 2, id, SYNTH_T0);
	VEC_PUSH(&s->t.dsos)->path = id;
	loc = synth_loc(s, s->dsos_out + (uint32_t)s->t.dsos.len, 0x1000, "f");
	s->t.symbols.v[s->t.symbols.len - 1].func = id;
	s->t.symbols.v[s->t.symbols.len - 1].file = id;
	node = synth_stack(s, (uint32_t[]){ synth_loc(s, dso, 0x2000, "main"), loc }, 2);
	synth_samples(s, PID, TID + 1, node, 2);
	synth_samples(s, PID, TID + 2, node, 2);

	b = VEC_PUSH(&s->t.pc_samples);
	*b = (struct tr_pc_sample){ .pid = PID, .correlation = 7, .function = id, .pc = 16,
				    .stall = id, .count = 3 };
	synth_metric(s, "proc.rss", "KiB", PID, 0, 0);
	mt = &s->t.metrics.v[s->t.metrics.len - 1];
	mt->name = id;
	mt->unit = id;
	synth_metric_tick(s, SYNTH_T0, (uint32_t[]){ s->metrics_out + (uint32_t)s->t.metrics.len },
			  (uint64_t[]){ 1 }, 1);
	VEC_PUSH(&s->t.counters)->name = id;
}

static void bad_ids(struct synth *s)
{
	sampled_thread(s, "bad-ids", 2);
	synth_meta(s, "cuda.pc.status", "on");
	bad_rows(s, 0);
	bad_rows(s, BAD_ID);
}

/*
 * Each pair adds past 2^64 ns: two spans of one lane, of one kernel, of
 * one API call and of one wait; two collects of one region; two off-CPU
 * intervals of one thread.
 */
static void sums(struct synth *s)
{
	const char *kinds[] = { "cuda", "cuda-api", "cuda-wait", "queue" };
	uint32_t stats = synth_lane_kind(s, PID, "kernel-region-stats", "big regions");

	sampled_thread(s, "sums", 2);
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		char name[32];
		uint32_t lane;

		snprintf(name, sizeof(name), "%s lane", kinds[k]);
		lane = synth_lane_kind(s, PID, kinds[k], name);
		synth_span(s, lane, "big", SYNTH_T0, HALF_PAST);
		synth_span(s, lane, "big", SYNTH_T0, HALF_PAST);
		synth_span(s, lane, "small", SYNTH_T0, 3);
	}
	region_summary(s, stats, "loop", SYNTH_T0, HALF_PAST);
	region_summary(s, stats, "loop", SYNTH_T0 + 2000, HALF_PAST);
	synth_offcpu(s, TID, 1, 1 + HALF_PAST);
	synth_offcpu(s, TID, SYNTH_T0, SYNTH_T0 + HALF_PAST);
}

/*
 * Thread TID sampled 4 times, then an NVTX range and a CUDA call from its
 * second sample on, each UINT64_MAX ns long: they last to the end of time,
 * never wrapping round to before they began.
 */
static void span_ends(struct synth *s)
{
	uint32_t nvtx = synth_lane_kind(s, PID, "nvtx", "NVTX");
	uint32_t api = synth_lane_kind(s, PID, "cuda-api", "CUDA API");
	uint64_t from = SYNTH_T0 + SYNTH_PERIOD;

	sampled_thread(s, "ends", 4);
	synth_span_from(s, nvtx, "forever", from, UINT64_MAX, TID, from);
	synth_span_from(s, api, "cudaStreamSynchronize", from, UINT64_MAX, TID, from);
}

/* n counters of distinct names, each of value 1. */
static void counters(struct synth *s, unsigned long n)
{
	sampled_thread(s, "counters", 2);
	for (unsigned long i = 0; i < n; i++) {
		char name[32];

		snprintf(name, sizeof(name), "c%lu", i);
		synth_counter(s, name, 1);
	}
}

/*
 * Rank rank of a job: threads 100.. sampled, counters of its own, and two
 * NCCL collectives, which end rank ns after rank 0's.
 */
static void job_rank(struct synth *s, unsigned long rank)
{
	uint32_t node = sampled_thread(s, "job", 8), lane = synth_lane(s, PID, "GPU0 stream 7");
	char name[32];

	rank_meta(s, rank);
	for (uint32_t t = 1; t < 16; t++) {
		synth_comm(s, PID, TID + t, "job");
		synth_samples(s, PID, TID + t, node, 8);
	}
	for (int c = 0; c < 4; c++) {
		snprintf(name, sizeof(name), "rank%lu.c%d", rank, c);
		synth_counter(s, name, 1);
	}
	synth_span(s, lane, "ncclKernel_AllReduce", SYNTH_T0, 1000 + rank);
	synth_span(s, lane, "ncclKernel_AllReduce", SYNTH_T0 + 2000, 1000 + rank);
}

/* n recordings of one job, DIR/rank<i>.data. */
static int job(const char *dir, unsigned long n)
{
	int err = 0;

	for (unsigned long i = 0; i < n && !err; i++) {
		struct synth s = {0};
		char path[4096];

		snprintf(path, sizeof(path), "%s/rank%lu.data", dir, i);
		job_rank(&s, i);
		err = synth_write(&s, path, TR_FEAT_CPU_SAMPLES | TR_FEAT_SYMBOLS | TR_FEAT_LANES);
		synth_free(&s);
		if (err)
			fprintf(stderr, "reader-recordings: cannot write '%s': error %d\n", path,
				err);
	}
	return err ? 1 : 0;
}

/*
 * Rank 0's clocks agree (offset 0); rank 1's offset is 2^63 - 1 at its
 * start, and at its end one whose reading (realtime minus monotonic)
 * passes int64: its shift, its drift, and its start and end moved by the
 * shift, each at an end of int64.
 */
static void clocks(struct synth *s, unsigned long rank)
{
	sampled_thread(s, "clocks", 2);
	rank_meta(s, rank);
	if (rank) {
		synth_meta(s, "clock-start", "9223372036854775807 0");
		synth_meta(s, "clock-end", "-9223372036854775807 9223372036854775807");
		synth_meta(s, "start-ns", "9223372036854775807");
		synth_meta(s, "end-ns", "9223372036854775807");
	} else {
		synth_meta(s, "clock-start", "0 0");
		synth_meta(s, "clock-end", "0 0");
		synth_meta(s, "start-ns", "1000");
		synth_meta(s, "end-ns", "2000");
	}
}

/*
 * Two NCCL collectives: on rank 0 the first ends 2^63 - 1 ns before rank
 * 1's, the second 2^63 - 1 ns after; their gaps the ends of int64.
 */
static void collectives(struct synth *s, unsigned long rank)
{
	uint32_t lane = synth_lane(s, PID, "GPU0 stream 7");
	uint64_t far = (uint64_t)INT64_MAX + 1;

	rank_meta(s, rank);
	synth_comm(s, PID, TID, "collectives");
	synth_span(s, lane, "ncclKernel_AllReduce", SYNTH_T0, rank ? far : 1);
	synth_span(s, lane, "ncclKernel_AllReduce", SYNTH_T0 + 10, rank ? 1 : far);
}

static int usage(void)
{
	fprintf(stderr, "usage: reader-recordings regions OUT N | long-names OUT N |\n"
		"       bad-ids OUT | sums OUT | counters OUT N | job DIR N |\n"
		"       clocks OUT RANK | collectives OUT RANK\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct synth s = {0};
	uint64_t features = TR_FEAT_CPU_SAMPLES | TR_FEAT_SYMBOLS | TR_FEAT_LANES;
	unsigned long n = 0;
	char *end = "";
	int err;

	if (argc == 4)
		n = strtoul(argv[3], &end, 10);
	if ((argc != 3 && argc != 4) || *end || n > UINT32_MAX / 2)
		return usage();
	if (argc == 4 && !strcmp(argv[1], "regions") && n) {
		regions(&s, n);
	} else if (argc == 4 && !strcmp(argv[1], "long-names") && n) {
		long_names(&s, n);
	} else if (argc == 3 && !strcmp(argv[1], "bad-ids")) {
		bad_ids(&s);
		features |= TR_FEAT_GPU_PC | TR_FEAT_METRICS;
	} else if (argc == 3 && !strcmp(argv[1], "sums")) {
		sums(&s);
		features |= TR_FEAT_OFFCPU;
	} else if (argc == 3 && !strcmp(argv[1], "span-ends")) {
		span_ends(&s);
	} else if (argc == 4 && !strcmp(argv[1], "job") && n) {
		return job(argv[2], n);
	} else if (argc == 4 && !strcmp(argv[1], "counters") && n) {
		counters(&s, n);
	} else if (argc == 4 && !strcmp(argv[1], "clocks") && n < 2) {
		clocks(&s, n);
	} else if (argc == 4 && !strcmp(argv[1], "collectives") && n < 2) {
		collectives(&s, n);
	} else {
		return usage();
	}
	err = synth_write(&s, argv[2], features);
	synth_free(&s);
	if (err) {
		fprintf(stderr, "reader-recordings: cannot write '%s': error %d\n", argv[2], err);
		return 1;
	}
	return 0;
}
