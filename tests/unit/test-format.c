/* SPDX-License-Identifier: MIT */
/*
 * The trace file format: varints, table encodings, the chunked container,
 * and what readers do with damaged, truncated and foreign files.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#include "format/buf.h"
#include "format/crc32c.h"
#include "format/file.h"
#include "format/golomb.h"
#include "format/tables.h"
#include "util/hashmap.h"
#include "util/select.h"
#include "test.h"

#define KERNEL_ATTRS 20	/* of a kernel on a CUDA lane */

static char tmpdir[64];

static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;

static uint64_t rnd(void)
{
	/* xorshift64*: deterministic, so a failure reproduces. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static uint32_t rnd_below(uint32_t n)
{
	return (uint32_t)(rnd() % n);
}

static char *tmp_path(const char *name)
{
	static char path[128];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	return path;
}

static uint8_t *read_file(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *data;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) < 0)
		abort();
	data = xmalloc((size_t)st.st_size + 1);
	if (read(fd, data, (size_t)st.st_size) != st.st_size)
		abort();
	close(fd);
	*len = (size_t)st.st_size;
	return data;
}

/* A small recording's worth of every table, with values shaped like real ones. */
static void fill_tables(struct tr_tables *t, uint64_t base_ts)
{
	static const char *const names[] = {
		"/usr/bin/python3.11", "main", "worker", "[kernel.kallsyms]", "cuda",
		"GPU0 stream 7", "gemm_kernel<float>", "samples", "lost", "",
		"unwind.failed.no-map", "/usr/lib/x86_64-linux-gnu/libc.so.6",
	};
	struct tr_meta *m;

	m = VEC_PUSH(&t->meta);
	m->key = xstrdup("command");
	m->value = xstrdup("python3 train.py --epochs 3");
	m = VEC_PUSH(&t->meta);
	m->key = xstrdup("frequency");
	m->value = xstrdup("999");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		*VEC_PUSH(&t->strings) = xstrdup(names[i]);
	for (uint32_t i = 0; i < 6; i++)
		*VEC_PUSH(&t->tasks) = (struct tr_task){ base_ts + i * 1000003, 4242,
							 4242 + i, TR_TASK_NEW + i % 4, i };
	for (uint32_t i = 0; i < 4; i++) {
		struct tr_dso *d = VEC_PUSH(&t->dsos);

		d->path = i + 1;
		d->pid = i == 3 ? 4242 : 0;
		d->flags = i == 3 ? TR_DSO_ANON : i == 2 ? TR_DSO_KERNEL : 0;
		d->build_id_len = i == 3 ? 0 : TR_BUILD_ID_MAX - i;
		for (uint32_t b = 0; b < d->build_id_len; b++)
			d->build_id[b] = (uint8_t)rnd();
	}
	for (uint32_t i = 0; i < 50; i++)
		*VEC_PUSH(&t->locs) = (struct tr_loc){ 1 + rnd_below(4),
						       i == 7 ? UINT64_MAX :
						       0x7f3a12340000ULL + rnd_below(1 << 20) };
	for (uint32_t i = 0; i < 80; i++)
		*VEC_PUSH(&t->nodes) = (struct tr_node){ i ? rnd_below(i) : 0, 1 + rnd_below(50) };
	for (uint32_t i = 0; i < 300; i++)
		*VEC_PUSH(&t->samples) = (struct tr_sample){
			base_ts + i * 1001001 + rnd_below(5000), 4242, 4242 + rnd_below(6),
			rnd_below(81), rnd_below(64), rnd_below(2) };
	for (uint32_t i = 0; i < 20; i++) {
		uint64_t start = base_ts + i * 7777777;

		*VEC_PUSH(&t->offcpu) = (struct tr_offcpu){ 4242 + rnd_below(6), start,
							   start + rnd_below(1 << 24),
							   rnd_below(TR_OFFCPU_REASONS),
							   rnd_below(81) };
	}
	*VEC_PUSH(&t->lanes) = (struct tr_lane){ 4242, 5, 6 };
	*VEC_PUSH(&t->lanes) = (struct tr_lane){ 4242, 5, 2 };
	/* Durations past the next span's start: lanes whose spans overlap. */
	for (uint32_t i = 0; i < 30; i++)
		*VEC_PUSH(&t->spans) = (struct tr_span){
			1 + i % 2, 7 + i % 3, base_ts + i * 500000,
			i == 29 ? UINT64_MAX : 1000 + rnd_below(1500000),
			i % 5 ? 4243 : 0, i % 5 ? base_ts + i * 500000 - rnd_below(40000) : 0 };
	for (uint32_t i = 0; i < 90; i++)
		*VEC_PUSH(&t->span_attrs) = (struct tr_span_attr){
			1 + i / 3, 5 + i % 3,
			i % 3 == 0 ? 7000 + i : i % 3 == 1 ? rnd() : (i / 3) % 2 ? UINT64_MAX : 0 };
	*VEC_PUSH(&t->counters) = (struct tr_counter){ 8, 300 };
	*VEC_PUSH(&t->counters) = (struct tr_counter){ 9, UINT64_MAX };
	for (uint32_t i = 0; i < 40; i++)
		*VEC_PUSH(&t->symbols) = (struct tr_symbol){ 1 + i, 2 + i % 3, i % 4 ? 12 : 0,
							     i % 4 ? 10 + rnd_below(3000) : 0,
							     i % 7 == 0 ? TR_SYM_INLINED : 0 };
	for (uint32_t i = 0; i < 3; i++) {
		struct tr_cubin *c = VEC_PUSH(&t->cubins);

		c->crc = i == 2 ? UINT64_MAX : rnd();
		c->image.len = i == 1 ? 0 : 100 + rnd_below(5000);
		c->image.data = xmalloc(c->image.len + 1);
		for (uint64_t b = 0; b < c->image.len; b++)
			c->image.data[b] = (uint8_t)rnd();
	}
	for (uint32_t i = 0; i < 60; i++)
		*VEC_PUSH(&t->pc_samples) = (struct tr_pc_sample){
			4242, 100 + i / 10, rnd_below(4), 6 + i % 2,
			i == 59 ? UINT64_MAX : 16 * rnd_below(4096), 8 + rnd_below(3),
			1 + rnd_below(1000) };
	/* Functions' code: one cut (fewer bytes than its size), one at the top of the address space. */
	for (uint32_t i = 0; i < 4; i++) {
		struct tr_code *c = VEC_PUSH(&t->codes);

		c->dso = 1 + i % 2;
		c->machine = i == 2 ? 183 : 62;
		c->size = i == 1 ? UINT64_MAX : 10 + rnd_below(3000);
		c->addr = i == 3 ? UINT64_MAX - 16 : 0x1000 + 0x400 * i;
		c->code.len = i == 1 ? 64 : c->size < 16 ? c->size : 16;
		c->code.data = xmalloc(c->code.len + 1);
		for (uint64_t b = 0; b < c->code.len; b++)
			c->code.data[b] = (uint8_t)rnd();
	}
}

/* Compares every row of every table; reports the first table that differs. */
static bool tables_equal(const struct tr_tables *a, const struct tr_tables *b)
{
#define SAME_LEN(f)                                                            \
	do {                                                                   \
		if (a->f.len != b->f.len) {                                    \
			printf("  table " #f ": %zu rows, expected %zu\n",    \
			       b->f.len, a->f.len);                            \
			return false;                                          \
		}                                                              \
	} while (0)
#define SAME_ROWS(f)                                                           \
	do {                                                                   \
		SAME_LEN(f);                                                   \
		for (size_t i = 0; i < a->f.len; i++)                          \
			if (memcmp(&a->f.v[i], &b->f.v[i], sizeof(a->f.v[i]))) { \
				printf("  table " #f ": row %zu differs\n", i); \
				return false;                                  \
			}                                                      \
	} while (0)

	SAME_LEN(meta);
	for (size_t i = 0; i < a->meta.len; i++)
		if (strcmp(a->meta.v[i].key, b->meta.v[i].key) ||
		    strcmp(a->meta.v[i].value, b->meta.v[i].value))
			return false;
	SAME_LEN(strings);
	for (size_t i = 0; i < a->strings.len; i++)
		if (strcmp(a->strings.v[i], b->strings.v[i]))
			return false;
	SAME_ROWS(tasks);
	SAME_ROWS(dsos);
	SAME_ROWS(locs);
	SAME_ROWS(nodes);
	SAME_ROWS(samples);
	SAME_ROWS(offcpu);
	SAME_ROWS(lanes);
	SAME_ROWS(spans);
	SAME_ROWS(counters);
	SAME_ROWS(symbols);
	SAME_ROWS(span_attrs);
	SAME_LEN(cubins);
	for (size_t i = 0; i < a->cubins.len; i++)
		if (a->cubins.v[i].crc != b->cubins.v[i].crc ||
		    a->cubins.v[i].image.len != b->cubins.v[i].image.len ||
		    memcmp(a->cubins.v[i].image.data, b->cubins.v[i].image.data,
			   a->cubins.v[i].image.len))
			return false;
	SAME_ROWS(pc_samples);
	SAME_LEN(codes);
	for (size_t i = 0; i < a->codes.len; i++)
		if (a->codes.v[i].dso != b->codes.v[i].dso || a->codes.v[i].size != b->codes.v[i].size ||
		    a->codes.v[i].machine != b->codes.v[i].machine ||
		    a->codes.v[i].addr != b->codes.v[i].addr ||
		    a->codes.v[i].code.len != b->codes.v[i].code.len ||
		    memcmp(a->codes.v[i].code.data, b->codes.v[i].code.data, a->codes.v[i].code.len))
			return false;
	return true;
#undef SAME_ROWS
#undef SAME_LEN
}

static void test_varint_edges(void)
{
	static const struct {
		uint64_t v;
		size_t len;
	} cases[] = {
		{ 0, 1 }, { 1, 1 }, { 127, 1 }, { 128, 2 }, { 16383, 2 }, { 16384, 3 },
		{ UINT32_MAX, 5 }, { 1ULL << 63, 10 }, { UINT64_MAX, 10 },
	};
	static const int64_t signed_cases[] = {
		0, -1, 1, -2, 63, -64, 64, INT32_MIN, INT32_MAX, INT64_MIN, INT64_MAX,
	};
	struct gbuf b = {0};
	struct gcursor c;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		gbuf_reset(&b);
		gbuf_put_uvarint(&b, cases[i].v);
		CHECK_EQ_U64(b.len, cases[i].len);
		gcursor_init(&c, b.data, b.len);
		CHECK_EQ_U64(gcursor_uvarint(&c), cases[i].v);
		CHECK(!c.err && !gcursor_left(&c));
	}
	/* Zigzag keeps small magnitudes small, whatever the sign. */
	gbuf_reset(&b);
	gbuf_put_svarint(&b, -1);
	gbuf_put_svarint(&b, 1);
	gbuf_put_svarint(&b, -64);
	CHECK_EQ_U64(b.len, 3);
	CHECK(b.data[0] == 1 && b.data[1] == 2 && b.data[2] == 127);
	for (size_t i = 0; i < sizeof(signed_cases) / sizeof(signed_cases[0]); i++) {
		gbuf_reset(&b);
		gbuf_put_svarint(&b, signed_cases[i]);
		gcursor_init(&c, b.data, b.len);
		CHECK(gcursor_svarint(&c) == signed_cases[i]);
		CHECK(!c.err && !gcursor_left(&c));
	}
	gbuf_free(&b);
}

static void test_varint_malformed(void)
{
	static const uint8_t unterminated[] = { 0x80, 0x80 };
	static const uint8_t too_long[] = { 0xff, 0xff, 0xff, 0xff, 0xff,
					    0xff, 0xff, 0xff, 0xff, 0x02 };
	static const uint8_t eleven[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
					  0x80, 0x80, 0x80, 0x81, 0x00 };
	static const uint8_t nul_in_str[] = { 3, 'a', 0, 'b' };
	static const uint8_t long_str[] = { 9, 'a', 'b' };
	struct gcursor c;

	gcursor_init(&c, unterminated, sizeof(unterminated));
	CHECK_EQ_U64(gcursor_uvarint(&c), 0);
	CHECK(c.err);
	gcursor_init(&c, too_long, sizeof(too_long));
	gcursor_uvarint(&c);
	CHECK(c.err);
	gcursor_init(&c, eleven, sizeof(eleven));
	gcursor_uvarint(&c);
	CHECK(c.err);
	/* Once failed, every read returns 0. */
	CHECK_EQ_U64(gcursor_u8(&c), 0);
	CHECK_EQ_U64(gcursor_left(&c), 0);
	gcursor_init(&c, nul_in_str, sizeof(nul_in_str));
	CHECK(!gcursor_str(&c) && c.err);
	gcursor_init(&c, long_str, sizeof(long_str));
	CHECK(!gcursor_str(&c) && c.err);
	gcursor_init(&c, NULL, 0);
	CHECK_EQ_U64(gcursor_le32(&c), 0);
	CHECK(c.err);
}

static void test_fixed_width(void)
{
	struct gbuf b = {0};
	struct gcursor c;
	char *s;

	gbuf_put_le32(&b, 0xdeadbeef);
	gbuf_put_le64(&b, 0x0123456789abcdefULL);
	gbuf_put_str(&b, "héllo");
	gbuf_put_str(&b, NULL);
	CHECK(b.data[0] == 0xef && b.data[3] == 0xde);
	gcursor_init(&c, b.data, b.len);
	CHECK_EQ_U64(gcursor_le32(&c), 0xdeadbeef);
	CHECK_EQ_U64(gcursor_le64(&c), 0x0123456789abcdefULL);
	s = gcursor_str(&c);
	CHECK_STREQ(s, "héllo");
	free(s);
	s = gcursor_str(&c);
	CHECK_STREQ(s, "");
	free(s);
	CHECK(!c.err && !gcursor_left(&c));
	gbuf_free(&b);
}

static void test_crc32c(void)
{
	CHECK_EQ_U64(crc32c("123456789", 9), 0xE3069283);
	CHECK_EQ_U64(crc32c("", 0), 0);
}

static void test_tables_round_trip(void)
{
	struct tr_tables in = {0}, out = {0};
	struct gbuf b = {0};

	fill_tables(&in, 123456789012345ULL);
	tr_tables_encode(&in, &b);
	CHECK_EQ_U64(tr_tables_decode(&out, b.data, b.len), 0);
	CHECK(tables_equal(&in, &out));
	CHECK_EQ_U64(tr_tables_rows(&out), tr_tables_rows(&in));

	/* Decoding appends: a second payload doubles every table. */
	CHECK_EQ_U64(tr_tables_decode(&out, b.data, b.len), 0);
	CHECK_EQ_U64(tr_tables_rows(&out), 2 * tr_tables_rows(&in));
	CHECK_STREQ(out.strings.v[in.strings.len], in.strings.v[0]);
	CHECK(!memcmp(&out.samples.v[in.samples.len + 5], &in.samples.v[5],
		      sizeof(in.samples.v[5])));

	tr_tables_clear(&out);
	CHECK_EQ_U64(tr_tables_rows(&out), 0);
	/* Nothing to write encodes to nothing. */
	gbuf_reset(&b);
	tr_tables_encode(&out, &b);
	CHECK_EQ_U64(b.len, 0);
	CHECK_EQ_U64(tr_tables_decode(&out, b.data, b.len), 0);

	tr_tables_free(&in);
	tr_tables_free(&out);
	gbuf_free(&b);
}

/* A damaged payload leaves whole tables or none: never half a table. */
static void test_tables_decode_damaged(void)
{
	struct tr_tables in = {0};
	struct gbuf b = {0};
	size_t corrupt = 0;

	fill_tables(&in, 1000);
	tr_tables_encode(&in, &b);
	for (size_t cut = 0; cut < b.len; cut++) {
		struct tr_tables out = {0};
		int err = tr_tables_decode(&out, b.data, cut);

		corrupt += err == -TR_ERR_CORRUPT;
		CHECK(err == 0 || err == -TR_ERR_CORRUPT);
		CHECK(!out.samples.len || out.samples.len == in.samples.len);
		CHECK(!out.strings.len || out.strings.len == in.strings.len);
		CHECK(!out.symbols.len || out.symbols.len == in.symbols.len);
		tr_tables_free(&out);
	}
	/* Every cut but the ones between table records (16 tables) is caught. */
	CHECK(corrupt >= b.len - 16);
	tr_tables_free(&in);
	gbuf_free(&b);
}

static void test_tables_decode_rules(void)
{
	/* An unknown table (id 99) is skipped; then a samples table of one row. */
	static const uint8_t unknown_then_sample[] = {
		99, 1, 3, 0xaa, 0xbb, 0xcc,
		7, 1, 6, 2, 4, 6, 4, 10, 1,
	};
	/* A pid of 2^32 does not fit its field. */
	static const uint8_t too_wide[] = { 7, 1, 10, 2, 0x80, 0x80, 0x80, 0x80, 0x20, 6, 8, 10, 1 };
	/* A build-id longer than TR_BUILD_ID_MAX. */
	static const uint8_t long_build_id[] = { 4, 1, 4, 2, 0, 0, 21 };
	/* A row count no body this size can hold. */
	static const uint8_t huge_count[] = { 7, 0xff, 0xff, 0xff, 0xff, 0x0f, 6, 0, 0, 0, 0, 0, 0 };
	/* A column this reader does not know, after the ones it does. */
	static const uint8_t newer_column[] = { 11, 1, 4, 1, 5, 0x80, 0x01 };
	struct tr_tables t = {0};

	CHECK_EQ_U64(tr_tables_decode(&t, unknown_then_sample, sizeof(unknown_then_sample)), 0);
	CHECK_EQ_U64(t.samples.len, 1);
	CHECK_EQ_U64(t.samples.v[0].ts, 1);
	CHECK_EQ_U64(t.samples.v[0].pid, 2);
	CHECK_EQ_U64(t.samples.v[0].tid, 3);
	CHECK_EQ_U64(t.samples.v[0].node, 4);
	CHECK_EQ_U64(t.samples.v[0].cpu, 5);
	CHECK_EQ_U64(t.samples.v[0].flags, 1);
	CHECK(tr_tables_decode(&t, too_wide, sizeof(too_wide)) == -TR_ERR_CORRUPT);
	CHECK(tr_tables_decode(&t, long_build_id, sizeof(long_build_id)) == -TR_ERR_CORRUPT);
	CHECK(tr_tables_decode(&t, huge_count, sizeof(huge_count)) == -TR_ERR_CORRUPT);
	CHECK_EQ_U64(tr_tables_rows(&t), 1);
	CHECK_EQ_U64(tr_tables_decode(&t, newer_column, sizeof(newer_column)), 0);
	CHECK_EQ_U64(t.counters.len, 1);
	CHECK_EQ_U64(t.counters.v[0].value, 5);
	tr_tables_free(&t);
}

/* Offcpu rows of a writer before the reason and node columns read as unknown. */
static void test_offcpu_older_writer(void)
{
	/* Two rows: tids 7, 8 (delta), starts 100, 300 (delta), ends start + 50, + 20. */
	static const uint8_t three_columns[] = { 8, 2, 8, 14, 2, 200, 1, 144, 3, 100, 40 };
	/* The same body cut inside the columns every writer wrote. */
	static const uint8_t cut[] = { 8, 2, 6, 14, 2, 200, 1, 144, 3 };
	/* A reason column started and cut short is damage, not an older writer. */
	static const uint8_t cut_reason[] = { 8, 2, 9, 14, 2, 200, 1, 144, 3, 100, 40, 1 };
	struct tr_tables t = {0};

	CHECK_EQ_U64(tr_tables_decode(&t, three_columns, sizeof(three_columns)), 0);
	CHECK_EQ_U64(t.offcpu.len, 2);
	CHECK_EQ_U64(t.offcpu.v[1].tid, 8);
	CHECK_EQ_U64(t.offcpu.v[1].start, 300);
	CHECK_EQ_U64(t.offcpu.v[1].end, 320);
	CHECK_EQ_U64(t.offcpu.v[0].end, 150);
	CHECK_EQ_U64(t.offcpu.v[0].reason, TR_OFFCPU_UNKNOWN);
	CHECK_EQ_U64(t.offcpu.v[1].node, 0);
	CHECK(tr_tables_decode(&t, cut, sizeof(cut)) == -TR_ERR_CORRUPT);
	CHECK(tr_tables_decode(&t, cut_reason, sizeof(cut_reason)) == -TR_ERR_CORRUPT);
	CHECK_EQ_U64(t.offcpu.len, 2);
	tr_tables_free(&t);
}

/* The body length of table record id in a TABLES payload, or 0 when absent. */
static uint64_t record_len(const struct gbuf *b, uint64_t id)
{
	struct gcursor c;

	gcursor_init(&c, b->data, b->len);
	while (gcursor_left(&c)) {
		uint64_t rid = gcursor_uvarint(&c), len;

		gcursor_uvarint(&c);
		len = gcursor_uvarint(&c);
		if (rid == id)
			return len;
		gcursor_bytes(&c, (size_t)len);
	}
	return 0;
}

/*
 * Samples' timestamps against each thread's period and its switched-out
 * time: a thread's samples with 50 ns of jitter, around off-CPU intervals
 * of up to 16 ms, cost a byte of timestamp each; each chunk decodes alone;
 * off-CPU rows in any order, even ending before they start, still round
 * trip.
 */
enum { ON_CPU_THREADS = 3, ON_CPU_PERIOD = 1001001 };

/*
 * Appends n samples of ON_CPU_THREADS threads taking turns, each a period
 * of its CPU time and up to 50 ns after its last, a quarter of them after
 * an off-CPU interval of up to 16 ms; ts holds each thread's clock.
 */
static void fill_on_cpu(struct tr_tables *t, uint64_t ts[ON_CPU_THREADS], uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t th = i % ON_CPU_THREADS;
		uint64_t on = rnd_below(ON_CPU_PERIOD);

		if (!rnd_below(4)) {
			/* Switched out after some of the period, back a while later. */
			uint64_t out_for = 1 + rnd_below(1 << 24);

			*VEC_PUSH(&t->offcpu) = (struct tr_offcpu){ 7000 + th, ts[th] + on,
								   ts[th] + on + out_for, TR_OFFCPU_BLOCKED, 0 };
			ts[th] += out_for;
		}
		ts[th] += ON_CPU_PERIOD + rnd_below(50);
		*VEC_PUSH(&t->samples) = (struct tr_sample){ ts[th], 7000, 7000 + th,
							     1 + rnd_below(3), th, 0 };
	}
}

