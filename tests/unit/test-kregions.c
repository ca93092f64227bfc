/* SPDX-License-Identifier: MIT */
/*
 * Kernel regions without a GPU: buffers filled by an encoder that stores
 * exactly as the markers of gtrace/kernel-regions.cuh do, decoded; the
 * choice of the blocks shown and the statistics on hand-made spans; and
 * gtrace_kr_submit with reporting off and, forced on, with no recorder.
 * Buffers are allocated to their exact size, so that under ASan a read
 * or write past the end fails.
 */
#include "target/internal.h"
#include "target/kregions.h"

#include <errno.h>

#include "kr-encode.h"
#include "test.h"

#define N_REGIONS 3
#define BLOCKS_SHOWN "2"		/* GTRACE_KR_BLOCKS for the submit tests */

static const char *const region_names[N_REGIONS] = { "load", "compute", "store" };

static struct tgt_kr_decoded decode(const uint64_t *buf, int want_err)
{
	struct tgt_kr_decoded d;

	CHECK_EQ_U64(tgt_kr_decode(buf, buffer_words(buf), N_REGIONS, &d), want_err);
	return d;
}

static uint64_t span_ns(const struct tgt_kr_span *s)
{
	return s->end_ns - s->begin_ns;
}

#define BLOCKS 4
#define GROUPS 3
#define LANE_EVENTS 7

/*
 * Every lane: load [0, 100) holding compute [10, 30) and store [40, 70),
 * then finish, at a time of its own. The leaders take turns event by
 * event, as they would on a GPU, and the buffer holds exactly the events
 * and one claim ahead per lane.
 */
static void test_nested_regions(void)
{
	static const struct {
		uint64_t kind;
		unsigned region;
		uint64_t at;
	} script[LANE_EVENTS] = {
		{ GTRACE_KR_BEGIN, 0, 0 },  { GTRACE_KR_BEGIN, 1, 10 }, { GTRACE_KR_END, 1, 30 },
		{ GTRACE_KR_BEGIN, 2, 40 }, { GTRACE_KR_END, 2, 70 },   { GTRACE_KR_END, 0, 100 },
		{ GTRACE_KR_FINISH, 0, 101 },
	};
	static const uint64_t want_begin[N_REGIONS] = { 0, 10, 40 };
	static const uint64_t want_ns[N_REGIONS] = { 100, 20, 30 };
	uint64_t *buf = buffer_new(BLOCKS * GROUPS * (LANE_EVENTS + 1));
	struct launch l = launch_1d(BLOCKS, GROUPS);
	struct leader k[BLOCKS * GROUPS];
	struct tgt_kr_decoded d;

	for (unsigned i = 0; i < BLOCKS * GROUPS; i++)
		k[i] = leader_1d(buf, &l, i / GROUPS, i % GROUPS);
	for (unsigned e = 0; e < LANE_EVENTS; e++)
		for (unsigned i = BLOCKS * GROUPS; i-- > 0;)
			record(&k[i], script[e].kind, script[e].region,
			       1000000 + i * 1000 + script[e].at);
	d = decode(buf, 0);
	CHECK_EQ_U64(d.capacity, BLOCKS * GROUPS * (LANE_EVENTS + 1));
	CHECK_EQ_U64(d.events, BLOCKS * GROUPS * LANE_EVENTS);
	CHECK_EQ_U64(d.lost, 0);
	CHECK_EQ_U64(d.bad, 0);
	CHECK_EQ_U64(d.unmatched, 0);
	CHECK_EQ_U64(d.collisions, 0);
	CHECK_EQ_U64(d.lanes, BLOCKS * GROUPS);
	CHECK_EQ_U64(d.finished, BLOCKS * GROUPS);
	CHECK_EQ_U64(d.grid[0], BLOCKS);
	CHECK_EQ_U64(d.grid[1], 1);
	CHECK_EQ_U64(d.block_dim[0], 32 * GROUPS);
	CHECK_EQ_U64(d.n_spans, BLOCKS * GROUPS * N_REGIONS);
	for (size_t i = 0; i < d.n_spans; i++) {
		const struct tgt_kr_span *s = &d.spans[i];
		unsigned lane = i / N_REGIONS;

		/* by lane, then begin: load, compute, store */
		CHECK_EQ_U64(s->block, lane / GROUPS);
		CHECK_EQ_U64(s->group, lane % GROUPS);
		CHECK_EQ_U64(s->region, i % N_REGIONS);
		CHECK_EQ_U64(span_ns(s), want_ns[s->region]);
		CHECK_EQ_U64(s->begin_ns, 1000000 + lane * 1000 + want_begin[s->region]);
	}
	tgt_kr_decoded_free(&d);
	free(buf);
}

