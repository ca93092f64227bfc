/* SPDX-License-Identifier: MIT */
/*
 * Kernel regions, the host's half in plain C: decodes the buffer that the
 * markers of gtrace/kernel-regions.cuh filled (layout in gtrace/target.h)
 * and reports its regions: the first blocks' on a lane per (block, group),
 * every region's statistics over all blocks on one lane per kernel, and
 * cumulative counts of what could not be decoded.
 */
#include "target/internal.h"
#include "target/kregions.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "contract/attrs.h"
#include "contract/counters.h"
#include "contract/lanes.h"

/* The kernel's part of a lane name: room left for " b<block> g<group>". */
#define KERNEL_NAME_MAX (TGT_NAME_MAX - 32)
#define LANES_PER_BLOCK (GTRACE_KR_GROUP_MASK + 1)

/* One stored event, unpacked. */
struct event {
	uint64_t lane;			/* block * LANES_PER_BLOCK + group */
	uint64_t slot;			/* claim order: one leader's event order */
	uint64_t ts;
	uint32_t thread;
	uint32_t region;
	unsigned kind;
};

/* Orders two keys of n fields, the first field first. */
static int cmp_keys(const uint64_t *a, const uint64_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

static int by_lane_slot(const void *a, const void *b)
{
	const struct event *x = a, *y = b;

	return cmp_keys((const uint64_t[]){ x->lane, x->slot },
			(const uint64_t[]){ y->lane, y->slot }, 2);
}

static int by_lane_begin(const void *a, const void *b)
{
	const struct tgt_kr_span *x = a, *y = b;

	return cmp_keys((const uint64_t[]){ x->block, x->group, x->begin_ns, x->end_ns, x->region },
			(const uint64_t[]){ y->block, y->group, y->begin_ns, y->end_ns, y->region },
			5);
}

static int by_region_lane(const void *a, const void *b)
{
	const struct tgt_kr_span *x = a, *y = b;

	return cmp_keys((const uint64_t[]){ x->region, x->block, x->group },
			(const uint64_t[]){ y->region, y->block, y->group }, 3);
}

static void unpack_dims(uint64_t grid, uint64_t block, struct tgt_kr_decoded *out)
{
	out->grid[0] = (uint32_t)grid;
	out->grid[1] = (uint16_t)(grid >> 32);
	out->grid[2] = (uint16_t)(grid >> 48);
	out->block_dim[0] = (uint16_t)block;
	out->block_dim[1] = (uint16_t)(block >> 16);
	out->block_dim[2] = (uint16_t)(block >> 32);
}

/* The blocks whose events decode: the grid's, or all that fit the field when it is unknown. */
static uint64_t valid_blocks(const struct tgt_kr_decoded *d, uint64_t grid_word)
{
	uint64_t blocks = (uint64_t)d->grid[0] * d->grid[1] * d->grid[2];

	if (!grid_word || blocks > GTRACE_KR_BLOCK_MASK)
		return GTRACE_KR_BLOCK_MASK;
	return blocks;
}

/* The event of a slot's words; false when it does not decode. */
static bool unpack(uint64_t ts, uint64_t tag, uint64_t slot, unsigned n_regions, uint64_t blocks,
		   struct event *e)
{
	uint64_t block = tag >> GTRACE_KR_BLOCK_SHIFT & GTRACE_KR_BLOCK_MASK;
	uint32_t group = tag >> GTRACE_KR_GROUP_SHIFT & GTRACE_KR_GROUP_MASK;

	e->lane = block * LANES_PER_BLOCK + group;
	e->slot = slot;
	e->ts = ts;
	e->thread = tag >> GTRACE_KR_THREAD_SHIFT & GTRACE_KR_THREAD_MASK;
	e->region = tag >> GTRACE_KR_REGION_SHIFT & GTRACE_KR_REGION_MASK;
	e->kind = tag & GTRACE_KR_KIND_MASK;
	if (!e->kind || group >= GTRACE_KR_MAX_GROUPS || block >= blocks)
		return false;
	return e->kind == GTRACE_KR_FINISH || e->region < n_regions;
}

static bool one_leader(const struct event *ev, size_t n)
{
	for (size_t k = 1; k < n; k++)
		if (ev[k].thread != ev[0].thread)
			return false;
	return true;
}

static void add_span(struct tgt_kr_decoded *out, const struct event *begin, const struct event *end)
{
	out->spans[out->n_spans++] = (struct tgt_kr_span){
		.block = begin->lane / LANES_PER_BLOCK,
		.group = begin->lane % LANES_PER_BLOCK,
		.region = begin->region,
		.begin_ns = begin->ts,
		.end_ns = end->ts,
	};
}

#define NO_EVENT SIZE_MAX

/* Where the open begins of the regions are: each region's a stack. */
struct open_begins {
	size_t *top;		/* by region: the index in ev of its latest open begin */
	size_t *below;		/* by index in ev: the begin of its region opened before */
	size_t floor;		/* begins below this index are closed: another lane's, or finished */
	size_t n;		/* open begins */
};

/* The latest open begin of region, taken off its stack; NO_EVENT when none. */
static size_t close_latest(struct open_begins *o, uint32_t region)
{
	size_t k = o->top[region];

	if (k == NO_EVENT || k < o->floor)
		return NO_EVENT;
	o->top[region] = o->below[k];
	o->n--;
	return k;
}

/*
 * The events ev[from .. to) of one leader's lane, in its order: an end
 * closes the latest open begin of its region (so a region nested in itself
 * closes from the inside out); a finish leaves no region open. Each event
 * costs the same, however many begins are open.
 */
static void match_lane(const struct event *ev, size_t from, size_t to, struct open_begins *o,
		       struct tgt_kr_decoded *out)
{
	bool finished = false;
	size_t begin;

	o->floor = from;
	o->n = 0;
	for (size_t k = from; k < to; k++) {
		switch (ev[k].kind) {
		case GTRACE_KR_BEGIN:
			o->below[k] = o->top[ev[k].region];
			o->top[ev[k].region] = k;
			o->n++;
			break;
		case GTRACE_KR_END:
			begin = close_latest(o, ev[k].region);
			if (begin == NO_EVENT)
				out->unmatched++;
			else
				add_span(out, &ev[begin], &ev[k]);
			break;
		case GTRACE_KR_FINISH:
			finished = true;
			out->unmatched += o->n;
			o->n = 0;
			o->floor = k + 1;
			break;
		}
	}
	out->unmatched += o->n;
	out->finished += finished;
}

/* The n > 0 events, sorted by lane and slot, of regions below n_regions, into spans and counts. */
static int match(const struct event *ev, size_t n, unsigned n_regions, struct tgt_kr_decoded *out)
{
	struct open_begins o = {
		.top = malloc((n_regions ? n_regions : 1) * sizeof(*o.top)),
		.below = malloc(n * sizeof(*o.below)),
	};
	size_t i, j;

	/* a span takes two events */
	out->spans = malloc((n / 2 + 1) * sizeof(*out->spans));
	if (!o.top || !o.below || !out->spans) {
		free(o.top);
		free(o.below);
		return -ENOMEM;
	}
	for (unsigned r = 0; r < n_regions; r++)
		o.top[r] = NO_EVENT;
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && ev[j].lane == ev[i].lane; j++)
			;
		out->lanes++;
		if (one_leader(ev + i, j - i))
			match_lane(ev, i, j, &o, out);
		else
			out->collisions++;
	}
	free(o.top);
	free(o.below);
	qsort(out->spans, out->n_spans, sizeof(*out->spans), by_lane_begin);
	return 0;
}

