/* SPDX-License-Identifier: MIT */
/*
 * gtrace analyze: each device's time from its first work to its last, in
 * one sweep over the starts and ends of its kernels, copies and memsets
 * (sorted once, by device then time); each idle interval met on the way
 * classified by the launch call of the work that ended it (passes/
 * launches.c), the work before it, the process's synchronizing calls and
 * the launching thread's samples. man/gtrace-analyze.1 defines the causes.
 */
#include "analysis/views/analyze-private.h"
#include "analysis/views/ranks.h"

#include <stdlib.h>
#include <string.h>

#include "util/saturate.h"
#include "util/xalloc.h"

/* A synchronizing call that ended this much before the device went idle still held it. */
#define SYNC_SLACK_NS 20000
/* What the sweep tells apart: kernels, copies and memsets, collectives. */
enum work_kind { WORK_COMPUTE, WORK_MEMORY, WORK_COMM, WORK_KINDS };

static const char *const cause_names[IDLE_CAUSES] = {
	[IDLE_HOST] = "host",
	[IDLE_SYNC] = "synchronization",
	[IDLE_DEPENDENCY] = "dependency",
	[IDLE_LAUNCH] = "launch",
	[IDLE_UNKNOWN] = "unknown",
};

const char *idle_cause_name(enum idle_cause c)
{
	return c < IDLE_CAUSES ? cause_names[c] : "?";
}

/* A start or an end of a device's work. */
struct edge {
	uint32_t device;	/* index in analyze.devices */
	uint32_t span;
	uint64_t t;
	uint8_t start;		/* ends sort before starts of the same time */
	uint8_t kind;		/* enum work_kind */
};

static int cmp_edges(const void *pa, const void *pb)
{
	const struct edge *a = pa, *b = pb;

	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	if (a->start != b->start)
		return a->start - b->start;
	return (a->span > b->span) - (a->span < b->span);
}

static int cmp_timed(const void *pa, const void *pb)
{
	const struct timed *a = pa, *b = pb;

	if (a->owner != b->owner)
		return a->owner < b->owner ? -1 : 1;
	return a->start < b->start ? -1 : a->start > b->start;
}