/* A 3-D grid of 3-D blocks: the shape comes back, blocks are linear indices. */
static void test_grid_shape(void)
{
	struct launch l = { { 3, 2, 2 }, { 16, 4, 2 } };
	uint64_t *buf = buffer_new(3 * 12);
	struct tgt_kr_decoded d;

	for (uint32_t z = 0; z < 2; z++)
		for (uint32_t y = 0; y < 2; y++)
			for (uint32_t x = 0; x < 3; x++) {
				struct leader k = leader_init(buf, &l, (struct kr_dim3){ x, y, z },
							      (struct kr_dim3){ 0, 1, 1 }, 0);

				begin(&k, 1, 100 * (x + 3 * (y + 2 * z)));
				end(&k, 1, 100 * (x + 3 * (y + 2 * z)) + 50);
			}
	d = decode(buf, 0);
	CHECK_EQ_U64(d.grid[0], 3);
	CHECK_EQ_U64(d.grid[1], 2);
	CHECK_EQ_U64(d.grid[2], 2);
	CHECK_EQ_U64(d.block_dim[0], 16);
	CHECK_EQ_U64(d.block_dim[1], 4);
	CHECK_EQ_U64(d.block_dim[2], 2);
	CHECK_EQ_U64(d.n_spans, 12);
	CHECK_EQ_U64(d.bad, 0);
	for (size_t i = 0; i < d.n_spans; i++) {
		CHECK_EQ_U64(d.spans[i].block, i);
		CHECK_EQ_U64(d.spans[i].begin_ns, 100 * i);
	}
	tgt_kr_decoded_free(&d);
	free(buf);
}

/*
 * A region left open at finish, one left open at the end of a lane, and
 * an end without a begin: each is counted; the rest pairs up.
 */
static void test_unmatched(void)
{
	struct launch l = launch_1d(3, 1);
	uint64_t *buf = buffer_new(32);
	struct leader a, b, c;
	struct tgt_kr_decoded d;

	a = leader_1d(buf, &l, 0, 0);
	b = leader_1d(buf, &l, 1, 0);
	c = leader_1d(buf, &l, 2, 0);
	begin(&a, 0, 10);
	begin(&a, 1, 20);
	end(&a, 0, 30);		/* 1 never ends */
	finish(&a, 40);
	end(&a, 1, 50);		/* its begin was before the finish */
	begin(&b, 1, 10);	/* no end, no finish: c's are not its */
	end(&c, 1, 5);		/* no begin */
	begin(&c, 1, 10);
	end(&c, 1, 15);
	d = decode(buf, 0);
	CHECK_EQ_U64(d.unmatched, 4);
	CHECK_EQ_U64(d.finished, 1);
	CHECK_EQ_U64(d.lanes, 3);
	CHECK_EQ_U64(d.n_spans, 2);
	CHECK_EQ_U64(d.spans[0].block, 0);
	CHECK_EQ_U64(d.spans[0].region, 0);
	CHECK_EQ_U64(span_ns(&d.spans[0]), 20);
	CHECK_EQ_U64(d.spans[1].block, 2);
	CHECK_EQ_U64(span_ns(&d.spans[1]), 5);
	tgt_kr_decoded_free(&d);
	free(buf);
}