int tgt_kr_decode(const uint64_t *words, size_t n_words, unsigned n_regions,
		  struct tgt_kr_decoded *out)
{
	uint64_t claimed, slots, blocks;
	struct event *ev;
	size_t n = 0;
	int err;

	memset(out, 0, sizeof(*out));
	if (n_words < GTRACE_KR_HEADER_WORDS || words[GTRACE_KR_HDR_MAGIC] != GTRACE_KR_MAGIC)
		return -EINVAL;
	out->capacity = words[GTRACE_KR_HDR_CAPACITY];
	out->lost = words[GTRACE_KR_HDR_LOST];
	claimed = words[GTRACE_KR_HDR_CLAIMED];
	slots = claimed < out->capacity ? claimed : out->capacity;
	if (slots > (n_words - GTRACE_KR_HEADER_WORDS) / GTRACE_KR_SLOT_WORDS)
		return -EINVAL;
	unpack_dims(words[GTRACE_KR_HDR_GRID], words[GTRACE_KR_HDR_BLOCK], out);
	blocks = valid_blocks(out, words[GTRACE_KR_HDR_GRID]);
	if (!slots)
		return 0;
	ev = malloc(slots * sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	for (uint64_t i = 0; i < slots; i++) {
		const uint64_t *w = words + GTRACE_KR_HEADER_WORDS + i * GTRACE_KR_SLOT_WORDS;

		if (!w[1])
			continue;	/* claimed ahead, never used */
		out->events++;
		if (unpack(w[0], w[1], i, n_regions, blocks, &ev[n]))
			n++;
		else
			out->bad++;
	}
	qsort(ev, n, sizeof(*ev), by_lane_slot);
	err = n ? match(ev, n, n_regions, out) : 0;
	free(ev);
	if (err)
		tgt_kr_decoded_free(out);
	return err;
}

void tgt_kr_decoded_free(struct tgt_kr_decoded *d)
{
	free(d->spans);
	d->spans = NULL;
	d->n_spans = 0;
}

/* Corrupt words may put an end before its begin: that lasts nothing. */
static uint64_t span_ns(const struct tgt_kr_span *s)
{
	return s->end_ns > s->begin_ns ? s->end_ns - s->begin_ns : 0;
}

static int by_value(const void *a, const void *b)
{
	return cmp_keys(a, b, 1);
}

/* The median of n > 0 sorted values: between the middle two when n is even. */
static uint64_t median(const uint64_t *v, size_t n)
{
	const uint64_t *mid = &v[n / 2];

	return n % 2 ? *mid : mid[-1] + (mid[0] - mid[-1]) / 2;
}

/* One region's n spans, sorted by block and group; values: room for n. */
static void region_stats(const struct tgt_kr_span *sp, size_t n, uint64_t *values,
			 struct tgt_kr_stats *s)
{
	size_t blocks = 0;

