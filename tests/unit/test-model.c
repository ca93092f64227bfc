/* SPDX-License-Identifier: MIT */
/* Loading recordings into the model: indexes, damaged files, and speed. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analysis/passes/passes.h"
#include "analysis/views/report.h"
#include "contract/lanes.h"
#include "contract/spans.h"
#include "test.h"
#include "synth.h"

static char tmpdir[] = "/tmp/gtrace-test-model.XXXXXX";

static const char *tmp_path(const char *name)
{
	static char path[256];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	return path;
}

/*
 * Two TABLES chunks and an END: the first with names, stacks and 3
 * samples, the second with 2 more samples and a later comm. Returns the
 * offset where the second chunk starts.
 */
static uint64_t write_two_chunks(const char *path)
{
	struct synth s = {0};
	struct tr_writer *w;
	uint32_t dso, main_loc, work_loc, stack[2];
	uint64_t second;

	CHECK(tr_writer_open(&w, path, TR_FEAT_CPU_SAMPLES | TR_FEAT_SYMBOLS) == 0);
	synth_meta(&s, "command", "./first");
	synth_meta(&s, "frequency", "500");
	synth_comm(&s, 7, 7, "first");
	dso = synth_dso(&s, "/bin/app");
	main_loc = synth_loc(&s, dso, 0x10, "main");
	work_loc = synth_loc(&s, dso, 0x20, "work");
	stack[0] = main_loc;
	stack[1] = work_loc;
	synth_samples(&s, 7, 7, synth_stack(&s, stack, 2), 3);
	synth_counter(&s, "lost", 1);
	CHECK(synth_put_chunk(&s, w) == 0);
	second = tr_writer_bytes(w);

	synth_comm(&s, 7, 7, "second");
	synth_meta(&s, "command", "./second");
	synth_samples(&s, 7, 8, synth_stack(&s, stack, 1), 2);
	synth_counter(&s, "lost", 4);
	CHECK(synth_put_chunk(&s, w) == 0);
	CHECK(synth_put_end(w) == 0);
	CHECK(tr_writer_close(w) == 0);
	synth_free(&s);
	return second;
}

static void test_load_whole_file(void)
{
	const char *path = tmp_path("whole.data");
	struct model m;
	const struct tr_symbol *syms;
	uint64_t lost = 0;
	uint32_t n;
	long ti;

	write_two_chunks(path);
	CHECK(model_load(&m, path) == 0);
	CHECK(m.ended);
	CHECK(m.damage == 0);
	CHECK_EQ_U64(m.chunks, 3);
	CHECK(m.compressed_bytes > 0 && m.compressed_bytes < m.file_size);
	CHECK_EQ_U64(m.t.samples.len, 5);
	CHECK_EQ_U64(m.real_threads, 2);
	CHECK_EQ_U64(m.processes, 1);
	ti = model_thread_index(&m, 7);
	CHECK(ti >= 0);
	if (ti >= 0) {
		CHECK_STREQ(model_str(&m, m.threads.v[ti].name), "second");
		CHECK_EQ_U64(m.threads.v[ti].samples, 3);
	}
	CHECK(model_thread_index(&m, 9) == -1);
	CHECK_STREQ(model_meta(&m, "command"), "./second");
	CHECK(model_meta(&m, "nothing") == NULL);
	CHECK(model_counter(&m, "lost", &lost));
	CHECK_EQ_U64(lost, 4);
	CHECK(!model_counter(&m, "nothing", &lost));
	CHECK_EQ_U64(model_sample_period_ns(&m), 2000000);
	syms = model_loc_symbols(&m, 2, &n);
	CHECK_EQ_U64(n, 1);
	CHECK(syms && !strcmp(model_str(&m, syms->func), "work"));
	model_free(&m);
}

static void truncate_to(const char *path, uint64_t size)
{
	CHECK(truncate(path, (off_t)size) == 0);
}