static void test_samples_on_cpu(void)
{
	enum { SAMPLES = 1500 };
	struct tr_tables chunk[2], out = {0}, again = {0};
	uint64_t ts[ON_CPU_THREADS];
	struct gbuf b[2];
	size_t n = 0;

	memset(chunk, 0, sizeof(chunk));
	memset(b, 0, sizeof(b));
	for (int i = 0; i < ON_CPU_THREADS; i++)
		ts[i] = 9000000000000ULL + (uint64_t)i * 333333;
	fill_on_cpu(&chunk[0], ts, SAMPLES);
	fill_on_cpu(&chunk[1], ts, SAMPLES);
	for (int c = 0; c < 2; c++) {
		tr_tables_encode(&chunk[c], &b[c]);
		n += chunk[c].samples.len;
		/*
		 * pid, tid, node, cpu and flags a byte each, the ts's 50 ns of
		 * jitter a byte (7 bits and the code's two), and the step and
		 * the run's header.
		 */
		CHECK(record_len(&b[c], 22) <= 6 * chunk[c].samples.len + 16);
		CHECK_EQ_U64(record_len(&b[c], 7), 0);
		CHECK_EQ_U64(record_len(&b[c], 20), 0);
	}
	CHECK_EQ_U64(tr_tables_decode(&out, b[0].data, b[0].len), 0);
	CHECK_EQ_U64(tr_tables_decode(&out, b[1].data, b[1].len), 0);
	CHECK_EQ_U64(out.samples.len, n);
	CHECK(!memcmp(out.samples.v, chunk[0].samples.v,
		      chunk[0].samples.len * sizeof(*out.samples.v)));
	CHECK(!memcmp(out.samples.v + chunk[0].samples.len, chunk[1].samples.v,
		      chunk[1].samples.len * sizeof(*out.samples.v)));

	/* Hostile off-CPU rows: shuffled, backwards, at the ends of time. */
	for (size_t i = 0; i < chunk[0].offcpu.len; i++) {
		struct tr_offcpu *o = &chunk[0].offcpu.v[i], swap;
		struct tr_offcpu *other = &chunk[0].offcpu.v[rnd_below((uint32_t)chunk[0].offcpu.len)];

		swap = *o;
		*o = *other;
		*other = swap;
		if (!rnd_below(5))
			o->end = o->start - rnd_below(1 << 20);
		if (!rnd_below(50))
			o->start = UINT64_MAX - rnd_below(3);
	}
	gbuf_reset(&b[0]);
	tr_tables_encode(&chunk[0], &b[0]);
	CHECK_EQ_U64(tr_tables_decode(&again, b[0].data, b[0].len), 0);
	CHECK(tables_equal(&chunk[0], &again));
	/* A second samples record in a payload would walk its offcpu rows again. */
	gbuf_put(&b[0], b[1].data, b[1].len);
	tr_tables_free(&again);
	CHECK(tr_tables_decode(&again, b[0].data, b[0].len) == -TR_ERR_CORRUPT);

	for (int c = 0; c < 2; c++) {
		tr_tables_free(&chunk[c]);
		gbuf_free(&b[c]);
	}
	tr_tables_free(&out);
	tr_tables_free(&again);
}

