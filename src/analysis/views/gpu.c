/* SPDX-License-Identifier: MIT */
/*
 * report --gpu: the kernels, copies and memsets of the CUDA lanes and the
 * API calls and waits of the CPU threads, each summed by name (and by rank
 * when several recordings are loaded, as ranks are told apart). Every group
 * sorts its durations once, so medians are exact and the work is
 * O(spans log spans). gpu-print.c prints the tables as text and JSON.
 */
#include "analysis/views/gpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contract/attrs.h"
#include "contract/lanes.h"
#include "symbols/demangle.h"
#include "util/saturate.h"
#include "util/xalloc.h"


enum gpu_table_id {
	TABLE_KERNELS,
	TABLE_COPIES,
	TABLE_API,
	TABLE_WAITS,
	GPU_TABLES,		/* as a lane's table: none */
	REGION_SUMMARIES,	/* as a lane's table: the kernel regions' summaries */
};

/* The kernel attributes of a configuration. */
enum config_attr {
	ATTR_GRID_X, ATTR_GRID_Y, ATTR_GRID_Z,
	ATTR_BLOCK_X, ATTR_BLOCK_Y, ATTR_BLOCK_Z,
	ATTR_REGS, ATTR_OCCUPANCY, ATTR_LIMITER,
	CONFIG_ATTRS
};

static const char *const config_keys[CONFIG_ATTRS] = {
	[ATTR_GRID_X] = CUDA_ATTR_GRID_X, [ATTR_GRID_Y] = CUDA_ATTR_GRID_Y,
	[ATTR_GRID_Z] = CUDA_ATTR_GRID_Z, [ATTR_BLOCK_X] = CUDA_ATTR_BLOCK_X,
	[ATTR_BLOCK_Y] = CUDA_ATTR_BLOCK_Y, [ATTR_BLOCK_Z] = CUDA_ATTR_BLOCK_Z,
	[ATTR_REGS] = CUDA_ATTR_REGS, [ATTR_OCCUPANCY] = CUDA_ATTR_OCCUPANCY_PERMILLE,
	[ATTR_LIMITER] = CUDA_ATTR_OCCUPANCY_LIMITER,
};

/* One selected span of a table: its group (by rank and name) and duration. */
struct entry {
	uint32_t group;
	uint32_t span;		/* index in m->t.spans */
	uint64_t dur;
};

struct gpu_group {
	uint32_t rank, name;
};

struct gpu_builder {
	const struct model *m;
	struct gpu_report *r;
	VEC(struct entry) entries[GPU_TABLES];
	struct u64map groups;	/* (rank * GPU_TABLES + table) << 32 | name -> group index + 1 */
	VEC(struct gpu_group) group_key;	/* by group index */
	uint32_t config_key[CONFIG_ATTRS];	/* string ids of config_keys */
	uint32_t bytes_key;
	VEC(uint32_t) summaries;	/* indexes in m->t.spans of the regions' summaries */
};

/* The table of a lane's class, or GPU_TABLES for a lane of another class. */
static enum gpu_table_id lane_table(enum model_lane_class class)
{
	switch (class) {
	case MODEL_LANE_KREGION_STATS:
		return REGION_SUMMARIES;
	case MODEL_LANE_CUDA_STREAM:
		return TABLE_KERNELS;
	case MODEL_LANE_CUDA_API:
		return TABLE_API;
	case MODEL_LANE_CUDA_WAIT:
		return TABLE_WAITS;
	default:
		return GPU_TABLES;
	}
}

/* The index in m->ranks of the recording a span's lane is of. */
static uint32_t lane_rank(const struct model *m, uint32_t lane)
{
	return (uint32_t)model_rank_of(m, m->t.lanes.v[lane - 1].pid);
}

/* By rank number, then by recording for ranks that share a number. */
static int cmp_ranks(const struct model *m, uint32_t a, uint32_t b)
{
	int64_t ra = m->ranks.v[a].rank, rb = m->ranks.v[b].rank;

	if (ra != rb)
		return ra < rb ? -1 : 1;
	return a < b ? -1 : a > b;
}