/* A region nested in itself closes from the inside out. */
static void test_self_nesting(void)
{
	struct launch l = launch_1d(1, 1);
	uint64_t *buf = buffer_new(8);
	struct leader k = leader_1d(buf, &l, 0, 0);
	struct tgt_kr_decoded d;

	begin(&k, 1, 100);
	begin(&k, 1, 110);
	end(&k, 1, 120);
	end(&k, 1, 200);
	d = decode(buf, 0);
	CHECK_EQ_U64(d.n_spans, 2);
	CHECK_EQ_U64(d.spans[0].begin_ns, 100);
	CHECK_EQ_U64(d.spans[0].end_ns, 200);
	CHECK_EQ_U64(d.spans[1].begin_ns, 110);
	CHECK_EQ_U64(d.spans[1].end_ns, 120);
	CHECK_EQ_U64(d.unmatched, 0);
	tgt_kr_decoded_free(&d);
	free(buf);
}

/*
 * Three lanes of 5 events into 10 slots: the leaders store into the slots
 * they claimed below the capacity and count the rest lost; the decoder
 * reads no further than the capacity, and refuses words that stop short
 * of the slots claimed.
 */
static void test_overflow(void)
{
	struct launch l = launch_1d(3, 1);
	uint64_t *buf = buffer_new(10);
	struct leader k[3];
	struct tgt_kr_decoded d;

	for (unsigned i = 0; i < 3; i++)
		k[i] = leader_1d(buf, &l, i, 0);
	for (unsigned r = 0; r < 2; r++)
		for (unsigned i = 0; i < 3; i++) {
			begin(&k[i], r, 100 * r);
			end(&k[i], r, 100 * r + 10);
		}
	for (unsigned i = 0; i < 3; i++)
		finish(&k[i], 300);
	CHECK(buf[GTRACE_KR_HDR_CLAIMED] > 10);
	d = decode(buf, 0);
	CHECK_EQ_U64(d.events, 10);
	CHECK_EQ_U64(d.lost, 5);
	CHECK_EQ_U64(d.events + d.lost, 3 * 5);
	/* the first lane has both regions, the others lost their second's end */
	CHECK_EQ_U64(d.n_spans, 2 + 1 + 1);
	CHECK_EQ_U64(d.unmatched, 2);
	CHECK_EQ_U64(d.finished, 0);
	tgt_kr_decoded_free(&d);

	CHECK_EQ_U64(tgt_kr_decode(buf, buffer_words(buf) - 1, N_REGIONS, &d), -EINVAL);
	CHECK(!d.spans);
	free(buf);
}

/*
 * Two leaders in block 1's group 0 (threads 0 and 5): the lane is counted
 * as a collision and gives no spans; block 0's lane is untouched.
 */
static void test_collision(void)
{
	struct launch l = launch_1d(2, 1);
	uint64_t *buf = buffer_new(16);
	struct leader a = leader_1d(buf, &l, 0, 0);
	struct leader b0 = leader_1d(buf, &l, 1, 0);
	struct leader b5 = leader_init(buf, &l, (struct kr_dim3){ 1, 0, 0 }, (struct kr_dim3){ 5, 0, 0 },
				       0);
	struct tgt_kr_decoded d;

	begin(&a, 0, 10);
	begin(&b0, 0, 10);
	begin(&b5, 0, 11);
	end(&a, 0, 20);
	end(&b0, 0, 20);
	end(&b5, 0, 21);
	d = decode(buf, 0);
	CHECK_EQ_U64(d.events, 6);
	CHECK_EQ_U64(d.lanes, 2);
	CHECK_EQ_U64(d.collisions, 1);
	CHECK_EQ_U64(d.n_spans, 1);
	CHECK_EQ_U64(d.spans[0].block, 0);
	tgt_kr_decoded_free(&d);
	free(buf);
}

/*
 * %globaltimer's 64 bits are kept: a region across 2^32 ns (where the
 * seed's 32-bit stamps wrap) and one just below 2^64.
 */