/* Version 1's samples table (7) still reads, and appends to version 2's. */
static void test_samples_version_1(void)
{
	/* ts 1, pid 2, tid 3, node 4, cpu 5, flags 1; then ts 3 (delta 2), tid 4. */
	static const uint8_t v1[] = { 7, 2, 12, 2, 4, 4, 0, 6, 2, 4, 4, 10, 0, 1, 0 };
	static const struct tr_sample want[] = {
		{ 1000, 9, 9, 1, 0, 0 }, { 1, 2, 3, 4, 5, 1 }, { 3, 2, 4, 4, 5, 0 },
	};
	struct tr_tables t = {0}, in = {0};
	struct gbuf b = {0};

	*VEC_PUSH(&in.samples) = want[0];
	tr_tables_encode(&in, &b);
	CHECK_EQ_U64(tr_tables_decode(&t, b.data, b.len), 0);
	CHECK_EQ_U64(tr_tables_decode(&t, v1, sizeof(v1)), 0);
	CHECK_EQ_U64(t.samples.len, 3);
	CHECK(t.samples.len == 3 && !memcmp(t.samples.v, want, sizeof(want)));
	tr_tables_free(&t);
	tr_tables_free(&in);
	gbuf_free(&b);
}

/* Version 2's samples (table 20) and offcpu rows (table 8) still read. */
static void test_samples_version_2(void)
{
	/*
	 * offcpu: tid 3, start 10, end 12 (after start), reason 1, node 0;
	 * samples: pid 2, tid 3, step 5, ts 7 (no earlier row: against 0),
	 * then ts 20 (7 + 5, pushed on by the interval: 14, and 6 more),
	 * nodes 4, 4, cpu 1, 1, flags 0, 0.
	 */
	static const uint8_t v2[] = {
		8, 1, 5, 6, 20, 4, 1, 0,
		20, 2, 13, 4, 0, 6, 0, 5, 14, 12, 4, 4, 2, 0, 0, 0,
	};
	static const struct tr_sample want[] = { { 7, 2, 3, 4, 1, 0 }, { 20, 2, 3, 4, 1, 0 } };
	struct tr_tables t = {0};

	CHECK_EQ_U64(tr_tables_decode(&t, v2, sizeof(v2)), 0);
	CHECK_EQ_U64(t.offcpu.len, 1);
	CHECK_EQ_U64(t.offcpu.v[0].end, 12);
	CHECK_EQ_U64(t.offcpu.v[0].reason, 1);
	CHECK(t.samples.len == 2 && !memcmp(t.samples.v, want, sizeof(want)));
	tr_tables_free(&t);
}

/* A golomb run's values: its bytes, or its error. */
static int golomb_decode(const struct gbuf *b, int64_t *v, size_t n)
{
	struct golomb_reader r;
	struct gcursor c;

	gcursor_init(&c, b->data, b->len);
	golomb_run_open(&r, &c);
	for (size_t i = 0; i < n && !r.err; i++)
		v[i] = golomb_get(&r);
	golomb_run_close(&r);
	return r.err || c.err || gcursor_left(&c) ? -1 : 0;
}

/*
 * Exp-Golomb runs: the ends of the 64-bit range and every order round
 * trip; a run that is cut, has a bad order, a code past 64 bits, or bytes
 * or bits that are not zero after its last code is an error, not a value.
 */
