/* SPDX-License-Identifier: MIT */
/*
 * gtrace analyze's findings: rules over what analyze_build found and over
 * the recording's copies, kernels and CUDA calls. Each rule that matches
 * becomes a sentence with the time at stake and its evidence, the call
 * sites or the kernels. A call site is the stack of a call's sample (one
 * taken in the call, else the nearest, as origins link) cut at the
 * program's own function that made the call (funcs_queued_from): the calls
 * of one loop, sampled at different depths of the driver, are one site.
 * man/gtrace-analyze.1 defines each rule, its threshold and its time.
 */
#include "analysis/views/analyze.h"
#include "analysis/views/analyze-private.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/views/ranks.h"
#include "contract/attrs.h"
#include "util/hashmap.h"
#include "util/saturate.h"
#include "util/xalloc.h"

/* tiny-copies: a copy under this many KiB costs more to issue than to move (PCIe: ~3 us). */
#define TINY_COPY_KIB 64
#define TINY_COPY_BYTES (TINY_COPY_KIB * 1024)
/* tiny-copies: at least this many from one call site. */
#define TINY_COPIES_MIN 100
/* sync-in-loop, alloc-in-loop: at least this many calls from one call site. */
#define LOOP_CALLS_MIN 10
/* short-kernels: at least this many instances shorter than --short of one kernel. */
#define SHORT_KERNELS_MIN 100
/* low-occupancy: under this many thousandths of an SM's warps resident. */
#define LOW_OCCUPANCY_PERMILLE 250
/* gpu-idle: a device idle this share of its time or more, in percent. */
#define GPU_IDLE_PERCENT 20

/* Work or calls counted by a key: a call site's node, a kernel's name. */
struct tally_row {
	uint64_t key, count, ns;
	uint32_t permille;	/* low-occupancy's lowest */
};

struct tally {
	VEC(struct tally_row) rows;
	struct u64map index;
};

static struct tally_row *tally_add(struct tally *t, uint64_t key, uint64_t ns)
{
	uint64_t at;

	if (!u64map_get(&t->index, key, &at)) {
		at = t->rows.len;
		*VEC_PUSH(&t->rows) = (struct tally_row){ .key = key, .permille = UINT32_MAX };
		u64map_put(&t->index, key, at);
	}
	t->rows.v[at].count++;
	t->rows.v[at].ns = u64_sat_add(t->rows.v[at].ns, ns);
	return &t->rows.v[at];
}

static int cmp_rows(const void *pa, const void *pb)
{
	const struct tally_row *a = pa, *b = pb;

	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	return (a->key > b->key) - (a->key < b->key);
}

/* Adds t's rows to fd's stacks, keyed by their node, by ns, descending. */
static void add_stacks(struct analyze_finding *fd, struct tally *t)
{
	VEC_SORT(&t->rows, cmp_rows);
	for (size_t i = 0; i < t->rows.len; i++)
		*VEC_PUSH(&fd->stacks) = (struct analyze_stack){ (uint32_t)t->rows.v[i].key,
								 t->rows.v[i].ns };
}

static void tally_free(struct tally *t)
{
	VEC_FREE(&t->rows);
	u64map_free(&t->index);
}

/* A call counted by its call site once all are seen (resolve). */
struct charge {
	uint32_t tally;		/* enum tallies */
	uint32_t span;		/* the call's */
	uint32_t node;		/* the sample's leaf, 0 none: found by place_charges */
	uint32_t other;		/* outside the call: the sample on node's other side, 0 none */
	bool inside;		/* the sample was taken in the call */
	uint64_t ns;
};

enum tallies {
	T_SYNC_COPY,	/* by call site: the calls' time */
	T_PAGEABLE,	/* by call site: the copies' time */
	T_TINY,		/* by call site: the calls' time */
	T_SYNC_CALLS,	/* by call site: the waits' time */
	T_ALLOCS,	/* by call site: the calls' time */
	T_SHORT,	/* by kernel name: the short instances' launch calls' time */
	T_OCCUPANCY,	/* by limiter << 32 | kernel name: the GPU time */
	T_KERNELS,	/* by kernel name: the GPU time */
	TALLIES
};