static void test_timestamps(void)
{
	struct launch l = launch_1d(2, 1);
	uint64_t *buf = buffer_new(8);
	struct leader a = leader_1d(buf, &l, 0, 0), b = leader_1d(buf, &l, 1, 0);
	struct tgt_kr_decoded d;

	begin(&a, 0, (1ull << 32) - 50);
	end(&a, 0, (1ull << 32) + 50);
	begin(&b, 2, UINT64_MAX - 1000);
	end(&b, 2, UINT64_MAX - 1);
	d = decode(buf, 0);
	CHECK_EQ_U64(d.n_spans, 2);
	CHECK_EQ_U64(d.spans[0].begin_ns, (1ull << 32) - 50);
	CHECK_EQ_U64(span_ns(&d.spans[0]), 100);
	CHECK_EQ_U64(d.spans[1].end_ns, UINT64_MAX - 1);
	CHECK_EQ_U64(span_ns(&d.spans[1]), 999);
	tgt_kr_decoded_free(&d);
	free(buf);
}

/*
 * Events that do not decode are counted: a region past the names, one
 * past its field, a group past its field, a block outside the grid, and a
 * tag with no kind.
 */
static void test_bad_events(void)
{
	struct launch l = launch_1d(2, 1);
	uint64_t *buf = buffer_new(16);
	struct leader k = leader_1d(buf, &l, 0, 0);
	struct leader group = leader_init(buf, &l, (struct kr_dim3){ 1, 0, 0 },
					  (struct kr_dim3){ 0, 0, 0 }, GTRACE_KR_MAX_GROUPS + 7);
	struct leader outside = leader_1d(buf, &l, 1, 0);
	struct leader no_kind = leader_1d(buf, &l, 0, 1);
	struct tgt_kr_decoded d;

	outside.lane += 5ull << GTRACE_KR_BLOCK_SHIFT;		/* block 6 of 2 */
	begin(&k, N_REGIONS, 10);
	begin(&k, 5000, 10);
	begin(&group, 0, 10);
	begin(&outside, 0, 10);
	record(&no_kind, 0, 1, 10);
	begin(&k, 1, 20);
	end(&k, 1, 30);
	d = decode(buf, 0);
	CHECK_EQ_U64(d.events, 7);
	CHECK_EQ_U64(d.bad, 5);
	CHECK_EQ_U64(d.n_spans, 1);
	CHECK_EQ_U64(d.spans[0].region, 1);
	tgt_kr_decoded_free(&d);
	free(buf);
}

/*
 * Not a buffer: too short, another magic. An unused buffer, and one with
 * no event that decodes, give nothing.
 */
static void test_not_a_buffer(void)
{
	struct launch l = launch_1d(1, 1);
	uint64_t *buf = buffer_new(4);
	struct tgt_kr_decoded d;
	struct leader k;

	CHECK_EQ_U64(tgt_kr_decode(buf, GTRACE_KR_HEADER_WORDS - 1, N_REGIONS, &d), -EINVAL);
	d = decode(buf, 0);
	CHECK_EQ_U64(d.events + d.lanes + d.n_spans + d.grid[0], 0);
	CHECK_EQ_U64(d.capacity, 4);
	tgt_kr_decoded_free(&d);
	k = leader_1d(buf, &l, 0, 0);
	begin(&k, N_REGIONS, 10);
	d = decode(buf, 0);
	CHECK_EQ_U64(d.events, 1);
	CHECK_EQ_U64(d.bad, 1);
	CHECK_EQ_U64(d.lanes + d.n_spans, 0);
	tgt_kr_decoded_free(&d);
	buf[GTRACE_KR_HDR_MAGIC] ^= 1;
	decode(buf, -EINVAL);
	free(buf);
}

static struct tgt_kr_span span(uint64_t block, uint32_t group, uint32_t region,
			       uint64_t begin_ns, uint64_t ns)
{
	return (struct tgt_kr_span){ block, group, region, begin_ns, begin_ns + ns };
}

/*
 * The lowest blocks that have spans get lanes, whatever their numbers;
 * the lanes of the others are counted.
 */