	s->instances = n;
	s->min_ns = UINT64_MAX;
	s->first_ns = UINT64_MAX;
	for (size_t k = 0; k < n; k++) {
		uint64_t ns = span_ns(&sp[k]);
		bool new_block = !k || sp[k].block != sp[k - 1].block;

		if (new_block)
			values[blocks++] = 0;
		values[blocks - 1] += ns;
		s->lanes += new_block || sp[k].group != sp[k - 1].group;
		s->sum_ns += ns;
		s->min_ns = ns < s->min_ns ? ns : s->min_ns;
		s->max_ns = ns > s->max_ns ? ns : s->max_ns;
		s->first_ns = sp[k].begin_ns < s->first_ns ? sp[k].begin_ns : s->first_ns;
		s->last_ns = sp[k].end_ns > s->last_ns ? sp[k].end_ns : s->last_ns;
	}
	s->blocks = blocks;
	qsort(values, blocks, sizeof(*values), by_value);
	s->block_median_ns = median(values, blocks);
	s->block_max_ns = values[blocks - 1];
	for (size_t k = 0; k < n; k++)
		values[k] = span_ns(&sp[k]);
	qsort(values, n, sizeof(*values), by_value);
	s->median_ns = median(values, n);
}

int tgt_kr_region_stats(const struct tgt_kr_decoded *d, unsigned n_regions,
			struct tgt_kr_stats *stats)
{
	struct tgt_kr_span *spans;
	uint64_t *values;
	size_t i, j, n = d->n_spans;