struct rules {
	const struct model *m;
	struct analyze *a;
	const struct analyze_opts *o;
	const struct analyze_inputs *in;
	struct u64map sites;	/* stack node -> its call site's */
	struct u64map same_functions;	/* functions_hash -> the first node with it */
	struct u64map first_of_node;	/* node -> same_functions' answer */
	struct tally t[TALLIES];
	VEC(struct owned_span) waits, allocs;
	VEC(struct charge) charges;
	uint32_t src_key, dst_key, bytes_key, permille_key, limiter_key;
};

static const char *func_name(const struct funcs *f, uint32_t func)
{
	return funcs_name(f, f->v.v[func].name);
}

/*
 * A hash of the functions of node's stack, for telling apart the stacks
 * that differ only in their addresses (a loop's calls from two lines).
 */
static uint64_t functions_hash(const struct funcs *f, uint32_t node)
{
	uint64_t h = 14695981039346656037ull;	/* FNV-1a */

	for (uint32_t depth = 0; node && depth < CALLTREE_MAX_DEPTH;
	     node = stack_caller(f->m, node), depth++) {
		uint32_t k;
		const uint32_t *fn = funcs_of_node(f, node, &k);

		for (uint32_t i = 0; i < k; i++)
			h = (h ^ fn[i]) * 1099511628211ull;
		h = (h ^ UINT32_MAX) * 1099511628211ull;
	}
	return h;
}

/* The first node met whose stack has the same functions as node's; each node hashed once. */
static uint32_t same_functions(struct rules *r, uint32_t node)
{
	uint64_t h, first;

	if (u64map_get(&r->first_of_node, node, &first))
		return (uint32_t)first;
	h = functions_hash(r->o->funcs, node);
	if (!u64map_get(&r->same_functions, h, &first)) {
		first = node;
		u64map_put(&r->same_functions, h, first);
	}
	u64map_put(&r->first_of_node, node, first);
	return (uint32_t)first;
}

/* node's stack without its kernel frames (an interrupt, a preemption); 0 when that is all. */
static uint32_t user_part(const struct model *m, uint32_t node)
{
	while (node && model_loc_is_kernel(m, m->t.nodes.v[node - 1].loc))
		node = stack_caller(m, node);
	return node;
}

/* The node of node's stack that holds the program's function that made the call. */
static uint32_t call_site(struct rules *r, uint32_t node)
{
	const struct funcs *f = r->o->funcs;
	uint32_t from, site = 0, leaf = user_part(r->m, node);
	uint64_t known;

	if (!leaf)
		return 0;
	if (u64map_get(&r->sites, node, &known))
		return (uint32_t)known;
	from = funcs_queued_from(f, leaf);
	for (uint32_t n = leaf, depth = 0; n && !site && depth < CALLTREE_MAX_DEPTH;
	     n = stack_caller(r->m, n), depth++) {
		uint32_t k;
		const uint32_t *fn = funcs_of_node(f, n, &k);

		for (uint32_t i = 0; i < k; i++)
			if (fn[i] == from)
				site = n;
	}
	site = same_functions(r, site ? site : leaf);
	u64map_put(&r->sites, node, site);
	return site;
}

/* Counts ns into tally t for span's call, by its call site once all are seen. */
static void charge(struct rules *r, enum tallies t, size_t span, uint64_t ns)
{
	*VEC_PUSH(&r->charges) = (struct charge){ .tally = t, .span = (uint32_t)span, .ns = ns };
}