static void test_golomb_runs(void)
{
	static const int64_t edges[] = { 0, 1, -1, 2, -2, 1000, -1000, INT64_MAX, INT64_MIN,
					 INT64_MAX - 1, INT64_MIN + 1, 1ll << 40, -(1ll << 40) };
	enum { N = 4096 };
	int64_t *v = calloc(N, sizeof(*v)), *got = calloc(N + 1, sizeof(*got));
	struct gbuf b = {0}, bad = {0};

	/* Edges alone, then among small values (a small order), then among huge ones. */
	for (int mix = 0; mix < 3; mix++) {
		size_t n = 0;

		for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
			v[n++] = edges[i];
			for (int j = 0; j < (mix ? 40 : 0); j++)
				v[n++] = mix == 1 ? (int64_t)rnd_below(8) - 4 : (int64_t)rnd();
		}
		gbuf_reset(&b);
		golomb_run_put(&b, v, n);
		CHECK_EQ_U64(golomb_decode(&b, got, n), 0);
		CHECK(!memcmp(v, got, n * sizeof(*v)));
	}
	/* Values of every size, so that each order is chosen once at least. */
	for (int bits = 0; bits < 64; bits++) {
		for (size_t i = 0; i < N; i++)
			v[i] = (int64_t)(rnd() >> (63 - bits)) >> 1;
		gbuf_reset(&b);
		golomb_run_put(&b, v, N);
		CHECK_EQ_U64(golomb_decode(&b, got, N), 0);
		CHECK(!memcmp(v, got, N * sizeof(*v)));
	}
	/* Jitter of about 2^12: about 14 bits a value, under a varint's two bytes. */
	for (size_t i = 0; i < N; i++)
		v[i] = (int64_t)rnd_below(8192) - 4096;
	gbuf_reset(&b);
	golomb_run_put(&b, v, N);
	CHECK(b.len < N * 14 / 8 + 8);

	/* One value more than the run holds: its code runs past the end. */
	CHECK(golomb_decode(&b, got, N + 1) == -1);
	/* Zero, at order 1: the bits 1 and 0; then a bit set in the padding, or a byte more. */
	gbuf_put_uvarint(&bad, 1);
	gbuf_put_uvarint(&bad, 1);
	gbuf_put(&bad, (const uint8_t[]){ 0x01 }, 1);
	CHECK(golomb_decode(&bad, got, 1) == 0 && got[0] == 0);
	bad.data[2] = 0x81;
	CHECK(golomb_decode(&bad, got, 1) == -1);
	gbuf_reset(&bad);
	gbuf_put_uvarint(&bad, 1);
	gbuf_put_uvarint(&bad, 2);
	gbuf_put(&bad, (const uint8_t[]){ 0x01, 0 }, 2);
	CHECK(golomb_decode(&bad, got, 1) == -1);
	/* A code cut by the run's end: one byte of a 14-bit code. */
	gbuf_reset(&bad);
	gbuf_put_uvarint(&bad, 13);
	gbuf_put_uvarint(&bad, 1);
	gbuf_put(&bad, (const uint8_t[]){ 0x01 }, 1);	/* q 0, then 7 of 13 low bits */
	CHECK(golomb_decode(&bad, got, 1) == -1);
	/* Orders 0 and 64 are not written. */
	for (unsigned k = 0; k <= 64; k += 64) {
		gbuf_reset(&bad);
		gbuf_put_uvarint(&bad, k);
		gbuf_put_uvarint(&bad, 1);
		gbuf_put(&bad, (const uint8_t[]){ 0xff }, 1);
		CHECK(golomb_decode(&bad, got, 1) == -1);
	}
	/* A byte count past the end. */
	gbuf_reset(&bad);
	gbuf_put_uvarint(&bad, 1);
	gbuf_put_uvarint(&bad, 9);
	gbuf_put(&bad, (const uint8_t[]){ 0xff }, 1);
	CHECK(golomb_decode(&bad, got, 1) == -1);
	/* 64 zero bits: a quotient of 65 bits. */
	gbuf_reset(&bad);
	gbuf_put_uvarint(&bad, 1);
	gbuf_put_uvarint(&bad, 10);
	gbuf_put(&bad, (const uint8_t[]){ 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff }, 10);
	CHECK(golomb_decode(&bad, got, 1) == -1);
	/* 63 zero bits and order 2: a quotient of 64 bits shifted by 2. */
	gbuf_reset(&bad);
	gbuf_put_uvarint(&bad, 2);
	gbuf_put_uvarint(&bad, 17);
	gbuf_put(&bad, (const uint8_t[]){ 0, 0, 0, 0, 0, 0, 0, 0x80, 0xff, 0xff, 0xff, 0xff,
					  0xff, 0xff, 0xff, 0xff, 0xff }, 17);
	CHECK(golomb_decode(&bad, got, 1) == -1);
	gbuf_free(&b);
	gbuf_free(&bad);
	free(v);
	free(got);
}

/* Stack interning through util's strtab: ids in the file are strtab ids. */
static void test_string_interning(void)
{
	static const char *const words[] = { "main", "work", "main", "", "libc.so.6", "work" };
	struct strtab st = {0};
	struct tr_tables in = {0}, out = {0};
	uint32_t ids[6];
	struct gbuf b = {0};

	for (size_t i = 0; i < 6; i++)
		ids[i] = strtab_intern(&st, words[i]);
	CHECK(ids[0] == ids[2] && ids[1] == ids[5]);
	CHECK_EQ_U64(st.len, 4);
	for (size_t i = 0; i < st.len; i++)
		*VEC_PUSH(&in.strings) = xstrdup(st.strs[i]);
	for (size_t i = 0; i < 6; i++)
		*VEC_PUSH(&in.symbols) = (struct tr_symbol){ .loc = 1, .func = ids[i] };
	tr_tables_encode(&in, &b);
	CHECK_EQ_U64(tr_tables_decode(&out, b.data, b.len), 0);
	CHECK_EQ_U64(out.strings.len, 4);
	for (size_t i = 0; i < 6; i++)
		CHECK_STREQ(out.strings.v[out.symbols.v[i].func - 1], words[i]);
	strtab_free(&st);
	tr_tables_free(&in);
	tr_tables_free(&out);
	gbuf_free(&b);
}

#define NCHUNKS 3

/*
 * Writes NCHUNKS tables chunks then an END chunk to name; fills offsets[] with
 * where each chunk starts and offsets[NCHUNKS + 1] with the file size.
 */
static void write_sample_file(const char *name, struct tr_tables *all, uint64_t *offsets)
{
	struct tr_writer *w;
	struct gbuf b = {0};

	CHECK_EQ_U64(tr_writer_open(&w, tmp_path(name), TR_FEAT_CPU_SAMPLES | TR_FEAT_LANES), 0);
	CHECK_EQ_U64(tr_writer_bytes(w), TR_HEADER_SIZE);
	for (int i = 0; i < NCHUNKS; i++) {
		struct tr_tables t = {0};

		fill_tables(&t, 1000000000ULL * (uint64_t)(i + 1));
		gbuf_reset(&b);
		tr_tables_encode(&t, &b);
		CHECK_EQ_U64(tr_tables_decode(all, b.data, b.len), 0);
		offsets[i] = tr_writer_bytes(w);
		CHECK_EQ_U64(tr_writer_put(w, TR_CHUNK_TABLES, b.data, b.len), 0);
		tr_tables_free(&t);
	}
	offsets[NCHUNKS] = tr_writer_bytes(w);
	CHECK_EQ_U64(tr_writer_put(w, TR_CHUNK_END, NULL, 0), 0);
	offsets[NCHUNKS + 1] = tr_writer_bytes(w);
	CHECK_EQ_U64(tr_writer_close(w), 0);
	gbuf_free(&b);
}

/*
 * Reads every chunk, decoding tables into t. Returns the number of chunks read
 * and the final status of the reader (0 at a clean end, else the error).
 */
static int read_all(struct tr_reader *r, struct tr_tables *t, int *status, bool *saw_end)
{
	struct tr_chunk c;
	int n = 0, ret;

	*saw_end = false;
	while ((ret = tr_reader_next(r, &c)) == 1) {
		n++;
		if (c.type == TR_CHUNK_TABLES)
			CHECK_EQ_U64(tr_tables_decode(t, c.payload, c.len), 0);
		*saw_end |= c.type == TR_CHUNK_END;
	}
	*status = ret;
	return n;
}

static void test_file_round_trip(void)
{
	struct tr_tables written = {0}, read = {0};
	uint64_t offsets[NCHUNKS + 2];
	struct tr_reader *r;
	struct tr_header hdr;
	struct tr_chunk c;
	bool saw_end;
	int status;

	write_sample_file("round-trip", &written, offsets);
	CHECK_EQ_U64(tr_reader_open(&r, tmp_path("round-trip"), &hdr), 0);
	CHECK_EQ_U64(hdr.version, TR_VERSION);
	CHECK_EQ_U64(hdr.min_reader_version, TR_MIN_READER_VERSION);
	CHECK_EQ_U64(hdr.features, TR_FEAT_CPU_SAMPLES | TR_FEAT_LANES);
	CHECK_EQ_U64(tr_reader_file_size(r), offsets[NCHUNKS + 1]);
	CHECK_EQ_U64(read_all(r, &read, &status, &saw_end), NCHUNKS + 1);
	CHECK_EQ_U64(status, 0);
	CHECK(saw_end);
	CHECK(tables_equal(&written, &read));
	/* The end stays the end. */
	CHECK_EQ_U64(tr_reader_next(r, &c), 0);
	tr_reader_close(r);

	/* Chunk offsets and sizes are reported as written. */
	CHECK_EQ_U64(tr_reader_open(&r, tmp_path("round-trip"), &hdr), 0);
	for (int i = 0; i <= NCHUNKS; i++) {
		CHECK_EQ_U64(tr_reader_next(r, &c), 1);
		CHECK_EQ_U64(c.offset, offsets[i]);
		CHECK_EQ_U64(c.offset + TR_CHUNK_HEADER_SIZE + c.compressed_len, offsets[i + 1]);
	}
	tr_reader_close(r);
	tr_tables_free(&written);
	tr_tables_free(&read);
}

/* The sample file written and read back whole, to damage in memory. */
struct sample_image {
	struct tr_tables written;
	uint64_t offsets[NCHUNKS + 2];
	uint8_t *data;
	size_t len;
};

static void sample_image_load(struct sample_image *img, const char *name)
{
	img->written = (struct tr_tables){0};
	write_sample_file(name, &img->written, img->offsets);
	img->data = read_file(tmp_path(name), &img->len);
}