static void test_truncated_file(void)
{
	const char *path = tmp_path("cut.data");
	uint64_t second = write_two_chunks(path);
	struct model m;

	/* Cut inside the second chunk: the first one is kept. */
	truncate_to(path, second + 10);
	CHECK(model_load(&m, path) == 0);
	CHECK(!m.ended);
	CHECK(m.damage == -TR_ERR_TRUNCATED);
	CHECK_EQ_U64(m.chunks, 1);
	CHECK_EQ_U64(m.damage_offset, second);
	CHECK_EQ_U64(m.t.samples.len, 3);
	CHECK_EQ_U64(m.threads.v[0].samples, 3);
	model_free(&m);

	/* Whole chunks but no END: the recorder died between two chunks. */
	truncate_to(path, second);
	CHECK(model_load(&m, path) == 0);
	CHECK(m.damage == -TR_ERR_TRUNCATED);
	CHECK_EQ_U64(m.chunks, 1);
	CHECK_EQ_U64(m.damage_offset, second);
	model_free(&m);
}

static void test_corrupt_chunk(void)
{
	const char *path = tmp_path("flip.data");
	uint64_t second = write_two_chunks(path);
	struct model m;
	unsigned char byte;
	int fd = open(path, O_RDWR);

	/* A flipped byte in the second chunk's frame fails its checksum. */
	CHECK(pread(fd, &byte, 1, (off_t)second + 24) == 1);
	byte ^= 0x40;
	CHECK(pwrite(fd, &byte, 1, (off_t)second + 24) == 1);
	close(fd);
	CHECK(model_load(&m, path) == 0);
	CHECK(m.damage == -TR_ERR_CORRUPT);
	CHECK_EQ_U64(m.chunks, 1);
	CHECK_EQ_U64(m.t.samples.len, 3);
	model_free(&m);
}

/*
 * Thread 7 sampled on one stack, renamed, then on it and another; thread 8
 * queues a span, so its samples keep their rows; thread 9 only sleeps.
 * Two chunks. Returns the offset where the second starts.
 */
static uint64_t write_foldable(const char *path)
{
	struct synth s = {0};
	struct tr_writer *w;
	uint32_t dso, locs[3], a, b, lane;
	uint64_t second;

	CHECK(tr_writer_open(&w, path, TR_FEAT_CPU_SAMPLES | TR_FEAT_SYMBOLS |
				       TR_FEAT_OFFCPU | TR_FEAT_LANES) == 0);
	synth_meta(&s, "frequency", "1000");
	synth_comm(&s, 7, 7, "before");
	dso = synth_dso(&s, "/bin/app");
	locs[0] = synth_loc(&s, dso, 0x10, "main");
	locs[1] = synth_loc(&s, dso, 0x20, "work");
	locs[2] = synth_loc(&s, dso, 0x30, "rest");
	a = synth_stack(&s, locs, 2);
	locs[1] = locs[2];
	b = synth_stack(&s, locs, 2);
	synth_samples(&s, 7, 7, a, 4);
	synth_offcpu(&s, 7, SYNTH_T0 + 100, SYNTH_T0 + 300);
	synth_samples(&s, 7, 8, a, 3);
	synth_offcpu(&s, 9, SYNTH_T0 + 50, SYNTH_T0 + 60);
	CHECK(synth_put_chunk(&s, w) == 0);
	second = tr_writer_bytes(w);

	synth_task(&s, TR_TASK_COMM, 7, 7, synth_str(&s, "after"), s.ts);
	synth_samples(&s, 7, 7, a, 2);
	synth_samples(&s, 7, 7, b, 3);
	synth_samples(&s, 7, 8, a, 2);
	synth_offcpu(&s, 7, s.ts, s.ts + 1000);
	lane = synth_lane(&s, 7, "stream 1");
	synth_span_from(&s, lane, "kernel", s.ts, 100, 8, s.ts - SYNTH_PERIOD);
	CHECK(synth_put_chunk(&s, w) == 0);
	CHECK(synth_put_end(w) == 0);
	CHECK(tr_writer_close(w) == 0);
	synth_free(&s);
	return second;
}