static void add_entry(struct gpu_builder *b, enum gpu_table_id table, uint32_t span)
{
	const struct tr_span *sp = &b->m->t.spans.v[span];
	uint32_t rank = lane_rank(b->m, sp->lane);
	uint32_t group = u64map_pair_id(&b->groups, rank * GPU_TABLES + table, sp->name);
	struct entry *e;

	if (group > b->group_key.len)
		*VEC_PUSH(&b->group_key) = (struct gpu_group){ .rank = rank, .name = sp->name };
	e = VEC_PUSH(&b->entries[table]);
	e->group = group - 1;
	e->span = span;
	e->dur = sp->dur;
}

static void collect(struct gpu_builder *b, struct funcs *f, const struct sample_filter *flt)
{
	const struct model *m = b->m;
	size_t nlanes = m->t.lanes.len;
	uint8_t *table = xmalloc(nlanes + 1);
	bool *selected = xcalloc(nlanes + 1, sizeof(*selected));

	memset(table, GPU_TABLES, nlanes + 1);

	for (size_t ti = m->real_threads; ti < m->threads.len; ti++) {
		const struct model_thread *th = &m->threads.v[ti];

		table[th->lane] = (uint8_t)lane_table(model_lane_class(m, th->lane));
		if (table[th->lane] == GPU_TABLES)
			continue;
		b->r->lanes += table[th->lane] != REGION_SUMMARIES;
		selected[th->lane] = filter_lane(flt, f, th);
	}
	for (size_t i = 0; i < m->t.spans.len; i++) {
		const struct tr_span *sp = &m->t.spans.v[i];
		enum gpu_table_id t;

		if (!sp->lane || sp->lane > nlanes || table[sp->lane] == GPU_TABLES ||
		    !filter_span(flt, f, selected, sp))
			continue;
		t = (enum gpu_table_id)table[sp->lane];
		if (t == REGION_SUMMARIES) {
			*VEC_PUSH(&b->summaries) = (uint32_t)i;
			continue;
		}
		if (t == TABLE_KERNELS && model_span_is_copy(m, sp))
			t = TABLE_COPIES;
		add_entry(b, t, (uint32_t)i);
	}
	free(table);
	free(selected);
}

static int cmp_entries(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;

	if (a->group != b->group)
		return a->group < b->group ? -1 : 1;
	if (a->dur != b->dur)
		return a->dur < b->dur ? -1 : 1;
	return a->span < b->span ? -1 : a->span > b->span;
}

/* The statistics of a run of durations, sorted ascending. */
static void run_stats(struct gpu_stats *st, const uint64_t *dur, size_t n)
{
	double avg, sq = 0;

	st->count = n;
	st->min_ns = dur[0];
	st->max_ns = dur[n - 1];
	for (size_t i = 0; i < n; i++)
		st->total_ns = u64_sat_add(st->total_ns, dur[i]);
	st->median_ns = u64_median(dur, n);
	avg = (double)st->total_ns / (double)n;
	for (size_t i = 0; i < n; i++)
		sq += ((double)dur[i] - avg) * ((double)dur[i] - avg);
	/* The sample standard deviation, as Nsight Systems reports it. */
	st->stddev_ns = n > 1 ? sqrt(sq / (double)(n - 1)) : 0;
}

static int cmp_configs(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct kernel_config));
}

/* A kernel's attribute, or KERNEL_CONFIG_UNKNOWN. */
static uint64_t config_attr(const struct gpu_builder *b, uint32_t span, enum config_attr a)
{
	uint64_t v;

	if (!b->config_key[a] || !model_span_attr(b->m, span + 1, b->config_key[a], &v))
		return KERNEL_CONFIG_UNKNOWN;
	return v;
}

static void read_config(struct kernel_config *c, const struct gpu_builder *b, uint32_t span)
{
	for (int d = 0; d < 3; d++) {
		c->grid[d] = config_attr(b, span, (enum config_attr)(ATTR_GRID_X + d));
		c->block[d] = config_attr(b, span, (enum config_attr)(ATTR_BLOCK_X + d));
	}
	c->regs = config_attr(b, span, ATTR_REGS);
	c->occupancy = config_attr(b, span, ATTR_OCCUPANCY);
	c->limiter = config_attr(b, span, ATTR_LIMITER);
}