static void test_shown_spans(void)
{
	struct tgt_kr_span spans[] = {
		span(0, 0, 0, 0, 1), span(0, 0, 1, 5, 1), span(0, 1, 0, 0, 1),
		span(3, 0, 0, 0, 1),
		span(7, 0, 0, 0, 1), span(7, 1, 0, 0, 1), span(7, 2, 0, 0, 1), span(7, 2, 1, 9, 1),
		span(9, 0, 0, 0, 1),
	};
	struct tgt_kr_decoded d = { .spans = spans, .n_spans = sizeof(spans) / sizeof(spans[0]) };
	uint64_t capped;

	CHECK_EQ_U64(tgt_kr_shown_spans(&d, 2, &capped), 4);
	CHECK_EQ_U64(capped, 4);
	CHECK_EQ_U64(tgt_kr_shown_spans(&d, 3, &capped), 8);
	CHECK_EQ_U64(capped, 1);
	CHECK_EQ_U64(tgt_kr_shown_spans(&d, 0, &capped), 0);
	CHECK_EQ_U64(capped, 7);
	CHECK_EQ_U64(tgt_kr_shown_spans(&d, TGT_KR_BLOCKS_DEFAULT, &capped), d.n_spans);
	CHECK_EQ_U64(capped, 0);
}

/*
 * Region 0 takes 10 and 20 (block 0 group 0), 30 (block 0 group 1), 40
 * (block 1) and 100 (block 2): per block 60, 40 and 100. Region 1 has an
 * even count; region 2 never ran.
 */
static void test_region_stats(void)
{
	struct tgt_kr_span spans[] = {
		span(0, 0, 0, 1000, 10), span(0, 0, 0, 1100, 20), span(0, 0, 1, 1050, 10),
		span(0, 1, 0, 1000, 30), span(1, 0, 0, 900, 40), span(2, 0, 1, 2000, 15),
		span(2, 0, 0, 1500, 100),
	};
	struct tgt_kr_decoded d = { .spans = spans, .n_spans = sizeof(spans) / sizeof(spans[0]) };
	struct tgt_kr_stats st[N_REGIONS];

	CHECK_EQ_U64(tgt_kr_region_stats(&d, N_REGIONS, st), 0);
	CHECK_EQ_U64(st[0].instances, 5);
	CHECK_EQ_U64(st[0].sum_ns, 200);
	CHECK_EQ_U64(st[0].min_ns, 10);
	CHECK_EQ_U64(st[0].max_ns, 100);
	CHECK_EQ_U64(st[0].median_ns, 30);
	CHECK_EQ_U64(st[0].first_ns, 900);
	CHECK_EQ_U64(st[0].last_ns, 1600);
	CHECK_EQ_U64(st[0].lanes, 4);
	CHECK_EQ_U64(st[0].blocks, 3);
	CHECK_EQ_U64(st[0].block_median_ns, 60);
	CHECK_EQ_U64(st[0].block_max_ns, 100);
	CHECK_EQ_U64(st[1].instances, 2);
	CHECK_EQ_U64(st[1].median_ns, 12);
	CHECK_EQ_U64(st[1].block_median_ns, 12);
	CHECK_EQ_U64(st[1].first_ns, 1050);
	CHECK_EQ_U64(st[1].last_ns, 2015);
	CHECK_EQ_U64(st[2].instances, 0);
	CHECK_EQ_U64(st[2].sum_ns, 0);
}

/* BLOCKS blocks of GROUPS groups, each with a load, a compute and a finish. */
static uint64_t *submit_buffer(void)
{
	struct launch l = launch_1d(BLOCKS, GROUPS);
	uint64_t *buf = buffer_new(BLOCKS * GROUPS * 6);

	for (uint32_t i = 0; i < BLOCKS * GROUPS; i++) {
		struct leader k = leader_1d(buf, &l, i / GROUPS, i % GROUPS);

		begin(&k, 0, 1000 + i);
		end(&k, 0, 1100 + i);
		begin(&k, 1, 1200 + i);
		end(&k, 1, 1500 + i);
		finish(&k, 1600);
	}
	return buf;
}