/* What the counting views read of each thread and name is the same in both. */
static void check_same_threads(const struct model *rows, const struct model *folded)
{
	CHECK_EQ_U64(folded->threads.len, rows->threads.len);
	CHECK_EQ_U64(folded->names.len, rows->names.len);
	for (size_t i = 0; i < rows->threads.len && i < folded->threads.len; i++) {
		const struct model_thread *r = &rows->threads.v[i], *f = &folded->threads.v[i];

		CHECK_EQ_U64(f->tid, r->tid);
		CHECK_EQ_U64(f->pid, r->pid);
		CHECK_EQ_U64(f->samples, r->samples);
		CHECK_EQ_U64(f->first_ts, r->first_ts);
		CHECK_EQ_U64(f->last_ts, r->last_ts);
		CHECK_EQ_U64(f->offcpu_ns, r->offcpu_ns);
	}
	for (size_t i = 0; i < rows->names.len && i < folded->names.len; i++)
		CHECK_EQ_U64(folded->names.v[i].samples, rows->names.v[i].samples);
	CHECK_EQ_U64(folded->first_ts, rows->first_ts);
	CHECK_EQ_U64(folded->last_ts, rows->last_ts);
}

static uint64_t report_total(struct model *m)
{
	struct report_opts o = { .children = true };
	struct funcs f;
	struct report r;
	uint64_t total;

	report_parse_keys(&o, "comm,dso,symbol");
	funcs_init(&f, m, 0);
	report_build(&r, &f, &o);
	total = r.total;
	report_free(&r);
	funcs_free(&f);
	return total;
}

static void test_load_folded(void)
{
	const char *path = tmp_path("folded.data");
	uint64_t second = write_foldable(path), weights = 0;
	struct model rows, folded;
	struct origin_links links;
	unsigned char byte;
	int fd;

	CHECK(model_load(&rows, path) == 0);
	CHECK(model_load_folded(&folded, path, 0) == 0);
	CHECK_EQ_U64(rows.t.samples.len, 14);
	/* 7: a before and after its rename, and b; 8's five rows. */
	CHECK_EQ_U64(folded.t.samples.len, 8);
	CHECK_EQ_U64(folded.sample_weights.len, folded.t.samples.len);
	for (size_t i = 0; i < folded.t.samples.len; i++)
		weights += model_sample_weight(&folded, i);
	CHECK_EQ_U64(weights, 14);
	CHECK_EQ_U64(folded.t.offcpu.len, 0);
	CHECK_EQ_U64(folded.t.spans.len, 1);
	check_same_threads(&rows, &folded);
	CHECK_EQ_U64(report_total(&folded), 14);
	origins_link(&links, &folded, origins_default_window(&folded));
	CHECK_EQ_U64(links.counts[ORIGIN_LINKED], 1);
	origins_free(&links);
	model_free(&rows);
	model_free(&folded);

	/* Cut between the chunks: the first one's samples, folded. */
	CHECK(truncate(path, (off_t)second) == 0);
	CHECK(model_load(&rows, path) == 0);
	CHECK(model_load_folded(&folded, path, 0) == 0);
	CHECK(folded.damage == -TR_ERR_TRUNCATED);
	CHECK_EQ_U64(folded.chunks, 1);
	CHECK_EQ_U64(folded.t.samples.len, 2);
	check_same_threads(&rows, &folded);
	model_free(&rows);
	model_free(&folded);

	/* A corrupt chunk: the rows, as model_load reads them. */
	second = write_foldable(path);
	fd = open(path, O_RDWR);
	CHECK(pread(fd, &byte, 1, (off_t)second + 24) == 1);
	byte ^= 0x40;
	CHECK(pwrite(fd, &byte, 1, (off_t)second + 24) == 1);
	close(fd);
	CHECK(model_load_folded(&folded, path, 0) == 0);
	CHECK(folded.damage == -TR_ERR_CORRUPT);
	CHECK_EQ_U64(folded.sample_weights.len, 0);
	CHECK_EQ_U64(folded.t.samples.len, 7);
	model_free(&folded);
}

/*
 * A read limit the second chunk's rows would pass stops the reading there,
 * as damage that names the table; the default one is the floor's for a
 * file this small, and says what was decoded.
 */