static void sample_image_free(struct sample_image *img)
{
	free(img->data);
	tr_tables_free(&img->written);
}

/* A flipped byte anywhere in a chunk stops the reader there, as CORRUPT. */
static void test_flipped_bytes(void)
{
	struct sample_image img;

	sample_image_load(&img, "flip");
	for (uint64_t pos = img.offsets[1]; pos < img.offsets[2]; pos++) {
		struct tr_tables t = {0};
		struct tr_reader *r;
		struct tr_header hdr;
		struct tr_chunk c;
		bool saw_end;
		int status;

		img.data[pos] ^= 0x5a;
		CHECK_EQ_U64(tr_reader_open_mem(&r, img.data, img.len, &hdr), 0);
		CHECK_EQ_U64(read_all(r, &t, &status, &saw_end), 1);
		CHECK(status == -TR_ERR_CORRUPT);
		/* The first chunk survives intact. */
		CHECK_EQ_U64(t.samples.len, img.written.samples.len / NCHUNKS);
		/* Errors are sticky and say where the damage starts. */
		CHECK(tr_reader_next(r, &c) == -TR_ERR_CORRUPT);
		CHECK_EQ_U64(c.offset, img.offsets[1]);
		tr_reader_close(r);
		tr_tables_free(&t);
		img.data[pos] ^= 0x5a;
	}
	/* A damaged file header is caught too. */
	for (size_t pos = 16; pos < TR_HEADER_SIZE; pos++) {
		struct tr_reader *r;
		struct tr_header hdr;

		img.data[pos] ^= 0x01;
		CHECK(tr_reader_open_mem(&r, img.data, img.len, &hdr) == -TR_ERR_CORRUPT);
		img.data[pos] ^= 0x01;
	}
	sample_image_free(&img);
}

/*
 * A file cut anywhere gives back every chunk before the cut: at a chunk
 * boundary it just ends (without an END chunk), inside one it is TRUNCATED.
 */
static void test_truncation(void)
{
	struct sample_image img;

	sample_image_load(&img, "cut");
	for (size_t cut = 0; cut <= img.len; cut++) {
		struct tr_tables t = {0};
		struct tr_reader *r;
		struct tr_header hdr;
		int want_chunks = 0, status, n, err;
		bool boundary = cut == TR_HEADER_SIZE, saw_end;

		for (int i = 0; i <= NCHUNKS; i++) {
			want_chunks += img.offsets[i + 1] <= cut;
			boundary |= img.offsets[i + 1] == cut;
		}
		err = tr_reader_open_mem(&r, img.data, cut, &hdr);
		if (cut < TR_HEADER_SIZE) {
			CHECK(err == -TR_ERR_TRUNCATED);
			continue;
		}
		CHECK_EQ_U64(err, 0);
		n = read_all(r, &t, &status, &saw_end);
		CHECK_EQ_U64(n, want_chunks);
		CHECK(status == (boundary ? 0 : -TR_ERR_TRUNCATED));
		CHECK(saw_end == (cut == img.len));
		CHECK_EQ_U64(t.samples.len, img.written.samples.len / NCHUNKS *
					    (uint64_t)(want_chunks < NCHUNKS ? want_chunks : NCHUNKS));
		tr_reader_close(r);
		tr_tables_free(&t);
	}
	sample_image_free(&img);
}

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void test_foreign_files(void)
{
	struct sample_image img;
	struct tr_reader *r;
	struct tr_header hdr;
	int fd;

	/* Empty, or a prefix of the magic: it may be a trace cut short. */
	CHECK(tr_reader_open_mem(&r, "", 0, &hdr) == -TR_ERR_TRUNCATED);
	CHECK(tr_reader_open_mem(&r, "GTRA", 4, &hdr) == -TR_ERR_TRUNCATED);
	CHECK(tr_reader_open_mem(&r, "GTRX", 4, &hdr) == -TR_ERR_NOT_TRACE);
	CHECK(tr_reader_open_mem(&r, "#!/bin/sh\necho not a trace at all\n", 35, &hdr) ==
	      -TR_ERR_NOT_TRACE);
	CHECK(!r);
	fd = open(tmp_path("empty"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	close(fd);
	CHECK(tr_reader_open(&r, tmp_path("empty"), &hdr) == -TR_ERR_TRUNCATED);
	CHECK(tr_reader_open(&r, tmp_path("does-not-exist"), &hdr) == -ENOENT);
	CHECK(tr_reader_open(&r, tmpdir, &hdr) == -EISDIR);

	sample_image_load(&img, "newer");
	/* A newer writer whose files old readers can still read: fine. */
	put_le32(img.data + 8, TR_VERSION + 1);
	put_le32(img.data + 28, crc32c(img.data, 28));
	CHECK_EQ_U64(tr_reader_open_mem(&r, img.data, img.len, &hdr), 0);
	CHECK_EQ_U64(hdr.version, TR_VERSION + 1);
	tr_reader_close(r);
	/* One that needs a newer reader: refused, with the versions reported. */
	put_le32(img.data + 12, TR_VERSION + 1);
	put_le32(img.data + 28, crc32c(img.data, 28));
	CHECK(tr_reader_open_mem(&r, img.data, img.len, &hdr) == -TR_ERR_VERSION);
	CHECK_EQ_U64(hdr.min_reader_version, TR_VERSION + 1);
	img.data[0] = 'g';
	CHECK(tr_reader_open_mem(&r, img.data, img.len, &hdr) == -TR_ERR_NOT_TRACE);
	sample_image_free(&img);
}

static void test_unknown_chunk_type(void)
{
	struct tr_writer *w;
	struct tr_reader *r;
	struct tr_header hdr;
	struct tr_chunk c;

	CHECK_EQ_U64(tr_writer_open(&w, tmp_path("unknown"), 0), 0);
	CHECK_EQ_U64(tr_writer_put(w, 77, "future", 6), 0);
	CHECK_EQ_U64(tr_writer_close(w), 0);
	CHECK_EQ_U64(tr_reader_open(&r, tmp_path("unknown"), &hdr), 0);
	CHECK_EQ_U64(tr_reader_next(r, &c), 1);
	CHECK_EQ_U64(c.type, 77);
	CHECK(c.len == 6 && !memcmp(c.payload, "future", 6));
	CHECK_EQ_U64(tr_reader_next(r, &c), 0);
	tr_reader_close(r);
	CHECK(tr_writer_open(&w, tmp_path("no-such-dir/x"), 0) == -ENOENT);
}

/* The read limit: a floor for small files, else a multiple of the size; what a charge may take. */
static void test_budget(void)
{
	struct tr_budget b = { .limit = 100 };

	CHECK_EQ_U64(tr_budget_limit(0), TR_BUDGET_FLOOR);
	CHECK_EQ_U64(tr_budget_limit(TR_BUDGET_FLOOR / TR_BUDGET_RATIO), TR_BUDGET_FLOOR);
	CHECK_EQ_U64(tr_budget_limit(1 << 30), (uint64_t)TR_BUDGET_RATIO << 30);
	CHECK_EQ_U64(tr_budget_limit(UINT64_MAX / 2), UINT64_MAX);
	CHECK_EQ_U64(tr_budget_charge(&b, 60), 0);
	CHECK(tr_budget_charge(&b, 41) == -TR_ERR_BUDGET);
	CHECK(tr_budget_charge(&b, UINT64_MAX) == -TR_ERR_BUDGET);
	CHECK_EQ_U64(b.used, 60);
	CHECK_EQ_U64(tr_budget_charge(&b, 40), 0);
	CHECK_EQ_U64(b.used, 100);
	b = (struct tr_budget){ 0 };
	CHECK_EQ_U64(tr_budget_charge(&b, UINT64_MAX), 0);
}

/*
 * A table record whose rows would pass the budget is not decoded, and says
 * which table it was; the records before it are; strings cost their bytes
 * and an allocation each, beside their pointers.
 */
static void test_tables_decode_budget(void)
{
	struct tr_tables in = {0}, out = {0};
	struct tr_budget b = {0};
	struct gbuf enc = {0};

	*VEC_PUSH(&in.meta) = (struct tr_meta){ xstrdup("command"), xstrdup("./app") };
	for (int i = 0; i < 100; i++)
		*VEC_PUSH(&in.strings) = xstrdup("");
	*VEC_PUSH(&in.samples) = (struct tr_sample){ .ts = 1, .pid = 2, .tid = 3 };
	tr_tables_encode(&in, &enc);

	CHECK_EQ_U64(tr_tables_decode_within(&out, enc.data, enc.len, &b), 0);
	CHECK_EQ_U64(tr_tables_rows(&out), 102);
	/* The meta row, the strings (a pointer, 32 bytes and their 100 bytes each), the sample. */
	CHECK_EQ_U64(b.used, sizeof(struct tr_meta) + 2 * 32 + 14 + 100 * (sizeof(char *) + 32) +
			     100 + sizeof(struct tr_sample));
	tr_tables_free(&out);
	out = (struct tr_tables){0};

	b = (struct tr_budget){ .limit = 1000 };
	CHECK(tr_tables_decode_within(&out, enc.data, enc.len, &b) == -TR_ERR_BUDGET);
	CHECK_STREQ(b.table, "strings");
	CHECK_EQ_U64(out.meta.len, 1);
	CHECK_EQ_U64(out.strings.len, 0);
	CHECK_EQ_U64(out.samples.len, 0);
	CHECK_EQ_U64(b.used, sizeof(struct tr_meta) + 2 * 32 + 14);
	tr_tables_free(&in);
	tr_tables_free(&out);
	gbuf_free(&enc);
}

/* Each chunk's payload is charged before it is decompressed: past the limit, BUDGET. */
static void test_reader_budget(void)
{
	struct sample_image img;
	struct tr_reader *r;
	struct tr_header hdr;
	struct tr_chunk c;
	uint64_t first;

	sample_image_load(&img, "budget");
	CHECK_EQ_U64(tr_reader_open_mem(&r, img.data, img.len, &hdr), 0);
	CHECK_EQ_U64(tr_reader_budget(r)->limit, tr_budget_limit(img.len));
	CHECK_EQ_U64(tr_reader_next(r, &c), 1);
	first = c.len;
	CHECK_EQ_U64(tr_reader_budget(r)->inflated, first);
	tr_reader_budget(r)->limit = first + 1;
	CHECK(tr_reader_next(r, &c) == -TR_ERR_BUDGET);
	CHECK_EQ_U64(c.offset, img.offsets[1]);
	CHECK_EQ_U64(tr_reader_budget(r)->inflated, first);
	CHECK(tr_reader_next(r, &c) == -TR_ERR_BUDGET);
	tr_reader_close(r);
	sample_image_free(&img);
}

/* A frame compressed already is the chunk's frame as it is, its content size the raw length. */
static void test_writer_put_frame(void)
{
	static const char payload[] = "a payload that was compressed elsewhere";
	uint8_t frame[128];
	size_t n = ZSTD_compress(frame, sizeof(frame), payload, sizeof(payload), 1);
	struct tr_writer *w;
	struct tr_reader *r;
	struct tr_header hdr;
	struct tr_chunk c;
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	size_t unsized;

	CHECK(!ZSTD_isError(n));
	CHECK_EQ_U64(tr_writer_open(&w, tmp_path("frame"), 0), 0);
	CHECK_EQ_U64(tr_writer_put_frame(w, 7, frame, n), 0);
	/* A frame that does not say its content size is refused. */
	ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0);
	unsized = ZSTD_compress2(cctx, frame, sizeof(frame), payload, sizeof(payload));
	CHECK(!ZSTD_isError(unsized));
	CHECK(tr_writer_put_frame(w, 7, frame, unsized) == -EINVAL);
	CHECK_EQ_U64(tr_writer_close(w), 0);
	CHECK_EQ_U64(tr_reader_open(&r, tmp_path("frame"), &hdr), 0);
	CHECK_EQ_U64(tr_reader_next(r, &c), 1);
	CHECK_EQ_U64(c.type, 7);
	CHECK_EQ_U64(c.compressed_len, n);
	CHECK_EQ_U64(c.len, sizeof(payload));
	CHECK(c.len == sizeof(payload) && !memcmp(c.payload, payload, c.len));
	CHECK_EQ_U64(tr_reader_next(r, &c), 0);
	tr_reader_close(r);
	ZSTD_freeCCtx(cctx);
}

static void test_strerror(void)
{
	static const int codes[] = { TR_ERR_NOT_TRACE, TR_ERR_VERSION, TR_ERR_CORRUPT,
				     TR_ERR_TRUNCATED, TR_ERR_BUDGET };

	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		const char *msg = tr_strerror(-codes[i]);

		CHECK(msg && msg[0] >= 'a' && msg[0] <= 'z');
		CHECK(msg[strlen(msg) - 1] != '.');
	}
	CHECK_STREQ(tr_strerror(-ENOENT), strerror(ENOENT));
}