	memset(stats, 0, n_regions * sizeof(*stats));
	if (!n)
		return 0;
	spans = malloc(n * sizeof(*spans));
	values = malloc(n * sizeof(*values));
	if (!spans || !values) {
		free(spans);
		free(values);
		return -ENOMEM;
	}
	memcpy(spans, d->spans, n * sizeof(*spans));
	qsort(spans, n, sizeof(*spans), by_region_lane);
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && spans[j].region == spans[i].region; j++)
			;
		region_stats(spans + i, j - i, values, &stats[spans[i].region]);
	}
	free(spans);
	free(values);
	return 0;
}

size_t tgt_kr_shown_spans(const struct tgt_kr_decoded *d, uint64_t max_blocks,
			  uint64_t *capped_lanes)
{
	const struct tgt_kr_span *s = d->spans;
	uint64_t blocks = 0;
	size_t shown = 0;

	*capped_lanes = 0;
	for (size_t i = 0; i < d->n_spans; i++) {
		bool new_block = !i || s[i].block != s[i - 1].block;

		blocks += new_block;
		if (blocks <= max_blocks)
			shown = i + 1;
		else if (new_block || s[i].group != s[i - 1].group)
			(*capped_lanes)++;
	}
	return shown;
}

/* The kr.* counters, sums over the buffers submitted while a recording ran. */
static uint64_t totals[KR_COUNTERS];

/*
 * Adds to the totals and sets the counters. Collects on several threads
 * may set them out of order; the next collect sets the latest totals.
 */
static void count(const uint64_t add[KR_COUNTERS])
{
	for (int i = 0; i < KR_COUNTERS; i++)
		TGT_ADD(&totals[i], add[i]);
	for (int i = 0; i < KR_COUNTERS; i++)
		gtrace_counter_set(kr_counters[i].name, TGT_LOAD(&totals[i]));
}

static pthread_once_t blocks_once = PTHREAD_ONCE_INIT;
static uint64_t blocks_shown;

static void read_blocks_env(void)
{
	const char *env = getenv(TGT_KR_BLOCKS_ENV);
	char *end;
	unsigned long long n;

	blocks_shown = TGT_KR_BLOCKS_DEFAULT;
	if (!env || !isdigit((unsigned char)*env))
		return;
	n = strtoull(env, &end, 10);
	if (!*end)
		blocks_shown = n;
}

/* The region's times in the recording's clock: modulo 2^64, as the GPU's wrap. */
static uint64_t host_ns(uint64_t gpu_ns, int64_t offset_ns)
{
	return gpu_ns + (uint64_t)offset_ns;
}

/* The spans of the first blocks, each on its (block, group) lane. */
static int report_lanes(const struct tgt_kr_decoded *d, size_t shown, const char *kernel,
			const char *const *region_names, int64_t offset_ns)
{
	gtrace_lane *lane = NULL;

	for (size_t i = 0; i < shown; i++) {
		const struct tgt_kr_span *s = &d->spans[i];

		if (!i || s->block != s[-1].block || s->group != s[-1].group) {
			char name[TGT_NAME_MAX + 1];

			snprintf(name, sizeof(name), "%.*s b%" PRIu64 " g%" PRIu32, KERNEL_NAME_MAX,
				 kernel, s->block, s->group);
			lane = gtrace_lane_get(KREGIONS_LANE_KIND, name);
			if (!lane)
				return -ENOMEM;
		}
		gtrace_span(lane, region_names[s->region], host_ns(s->begin_ns, offset_ns),
			    host_ns(s->end_ns, offset_ns), NULL);
	}
	return 0;
}