/* Without a recording: decoded, nothing reported; arguments checked. */
static void test_submit_off(void)
{
	uint64_t *buf = submit_buffer();
	uint64_t reported = gtrace_reported_spans();
	size_t words = buffer_words(buf);
	const char *const holey[N_REGIONS] = { "load", NULL, "store" };

	CHECK(!gtrace_reporting_active());
	CHECK_EQ_U64(gtrace_kr_submit(buf, words, "k", region_names, N_REGIONS, 0, 0), 0);
	CHECK_EQ_U64(gtrace_reported_spans(), reported);
	CHECK_EQ_U64(gtrace_kr_submit(buf, words, NULL, region_names, N_REGIONS, 0, 0), -EINVAL);
	CHECK_EQ_U64(gtrace_kr_submit(buf, words, "k", holey, N_REGIONS, 0, 0), -EINVAL);
	CHECK_EQ_U64(gtrace_kr_submit(buf, words, "k", NULL, N_REGIONS, 0, 0), -EINVAL);
	CHECK_EQ_U64(gtrace_kr_submit(buf, words, "k", region_names, GTRACE_KR_MAX_REGIONS + 1, 0,
				      0),
		     -EINVAL);
	CHECK_EQ_U64(gtrace_kr_submit(buf, GTRACE_KR_HEADER_WORDS, "k", region_names, N_REGIONS, 0,
				      0),
		     -EINVAL);
	free(buf);
}

/* The last value of a counter of the process; 0 when never set. */
static uint64_t counter(const char *name)
{
	struct tgt_prop_copy *copies;
	uint64_t now, value = 0;
	int n = tgt_props_since(0, &copies, &now);

	for (int i = 0; i < n; i++)
		if (!copies[i].text && !strcmp(copies[i].key->str, name))
			value = copies[i].value;
	tgt_props_free(copies, n);
	return value;
}

/*
 * Reporting forced on, with no recorder: the spans of the first blocks
 * (GTRACE_KR_BLOCKS=2) and one per region are queued, and the counters
 * add up over two buffers, one of them not a buffer.
 */
static void test_submit_on(void)
{
	uint64_t *buf = submit_buffer();
	uint64_t reported = gtrace_reported_spans();
	size_t words = buffer_words(buf);

	tgt_set_active(true);
	CHECK_EQ_U64(gtrace_kr_submit(buf, words, "attn", region_names, N_REGIONS, 1000, 16), 0);
	CHECK_EQ_U64(gtrace_reported_spans() - reported, 2 * GROUPS * 2 + 2);
	buf[GTRACE_KR_HDR_MAGIC] = 0;
	CHECK_EQ_U64(gtrace_kr_submit(buf, words, "attn", region_names, N_REGIONS, 0, 0), -EINVAL);
	tgt_set_active(false);
	CHECK_EQ_U64(counter("kr.buffers"), 1);
	CHECK_EQ_U64(counter("kr.bad-buffers"), 1);
	CHECK_EQ_U64(counter("kr.events"), BLOCKS * GROUPS * 5);
	CHECK_EQ_U64(counter("kr.lanes-capped"), (BLOCKS - 2) * GROUPS);
	CHECK_EQ_U64(counter("kr.overflowed"), 0);
	CHECK_EQ_U64(counter("kr.events-lost"), 0);
	CHECK_EQ_U64(counter("kr.unmatched"), 0);
	CHECK_EQ_U64(counter("kr.collisions"), 0);
	CHECK_EQ_U64(counter("kr.bad-events"), 0);
	free(buf);
}

int main(void)
{
	setenv(TGT_KR_BLOCKS_ENV, BLOCKS_SHOWN, 1);
	RUN(test_nested_regions);
	RUN(test_grid_shape);
	RUN(test_unmatched);
	RUN(test_self_nesting);
	RUN(test_overflow);
	RUN(test_collision);
	RUN(test_timestamps);
	RUN(test_bad_events);
	RUN(test_not_a_buffer);
	RUN(test_shown_spans);
	RUN(test_region_stats);
	RUN(test_submit_off);
	RUN(test_submit_on);
	return test_summary();
}