static uint64_t minus(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/*
 * Each charge's sample, of those of its calling thread with a stack of the
 * program's (not the kernel's alone): the first taken in the call, where
 * one was (the stack of a call that lasts is in it); else the nearest
 * before its start or after its end, within the origin links' window, and
 * the nearest on the other side, for resolve.
 */
static void place_charges(struct rules *r)
{
	const struct model *m = r->m;
	const struct timed *v = r->in->samples;
	size_t n = r->in->nsamples;
	uint64_t window = r->o->links->window_ns;

	for (size_t i = 0; i < r->charges.len; i++) {
		struct charge *c = &r->charges.v[i];
		const struct tr_span *sp = &m->t.spans.v[c->span];
		uint32_t tid = sp->origin_tid, after = 0, before = 0;
		size_t at = timed_first(v, n, tid, sp->start), k;
		uint64_t end = model_span_end(sp), after_ns = UINT64_MAX, before_ns = UINT64_MAX;

		/* The first from the call's start on: in the call, else after it. */
		for (k = at; k < n && v[k].owner == tid && v[k].start <= u64_sat_add(end, window); k++)
			if (user_part(m, v[k].node)) {
				c->inside = v[k].start - sp->start < sp->dur;
				after_ns = minus(v[k].start, end);
				after = v[k].node;
				break;
			}
		if (c->inside) {
			c->node = after;
			continue;
		}
		for (k = at; k-- > 0 && v[k].owner == tid && sp->start - v[k].start <= window;)
			if (user_part(m, v[k].node)) {
				before_ns = sp->start - v[k].start;
				before = v[k].node;
				break;
			}
		if (before_ns < after_ns) {
			c->node = before;
			c->other = after;
		} else {
			c->node = after;
			c->other = before;
		}
	}
}

/*
 * The innermost caller on node's stack that calls of tally t were seen
 * made from (a sample taken in one), 0 none.
 */
static uint32_t seen_site(struct rules *r, const struct u64map *seen, uint32_t t, uint32_t node)
{
	uint64_t one;

	for (uint32_t depth = 0; node && depth < CALLTREE_MAX_DEPTH;
	     node = stack_caller(r->m, node), depth++)
		if (u64map_get(seen, (uint64_t)t << 32 | same_functions(r, node), &one))
			return same_functions(r, node);
	return 0;
}

/*
 * Counts the charges by call site. A sample taken outside its call may be
 * in a function the caller called before or after it, below the call
 * site, or in the work before a loop's first call: such a call goes to the
 * innermost caller that calls of the same tally were seen made from, on
 * the nearest sample's stack, else on the other side's, when there is one.
 */
static void resolve(struct rules *r)
{
	struct u64map seen = {0};

	place_charges(r);
	for (size_t i = 0; i < r->charges.len; i++)
		if (r->charges.v[i].inside)
			u64map_put(&seen, (uint64_t)r->charges.v[i].tally << 32 |
					  call_site(r, r->charges.v[i].node), 1);
	for (size_t i = 0; i < r->charges.len; i++) {
		const struct charge *c = &r->charges.v[i];
		uint32_t site = 0;

		if (!c->inside && !(site = seen_site(r, &seen, c->tally, c->node)))
			site = seen_site(r, &seen, c->tally, c->other);
		tally_add(&r->t[c->tally], site ? site : call_site(r, c->node), c->ns);
	}
	u64map_free(&seen);
}

/* "the place": the program's function of a call site, for the sentences. */
static const char *site_name(const struct rules *r, uint32_t node)
{
	return node ? func_name(r->o->funcs, funcs_queued_from(r->o->funcs, node)) :
		      "calls linked to no sample";
}

/* cudaMemcpy, cuMemcpyHtoD_v2, cuMemcpyPeer...: the copies that return once done. */
static bool synchronous_copy_call(const char *name)
{
	return strstr(name, "Memcpy") && !strstr(name, "Async");
}

/* The allocations and frees, but the stream-ordered (cudaMallocAsync, cuMemFreeAsync). */
static bool allocation_call(const char *name)
{
	static const char *const prefixes[] = {
		"cudaMalloc", "cudaFree", "cudaHostAlloc", "cuMemAlloc", "cuMemFree",
		"cuMemHostAlloc",
	};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(*prefixes); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return !strstr(name, "Async");
	return false;
}

/* A kernel's occupancy and its launch, a copy's kind and call. */
static void stream_work(struct rules *r, size_t i)
{
	const struct model *m = r->m;
	const struct tr_span *sp = &m->t.spans.v[i];
	uint32_t call = r->in->calls->call[i];
	const struct tr_span *c = call ? &m->t.spans.v[call - 1] : NULL;
	uint64_t call_ns = c ? c->dur : 0, v, src = 0, dst = 0;
	const char *name = c ? model_str(m, c->name) : NULL;

	switch (model_span_class(m, sp)) {
	case MODEL_SPAN_KERNEL:
		tally_add(&r->t[T_KERNELS], sp->name, sp->dur);
		if (sp->dur < r->a->short_ns)
			tally_add(&r->t[T_SHORT], sp->name, call_ns);
		if (r->permille_key && model_span_attr(m, (uint32_t)i + 1, r->permille_key, &v) &&
		    v < LOW_OCCUPANCY_PERMILLE) {
			uint64_t limiter = CUDA_OCC_LIMIT_UNKNOWN;
			struct tally_row *row;

			if (r->limiter_key)
				model_span_attr(m, (uint32_t)i + 1, r->limiter_key, &limiter);
			row = tally_add(&r->t[T_OCCUPANCY],
					(limiter < CUDA_OCC_LIMITERS ? limiter : 0) << 32 | sp->name,
					sp->dur);
			if (v < row->permille)
				row->permille = (uint32_t)v;
		}
		break;
	case MODEL_SPAN_COPY:
		if (name && synchronous_copy_call(name)) {
			charge(r, T_SYNC_COPY, call - 1, call_ns);
		} else if (name) {
			if (r->src_key)
				model_span_attr(m, (uint32_t)i + 1, r->src_key, &src);
			if (r->dst_key)
				model_span_attr(m, (uint32_t)i + 1, r->dst_key, &dst);
			if (src == CUDA_MEMORY_PAGEABLE || dst == CUDA_MEMORY_PAGEABLE)
				charge(r, T_PAGEABLE, i, sp->dur);
		}
		if (r->bytes_key && model_span_attr(m, (uint32_t)i + 1, r->bytes_key, &v) &&
		    v < TINY_COPY_BYTES)
			charge(r, T_TINY, i, c ? call_ns : sp->dur);
		break;
	default:
		break;
	}
}

/* Charges the outermost of calls to t. */
static void charge_outermost(struct rules *r, __typeof__(r->waits) *calls, enum tallies t)
{
	calls->len = owned_spans_outermost(calls->v, calls->len);
	for (size_t i = 0; i < calls->len; i++)
		charge(r, t, calls->v[i].span, calls->v[i].end - calls->v[i].start);
}

static void gather(struct rules *r, const uint32_t *lane_device)
{
	const struct model *m = r->m;

	for (size_t i = 0; i < m->t.spans.len; i++) {
		const struct tr_span *sp = &m->t.spans.v[i];
		enum model_lane_class cls = model_lane_class(m, sp->lane);
		const char *name = model_str(m, sp->name);
		struct owned_span c = { sp->origin_tid, (uint32_t)i, sp->start, model_span_end(sp) };

		if (cls == MODEL_LANE_CUDA_STREAM) {
			if (lane_device[sp->lane])
				stream_work(r, i);
			continue;
		}
		if (!name || (cls != MODEL_LANE_CUDA_WAIT && cls != MODEL_LANE_CUDA_API) ||
		    !filter_process(r->o->filter, m, m->t.lanes.v[sp->lane - 1].pid))
			continue;
		if (cls == MODEL_LANE_CUDA_WAIT && strstr(name, "Synchronize"))
			*VEC_PUSH(&r->waits) = c;
		else if (cls == MODEL_LANE_CUDA_API && allocation_call(name))
			*VEC_PUSH(&r->allocs) = c;
	}
	charge_outermost(r, &r->waits, T_SYNC_CALLS);
	charge_outermost(r, &r->allocs, T_ALLOCS);
	resolve(r);
}

static struct analyze_finding *add_finding(struct rules *r, const char *rule, uint64_t ns)
{
	struct analyze_finding *fd = VEC_PUSH(&r->a->findings);

	*fd = (struct analyze_finding){ .rule = rule, .device = -1, .ns = ns };
	return fd;
}

__attribute__((format(printf, 2, 3)))
static void say(struct analyze_finding *fd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(fd->message, sizeof(fd->message), fmt, ap);
	va_end(ap);
}

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

/*
 * A finding of the call sites of tally t with min calls or more, their
 * count in *count; NULL when none has.
 */
static struct analyze_finding *sites_finding(struct rules *r, const char *rule, enum tallies t,
					     uint64_t min, uint64_t *count)
{
	struct tally *tl = &r->t[t];
	struct analyze_finding *fd = NULL;

	/* By ns, descending: its index is of no more use. */
	VEC_SORT(&tl->rows, cmp_rows);
	*count = 0;
	for (size_t i = 0; i < tl->rows.len; i++) {
		if (tl->rows.v[i].count < min)
			continue;
		if (!fd)
			fd = add_finding(r, rule, 0);
		fd->ns = u64_sat_add(fd->ns, tl->rows.v[i].ns);
		*count += tl->rows.v[i].count;
		*VEC_PUSH(&fd->stacks) = (struct analyze_stack){ (uint32_t)tl->rows.v[i].key,
								 tl->rows.v[i].ns };
	}
	return fd;
}

#define STRING(x) #x
#define NUMBER(x) STRING(x)

/* The rules of call sites: each sentence takes the calls' count, their time and the top site. */
static const struct site_rule {
	const char *rule;
	enum tallies tally;
	uint64_t min;		/* calls from one site */
	const char *sentence;
} site_rules[] = {
	{ "sync-copy", T_SYNC_COPY, 1,
	  "%llu synchronous copies blocked the CPU %.3f ms, most from %s: copy with "
	  "cudaMemcpyAsync from pinned memory" },
	{ "pageable-copy", T_PAGEABLE, 1,
	  "%llu asynchronous copies of pageable host memory (%.3f ms), which the driver makes "
	  "synchronous, most from %s: pin the host buffer (cudaHostAlloc, cudaHostRegister)" },
	{ "sync-in-loop", T_SYNC_CALLS, LOOP_CALLS_MIN,
	  "%llu synchronizing calls repeated from one place blocked the CPU %.3f ms, most from "
	  "%s: synchronize less often, or wait on events" },
	{ "alloc-in-loop", T_ALLOCS, LOOP_CALLS_MIN,
	  "%llu memory allocations and frees repeated from one place took %.3f ms, most from "
	  "%s: allocate once, or use a caching or stream-ordered allocator (cudaMallocAsync)" },
	{ "tiny-copies", T_TINY, TINY_COPIES_MIN,
	  "%llu copies under " NUMBER(TINY_COPY_KIB) " KiB from one place took %.3f ms to issue, "
	  "more than they take to move, most from %s: batch them into fewer, larger copies" },
};

static void call_rules(struct rules *r)
{
	for (size_t i = 0; i < sizeof(site_rules) / sizeof(*site_rules); i++) {
		const struct site_rule *sr = &site_rules[i];
		struct analyze_finding *fd;
		uint64_t n;

		if ((fd = sites_finding(r, sr->rule, sr->tally, sr->min, &n)))
			say(fd, sr->sentence, (unsigned long long)n, ms(fd->ns),
			    site_name(r, fd->stacks.v[0].node));
	}
}

static int cmp_kernels(const void *pa, const void *pb)
{
	const struct finding_kernel *a = pa, *b = pb;

	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	return (a->name > b->name) - (a->name < b->name);
}

static void add_kernel(struct analyze_finding *fd, uint32_t name, uint64_t count, uint64_t ns)
{
	*VEC_PUSH(&fd->kernels) = (struct finding_kernel){
		.name = name, .count = count, .ns = ns, .occupancy_permille = UINT32_MAX,
	};
}

/* short-kernels: analyze's short instances, with the launch calls they cost. */
static void short_kernels(struct rules *r)
{
	struct analyze_finding *fd = NULL;
	struct tally sites = {0};
	uint64_t n = 0, at;

	for (size_t i = 0; i < r->a->kernels.len; i++) {
		const struct analyze_kernel *k = &r->a->kernels.v[i];
		const struct tally_row *row;

		if (k->short_count < SHORT_KERNELS_MIN ||
		    !u64map_get(&r->t[T_SHORT].index, k->name, &at))
			continue;
		row = &r->t[T_SHORT].rows.v[at];
		if (!fd)
			fd = add_finding(r, "short-kernels", 0);
		fd->ns = u64_sat_add(fd->ns, row->ns);
		n += k->short_count;
		add_kernel(fd, k->name, k->short_count, row->ns);
		tally_add(&sites, call_site(r, k->short_node), row->ns);
	}
	if (!fd)
		return;
	add_stacks(fd, &sites);
	tally_free(&sites);
	VEC_SORT(&fd->kernels, cmp_kernels);
	say(fd, "%llu kernel runs shorter than %.3f us cost %.3f ms of launch calls, most "
		"launched from %s: capture them in a CUDA graph, or fuse them",
	    (unsigned long long)n, (double)r->a->short_ns / 1e3, ms(fd->ns),
	    site_name(r, fd->stacks.v[0].node));
}

static void low_occupancy(struct rules *r)
{
	struct tally *t = &r->t[T_OCCUPANCY];
	struct analyze_finding *fd;
	const char *limiter;
	uint64_t n = 0;

	if (!t->rows.len)
		return;
	VEC_SORT(&t->rows, cmp_rows);
	fd = add_finding(r, "low-occupancy", 0);
	for (size_t i = 0; i < t->rows.len; i++) {
		const struct tally_row *row = &t->rows.v[i];

		add_kernel(fd, (uint32_t)row->key, row->count, row->ns);
		fd->kernels.v[i].occupancy_permille = row->permille;
		fd->kernels.v[i].limiter = (uint8_t)(row->key >> 32);
		fd->ns = u64_sat_add(fd->ns, row->ns);
		n += row->count;
	}
	limiter = cuda_occupancy_limiter_names[fd->kernels.v[0].limiter];
	say(fd, "%llu kernel runs had under %.0f%% of an SM's warps resident (%.3f ms of GPU "
		"time), most %s at %.1f%%, limited by %s", (unsigned long long)n,
	    LOW_OCCUPANCY_PERMILLE / 10.0, ms(fd->ns),
	    funcs_name(r->o->funcs, funcs_span_frame(r->o->funcs, fd->kernels.v[0].name)),
	    fd->kernels.v[0].occupancy_permille / 10.0, limiter ? limiter : "an unknown resource");
}

/* What each idle cause means, for gpu-idle's sentence; top: its first stack, 0 none. */
static const char *idle_cause_words(struct rules *r, int cause, uint32_t top, char *buf,
				    size_t size)
{
	switch (cause) {
	case IDLE_HOST:
		snprintf(buf, size, "while the launching thread ran %s",
			 top ? site_name(r, top) : "unsampled code");
		return buf;
	case IDLE_SYNC:
		snprintf(buf, size, "after a synchronizing call from %s",
			 site_name(r, call_site(r, top)));
		return buf;
	case IDLE_DEPENDENCY:
		return "while its queued work waited on another stream";
	case IDLE_LAUNCH:
		return "while launch calls took longer than the work they queued";
	default:
		return "before work whose launching call was not recorded";
	}
}

/* Adds n stacks to fd's, those of the same functions as one. */
static void merged_stacks(struct rules *r, struct analyze_finding *fd,
			  const struct analyze_stack *stacks, size_t n)
{
	struct tally t = {0};

	for (size_t i = 0; i < n; i++)
		tally_add(&t, same_functions(r, stacks[i].node), stacks[i].ns);
	add_stacks(fd, &t);
	tally_free(&t);
}

static void gpu_idle(struct rules *r)
{
	for (size_t i = 0; i < r->a->devices.len; i++) {
		const struct analyze_device *d = &r->a->devices.v[i];
		__typeof__(d->host_stacks) const *stacks = NULL;
		struct analyze_finding *fd;
		char why[200];
		int top = 0;

		if (!d->wall_ns || d->idle_ns * 100 < d->wall_ns * GPU_IDLE_PERCENT)
			continue;
		for (int c = 1; c < IDLE_CAUSES; c++)
			if (d->idle_causes[c] > d->idle_causes[top])
				top = c;
		fd = add_finding(r, "gpu-idle", d->idle_ns);
		fd->device = (int64_t)i;
		stacks = top == IDLE_HOST ? &d->host_stacks : top == IDLE_SYNC ? &d->sync_stacks
									      : NULL;
		if (stacks)
			merged_stacks(r, fd, stacks->v, stacks->len);
		say(fd, "GPU %u of pid %u was idle %.1f%% of its time (%.3f ms), most of it %s "
			"(%.3f ms) %s", d->device, d->pid, 100.0 * (double)d->idle_ns /
		    (double)d->wall_ns, ms(d->idle_ns), idle_cause_name(top),
		    ms(d->idle_causes[top]), idle_cause_words(r, top, fd->stacks.len ?
						fd->stacks.v[0].node : 0, why, sizeof(why)));
	}
}

/*
 * straggler-rank: report --ranks' straggler. The time at stake is what
 * the others waited for it: by collective kernels, the time their
 * collective kernels ran past the straggler's; by CPU, the time the
 * straggler computed past each of them.
 */
static void straggler_rank(struct rules *r)
{
	const struct model *m = r->m;
	struct rank_report rr;
	const struct rank_row *s;
	struct analyze_finding *fd;
	uint64_t ns = 0;

	if (m->ranks.len < 2)
		return;
	rank_report_build(&rr, r->o->funcs, r->o->filter);
	if (rr.basis == STRAGGLER_NONE) {
		rank_report_free(&rr);
		return;
	}
	s = &rr.rows.v[rr.straggler];
	for (size_t i = 0; i < rr.rows.len; i++) {
		const struct rank_row *o = &rr.rows.v[i];

		if (i == rr.straggler)
			continue;
		ns = u64_sat_add(ns, rr.basis == STRAGGLER_GPU ?
					     minus(o->coll_gpu_ns, s->coll_gpu_ns) :
					     minus(s->compute_ns, o->compute_ns));
	}
	fd = add_finding(r, "straggler-rank", ns);
	if (rr.basis == STRAGGLER_GPU)
		say(fd, "rank %lld kept the other ranks waiting %.3f ms in their collectives: "
			"it started last %llu of the %llu collective kernels run by several ranks",
		    (long long)m->ranks.v[s->index].rank, ms(ns),
		    (unsigned long long)s->started_last, (unsigned long long)rr.matched);
	else
		say(fd, "rank %lld kept the other ranks waiting in their collectives: it ran "
			"%.3f ms more on a CPU outside them than the others, added up",
		    (long long)m->ranks.v[s->index].rank, ms(ns));
	VEC_SORT(&r->t[T_KERNELS].rows, cmp_rows);
	for (size_t i = 0; i < r->t[T_KERNELS].rows.len; i++) {
		const struct tally_row *k = &r->t[T_KERNELS].rows.v[i];
		const char *name = funcs_name(r->o->funcs,
					      funcs_span_frame(r->o->funcs, (uint32_t)k->key));

		if (ranks_collective_kernel(name))
			add_kernel(fd, (uint32_t)k->key, k->count, k->ns);
	}
	rank_report_free(&rr);
}

static int cmp_findings(const void *pa, const void *pb)
{
	const struct analyze_finding *a = pa, *b = pb;

	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	return strcmp(a->rule, b->rule);
}

void analyze_findings(struct analyze *a, const struct model *m, const struct analyze_opts *o,
		      const struct analyze_inputs *in)
{
	struct rules r = {
		.m = m, .a = a, .o = o, .in = in,
		.src_key = model_string_id(m, CUDA_ATTR_COPY_SRC),
		.dst_key = model_string_id(m, CUDA_ATTR_COPY_DST),
		.bytes_key = model_string_id(m, CUDA_ATTR_BYTES),
		.permille_key = model_string_id(m, CUDA_ATTR_OCCUPANCY_PERMILLE),
		.limiter_key = model_string_id(m, CUDA_ATTR_OCCUPANCY_LIMITER),
	};

	gather(&r, in->lane_device);
	call_rules(&r);
	short_kernels(&r);
	low_occupancy(&r);
	gpu_idle(&r);
	straggler_rank(&r);
	VEC_SORT(&a->findings, cmp_findings);
	for (int t = 0; t < TALLIES; t++)
		tally_free(&r.t[t]);
	VEC_FREE(&r.waits);
	VEC_FREE(&r.allocs);
	VEC_FREE(&r.charges);
	u64map_free(&r.sites);
	u64map_free(&r.same_functions);
	u64map_free(&r.first_of_node);
}

void analyze_findings_free(struct analyze *a)
{
	for (size_t i = 0; i < a->findings.len; i++) {
		VEC_FREE(&a->findings.v[i].stacks);
		VEC_FREE(&a->findings.v[i].kernels);
	}
	VEC_FREE(&a->findings);
}