/*
 * The size target: 100k samples of 8 threads, with timer jitter and a few
 * hundred distinct stacks, written the way the recorder writes them (a
 * chunk every 16k samples carrying the stacks first seen in it).
 */
static void test_bytes_per_sample(void)
{
	enum { SAMPLES = 100000, THREADS = 8, STACKS = 300, CHUNK = 16384 };
	struct tr_tables t = {0};
	struct tr_writer *w;
	struct gbuf b = {0};
	uint64_t thread_ts[THREADS];
	uint32_t stack_leaf[STACKS], thread_cpu[THREADS], nodes = 0, locs = 0;
	bool stack_written[STACKS] = {0};
	double per_sample;

	for (int i = 0; i < THREADS; i++) {
		thread_ts[i] = 5123456789000ULL + rnd_below(1000000);
		thread_cpu[i] = (uint32_t)i % 2;
	}
	CHECK_EQ_U64(tr_writer_open(&w, tmp_path("size"), TR_FEAT_CPU_SAMPLES), 0);
	for (uint32_t i = 0; i < SAMPLES; i++) {
		/* The thread due next, 1 ms (at 999 Hz) per sample and jitter. */
		int th = 0;
		uint32_t s;
		struct tr_sample *smp;

		for (int k = 1; k < THREADS; k++)
			if (thread_ts[k] < thread_ts[th])
				th = k;
		/* Hot stacks: a skewed choice, as real profiles are. */
		s = rnd_below(STACKS);
		s %= 1 + rnd_below(STACKS);
		if (!stack_written[s]) {
			/* A new stack: 8-30 frames, sharing the first ones with others. */
			uint32_t depth = 8 + rnd_below(23), parent = 0;

			for (uint32_t d = 0; d < depth; d++) {
				struct tr_loc *loc;

				if (d < 4 && nodes >= 4) {
					parent = d + 1;
					continue;
				}
				loc = VEC_PUSH(&t.locs);
				loc->dso = 1 + rnd_below(5);
				loc->addr = 0x401000 + rnd_below(1 << 22);
				*VEC_PUSH(&t.nodes) = (struct tr_node){ parent, ++locs };
				parent = ++nodes;
			}
			stack_leaf[s] = parent;
			stack_written[s] = true;
		}
		if (!rnd_below(50))
			thread_cpu[th] = rnd_below(2);
		smp = VEC_PUSH(&t.samples);
		smp->ts = thread_ts[th];
		smp->pid = 31337;
		smp->tid = 31337 + (uint32_t)th;
		smp->node = stack_leaf[s];
		smp->cpu = thread_cpu[th];
		smp->flags = !rnd_below(100) ? TR_SAMPLE_TRUNCATED : 0;
		thread_ts[th] += 1001001 + rnd_below(20000) - 10000;
		if (t.samples.len == CHUNK || i == SAMPLES - 1) {
			gbuf_reset(&b);
			tr_tables_encode(&t, &b);
			CHECK_EQ_U64(tr_writer_put(w, TR_CHUNK_TABLES, b.data, b.len), 0);
			tr_tables_clear(&t);
		}
	}
	per_sample = (double)tr_writer_bytes(w) / SAMPLES;
	printf("  %d samples, %u stack nodes: %" PRIu64 " bytes, %.2f bytes per sample\n",
	       SAMPLES, nodes, tr_writer_bytes(w), per_sample);
	CHECK(per_sample <= 4.15);
	CHECK_EQ_U64(tr_writer_close(w), 0);
	tr_tables_free(&t);
	gbuf_free(&b);
}

/* A kernel's launch configuration and resources: what repeats per name. */
struct kernel_shape {
	uint32_t name;
	uint64_t dur;
	uint64_t attrs[KERNEL_ATTRS];
};

/*
 * Writes CUDA kernels as the agent reports them to a file: a training step
 * of 500 launches (500 kernel names) on 2 streams, repeated. Each carries
 * the 20 attributes of a kernel on a CUDA lane: 17 fixed per kernel name,
 * the stream, and a correlation id that grows by a step-periodic amount.
 * Chunks of 10,000 kernels, about a second's worth. With jitter, GPU times
 * tick every 32 ns, a kernel's duration varies by up to 1/1024 of it, its
 * gap after the previous one by up to 3 ticks, and its launch by 256 ns;
 * without, every step repeats the first exactly (what the test doubles of
 * CUDA produce). Returns the file's bytes, and in *spans_only those of the
 * same spans without attributes.
 */