static void test_read_limit(void)
{
	const char *path = tmp_path("limit.data");
	uint64_t second = write_two_chunks(path);
	struct model m;
	uint64_t whole;
	char why[160], expected[160];

	CHECK(model_load(&m, path) == 0);
	CHECK(m.damage == 0);
	CHECK_EQ_U64(m.budget.limit, TR_BUDGET_FLOOR);
	CHECK(m.budget.used > m.payload_bytes);
	CHECK_STREQ(model_damage_text(&m, why, sizeof(why)), tr_strerror(0));
	whole = m.budget.used;
	model_free(&m);

	/*
	 * All but the second chunk's last table, its counters, fit: the tables
	 * before them are kept, as those before a damaged one.
	 */
	CHECK(model_load_within(&m, path, whole - 1) == 0);
	CHECK(m.damage == -TR_ERR_BUDGET);
	CHECK_EQ_U64(m.chunks, 1);
	CHECK_EQ_U64(m.damage_offset, second);
	CHECK_EQ_U64(m.t.samples.len, 5);
	CHECK_EQ_U64(m.t.counters.len, 1);
	CHECK_STREQ(m.budget.table, "counters");
	snprintf(expected, sizeof(expected),
		 "table 'counters' decodes to more than the read limit (%" PRIu64 " bytes)",
		 whole - 1);
	CHECK_STREQ(model_damage_text(&m, why, sizeof(why)), expected);
	model_free(&m);

	/* Nothing fits: not even the first chunk's payload. */
	CHECK(model_load_within(&m, path, 1) == 0);
	CHECK(m.damage == -TR_ERR_BUDGET);
	CHECK_EQ_U64(m.chunks, 0);
	CHECK(m.budget.table == NULL);
	CHECK_STREQ(model_damage_text(&m, why, sizeof(why)),
		    "a chunk decompresses to more than the read limit (1 bytes)");
	model_free(&m);
}

static void write_bytes(const char *path, const char *bytes, size_t len)
{
	FILE *f = fopen(path, "w");

	CHECK(f != NULL);
	if (!f)
		return;
	CHECK(fwrite(bytes, 1, len, f) == len);
	fclose(f);
}

static void test_unreadable_files(void)
{
	struct model m;

	CHECK(model_load(&m, tmp_path("missing.data")) == -ENOENT);
	write_bytes(tmp_path("empty.data"), "", 0);
	CHECK(model_load(&m, tmp_path("empty.data")) == -ENODATA);
	write_bytes(tmp_path("text.data"), "hello, this is not a trace\n", 27);
	CHECK(model_load(&m, tmp_path("text.data")) == -TR_ERR_NOT_TRACE);
	CHECK(model_load(&m, tmpdir) == -EISDIR);
}

static void test_lanes_are_synthetic_threads(void)
{
	struct synth s = {0};
	struct model m;
	uint32_t lane;
	long ti;

	synth_samples(&s, 1, 1, 0, 1);
	synth_lane(&s, 1, "queue A");
	lane = synth_lane(&s, 1, "GPU0 stream 14");
	synth_span(&s, lane, "k", 100, 40);
	synth_span(&s, lane, "k", 200, 2);
	synth_model(&s, &m, TR_FEAT_LANES);
	CHECK_EQ_U64(m.real_threads, 1);
	CHECK_EQ_U64(m.threads.len, 3);
	ti = model_thread_index(&m, TR_SYNTHETIC_TID_BASE + 1);
	CHECK(ti == 2);
	if (ti == 2) {
		CHECK_STREQ(model_str(&m, m.threads.v[ti].name), "GPU0 stream 14");
		CHECK_EQ_U64(m.threads.v[ti].lane, 2);
		CHECK_EQ_U64(m.threads.v[ti].spans, 2);
		CHECK_EQ_U64(m.threads.v[ti].span_ns, 42);
		CHECK_EQ_U64(m.threads.v[ti].first_ts, 100);
		CHECK_EQ_U64(m.threads.v[ti].last_ts, 202);
		CHECK_EQ_U64(model_thread_oncpu_ns(&m, &m.threads.v[ti]), 0);
	}
	model_free(&m);
}