/* The most frequent launch configuration of a run of kernels, and how many there are. */
static void run_config(struct gpu_builder *b, struct gpu_row *row, const struct entry *e,
		       size_t n)
{
	struct kernel_config *configs = xcalloc(n, sizeof(*configs));
	size_t best = 0, best_len = 0;

	for (size_t i = 0; i < n; i++)
		read_config(&configs[i], b, e[i].span);
	qsort(configs, n, sizeof(*configs), cmp_configs);
	for (size_t i = 0, end; i < n; i = end) {
		for (end = i + 1; end < n && !cmp_configs(&configs[end], &configs[i]); end++)
			;
		row->configs++;
		if (end - i > best_len) {
			best = i;
			best_len = end - i;
		}
	}
	row->config = configs[best];
	free(configs);
}

/* Bytes moved, and the slowest and fastest copy's bandwidth. */
static void run_bytes(struct gpu_builder *b, struct gpu_row *row, const struct entry *e,
		      size_t n)
{
	bool first = true;

	for (size_t i = 0; i < n; i++) {
		uint64_t bytes;
		double gbps;

		if (!b->bytes_key || !model_span_attr(b->m, e[i].span + 1, b->bytes_key, &bytes))
			continue;
		row->bytes = u64_sat_add(row->bytes, bytes);
		if (!e[i].dur)
			continue;
		gbps = (double)bytes / (double)e[i].dur;	/* bytes per ns is GB/s */
		if (first || gbps < row->min_gbps)
			row->min_gbps = gbps;
		if (first || gbps > row->max_gbps)
			row->max_gbps = gbps;
		first = false;
	}
}

static int cmp_rows(const void *pa, const void *pb, void *pctx)
{
	const struct gpu_row *a = pa, *b = pb;
	const struct model *m = pctx;
	const char *na = model_str(m, a->name), *nb = model_str(m, b->name);
	int c;

	if ((c = cmp_ranks(m, a->rank, b->rank)))
		return c;
	if (a->st.total_ns != b->st.total_ns)
		return a->st.total_ns > b->st.total_ns ? -1 : 1;
	if ((c = strcmp(na ? na : "", nb ? nb : "")))
		return c;
	return a->name < b->name ? -1 : a->name > b->name;
}

static void build_table(struct gpu_builder *b, enum gpu_table_id id, struct gpu_table *t)
{
	struct entry *e = b->entries[id].v;
	size_t n = b->entries[id].len;
	uint64_t *dur;

	if (!n)
		return;
	qsort(e, n, sizeof(*e), cmp_entries);
	/* By group, each group's in ascending order: what run_stats reads. */
	dur = xmalloc(n * sizeof(*dur));
	for (size_t i = 0; i < n; i++)
		dur[i] = e[i].dur;
	for (size_t i = 0, end; i < n; i = end) {
		struct gpu_row *row;

		for (end = i + 1; end < n && e[end].group == e[i].group; end++)
			;
		row = VEC_PUSH(&t->rows);
		row->rank = b->group_key.v[e[i].group].rank;
		row->name = b->group_key.v[e[i].group].name;
		run_stats(&row->st, dur + i, end - i);
		if (id == TABLE_KERNELS)
			run_config(b, row, e + i, end - i);
		else if (id == TABLE_COPIES)
			run_bytes(b, row, e + i, end - i);
		t->count += row->st.count;
		t->total_ns = u64_sat_add(t->total_ns, row->st.total_ns);
		t->bytes = u64_sat_add(t->bytes, row->bytes);
	}
	free(dur);
	qsort_r(t->rows.v, t->rows.len, sizeof(*t->rows.v), cmp_rows, (void *)b->m);
}

/* The attributes of a region's summary span that the table reads. */
enum summary_attr {
	SUM_INSTANCES, SUM_SUM, SUM_MIN, SUM_MAX, SUM_MEDIAN, SUM_LANES,
	SUM_BLOCK_MEDIAN, SUM_BLOCK_MAX,
	SUMMARY_ATTRS
};