static uint64_t kernel_stream_bytes(uint32_t kernels, bool jitter, uint64_t *spans_only)
{
	enum { NAMES = 500, CHUNK = 10000, STREAMS = 2 };
	static const char *const keys[KERNEL_ATTRS] = {
		"grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z", "regs",
		"smem.static", "smem.dynamic", "local.per-thread", "local.total", "graph.id",
		"graph.node", "device", "context", "occupancy.permille", "occupancy.limiter",
		"occupancy.blocks-per-sm", "stream", "correlation",
	};
	struct kernel_shape *shapes = xcalloc(NAMES, sizeof(*shapes));
	uint64_t lane_ts[STREAMS], correlation = 1000, bytes;
	uint32_t key_ids[KERNEL_ATTRS];
	struct tr_tables t = {0}, plain = {0};
	struct tr_writer *w, *w_plain;
	struct gbuf b = {0};
	char name[96];

	CHECK_EQ_U64(tr_writer_open(&w, tmp_path("kernels"), TR_FEAT_LANES), 0);
	CHECK_EQ_U64(tr_writer_open(&w_plain, tmp_path("kernels-plain"), TR_FEAT_LANES), 0);
	for (uint32_t k = 0; k < KERNEL_ATTRS; k++) {
		*VEC_PUSH(&t.strings) = xstrdup(keys[k]);
		key_ids[k] = (uint32_t)t.strings.len;
	}
	for (uint32_t n = 0; n < NAMES; n++) {
		struct kernel_shape *k = &shapes[n];
		uint64_t grid = 1u << rnd_below(16), block = 32u << rnd_below(6);

		snprintf(name, sizeof(name),
			 "_ZN7network6layers%uILi%uEE14forward_kernelIfLi%uEEvPKT_PS3_i", n,
			 1 + rnd_below(64), 8 << rnd_below(4));
		*VEC_PUSH(&t.strings) = xstrdup(name);
		k->name = (uint32_t)t.strings.len;
		k->dur = 32 * (64 + rnd_below(6000));
		k->attrs[0] = grid;
		k->attrs[1] = 1 + rnd_below(2) * rnd_below(64);
		k->attrs[2] = 1;
		k->attrs[3] = block;
		k->attrs[4] = 1;
		k->attrs[5] = 1;
		k->attrs[6] = 16 + 8 * rnd_below(28);
		k->attrs[7] = rnd_below(4) * 1024 * rnd_below(48);
		k->attrs[8] = rnd_below(2) * 256 * rnd_below(200);
		k->attrs[9] = rnd_below(3) * 16;
		k->attrs[10] = k->attrs[9] * block * 132;
		k->attrs[14] = 1;
		k->attrs[15] = 125 * (1 + rnd_below(8));
		k->attrs[16] = 1 + rnd_below(4);
		k->attrs[17] = 1 + rnd_below(16);
	}
	*VEC_PUSH(&t.lanes) = (struct tr_lane){ 4242, 1, shapes[0].name };
	*VEC_PUSH(&t.lanes) = (struct tr_lane){ 4242, 1, shapes[1].name };
	for (int l = 0; l < STREAMS; l++)
		lane_ts[l] = 7000000000000ULL + 32 * rnd_below(100000);
	for (uint32_t i = 0; i < kernels; i++) {
		uint32_t n = i % NAMES, lane = n % 7 == 0;
		const struct kernel_shape *k = &shapes[n];
		struct tr_span *sp = VEC_PUSH(&t.spans);

		sp->lane = lane + 1;
		sp->name = k->name;
		sp->start = lane_ts[lane] + 1024 + (jitter ? 32 * rnd_below(4) : 0);
		sp->dur = k->dur + (jitter ? 32 * rnd_below((uint32_t)(k->dur / 1024 / 32) + 1) : 0);
		sp->origin_tid = 4243;
		sp->origin_ts = sp->start - 2000 - (jitter ? rnd_below(256) : 0);
		lane_ts[lane] = sp->start + sp->dur;
		correlation += 1 + (n % 5 == 0) + 2 * (n % 11 == 0);
		*VEC_PUSH(&plain.spans) = *sp;
		for (uint32_t a = 0; a < KERNEL_ATTRS; a++) {
			uint64_t v = a == 18 ? 7 + 6 * lane : a == 19 ? correlation : k->attrs[a];

			*VEC_PUSH(&t.span_attrs) = (struct tr_span_attr){ i + 1, key_ids[a], v };
		}
		if (t.spans.len == CHUNK || i == kernels - 1) {
			gbuf_reset(&b);
			tr_tables_encode(&t, &b);
			CHECK_EQ_U64(tr_writer_put(w, TR_CHUNK_TABLES, b.data, b.len), 0);
			tr_tables_clear(&t);
			gbuf_reset(&b);
			tr_tables_encode(&plain, &b);
			CHECK_EQ_U64(tr_writer_put(w_plain, TR_CHUNK_TABLES, b.data, b.len), 0);
			tr_tables_clear(&plain);
		}
	}
	bytes = tr_writer_bytes(w);
	*spans_only = tr_writer_bytes(w_plain);
	CHECK_EQ_U64(tr_writer_close(w), 0);
	CHECK_EQ_U64(tr_writer_close(w_plain), 0);
	tr_tables_free(&t);
	tr_tables_free(&plain);
	gbuf_free(&b);
	free(shapes);
	return bytes;
}

/*
 * 100,000 kernels over 500 names with every detail, names and keys
 * included: the goal is at most 4 bytes a kernel with realistic
 * jitter. The bounds are what the encoding reaches plus a small margin,
 * so that a change that costs bytes shows; the attributes stay within 1
 * byte a kernel above the spans either way.
 */
static void test_bytes_per_kernel(void)
{
	enum { KERNELS = 100000 };
	uint64_t spans_only, bytes;
	double per_kernel, attrs;

	for (int jitter = 0; jitter < 2; jitter++) {
		bytes = kernel_stream_bytes(KERNELS, jitter, &spans_only);
		per_kernel = (double)bytes / KERNELS;
		attrs = (double)(bytes - spans_only) / KERNELS;
		printf("  %d kernels, %s timing: %.2f bytes per kernel, %.2f of them attributes\n",
		       KERNELS, jitter ? "jittered" : "repeating", per_kernel, attrs);
		CHECK(per_kernel <= (jitter ? 3.6 : 1.0));
		CHECK(attrs <= 1.0);
	}
}

/*
 * PC sample buckets as kernel-serialized sampling stores them: per launch
 * of one of a few kernels, its sampled instructions in pc order, each with
 * one to four of 18 stall reasons and a skewed count. Names and stall
 * reasons are in the strings: what a recording pays. The goal is at
 * most 4 bytes a bucket (the compact schema it cites spends about 30 per
 * PC sample row); the bound is what the encoding reaches plus a margin.
 */
static void test_bytes_per_pc_bucket(void)
{
	enum { LAUNCHES = 2000, FUNCTIONS = 4, STALLS = 18, CHUNK = 20000 };
	struct tr_tables t = {0};
	struct tr_writer *w;
	struct gbuf b = {0};
	uint32_t stall_ids[STALLS], fn_ids[FUNCTIONS], correlation = 5000;
	uint64_t buckets = 0;
	char name[96];
	double per_bucket;

	CHECK_EQ_U64(tr_writer_open(&w, tmp_path("pc"), TR_FEAT_GPU_PC), 0);
	for (uint32_t i = 0; i < STALLS; i++) {
		snprintf(name, sizeof(name), "smsp__pcsamp_warps_issue_stalled_reason_%u", i);
		*VEC_PUSH(&t.strings) = xstrdup(name);
		stall_ids[i] = (uint32_t)t.strings.len;
	}
	for (uint32_t f = 0; f < FUNCTIONS; f++) {
		snprintf(name, sizeof(name), "_Z11gemm_tiledILi%uEEvPKfS1_Pfi", 16 << f);
		*VEC_PUSH(&t.strings) = xstrdup(name);
		fn_ids[f] = (uint32_t)t.strings.len;
	}
	for (uint32_t l = 0; l < LAUNCHES; l++) {
		uint32_t fn = l % FUNCTIONS;

		correlation += 2 + rnd_below(3);
		/* A hot loop of ~40 instructions and a sprinkle elsewhere. */
		for (uint64_t pc = 0; pc < 0x2000; pc += 16) {
			bool hot = pc >= 0x400 && pc < 0x680;
			uint32_t reasons = 1 + rnd_below(4);

			if (!hot && rnd_below(16))
				continue;
			for (uint32_t r = 0; r < reasons; r++) {
				*VEC_PUSH(&t.pc_samples) = (struct tr_pc_sample){
					4242, correlation, 1, fn_ids[fn], pc,
					stall_ids[rnd_below(r ? STALLS : 3)],
					1 + rnd_below(hot ? 64 : 4) };
				buckets++;
			}
		}
		if (t.pc_samples.len >= CHUNK || l == LAUNCHES - 1) {
			gbuf_reset(&b);
			tr_tables_encode(&t, &b);
			CHECK_EQ_U64(tr_writer_put(w, TR_CHUNK_TABLES, b.data, b.len), 0);
			tr_tables_clear(&t);
		}
	}
	per_bucket = (double)tr_writer_bytes(w) / (double)buckets;
	printf("  %" PRIu64 " PC sample buckets of %d launches: %.2f bytes per bucket\n", buckets,
	       LAUNCHES, per_bucket);
	CHECK(per_bucket <= 4.0);
	CHECK_EQ_U64(tr_writer_close(w), 0);
	tr_tables_free(&t);
	gbuf_free(&b);
}

/*
 * The fuzzers' seed corpus, small and deterministic: `test-format
 * --write-corpus tests/fuzz/corpus` regenerates it (scripts/gen-fuzz-corpus.sh).
 */
static void small_tables(struct tr_tables *t, uint64_t ts)
{
	static const char *const names[] = { "/bin/app", "main", "[vdso]", "cuda", "samples" };
	struct tr_meta *m = VEC_PUSH(&t->meta);

	m->key = xstrdup("command");
	m->value = xstrdup("app --run");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		*VEC_PUSH(&t->strings) = xstrdup(names[i]);
	*VEC_PUSH(&t->tasks) = (struct tr_task){ ts, 100, 100, TR_TASK_COMM, 2 };
	*VEC_PUSH(&t->tasks) = (struct tr_task){ ts + 50, 100, 101, TR_TASK_NEW, 100 };
	*VEC_PUSH(&t->dsos) = (struct tr_dso){ 1, 0, 0, 4, { 0xde, 0xad, 0xbe, 0xef } };
	*VEC_PUSH(&t->dsos) = (struct tr_dso){ 3, 0, TR_DSO_VDSO, 0, { 0 } };
	*VEC_PUSH(&t->locs) = (struct tr_loc){ 1, 0x401000 };
	*VEC_PUSH(&t->locs) = (struct tr_loc){ 1, 0x401234 };
	*VEC_PUSH(&t->locs) = (struct tr_loc){ 2, 0x800 };
	*VEC_PUSH(&t->nodes) = (struct tr_node){ 0, 1 };
	*VEC_PUSH(&t->nodes) = (struct tr_node){ 1, 2 };
	*VEC_PUSH(&t->nodes) = (struct tr_node){ 2, 3 };
	for (uint32_t i = 0; i < 6; i++)
		*VEC_PUSH(&t->samples) = (struct tr_sample){ ts + i * 1000000 + i % 3, 100,
							     100 + i % 2, 1 + i % 3, i % 2, 0 };
	*VEC_PUSH(&t->offcpu) = (struct tr_offcpu){ 101, ts + 10, ts + 900, TR_OFFCPU_PREEMPTED, 2 };
	*VEC_PUSH(&t->lanes) = (struct tr_lane){ 100, 4, 4 };
	*VEC_PUSH(&t->spans) = (struct tr_span){ 1, 2, ts + 100, 40, 100, ts + 90 };
	*VEC_PUSH(&t->spans) = (struct tr_span){ 1, 2, ts + 200, 40, 0, 0 };
	*VEC_PUSH(&t->counters) = (struct tr_counter){ 5, 6 };
	*VEC_PUSH(&t->symbols) = (struct tr_symbol){ 1, 2, 1, 42, TR_SYM_INLINED };
	*VEC_PUSH(&t->symbols) = (struct tr_symbol){ 1, 2, 1, 40, 0 };
}