size_t timed_first(const struct timed *v, size_t n, uint32_t owner, uint64_t ts)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].owner < owner || (v[mid].owner == owner && v[mid].start < ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

size_t timed_within(const struct timed *v, size_t n, uint32_t owner, uint64_t from, uint64_t to,
		    size_t *first)
{
	size_t end = *first = timed_first(v, n, owner, from);

	while (end < n && v[end].owner == owner && v[end].start < to)
		end++;
	return end;
}

struct build {
	const struct model *m;
	struct analyze *a;
	const struct analyze_opts *o;
	struct api_launches calls;
	/* CUDA_WAIT spans by pid; end and node: the latest end so far, and its call's. */
	VEC(struct timed) waits;
	VEC(struct timed) samples;	/* samples with a stack, by tid */
	struct u64map stacks;		/* device, sync, node -> index in its stacks */
};

struct launch launch_of(const struct model *m, const struct api_launches *calls, uint32_t span)
{
	const struct tr_span *sp = &m->t.spans.v[span];
	uint32_t call = calls->call[span];

	if (call) {
		const struct tr_span *c = &m->t.spans.v[call - 1];

		return (struct launch){ c->origin_tid, c->start, u64_sat_add(c->start, c->dur) };
	}
	/* Without its API span, the origin is when the call was made. */
	return (struct launch){ sp->origin_tid, sp->origin_ts, sp->origin_ts };
}

/*
 * The synchronizing call of pid open when the device went idle at t (the
 * one that ended last), or NULL.
 */
static const struct timed *sync_open_at(const struct build *b, uint32_t pid, uint64_t t)
{
	const struct timed *w = b->waits.v;
	size_t at = timed_first(w, b->waits.len, pid, u64_sat_add(t, 1));

	/* The last call started by t: its end is the latest of the process's calls so far. */
	if (at && w[at - 1].owner == pid && u64_sat_add(w[at - 1].end, SYNC_SLACK_NS) >= t)
		return &w[at - 1];
	return NULL;
}

/* Adds ns to node's row of device d's host (sync false) or sync stacks. */
static void charge_stack(struct build *b, uint32_t d, bool sync, uint32_t node, uint64_t ns)
{
	struct analyze_device *dev = &b->a->devices.v[d];
	__typeof__(dev->host_stacks) *stacks = sync ? &dev->sync_stacks : &dev->host_stacks;
	uint64_t key = (uint64_t)d << 33 | (uint64_t)sync << 32 | node, at;

	if (!u64map_get(&b->stacks, key, &at)) {
		at = stacks->len;
		*VEC_PUSH(stacks) = (struct analyze_stack){ .node = node };
		u64map_put(&b->stacks, key, at);
	}
	stacks->v[at].ns += ns;
}

/* Spreads host idle [from, to) of device d over thread tid's samples in it. */
static void charge_samples(struct build *b, uint32_t d, uint32_t tid, uint64_t from, uint64_t to)
{
	struct analyze_device *dev = &b->a->devices.v[d];
	const struct timed *s = b->samples.v;
	size_t first, end = timed_within(s, b->samples.len, tid, from, to, &first);
	uint64_t ns = to - from;

	if (end == first) {
		dev->host_unsampled_ns += ns;
		return;
	}
	for (size_t i = first; i < end; i++) {
		uint64_t share = split_part(ns, end - first, i - first);

		charge_stack(b, d, false, s[i].node, share);
		if (b->a->sample_host_ns)
			b->a->sample_host_ns[s[i].sample] += share;
	}
}

/* Classifies idle [g0, g1) of device d, between work prev (ended at g0) and next (starts at g1). */
static void classify_gap(struct build *b, uint32_t d, uint32_t prev, uint32_t next, uint64_t g0,
			 uint64_t g1)
{
	struct analyze_device *dev = &b->a->devices.v[d];
	const struct tr_span *p = &b->m->t.spans.v[prev], *w = &b->m->t.spans.v[next];
	struct launch lp = launch_of(b->m, &b->calls, prev),
		      lw = launch_of(b->m, &b->calls, next);
	/* From the end of the call that queued prev to the start of next's. */
	uint64_t between_calls = lw.start > lp.end ? lw.start - lp.end : 0;
	uint64_t *cause = dev->idle_causes;

	dev->gaps++;
	if (!lw.tid) {
		cause[IDLE_UNKNOWN] += g1 - g0;
	} else if (lw.start <= g0) {
		/* Queued before the device went idle: behind its own stream, the start's latency. */
		cause[p->lane == w->lane ? IDLE_LAUNCH : IDLE_DEPENDENCY] += g1 - g0;
	} else if (lp.tid == lw.tid && lw.start >= lp.start && between_calls < b->a->short_ns) {
		/* Launched back to back: the launches could not keep up with the work. */
		cause[IDLE_LAUNCH] += g1 - g0;
	} else {
		uint64_t queued = lw.start < g1 ? lw.start : g1;
		const struct timed *sync = sync_open_at(b, dev->pid, g0);

		if (sync) {
			cause[IDLE_SYNC] += queued - g0;
			if (sync->node)
				charge_stack(b, d, true, sync->node, queued - g0);
			else
				dev->sync_unlinked_ns += queued - g0;
		} else {
			cause[IDLE_HOST] += queued - g0;
			charge_samples(b, d, lw.tid, g0, queued);
		}
		cause[IDLE_LAUNCH] += g1 - queued;
	}
}

/* One device's sweep over its edges e[0 .. n). */
static void sweep(struct build *b, uint32_t d, const struct edge *e, size_t n)
{
	struct analyze_device *dev = &b->a->devices.v[d];
	uint32_t active[WORK_KINDS] = {0}, running = 0, prev = 0;
	uint64_t t = 0, idle_from = 0;
	uint64_t *by_kind[WORK_KINDS] = { &dev->compute_ns, &dev->memory_ns, &dev->comm_ns };

	for (size_t i = 0; i < n; i++) {
		if (running && e[i].t > t) {
			uint64_t dt = e[i].t - t;
			unsigned kinds = 0;

			for (int k = 0; k < WORK_KINDS; k++)
				if (active[k]) {
					*by_kind[k] += dt;
					kinds++;
				}
			dev->busy_ns += dt;
			if (kinds > 1)
				dev->overlap_ns += dt;
		}
		t = e[i].t;
		if (e[i].start) {
			if (!running && i && t > idle_from)
				classify_gap(b, d, prev, e[i].span, idle_from, t);
			if (!i)
				dev->first = t;
			dev->launches++;
			active[e[i].kind]++;
			running++;
		} else {
			active[e[i].kind]--;
			if (!--running) {
				idle_from = t;
				prev = e[i].span;
			}
		}
	}
	dev->last = idle_from;
	dev->wall_ns = dev->last - dev->first;
	dev->idle_ns = dev->wall_ns - dev->busy_ns;
}

static enum work_kind work_kind(const struct model *m, const struct tr_span *sp)
{
	const char *name;

	if (model_span_is_copy(m, sp))
		return WORK_MEMORY;
	name = model_str(m, sp->name);
	return name && ranks_collective_kernel(name) ? WORK_COMM : WORK_COMPUTE;
}

static int cmp_devices(const void *pa, const void *pb)
{
	const struct analyze_device *a = pa, *b = pb;

	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return (a->device > b->device) - (a->device < b->device);
}

/* Whether stream lane lane, of GPU dev, is of a selected device. */
static bool device_selected(const struct build *b, uint32_t lane, uint32_t dev)
{
	return (!b->o->device_set || dev == b->o->device) &&
	       filter_process(b->o->filter, b->m, b->m->t.lanes.v[lane - 1].pid);
}

/*
 * The selected devices, sorted, and by lane id the device of a stream lane
 * + 1, 0 for another lane: each stream's device is pushed, the devices
 * sorted and made unique, then each stream's found among them.
 */
static uint32_t *find_devices(struct build *b)
{
	const struct model *m = b->m;
	size_t nlanes = m->t.lanes.len, n = 0;
	uint32_t *lane_device = xcalloc(nlanes + 1, sizeof(*lane_device));
	struct analyze_device *d;
	uint32_t dev;

	for (uint32_t lane = 1; lane <= nlanes; lane++)
		if (model_stream_gpu(m, lane, &dev) && device_selected(b, lane, dev)) {
			uint32_t pid = m->t.lanes.v[lane - 1].pid;

			*VEC_PUSH(&b->a->devices) = (struct analyze_device){
				.pid = pid, .device = dev, .rank = pid_rank(m, pid),
			};
		}
	VEC_SORT(&b->a->devices, cmp_devices);
	d = b->a->devices.v;
	for (size_t i = 0; i < b->a->devices.len; i++)
		if (!n || cmp_devices(&d[n - 1], &d[i]))
			d[n++] = d[i];
	b->a->devices.len = n;
	for (uint32_t lane = 1; lane <= nlanes; lane++)
		if (model_stream_gpu(m, lane, &dev) && device_selected(b, lane, dev)) {
			uint32_t pid = m->t.lanes.v[lane - 1].pid;
			struct analyze_device key = { .pid = pid, .device = dev,
						      .rank = pid_rank(m, pid) };
			const struct analyze_device *at = bsearch(&key, d, n, sizeof(*d),
								   cmp_devices);

			lane_device[lane] = (uint32_t)(at - d) + 1;
		}
	return lane_device;
}

/* The synchronizing calls by process and the samples with a stack by thread. */
static void index_cpu(struct build *b)
{
	const struct model *m = b->m;

	for (size_t i = 0; i < m->t.spans.len; i++) {
		const struct tr_span *sp = &m->t.spans.v[i];

		uint32_t sample = b->o->links->sample[i];

		if (model_lane_class(m, sp->lane) == MODEL_LANE_CUDA_WAIT)
			*VEC_PUSH(&b->waits) = (struct timed){
				.owner = m->t.lanes.v[sp->lane - 1].pid,
				.node = sample ? m->t.samples.v[sample - 1].node : 0,
				.start = sp->start, .end = model_span_end(sp),
			};
	}
	for (size_t i = 0; i < m->t.samples.len; i++) {
		const struct tr_sample *s = &m->t.samples.v[i];

		if (s->node)
			*VEC_PUSH(&b->samples) = (struct timed){ .owner = s->tid, .node = s->node,
								 .sample = (uint32_t)i,
								 .start = s->ts, .end = s->ts };
	}
	VEC_SORT(&b->waits, cmp_timed);
	VEC_SORT(&b->samples, cmp_timed);
	/* Each call's end becomes the latest of its process's calls up to it, with that call's stack. */
	for (size_t i = 1; i < b->waits.len; i++)
		if (b->waits.v[i].owner == b->waits.v[i - 1].owner &&
		    b->waits.v[i].end < b->waits.v[i - 1].end) {
			b->waits.v[i].end = b->waits.v[i - 1].end;
			b->waits.v[i].node = b->waits.v[i - 1].node;
		}
}

static int cmp_stacks(const void *pa, const void *pb)
{
	const struct analyze_stack *a = pa, *b = pb;

	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	return (a->node > b->node) - (a->node < b->node);
}

/* A kernel's launch, for the statistics by name. */
struct kernel_launch {
	uint32_t name;
	bool is_short;
	uint32_t site;		/* a short one's launching function (funcs_queued_from); 0 unknown */
	uint32_t node;		/* its launching stack; 0 unknown */
	bool queued;
	uint64_t queue_ns;
};

static int cmp_kernel_launches(const void *pa, const void *pb)
{
	const struct kernel_launch *a = pa, *b = pb;

	if (a->name != b->name)
		return a->name < b->name ? -1 : 1;
	if (a->is_short != b->is_short)
		return a->is_short - b->is_short;
	if (a->site != b->site)
		return a->site < b->site ? -1 : 1;
	return (a->node > b->node) - (a->node < b->node);
}

static int cmp_kernels(const void *pa, const void *pb)
{
	const struct analyze_kernel *a = pa, *b = pb;

	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return (a->name > b->name) - (a->name < b->name);
}

static uint32_t launch_site(const struct kernel_launch *k)
{
	return k->site;
}

static uint32_t launch_node(const struct kernel_launch *k)
{
	return k->node;
}

/* The longest run of k[0 .. n) with one nonzero key: where it starts, its length in *len. */
static size_t longest_run(const struct kernel_launch *k, size_t n,
			  uint32_t (*key)(const struct kernel_launch *), size_t *len)
{
	size_t best = 0;

	*len = 0;
	for (size_t i = 0, end; i < n; i = end) {
		for (end = i + 1; end < n && key(&k[end]) == key(&k[i]); end++)
			;
		if (key(&k[i]) && end - i > *len) {
			best = i;
			*len = end - i;
		}
	}
	return best;
}

/*
 * One name's launches k[0 .. n), sorted: its row. The short ones' stack is
 * the most frequent one of the function that launched most of them: a
 * site's samples seldom share a whole stack, and a stack that did not
 * unwind is a site of its own, not the launcher.
 */
static void kernel_row(struct analyze *a, const struct kernel_launch *k, size_t n,
		       uint64_t *queues)
{
	struct analyze_kernel *row = VEC_PUSH(&a->kernels);
	size_t first_short = n, at, len;

	*row = (struct analyze_kernel){ .name = k[0].name, .count = n };
	for (size_t i = 0; i < n; i++) {
		if (k[i].queued)
			queues[row->queued++] = k[i].queue_ns;
		if (k[i].is_short && first_short == n)
			first_short = i;
	}
	row->short_count = n - first_short;
	at = first_short + longest_run(k + first_short, n - first_short, launch_site, &len);
	if (len)
		row->short_node = k[at + longest_run(k + at, len, launch_node, &len)].node;
	qsort(queues, row->queued, sizeof(*queues), u64_cmp);
	row->median_queue_ns = (uint64_t)u64_median(queues, row->queued);
}

/* Per kernel name of the selected devices: launches, queue delays, short ones. */
static void launch_stats(struct build *b, const uint32_t *lane_device)
{
	const struct model *m = b->m;
	VEC(struct kernel_launch) k = {0};
	uint32_t node, last_node = 0, site = 0;
	uint64_t *queues;

	for (size_t i = 0; i < m->t.spans.len; i++) {
		const struct tr_span *sp = &m->t.spans.v[i];
		struct launch l;
		uint32_t sample;

		if (sp->lane > m->t.lanes.len || !lane_device[sp->lane] ||
		    model_span_class(m, sp) != MODEL_SPAN_KERNEL)
			continue;
		l = launch_of(m, &b->calls, (uint32_t)i);
		sample = b->o->links->sample[i];
		node = sp->dur < b->a->short_ns && sample ? m->t.samples.v[sample - 1].node : 0;
		/* Launches in a row link to one sample: its site is looked up once. */
		if (node != last_node)
			site = node && b->o->funcs ? funcs_queued_from(b->o->funcs, node) + 1 : node;
		last_node = node;
		*VEC_PUSH(&k) = (struct kernel_launch){
			.name = sp->name,
			.is_short = sp->dur < b->a->short_ns,
			.site = site,
			.node = node,
			.queued = l.tid && sp->start >= l.start,
			.queue_ns = sp->start - l.start,
		};
	}
	VEC_SORT(&k, cmp_kernel_launches);
	queues = xmalloc((k.len + 1) * sizeof(*queues));
	for (size_t i = 0, end; i < k.len; i = end) {
		for (end = i; end < k.len && k.v[end].name == k.v[i].name; end++)
			;
		kernel_row(b->a, k.v + i, end - i, queues);
	}
	VEC_SORT(&b->a->kernels, cmp_kernels);
	free(queues);
	VEC_FREE(&k);
}

/*
 * Whether m holds a lane of CUDA's: without one there is no device and no
 * call for the CPU samples to explain, and they are not indexed.
 */
static bool cuda_recorded(const struct model *m)
{
	for (uint32_t lane = 1; lane <= m->t.lanes.len; lane++) {
		enum model_lane_class c = model_lane_class(m, lane);

		if (c == MODEL_LANE_CUDA_STREAM || c == MODEL_LANE_CUDA_API ||
		    c == MODEL_LANE_CUDA_WAIT)
			return true;
	}
	return false;
}

void analyze_build(struct analyze *a, const struct model *m, const struct analyze_opts *o)
{
	struct build b = { .m = m, .a = a, .o = o };
	size_t nspans = m->t.spans.len, nedges = 0;
	uint32_t *all = xmalloc((nspans + 1) * sizeof(*all)), *lane_device;
	struct edge *edges = xmalloc((2 * nspans + 1) * sizeof(*edges));

	*a = (struct analyze){ .short_ns = o->short_ns };
	if (o->by_sample)
		a->sample_host_ns = xcalloc(m->t.samples.len + 1, sizeof(*a->sample_host_ns));
	lane_device = find_devices(&b);
	for (size_t i = 0; i < nspans; i++)
		all[i] = (uint32_t)i;
	api_launches_find(&b.calls, m, o->links->outcome, all, nspans, 0, UINT64_MAX);
	free(all);
	if (cuda_recorded(m))
		index_cpu(&b);
	for (size_t i = 0; i < nspans; i++) {
		const struct tr_span *sp = &m->t.spans.v[i];
		uint32_t d = sp->lane <= m->t.lanes.len ? lane_device[sp->lane] : 0;
		struct edge e = { .device = d - 1, .span = (uint32_t)i, .t = sp->start };

		/* Work of no time leaves the device as it was. */
		if (!d || !sp->dur)
			continue;
		e.kind = (uint8_t)work_kind(m, sp);
		e.start = 1;
		edges[nedges++] = e;
		e.start = 0;
		e.t = model_span_end(sp);
		edges[nedges++] = e;
	}
	if (nedges)
		qsort(edges, nedges, sizeof(*edges), cmp_edges);
	for (size_t i = 0, end; i < nedges; i = end) {
		for (end = i; end < nedges && edges[end].device == edges[i].device; end++)
			;
		sweep(&b, edges[i].device, edges + i, end - i);
	}
	if (o->critical_path)
		critpath_build(a, m, &b.calls, lane_device, b.samples.v, b.samples.len);
	for (size_t d = 0; d < a->devices.len; d++) {
		VEC_SORT(&a->devices.v[d].host_stacks, cmp_stacks);
		VEC_SORT(&a->devices.v[d].sync_stacks, cmp_stacks);
	}
	launch_stats(&b, lane_device);
	if (o->funcs)
		analyze_findings(a, m, o, &(struct analyze_inputs){ &b.calls, lane_device,
								   b.samples.v, b.samples.len });
	free(edges);
	free(lane_device);
	api_launches_free(&b.calls);
	VEC_FREE(&b.waits);
	VEC_FREE(&b.samples);
	u64map_free(&b.stacks);
}

void analyze_free(struct analyze *a)
{
	for (size_t d = 0; d < a->devices.len; d++) {
		VEC_FREE(&a->devices.v[d].host_stacks);
		VEC_FREE(&a->devices.v[d].sync_stacks);
		critpath_free(&a->devices.v[d].critpath);
	}
	VEC_FREE(&a->devices);
	VEC_FREE(&a->kernels);
	analyze_findings_free(a);
	free(a->sample_host_ns);
}