static const char *const summary_keys[SUMMARY_ATTRS] = {
	[SUM_INSTANCES] = KR_ATTR_INSTANCES, [SUM_SUM] = KR_ATTR_SUM_NS,
	[SUM_MIN] = KR_ATTR_MIN_NS, [SUM_MAX] = KR_ATTR_MAX_NS, [SUM_MEDIAN] = KR_ATTR_MEDIAN_NS,
	[SUM_LANES] = KR_ATTR_LANES, [SUM_BLOCK_MEDIAN] = KR_ATTR_BLOCK_MEDIAN_NS,
	[SUM_BLOCK_MAX] = KR_ATTR_BLOCK_MAX_NS,
};

/* One collect's summary of one region of one kernel. */
struct summary {
	uint32_t rank;		/* index in m->ranks */
	uint32_t kernel;	/* (kernel, rank) in order of appearance */
	uint32_t group;		/* (kernel, region) in order of appearance */
	uint32_t span;		/* index in m->t.spans */
	uint64_t v[SUMMARY_ATTRS];
};

static int cmp_summaries(const void *pa, const void *pb, void *pctx)
{
	const struct summary *a = pa, *b = pb;
	int c;

	if ((c = cmp_ranks(pctx, a->rank, b->rank)))
		return c;
	if (a->kernel != b->kernel)
		return a->kernel < b->kernel ? -1 : 1;
	if (a->group != b->group)
		return a->group < b->group ? -1 : 1;
	return a->span < b->span ? -1 : a->span > b->span;
}

/* The median of one attribute over n summaries; values: room for n. */
static double median_of(const struct summary *s, size_t n, enum summary_attr a, uint64_t *values)
{
	for (size_t i = 0; i < n; i++)
		values[i] = s[i].v[a];
	qsort(values, n, sizeof(*values), u64_cmp);
	return u64_median(values, n);
}

/*
 * The n collects of one region: counts, sums and extremes combine
 * exactly; a median of all instances or blocks cannot be had from the
 * collects' medians, so the row takes the median of those.
 */
static void combine(struct kregion_row *row, const struct summary *s, size_t n,
		    uint64_t *values)
{
	row->collects = n;
	row->min_ns = s[0].v[SUM_MIN];
	for (size_t i = 0; i < n; i++) {
		const uint64_t *v = s[i].v;

		row->instances = u64_sat_add(row->instances, v[SUM_INSTANCES]);
		row->sum_ns = u64_sat_add(row->sum_ns, v[SUM_SUM]);
		row->min_ns = v[SUM_MIN] < row->min_ns ? v[SUM_MIN] : row->min_ns;
		row->max_ns = v[SUM_MAX] > row->max_ns ? v[SUM_MAX] : row->max_ns;
		row->block_max_ns = v[SUM_BLOCK_MAX] > row->block_max_ns ? v[SUM_BLOCK_MAX]
					: row->block_max_ns;
		if (v[SUM_LANES])
			row->lane_ns += (double)v[SUM_SUM] / (double)v[SUM_LANES];
	}
	row->median_ns = median_of(s, n, SUM_MEDIAN, values);
	row->block_median_ns = median_of(s, n, SUM_BLOCK_MEDIAN, values);
}

/*
 * The kernels the region rows name, each name once (its text as their
 * lanes give it), and the GPU time of each (name, rank) on the kernels
 * table: a lookup for each kernel row's names, not a comparison of every
 * region with every kernel.
 */
struct region_kernels {
	struct strtab names;
	struct u64map by_lane;	/* a region row's lane name (first string id) -> names id */
	struct u64map index;	/* names id << 32 | rank -> index in sums */
	VEC(uint64_t) sums;
};

/* The index in k->sums of a region row's kernel, added on first sight; UINT64_MAX for none. */
static uint64_t region_kernel_of(struct region_kernels *k, const struct model *m,
				 const struct kregion_row *row)
{
	const char *lane = model_str(m, row->lane_name);
	uint64_t name, key, at;

	if (!lane)
		return UINT64_MAX;
	if (!u64map_get(&k->by_lane, row->lane_name, &name)) {
		char *kernel = xstrndup(lane, kregions_lane_kernel_len(lane));

		name = strtab_intern(&k->names, kernel);
		free(kernel);
		u64map_put(&k->by_lane, row->lane_name, name);
	}
	key = name << 32 | row->rank;
	if (!u64map_get(&k->index, key, &at)) {
		at = k->sums.len;
		*VEC_PUSH(&k->sums) = 0;
		u64map_put(&k->index, key, at);
	}
	return at;
}