/* Each lane's class from its kind, each CUDA stream span's from its name. */
static void test_lane_classes(void)
{
	static const struct {
		const char *kind;
		enum model_lane_class class;
	} lanes[] = {
		{ CUDA_LANE_KIND, MODEL_LANE_CUDA_STREAM },
		{ CUDA_API_LANE_KIND, MODEL_LANE_CUDA_API },
		{ CUDA_WAIT_LANE_KIND, MODEL_LANE_CUDA_WAIT },
		{ NVTX_LANE_KIND, MODEL_LANE_NVTX },
		{ CUDA_PC_LANE_KIND, MODEL_LANE_CUDA_PC },
		{ KREGIONS_LANE_KIND, MODEL_LANE_KREGIONS },
		{ KREGIONS_STATS_LANE_KIND, MODEL_LANE_KREGION_STATS },
		{ "queue", MODEL_LANE_TARGET },
		{ "", MODEL_LANE_TARGET },
	};
	const size_t n = sizeof(lanes) / sizeof(lanes[0]);
	struct synth s = {0};
	struct model m;

	for (size_t i = 0; i < n; i++)
		synth_lane_kind(&s, 1, lanes[i].kind, "lane");
	synth_span(&s, 1, "vecAdd", 0, 1);
	synth_span(&s, 1, "[CUDA memcpy HtoD]", 1, 1);
	synth_span(&s, 1, CUDA_MEMSET_SPAN, 2, 1);
	synth_span(&s, 4, "[CUDA memcpy HtoD]", 3, 1);
	synth_span(&s, 1, "k", 4, 1);
	synth_model(&s, &m, TR_FEAT_LANES);
	m.t.spans.v[4].name = (uint32_t)m.t.strings.len + 1;	/* names no string */

	for (uint32_t lane = 1; lane <= n; lane++) {
		CHECK(model_lane_class(&m, lane) == lanes[lane - 1].class);
		CHECK_EQ_U64(model_lane_thread(&m, lane)->lane, lane);
	}
	CHECK(model_lane_class(&m, 0) == MODEL_LANE_NONE);
	CHECK(model_lane_class(&m, (uint32_t)n + 1) == MODEL_LANE_NONE);
	CHECK(model_span_class(&m, &m.t.spans.v[0]) == MODEL_SPAN_KERNEL);
	CHECK(model_span_class(&m, &m.t.spans.v[1]) == MODEL_SPAN_COPY);
	CHECK(model_span_class(&m, &m.t.spans.v[2]) == MODEL_SPAN_MEMSET);
	CHECK(model_span_class(&m, &m.t.spans.v[3]) == MODEL_SPAN_OTHER);
	CHECK(model_span_class(&m, &m.t.spans.v[4]) == MODEL_SPAN_KERNEL);
	CHECK(!model_span_is_copy(&m, &m.t.spans.v[0]));
	CHECK(model_span_is_copy(&m, &m.t.spans.v[1]));
	CHECK(model_span_is_copy(&m, &m.t.spans.v[2]));
	CHECK(!model_span_is_copy(&m, &m.t.spans.v[3]));
	model_free(&m);
}

/*
 * Span attributes by span id and key, across chunks; strings by text. Rows
 * naming no span or a span out of range are ignored.
 */