/* Per region that ran, a span from its first begin to its last end, with its statistics. */
static int report_stats(const struct tgt_kr_stats *stats, const char *kernel,
			const char *const *region_names, unsigned n_regions, int64_t offset_ns,
			uint64_t clock_error_ns)
{
	char name[TGT_NAME_MAX + 1];
	gtrace_lane *lane;

	snprintf(name, sizeof(name), "%.*s" KREGIONS_STATS_LANE_SUFFIX, KERNEL_NAME_MAX, kernel);
	lane = gtrace_lane_get(KREGIONS_STATS_LANE_KIND, name);
	if (!lane)
		return -ENOMEM;
	for (unsigned r = 0; r < n_regions; r++) {
		const struct tgt_kr_stats *s = &stats[r];
		const gtrace_attr attrs[] = {
			{ KR_ATTR_INSTANCES, s->instances },
			{ KR_ATTR_SUM_NS, s->sum_ns },
			{ KR_ATTR_MIN_NS, s->min_ns },
			{ KR_ATTR_MAX_NS, s->max_ns },
			{ KR_ATTR_MEDIAN_NS, s->median_ns },
			{ KR_ATTR_LANES, s->lanes },
			{ KR_ATTR_BLOCKS, s->blocks },
			{ KR_ATTR_BLOCK_MEDIAN_NS, s->block_median_ns },
			{ KR_ATTR_BLOCK_MAX_NS, s->block_max_ns },
			{ KR_ATTR_CLOCK_ERROR_NS, clock_error_ns },
		};

		if (s->instances)
			gtrace_span_attrs(lane, region_names[r], host_ns(s->first_ns, offset_ns),
					  host_ns(s->last_ns, offset_ns), NULL, attrs,
					  sizeof(attrs) / sizeof(attrs[0]));
	}
	return 0;
}

static int report(const struct tgt_kr_decoded *d, const char *kernel,
		  const char *const *region_names, unsigned n_regions, int64_t offset_ns,
		  uint64_t clock_error_ns)
{
	struct tgt_kr_stats *stats = calloc(n_regions ? n_regions : 1, sizeof(*stats));
	uint64_t add[KR_COUNTERS] = {
		[KR_BUFFERS] = 1,
		[KR_EVENTS] = d->events,
		[KR_OVERFLOWED] = d->lost > 0,
		[KR_EVENTS_LOST] = d->lost,
		[KR_UNMATCHED] = d->unmatched,
		[KR_COLLISIONS] = d->collisions,
		[KR_BAD_EVENTS] = d->bad,
	};
	size_t shown;
	int err;

	pthread_once(&blocks_once, read_blocks_env);
	shown = tgt_kr_shown_spans(d, blocks_shown, &add[KR_LANES_CAPPED]);
	err = stats ? tgt_kr_region_stats(d, n_regions, stats) : -ENOMEM;
	if (!err)
		err = report_lanes(d, shown, kernel, region_names, offset_ns);
	if (!err)
		err = report_stats(stats, kernel, region_names, n_regions, offset_ns,
				   clock_error_ns);
	count(add);
	free(stats);
	return err;
}

int gtrace_kr_submit(const uint64_t *words, size_t n_words, const char *kernel,
		     const char *const *region_names, unsigned n_regions, int64_t clock_offset_ns,
		     uint64_t clock_error_ns)
{
	struct tgt_kr_decoded d;
	int err;

	if (!words || !kernel || n_regions > GTRACE_KR_MAX_REGIONS || (n_regions && !region_names))
		return -EINVAL;
	for (unsigned r = 0; r < n_regions; r++)
		if (!region_names[r])
			return -EINVAL;
	err = tgt_kr_decode(words, n_words, n_regions, &d);
	if (err == -EINVAL && gtrace_reporting_active())
		count((const uint64_t[KR_COUNTERS]){ [KR_BAD_BUFFERS] = 1 });
	if (err)
		return err;
	if (gtrace_reporting_active())
		err = report(&d, kernel, region_names, n_regions, clock_offset_ns, clock_error_ns);
	tgt_kr_decoded_free(&d);
	return err;
}