/* Where a demangled name's parameters start: the '(' that its last ')' closes; 0 for none. */
static size_t parameters_at(const char *plain)
{
	size_t len = strlen(plain), depth = 0;

	if (!len || plain[len - 1] != ')')
		return 0;
	for (size_t i = len; i-- > 0;) {
		depth += plain[i] == ')';
		if (plain[i] == '(' && !--depth)
			return i;
	}
	return 0;
}

/*
 * A kernel row's GPU time, to each region kernel it is: its name (mangled
 * or not), its demangled name, or that less its parameters (cut at their
 * '(', or at the first); to each once.
 */
static void count_kernel(struct region_kernels *k, const char *name, char *plain, uint32_t rank,
			 uint64_t ns)
{
	uint32_t found[4] = { strtab_find(&k->names, name) };
	size_t nfound = 1;

	if (plain) {
		size_t cuts[3] = { strlen(plain), parameters_at(plain), strcspn(plain, "(") };

		for (size_t c = 0; c < 3; c++) {
			char was = plain[cuts[c]];

			if (c && !cuts[c])
				continue;
			plain[cuts[c]] = '\0';
			found[nfound++] = strtab_find(&k->names, plain);
			plain[cuts[c]] = was;
		}
	}
	for (size_t i = 0; i < nfound; i++) {
		bool again = false;
		uint64_t at;

		for (size_t j = 0; j < i; j++)
			again |= found[j] == found[i];
		if (found[i] && !again &&
		    u64map_get(&k->index, (uint64_t)found[i] << 32 | rank, &at))
			k->sums.v[at] = u64_sat_add(k->sums.v[at], ns);
	}
}

/* Each region row's kernel time: the kernels table's rows of its kernel's name and rank. */
static void kernel_times(struct gpu_report *r, const struct model *m)
{
	struct region_kernels k = {0};
	struct demangler d = {0};
	uint64_t *kernel = xcalloc(r->regions.len + 1, sizeof(*kernel));

	for (size_t i = 0; i < r->regions.len; i++)
		kernel[i] = region_kernel_of(&k, m, &r->regions.v[i]);
	for (size_t i = 0; i < r->kernels.rows.len && k.sums.len; i++) {
		const struct gpu_row *row = &r->kernels.rows.v[i];
		const char *name = model_str(m, row->name);
		char *plain = name ? demangle(&d, name) : NULL;

		if (name)
			count_kernel(&k, name, plain, row->rank, row->st.total_ns);
		free(plain);
	}
	for (size_t i = 0; i < r->regions.len; i++)
		r->regions.v[i].kernel_ns = kernel[i] == UINT64_MAX ? 0 : k.sums.v[kernel[i]];
	free(kernel);
	strtab_free(&k.names);
	u64map_free(&k.by_lane);
	u64map_free(&k.index);
	VEC_FREE(&k.sums);
	demangler_free(&d);
}

/*
 * The first string id of id's text, so that equal names meet; 0 for no
 * string. Each id's text is hashed once, not once a span that names it.
 */
static uint32_t first_id(const struct model *m, struct u64map *seen, uint32_t id)
{
	const char *s;
	uint64_t first;

	if (u64map_get(seen, id, &first))
		return (uint32_t)first;
	s = model_str(m, id);
	first = s ? model_string_id(m, s) : 0;
	u64map_put(seen, id, first);
	return (uint32_t)first;
}