static void test_span_attrs(void)
{
	const char *path = tmp_path("attrs");
	struct synth s = {0};
	struct tr_writer *w;
	struct model m;
	uint32_t lane, grid, regs;
	uint64_t v = 0;

	CHECK(tr_writer_open(&w, path, TR_FEAT_LANES) == 0);
	lane = synth_lane(&s, 1, "GPU0 stream 7");
	synth_span(&s, lane, "gemm", 100, 40);
	synth_span_attr(&s, "grid.x", 128);
	synth_span_attr(&s, "regs", 64);
	synth_span(&s, lane, "copy", 200, 10);	/* none */
	CHECK(synth_put_chunk(&s, w) == 0);
	synth_span(&s, lane, "gemm", 300, 40);
	synth_span_attr(&s, "grid.x", UINT64_MAX);
	VEC_PUSH(&s.t.span_attrs)->span = 0;
	*VEC_PUSH(&s.t.span_attrs) = (struct tr_span_attr){ 4000, 1, 5 };
	CHECK(synth_put_chunk(&s, w) == 0);
	CHECK(synth_put_end(w) == 0);
	CHECK(tr_writer_close(w) == 0);
	synth_free(&s);

	CHECK(model_load(&m, path) == 0);
	grid = model_string_id(&m, "grid.x");
	regs = model_string_id(&m, "regs");
	CHECK(grid && regs && grid != regs);
	CHECK_STREQ(model_str(&m, grid), "grid.x");
	CHECK_EQ_U64(model_string_id(&m, "no such string"), 0);
	CHECK(model_span_attr(&m, 1, grid, &v) && v == 128);
	CHECK(model_span_attr(&m, 1, regs, &v) && v == 64);
	CHECK(!model_span_attr(&m, 2, grid, &v));
	CHECK(model_span_attr(&m, 3, grid, &v) && v == UINT64_MAX);
	CHECK(!model_span_attr(&m, 3, regs, &v));
	CHECK(!model_span_attr(&m, 0, grid, &v));
	CHECK(!model_span_attr(&m, 4, grid, &v));
	CHECK(!model_span_attr(&m, 1, 0, &v));

	/* Cut to [120, 310): the first gemm cut at its start, the second at its end, ids anew. */
	model_clip(&m, 120, 310);
	CHECK_EQ_U64(m.t.spans.len, 3);
	CHECK_EQ_U64(m.t.spans.v[0].start, 120);
	CHECK_EQ_U64(m.t.spans.v[0].dur, 20);
	CHECK_EQ_U64(m.t.spans.v[2].start, 300);
	CHECK_EQ_U64(m.t.spans.v[2].dur, 10);
	CHECK(model_span_attr(&m, 1, regs, &v) && v == 64);
	CHECK(model_span_attr(&m, 3, grid, &v) && v == UINT64_MAX);
	model_clip(&m, 205, 300);
	CHECK_EQ_U64(m.t.spans.len, 1);
	CHECK(!model_span_attr(&m, 1, grid, &v));
	CHECK_EQ_U64(model_lane_thread(&m, lane)->spans, 1);
	CHECK_EQ_U64(model_lane_thread(&m, lane)->span_ns, 5);
	model_free(&m);
	unlink(path);
}