/* Spans with attributes: a value of each key that grows, one that shrinks, one max. */
static void small_span_attrs(struct tr_tables *t)
{
	static const char *const names[] = { "cuda", "GPU0 stream 7", "gemm", "grid.x",
					     "correlation" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		*VEC_PUSH(&t->strings) = xstrdup(names[i]);
	*VEC_PUSH(&t->lanes) = (struct tr_lane){ 100, 1, 2 };
	*VEC_PUSH(&t->spans) = (struct tr_span){ 1, 3, 5000, 40, 100, 4990 };
	*VEC_PUSH(&t->spans) = (struct tr_span){ 1, 3, 5100, 40, 100, 5090 };
	*VEC_PUSH(&t->span_attrs) = (struct tr_span_attr){ 1, 4, 128 };
	*VEC_PUSH(&t->span_attrs) = (struct tr_span_attr){ 1, 5, 77 };
	*VEC_PUSH(&t->span_attrs) = (struct tr_span_attr){ 2, 4, 64 };
	*VEC_PUSH(&t->span_attrs) = (struct tr_span_attr){ 2, 5, UINT64_MAX };
}

static int write_bytes(const char *dir, const char *name, const void *data, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(data, 1, len, f) != len || fclose(f)) {
		printf("cannot write '%s'\n", path);
		return 1;
	}
	return 0;
}

/* A cubin of a few bytes and the buckets of two launches that point into it. */
static void small_pc_samples(struct tr_tables *t)
{
	static const char *const names[] = { "pc_hot", "smsp__pcsamp_warps_issue_stalled_wait" };
	static const uint8_t image[] = { 0x7f, 'E', 'L', 'F', 2, 1, 1, 0x33 };
	struct tr_cubin *c = VEC_PUSH(&t->cubins);

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		*VEC_PUSH(&t->strings) = xstrdup(names[i]);
	c->crc = 0x72c563ed;
	c->image.len = sizeof(image);
	c->image.data = xmemdup(image, sizeof(image));
	for (uint32_t i = 0; i < 6; i++)
		*VEC_PUSH(&t->pc_samples) = (struct tr_pc_sample){ 100, 7 + i / 3, 1, 1,
								   0x150 + 16 * (i % 3), 2, 1 + i };
}

/* Writes a trace of the given chunk types (TABLES ones hold small_tables). */
static uint8_t *make_trace(const uint32_t *types, int n, size_t *len)
{
	struct tr_writer *w;
	struct gbuf b = {0};
	uint8_t *data;

	if (tr_writer_open(&w, tmp_path("corpus"), TR_FEAT_CPU_SAMPLES | TR_FEAT_SYMBOLS))
		abort();
	for (int i = 0; i < n; i++) {
		struct tr_tables t = {0};

		gbuf_reset(&b);
		if (types[i] == TR_CHUNK_TABLES) {
			small_tables(&t, 1000000000ULL * (uint64_t)(i + 1));
			tr_tables_encode(&t, &b);
			tr_tables_free(&t);
		} else if (types[i] != TR_CHUNK_END) {
			gbuf_put_str(&b, "a chunk type from the future");
		}
		if (tr_writer_put(w, types[i], b.data, b.len))
			abort();
	}
	tr_writer_close(w);
	gbuf_free(&b);
	data = read_file(tmp_path("corpus"), len);
	unlink(tmp_path("corpus"));
	return data;
}

static int write_corpus(const char *base)
{
	static const uint32_t one[] = { TR_CHUNK_TABLES, TR_CHUNK_END };
	static const uint32_t two[] = { TR_CHUNK_TABLES, TR_CHUNK_TABLES, TR_CHUNK_END };
	static const uint32_t future[] = { 77, TR_CHUNK_TABLES };
	static const uint8_t unknown_table[] = { 99, 1, 2, 0xaa, 0xbb, 7, 1, 6, 2, 4, 6, 4, 10, 1 };
	char reader[4096], tables[4096];
	struct tr_tables t = {0};
	struct gbuf b = {0};
	uint8_t *data;
	size_t len;
	int err = 0;

	snprintf(reader, sizeof(reader), "%s/reader", base);
	snprintf(tables, sizeof(tables), "%s/tables", base);
	data = make_trace(one, 2, &len);
	err |= write_bytes(reader, "valid", data, len);
	err |= write_bytes(reader, "header-only", data, TR_HEADER_SIZE);
	err |= write_bytes(reader, "cut-in-header", data, TR_HEADER_SIZE - 12);
	err |= write_bytes(reader, "cut-in-chunk", data, TR_HEADER_SIZE + 40);
	err |= write_bytes(reader, "empty", data, 0);
	data[TR_HEADER_SIZE + TR_CHUNK_HEADER_SIZE + 10] ^= 0x10;
	err |= write_bytes(reader, "bad-frame-crc", data, len);
	data[TR_HEADER_SIZE + TR_CHUNK_HEADER_SIZE + 10] ^= 0x10;
	data[TR_HEADER_SIZE + 4] ^= 0x01;	/* the compressed length */
	err |= write_bytes(reader, "bad-chunk-header", data, len);
	data[TR_HEADER_SIZE + 4] ^= 0x01;
	put_le32(data + 12, TR_VERSION + 1);
	put_le32(data + 28, crc32c(data, 28));
	err |= write_bytes(reader, "needs-newer-reader", data, len);
	free(data);
	data = make_trace(two, 3, &len);
	err |= write_bytes(reader, "two-chunks", data, len);
	free(data);
	data = make_trace(one, 1, &len);
	err |= write_bytes(reader, "no-end", data, len);
	free(data);
	data = make_trace(future, 2, &len);
	err |= write_bytes(reader, "unknown-chunk-type", data, len);
	free(data);

	small_tables(&t, 5000);
	tr_tables_encode(&t, &b);
	err |= write_bytes(tables, "all-tables", b.data, b.len);
	err |= write_bytes(tables, "cut", b.data, b.len / 2);
	err |= write_bytes(tables, "unknown-table", unknown_table, sizeof(unknown_table));
	tr_tables_free(&t);
	/* Apart, so that the seeds from before span attributes stay as they were. */
	small_span_attrs(&t);
	gbuf_reset(&b);
	tr_tables_encode(&t, &b);
	err |= write_bytes(tables, "span-attrs", b.data, b.len);
	tr_tables_free(&t);
	small_pc_samples(&t);
	gbuf_reset(&b);
	tr_tables_encode(&t, &b);
	err |= write_bytes(tables, "pc-samples", b.data, b.len);
	tr_tables_free(&t);
	fill_on_cpu(&t, (uint64_t[ON_CPU_THREADS]){ 5000, 5100, UINT64_MAX - 10000000 }, 40);
	gbuf_reset(&b);
	tr_tables_encode(&t, &b);
	err |= write_bytes(tables, "samples-on-cpu", b.data, b.len);
	tr_tables_free(&t);
	gbuf_free(&b);
	return err;
}

static int cmp_u64_test(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* u64_select gives what a sort puts at k, for every k and any order, ties and sizes. */
static void test_select_matches_sort(void)
{
	enum { MAX = 300 };
	uint64_t v[MAX], sorted[MAX], x = 99;
	size_t sizes[] = { 1, 2, 3, 16, 17, 40, MAX };
	int bad = 0;

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t n = sizes[s];

		for (int shape = 0; shape < 5; shape++) {
			for (size_t i = 0; i < n; i++) {
				x = x * 6364136223846793005ULL + 1442695040888963407ULL;
				v[i] = shape == 0 ? x >> 1 : shape == 1 ? (x >> 40) % 4 :
				       shape == 2 ? i : shape == 3 ? n - i : 7;
			}
			memcpy(sorted, v, n * sizeof(*v));
			qsort(sorted, n, sizeof(*sorted), cmp_u64_test);
			for (size_t k = 0; k < n; k++) {
				uint64_t w[MAX];

				memcpy(w, v, n * sizeof(*v));
				bad += u64_select(w, n, k) != sorted[k];
			}
		}
	}
	CHECK_EQ_U64(bad, 0);
}

int main(int argc, char **argv)
{
	const char *base = getenv("TMPDIR");

	snprintf(tmpdir, sizeof(tmpdir), "%s/test-format.XXXXXX", base ? base : "/tmp");
	if (!mkdtemp(tmpdir)) {
		printf("cannot create a directory in '%s'\n", base ? base : "/tmp");
		return 1;
	}
	if (argc == 3 && !strcmp(argv[1], "--write-corpus")) {
		int err = write_corpus(argv[2]);

		rmdir(tmpdir);
		return err;
	}
	RUN(test_varint_edges);
	RUN(test_golomb_runs);
	RUN(test_samples_version_2);
	RUN(test_select_matches_sort);
	RUN(test_varint_malformed);
	RUN(test_fixed_width);
	RUN(test_crc32c);
	RUN(test_tables_round_trip);
	RUN(test_tables_decode_damaged);
	RUN(test_tables_decode_rules);
	RUN(test_offcpu_older_writer);
	RUN(test_samples_on_cpu);
	RUN(test_samples_version_1);
	RUN(test_string_interning);
	RUN(test_file_round_trip);
	RUN(test_flipped_bytes);
	RUN(test_truncation);
	RUN(test_foreign_files);
	RUN(test_unknown_chunk_type);
	RUN(test_budget);
	RUN(test_tables_decode_budget);
	RUN(test_reader_budget);
	RUN(test_writer_put_frame);
	RUN(test_strerror);
	RUN(test_bytes_per_sample);
	RUN(test_bytes_per_kernel);
	RUN(test_bytes_per_pc_bucket);
	/* Leave the files behind when something failed, to look at. */
	if (!test_failures) {
		static const char *const files[] = { "round-trip", "flip", "cut", "empty",
						     "newer", "unknown", "size", "kernels",
						     "kernels-plain", "budget", "frame" };

		for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
			unlink(tmp_path(files[i]));
		rmdir(tmpdir);
	}
	return test_summary();
}