/* The region rows from the selected summary spans, in order of appearance. */
static void build_regions(struct gpu_builder *b)
{
	const struct model *m = b->m;
	struct gpu_report *r = b->r;
	size_t n = b->summaries.len;
	struct summary *s = xcalloc(n + 1, sizeof(*s));
	uint64_t *values = xcalloc(n + 1, sizeof(*values));
	struct u64map kernels = {0}, groups = {0}, first_ids = {0};
	uint32_t keys[SUMMARY_ATTRS];
	VEC(uint32_t) group_name = {0};	/* at 2 (group - 1): its lane name, its region */
	size_t kept = 0;
	uint64_t most = 0;

	for (int a = 0; a < SUMMARY_ATTRS; a++)
		keys[a] = model_string_id(m, summary_keys[a]);
	for (size_t i = 0; i < n; i++) {
		const struct tr_span *sp = &m->t.spans.v[b->summaries.v[i]];
		uint32_t lane_name = first_id(m, &first_ids, m->t.lanes.v[sp->lane - 1].name);
		uint32_t region = first_id(m, &first_ids, sp->name);
		struct summary *e = &s[kept];

		for (int a = 0; a < SUMMARY_ATTRS; a++)
			if (!keys[a] || !model_span_attr(m, b->summaries.v[i] + 1, keys[a], &e->v[a]))
				e->v[a] = 0;
		if (!e->v[SUM_INSTANCES])
			continue;
		e->span = b->summaries.v[i];
		e->rank = lane_rank(m, sp->lane);
		e->kernel = u64map_pair_id(&kernels, lane_name, e->rank);
		e->group = u64map_pair_id(&groups, e->kernel, region);
		if (e->group > group_name.len / 2) {
			*VEC_PUSH(&group_name) = lane_name;
			*VEC_PUSH(&group_name) = region;
		}
		kept++;
	}
	qsort_r(s, kept, sizeof(*s), cmp_summaries, (void *)m);
	for (size_t i = 0, end; i < kept; i = end) {
		struct kregion_row *row = VEC_PUSH(&r->regions);

		for (end = i + 1; end < kept && s[end].group == s[i].group; end++)
			;
		memset(row, 0, sizeof(*row));
		row->rank = s[i].rank;
		row->lane_name = group_name.v[2 * (s[i].group - 1)];
		row->region = group_name.v[2 * (s[i].group - 1) + 1];
		combine(row, s + i, end - i, values);
	}
	/* A kernel's collects: those of its most collected region. */
	for (size_t i = 0; i < r->regions.len; i++) {
		const struct kregion_row *row = &r->regions.v[i];

		most = row->collects > most ? row->collects : most;
		if (i + 1 == r->regions.len || row[1].lane_name != row->lane_name ||
		    row[1].rank != row->rank) {
			r->region_collects += most;
			most = 0;
		}
	}
	r->region_kernels = kernels.len;
	kernel_times(r, m);
	u64map_free(&kernels);
	u64map_free(&groups);
	u64map_free(&first_ids);
	VEC_FREE(&group_name);
	free(values);
	free(s);
}

void gpu_report_build(struct gpu_report *r, struct funcs *f, const struct sample_filter *flt)
{
	struct gpu_builder b = { .m = f->m, .r = r };
	struct gpu_table *tables[GPU_TABLES] = {
		[TABLE_KERNELS] = &r->kernels, [TABLE_COPIES] = &r->copies,
		[TABLE_API] = &r->api, [TABLE_WAITS] = &r->waits,
	};

	memset(r, 0, sizeof(*r));
	for (int a = 0; a < CONFIG_ATTRS; a++)
		b.config_key[a] = model_string_id(f->m, config_keys[a]);
	b.bytes_key = model_string_id(f->m, CUDA_ATTR_BYTES);
	collect(&b, f, flt);
	for (int id = 0; id < GPU_TABLES; id++) {
		build_table(&b, (enum gpu_table_id)id, tables[id]);
		VEC_FREE(&b.entries[id]);
	}
	build_regions(&b);
	VEC_FREE(&b.summaries);
	u64map_free(&b.groups);
	VEC_FREE(&b.group_key);
}

void gpu_report_free(struct gpu_report *r)
{
	VEC_FREE(&r->kernels.rows);
	VEC_FREE(&r->copies.rows);
	VEC_FREE(&r->api.rows);
	VEC_FREE(&r->waits.rows);
	VEC_FREE(&r->regions);
}