/* Corrupt ids in a file must not send the readers out of bounds. */
static void test_bad_ids(void)
{
	struct synth s = {0};
	struct model m;
	struct funcs f;
	struct report r;
	struct calltree t;
	struct report_opts o = { .children = true };
	struct tr_node *node;
	struct tr_symbol *sym;

	synth_loc(&s, 99, 0x1, "f");			/* dso out of range */
	node = VEC_PUSH(&s.t.nodes);
	node->parent = 5;				/* a parent after its child */
	node->loc = 1;
	node = VEC_PUSH(&s.t.nodes);
	node->loc = 77;					/* loc out of range */
	sym = VEC_PUSH(&s.t.symbols);
	sym->loc = 1;
	sym->func = 4000;				/* string out of range */
	sym = VEC_PUSH(&s.t.symbols);
	sym->loc = 1000;				/* loc out of range */
	synth_samples(&s, 1, 1, 1, 1);
	synth_samples(&s, 1, 1, 2, 1);
	synth_samples(&s, 1, 1, 300, 1);		/* node out of range */
	synth_model(&s, &m, 0);
	report_parse_keys(&o, "comm,dso,symbol");
	funcs_init(&f, &m, FUNCS_INLINE);
	report_build(&r, &f, &o);
	CHECK_EQ_U64(r.total, 3);
	calltree_build(&t, &f, NULL, NULL);
	CHECK_EQ_U64(t.nodes.v[0].total, 3);
	calltree_free(&t);
	report_free(&r);
	funcs_free(&f);
	model_free(&m);
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/*
 * 2M samples over 4 threads and 20k distinct stacks 8..40 frames deep
 * from 2,000 functions, and 100k spans queued from those threads: loading
 * and a full report with its lane sections, timed (not asserted; the goal
 * is well under 0.7 s).
 */
static void test_load_and_report_speed(void)
{
	enum { SAMPLES = 2000000, STACKS = 20000, FUNCS = 2000, PER_CHUNK = 100000,
	       SPANS_PER_CHUNK = 5000 };
	const char *path = tmp_path("big.data");
	struct synth s = {0};
	struct tr_writer *w;
	uint32_t *leaf = xmalloc(STACKS * sizeof(*leaf));
	uint32_t dso, locs[FUNCS], stack[40];
	uint64_t rng = 42;
	struct timespec t0;
	struct model m;
	struct funcs f;
	struct report r;
	struct report_opts o = { .children = true };
	struct origin_links links;
	struct lane_report lanes;
	FILE *null;
	double load_s, report_s;
	uint32_t lane;

	CHECK(tr_writer_open(&w, path, TR_FEAT_CPU_SAMPLES | TR_FEAT_SYMBOLS) == 0);
	dso = synth_dso(&s, "/usr/bin/big");
	for (int i = 0; i < FUNCS; i++) {
		char name[32];

		snprintf(name, sizeof(name), "function_%d", i);
		locs[i] = synth_loc(&s, dso, 0x1000 + 16 * (uint64_t)i, name);
	}
	for (int i = 0; i < STACKS; i++) {
		size_t depth = 8 + (size_t)(i % 33);

		stack[0] = locs[0];
		for (size_t d = 1; d < depth; d++) {
			rng = rng * 6364136223846793005ull + 1442695040888963407ull;
			/* Shared prefixes, like real stacks: shallow frames vary little. */
			stack[d] = locs[(rng >> 33) % (d < 4 ? 8 : FUNCS)];
		}
		leaf[i] = synth_stack(&s, stack, depth);
	}
	lane = synth_lane(&s, 1000, "stream 1");
	for (int i = 0; i < SAMPLES; i++) {
		uint32_t tid = 1000 + (uint32_t)(i / 1000 % 4);

		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		synth_samples(&s, 1000, tid, leaf[(rng >> 33) % STACKS], 1);
		if ((i + 1) % PER_CHUNK == 0) {
			/* Spans queued from the thread sampled 500 us ago. */
			for (int k = 0; k < SPANS_PER_CHUNK; k++) {
				char name[16];

				snprintf(name, sizeof(name), "kernel_%d", k % 500);
				synth_span_from(&s, lane, name, s.ts, 1000, tid, s.ts - 500000);
			}
			CHECK(synth_put_chunk(&s, w) == 0);
		}
	}
	CHECK(synth_put_end(w) == 0);
	CHECK(tr_writer_close(w) == 0);
	synth_free(&s);
	free(leaf);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK(model_load(&m, path) == 0);
	load_s = seconds_since(&t0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	report_parse_keys(&o, "comm,dso,symbol");
	funcs_init(&f, &m, 0);
	report_build(&r, &f, &o);
	null = fopen("/dev/null", "w");
	report_print(null, &r, &f, &o, path);
	CHECK_EQ_U64(r.total, SAMPLES);
	report_free(&r);
	origins_link(&links, &m, origins_default_window(&m));
	report_build_lane_work(&r, &f, &o, &links);
	report_print_lane_work(null, &r, &f, &o);
	lane_report_build(&lanes, &f, NULL);
	lane_report_print(null, &lanes, &m, NULL, 0);
	fclose(null);
	report_s = seconds_since(&t0);
	CHECK_EQ_U64(links.counts[ORIGIN_LINKED], SAMPLES / PER_CHUNK * SPANS_PER_CHUNK);
	CHECK_EQ_U64(lanes.rows.len, 500);
	printf("  2M samples, 100k spans: load %.3f s, report %.3f s, total %.3f s\n",
	       load_s, report_s, load_s + report_s);
	lane_report_free(&lanes);
	origins_free(&links);
	report_free(&r);
	funcs_free(&f);
	model_free(&m);
	unlink(path);
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		printf("FAIL: cannot create a temporary directory\n");
		return 1;
	}
	RUN(test_load_whole_file);
	RUN(test_truncated_file);
	RUN(test_corrupt_chunk);
	RUN(test_load_folded);
	RUN(test_read_limit);
	RUN(test_unreadable_files);
	RUN(test_lanes_are_synthetic_threads);
	RUN(test_lane_classes);
	RUN(test_span_attrs);
	RUN(test_bad_ids);
	RUN(test_load_and_report_speed);
	unlink(tmp_path("whole.data"));
	unlink(tmp_path("cut.data"));
	unlink(tmp_path("flip.data"));
	unlink(tmp_path("empty.data"));
	unlink(tmp_path("text.data"));
	rmdir(tmpdir);
	return test_summary();
}
