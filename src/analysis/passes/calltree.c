/* SPDX-License-Identifier: MIT */
/* The merged call tree and its text views: indented tree and folded stacks. */
#include "analysis/passes/passes.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "contract/lanes.h"
#include "util/saturate.h"
#include "util/text.h"
#include "util/xalloc.h"

/* A thread name under the node it hangs from: the root, or its rank's. */
struct tree_part {
	uint32_t root;		/* tree node */
	uint32_t name;		/* id in funcs.names */
};

/* Samples of one thread part within one chain of NVTX ranges. */
struct tree_group {
	uint32_t part;		/* by part - 1 in tree_builder.parts */
	uint32_t chain;		/* nvtx chain id, 0 none */
	uint32_t node;		/* its tree node, under the thread's: 0 not made yet */
};

struct tree_builder {
	struct calltree *t;
	struct u64map kids;	/* parent << 32 | name -> node */
	struct u64map memo;	/* group << 32 | stack node -> tree node of its leaf frame */
	VEC(uint32_t) path;	/* stack nodes not yet in the tree, innermost first */
	struct u64map part_ids;	/* root << 32 | thread name -> part */
	VEC(struct tree_part) parts; /* by part - 1 */
	struct u64map group_ids; /* part << 32 | chain -> group */
	VEC(struct tree_group) groups; /* by group - 1 */
	uint32_t *rank_node;	/* several ranks: by rank index, its node, 0 not made yet */
	struct nvtx_ranges ranges;
	uint32_t *chain_label;	/* by chain id: names id of "[nvtx] NAME", 0 not made yet */
};

/* The names id of prefix followed by the len bytes of name. */
static uint32_t prefixed_frame(struct funcs *f, const char *prefix, const char *name, size_t len)
{
	size_t size = strlen(prefix) + len + 1;
	char *label = xmalloc(size);
	uint32_t id;

	snprintf(label, size, "%s%.*s", prefix, (int)len, name);
	id = strtab_intern(&f->names, label);
	free(label);
	return id;
}

uint32_t calltree_child(struct calltree *t, struct u64map *kids, uint32_t parent, uint32_t name)
{
	uint64_t key = (uint64_t)parent << 32 | name, at;
	struct calltree_node *n;

	if (u64map_get(kids, key, &at))
		return (uint32_t)at;
	/* Only a damaged file goes this deep; bounding it bounds the printers' recursion. */
	if (t->nodes.v[parent].depth >= CALLTREE_MAX_DEPTH)
		return parent;
	at = t->nodes.len;
	n = VEC_PUSH(&t->nodes);
	n->parent = parent;
	n->name = name;
	n->depth = t->nodes.v[parent].depth + 1;
	u64map_put(kids, key, at);
	return (uint32_t)at;
}

static uint32_t child_of(struct tree_builder *b, uint32_t parent, uint32_t name)
{
	return calltree_child(b->t, &b->kids, parent, name);
}

/* Appends a stack node's frames under parent, outermost first. */
static uint32_t add_frames(struct tree_builder *b, const struct funcs *f,
			   uint32_t parent, uint32_t node)
{
	uint32_t n;
	const uint32_t *fn = funcs_of_node(f, node, &n);

	while (n-- > 0)
		parent = child_of(b, parent, f->v.v[fn[n]].name);
	return parent;
}

/* The frame of a chain's innermost range: "[nvtx] NAME", or "[nvtx DOMAIN] NAME". */
static uint32_t range_frame(struct funcs *f, const struct nvtx_chain *c)
{
	const char *name = model_str(f->m, c->name);
	const char *domain = c->domain ? nvtx_lane_domain(model_str(f->m, c->domain)) : NULL;
	size_t size;
	char *prefix;
	uint32_t id;

	if (!name)
		name = "";
	if (!domain)
		return prefixed_frame(f, NVTX_FRAME_PREFIX, name, strlen(name));
	size = sizeof(NVTX_DOMAIN_FRAME_PREFIX NVTX_DOMAIN_FRAME_SUFFIX) + strlen(domain);
	prefix = xmalloc(size);
	snprintf(prefix, size, NVTX_DOMAIN_FRAME_PREFIX "%s" NVTX_DOMAIN_FRAME_SUFFIX, domain);
	id = prefixed_frame(f, prefix, name, strlen(name));
	free(prefix);
	return id;
}

/* Adds the frames of a chain of NVTX ranges under parent, outermost first. */
static uint32_t add_ranges(struct tree_builder *b, struct funcs *f, uint32_t parent,
			   uint32_t chain)
{
	const struct nvtx_chain *c;

	if (!chain)
		return parent;
	c = &b->ranges.chains.v[chain - 1];
	parent = add_ranges(b, f, parent, c->parent);
	if (!b->chain_label[chain])
		b->chain_label[chain] = range_frame(f, c);
	return child_of(b, parent, b->chain_label[chain]);
}

/*
 * Where the work of process pid hangs: the root, or with several ranks
 * loaded its rank's node "rank N" there, so that each rank is a tree of
 * its own.
 */
static uint32_t root_of(struct tree_builder *b, struct funcs *f, uint32_t pid)
{
	size_t r;
	char label[32];

	if (!b->rank_node)
		return 0;
	r = model_rank_of(f->m, pid);
	if (!b->rank_node[r]) {
		snprintf(label, sizeof(label), "rank %" PRId64, f->m->ranks.v[r].rank);
		b->rank_node[r] = child_of(b, 0, strtab_intern(&f->names, label));
	}
	return b->rank_node[r];
}

/* The tree node of a group: its thread name's, then its ranges'. */
static uint32_t group_node(struct tree_builder *b, struct funcs *f, uint32_t group)
{
	struct tree_group *g = &b->groups.v[group - 1];
	const struct tree_part *p = &b->parts.v[g->part - 1];

	if (!g->node)
		g->node = add_ranges(b, f, child_of(b, p->root, p->name), g->chain);
	return g->node;
}

/* The tree node of a stack's innermost frame, adding what is missing. */
static uint32_t tree_node_of(struct tree_builder *b, struct funcs *f,
			     uint32_t group, uint32_t node)
{
	const struct tr_node *nodes = f->m->t.nodes.v;
	uint32_t at = group_node(b, f, group);
	uint64_t memo;

	if (!node)
		return add_frames(b, f, at, 0);
	b->path.len = 0;
	for (uint32_t n = node; n; n = nodes[n - 1].parent) {
		if (u64map_get(&b->memo, (uint64_t)group << 32 | n, &memo)) {
			at = (uint32_t)memo;
			break;
		}
		*VEC_PUSH(&b->path) = n;
		if (nodes[n - 1].parent >= n)	/* corrupt: parents come first */
			break;
	}
	while (b->path.len) {
		uint32_t n = b->path.v[--b->path.len];

		at = add_frames(b, f, at, n);
		u64map_put(&b->memo, (uint64_t)group << 32 | n, at);
	}
	return at;
}

struct kids_order {
	const struct calltree *t;
	const struct funcs *f;
};

/* Frames by samples, then lane work by target time. */
static int cmp_kids(const void *pa, const void *pb, void *pctx)
{
	const struct kids_order *o = pctx;
	const struct calltree_node *a = &o->t->nodes.v[*(const uint32_t *)pa];
	const struct calltree_node *b = &o->t->nodes.v[*(const uint32_t *)pb];

	if (a->lane != b->lane)
		return a->lane ? 1 : -1;
	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	if (a->target_total != b->target_total)
		return a->target_total > b->target_total ? -1 : 1;
	return strcmp(funcs_name(o->f, a->name), funcs_name(o->f, b->name));
}

void calltree_finish(struct calltree *t, const struct funcs *f)
{
	struct kids_order order = { .t = t, .f = f };
	size_t len = t->nodes.len;
	uint32_t *fill;

	/* Children are created after their parent: one backward pass sums. */
	for (size_t i = len; i-- > 0;) {
		struct calltree_node *n = &t->nodes.v[i], *parent = &t->nodes.v[n->parent];

		n->total = u64_sat_add(n->total, n->self);
		n->target_total = u64_sat_add(n->target_total, n->target_self);
		n->spans_total = u64_sat_add(n->spans_total, n->spans_self);
		if (!i)
			break;
		parent->total = u64_sat_add(parent->total, n->total);
		parent->target_total = u64_sat_add(parent->target_total, n->target_total);
		parent->spans_total = u64_sat_add(parent->spans_total, n->spans_total);
	}

	t->kid_start = xcalloc(len + 1, sizeof(*t->kid_start));
	t->kids = xcalloc(len, sizeof(*t->kids));
	for (size_t i = 1; i < len; i++)
		t->kid_start[t->nodes.v[i].parent + 1]++;
	for (size_t i = 0; i < len; i++)
		t->kid_start[i + 1] += t->kid_start[i];
	fill = xmalloc(len * sizeof(*fill));
	memcpy(fill, t->kid_start, len * sizeof(*fill));
	for (size_t i = 1; i < len; i++)
		t->kids[fill[t->nodes.v[i].parent]++] = (uint32_t)i;
	free(fill);
	for (size_t i = 0; i < len; i++)
		if (t->kid_start[i + 1] - t->kid_start[i] > 1)
			qsort_r(t->kids + t->kid_start[i], t->kid_start[i + 1] - t->kid_start[i],
				sizeof(*t->kids), cmp_kids, &order);
}

/* Adds one span's name under parent, a lane work node, weighed in target time. */
static void add_span_name(struct tree_builder *b, struct funcs *f, uint32_t parent,
			  const struct tr_span *sp)
{
	uint32_t leaf = child_of(b, parent, funcs_span_frame(f, sp->name));

	b->t->nodes.v[leaf].lane = true;
	b->t->nodes.v[leaf].target_self = u64_sat_add(b->t->nodes.v[leaf].target_self, sp->dur);
	b->t->nodes.v[leaf].spans_self++;
}

/* Adds one span under parent: its lane's node, then its name's. */
static void add_span(struct tree_builder *b, struct funcs *f, uint32_t parent,
		     const struct tr_span *sp)
{
	uint32_t lane = child_of(b, parent, funcs_lane_frame(f, sp->lane));

	b->t->nodes.v[lane].lane = true;
	add_span_name(b, f, lane, sp);
}

/* How add_lanes places a lane's spans. */
enum lane_place {
	LANE_UNSELECTED,
	LANE_OWN,		/* under its "[lane] NAME" node at the root */
	LANE_KERNEL_REGIONS,	/* under "[kernel] NAME" at the root */
};

/*
 * Region spans carry no origin, and nothing in the model ties a collect
 * to the launch it measured: a time overlap with a kernel span would be
 * a guess among concurrent streams. So the regions of all blocks and
 * groups of a kernel hang under one "[kernel] NAME" at the root, beside
 * the lanes; their summaries are no work and stay out.
 */
static enum lane_place lane_place(enum model_lane_class class, bool selected)
{
	if (!selected || class == MODEL_LANE_KREGION_STATS)
		return LANE_UNSELECTED;
	return class == MODEL_LANE_KREGIONS ? LANE_KERNEL_REGIONS : LANE_OWN;
}

/* The "[kernel] NAME" node of a kernel-regions lane, at its root. */
static uint32_t kernel_regions_node(struct tree_builder *b, struct funcs *f, uint32_t lane)
{
	const struct tr_lane *l = &f->m->t.lanes.v[lane - 1];
	const char *name = model_str(f->m, l->name);
	uint32_t at;

	if (!name)
		name = "";
	at = child_of(b, root_of(b, f, l->pid), prefixed_frame(f, KERNEL_FRAME_PREFIX, name,
							       kregions_lane_kernel_len(name)));
	b->t->nodes.v[at].lane = true;
	return at;
}

static void add_lanes(struct tree_builder *b, struct funcs *f, const struct sample_filter *flt)
{
	const struct model *m = f->m;
	size_t nlanes = m->t.lanes.len;
	uint8_t *place = xcalloc(nlanes + 1, sizeof(*place));
	uint32_t *kernel_node = xcalloc(nlanes + 1, sizeof(*kernel_node));
	bool *selected = filter_lanes(f, flt);

	for (uint32_t lane = 1; lane <= nlanes; lane++)
		place[lane] = (uint8_t)lane_place(model_lane_class(m, lane), selected[lane]);
	for (size_t i = 0; i < m->t.spans.len; i++) {
		const struct tr_span *sp = &m->t.spans.v[i];

		if (!sp->lane || sp->lane > nlanes || place[sp->lane] == LANE_UNSELECTED)
			continue;
		if (place[sp->lane] == LANE_OWN) {
			add_span(b, f, root_of(b, f, m->t.lanes.v[sp->lane - 1].pid), sp);
			continue;
		}
		if (!kernel_node[sp->lane])
			kernel_node[sp->lane] = kernel_regions_node(b, f, sp->lane);
		add_span_name(b, f, kernel_node[sp->lane], sp);
	}
	free(place);
	free(kernel_node);
	free(selected);
}

/* The group of a thread part and an NVTX chain (0 none); ctx the builder. */
static uint32_t group_of(void *ctx, uint32_t part, uint32_t chain, uint32_t unused)
{
	struct tree_builder *b = ctx;
	uint32_t id = u64map_pair_id(&b->group_ids, part, chain);

	if (id > b->groups.len) {
		struct tree_group *g = VEC_PUSH(&b->groups);

		g->part = part;
		g->chain = chain;
	}
	return id;
}

/* The part of a thread while it had the name of string id name_id: that name under its root. */
static uint32_t part_of(struct tree_builder *b, struct funcs *f, const struct model_thread *th,
			uint32_t name_id)
{
	uint32_t root = root_of(b, f, th->pid), name = funcs_thread_named(f, th, name_id);
	uint32_t id = u64map_pair_id(&b->part_ids, root, name);

	if (id > b->parts.len)
		*VEC_PUSH(&b->parts) = (struct tree_part){ root, name };
	return id;
}

/*
 * By sample index: its group, from its thread's part by the name it had
 * then and, with frames, its NVTX ranges.
 */
static uint32_t *sample_groups(struct tree_builder *b, struct funcs *f,
			       const struct sample_filter *flt, bool nvtx_frames)
{
	const struct model *m = f->m;
	uint32_t *name_part = xcalloc(m->names.len + 1, sizeof(*name_part));
	uint32_t *groups, *chains = NULL;

	for (size_t ti = 0; ti < m->real_threads; ti++) {
		const struct model_thread *th = &m->threads.v[ti];

		for (uint32_t n = th->first_name; n < th->first_name + th->names; n++)
			if (!flt || filter_thread_named(flt, f, th, m->names.v[n].name))
				name_part[n] = part_of(b, f, th, m->names.v[n].name);
	}
	groups = groups_by_name(m, name_part);
	free(name_part);
	if (nvtx_frames)
		chains = nvtx_sample_chains(&b->ranges, m);
	split_sample_groups(m, groups, chains, NULL, group_of, b);
	free(chains);
	return groups;
}

/* The root, and by sample index the groups of the selected threads' samples. */
static uint32_t *builder_start(struct tree_builder *b, struct calltree *t, struct funcs *f,
			       const struct sample_filter *flt, bool nvtx_frames)
{
	memset(t, 0, sizeof(*t));
	memset(b, 0, sizeof(*b));
	b->t = t;
	VEC_PUSH(&t->nodes)->name = strtab_intern(&f->names, "all");
	if (f->m->ranks.len > 1)
		b->rank_node = xcalloc(f->m->ranks.len, sizeof(*b->rank_node));
	if (nvtx_frames)
		nvtx_ranges_build(&b->ranges, f->m);
	b->chain_label = xcalloc(b->ranges.chains.len + 1, sizeof(*b->chain_label));
	return sample_groups(b, f, flt, nvtx_frames);
}

static void builder_end(struct tree_builder *b, struct funcs *f, uint32_t *groups)
{
	calltree_finish(b->t, f);
	free(groups);
	u64map_free(&b->kids);
	u64map_free(&b->memo);
	VEC_FREE(&b->path);
	u64map_free(&b->part_ids);
	VEC_FREE(&b->parts);
	u64map_free(&b->group_ids);
	VEC_FREE(&b->groups);
	free(b->rank_node);
	nvtx_ranges_free(&b->ranges);
	free(b->chain_label);
}

void calltree_build_ranges(struct calltree *t, struct funcs *f, const struct sample_filter *flt,
			   const struct origin_links *links, bool nvtx_frames)
{
	const struct model *m = f->m;
	struct tree_builder b;
	uint32_t *groups = builder_start(&b, t, f, flt, nvtx_frames);
	struct stack_counts sc;

	count_stacks(&sc, f, flt, groups);
	for (size_t i = 0; i < sc.c.len; i++) {
		uint32_t leaf = tree_node_of(&b, f, sc.c.v[i].group, sc.c.v[i].node);

		t->nodes.v[leaf].self += sc.c.v[i].count;
	}
	if (links) {
		size_t n;
		struct lane_work *work = lane_work_select(f, flt, groups, links, &n);

		for (size_t i = 0; i < n; i++)
			add_span(&b, f, tree_node_of(&b, f, work[i].group, work[i].node),
				 &m->t.spans.v[work[i].span]);
		free(work);
	}
	add_lanes(&b, f, flt);
	stack_counts_free(&sc);
	builder_end(&b, f, groups);
}

void calltree_build_idle(struct calltree *t, struct funcs *f, const struct sample_filter *flt,
			 const uint64_t *idle_ns, bool nvtx_frames)
{
	const struct model *m = f->m;
	struct tree_builder b;
	uint32_t *groups = builder_start(&b, t, f, flt, nvtx_frames);
	bool *node_ok = filter_nodes(f, flt);

	for (size_t i = 0; i < m->t.samples.len; i++) {
		uint32_t node = m->t.samples.v[i].node, leaf;

		if (node > m->t.nodes.len)
			node = 0;
		if (!idle_ns[i] || !groups[i] || (node_ok && !node_ok[node]))
			continue;
		leaf = tree_node_of(&b, f, groups[i], node);
		t->nodes.v[leaf].target_self = u64_sat_add(t->nodes.v[leaf].target_self, idle_ns[i]);
		t->nodes.v[leaf].spans_self++;
	}
	free(node_ok);
	builder_end(&b, f, groups);
}

/* The frame "[kernel] NAME" of a kernel of v, made on first use. */
static uint32_t kernel_frame(struct funcs *f, const struct pc_view *v, uint32_t *frames,
			     uint32_t kernel)
{
	if (!frames[kernel]) {
		const char *name = funcs_name(f, v->kernels.v[kernel].name);

		frames[kernel] = prefixed_frame(f, KERNEL_FRAME_PREFIX, name, strlen(name));
	}
	return frames[kernel];
}

void calltree_build_pc(struct calltree *t, struct funcs *f, const struct sample_filter *flt,
		       const struct pc_view *v, bool nvtx_frames)
{
	const struct model *m = f->m;
	struct tree_builder b;
	uint32_t *groups = builder_start(&b, t, f, flt, nvtx_frames);
	uint32_t *frames = xcalloc(v->kernels.len + 1, sizeof(*frames));

	for (size_t i = 0; i < v->entries.len; i++) {
		const struct pc_entry *e = &v->entries.v[i];
		uint32_t group = e->origin ? groups[e->origin - 1] : 0, at = root_of(&b, f, e->pid);

		if (e->not_issued)	/* samples its reason's bucket counts already */
			continue;
		/* Under the launching stack when its thread is selected, as lane work is. */
		if (group) {
			uint32_t node = m->t.samples.v[e->origin - 1].node;

			at = tree_node_of(&b, f, group, node <= m->t.nodes.len ? node : 0);
		}
		at = child_of(&b, at, kernel_frame(f, v, frames, e->kernel));
		at = child_of(&b, at, v->places.v[e->site]);
		at = child_of(&b, at, e->stall);
		t->nodes.v[at].self += e->count;
	}
	free(frames);
	builder_end(&b, f, groups);
}

void calltree_build(struct calltree *t, struct funcs *f, const struct sample_filter *flt,
		    const struct origin_links *links)
{
	calltree_build_ranges(t, f, flt, links, true);
}

void calltree_free(struct calltree *t)
{
	VEC_FREE(&t->nodes);
	free(t->kid_start);
	free(t->kids);
}

static double share(uint64_t part, uint64_t all)
{
	return all ? 100.0 * (double)part / (double)all : 0.0;
}

/* How print_node prints: shares of all, indented from the tree's depth first_depth. */
struct tree_print {
	const struct calltree *t;
	const struct funcs *f;
	double min_percent;
	uint64_t all;		/* samples that 100% is */
	uint32_t first_depth;	/* nodes this deep are not indented */
	const char *prefix;	/* before each line */
};

/* A node holding at least min_percent of the samples or of the target time. */
static bool shown(const struct tree_print *p, uint32_t i)
{
	const struct calltree_node *n = &p->t->nodes.v[i], *root = &p->t->nodes.v[0];

	if (n->total && !n->lane && share(n->total, p->all) >= p->min_percent)
		return true;
	return n->target_total && share(n->target_total, root->target_total) >= p->min_percent;
}

static void print_kids(FILE *out, const struct tree_print *p, uint32_t i);

static void print_node(FILE *out, const struct tree_print *p, uint32_t i)
{
	const struct calltree_node *n = &p->t->nodes.v[i];

	fputs(p->prefix, out);
	/* Lane work, and frames only lane work passed through, in target time. */
	if (n->lane || (!n->total && n->target_total))
		fprintf(out, "%7.3fms %8" PRIu64, (double)n->target_total / 1e6, n->spans_total);
	else
		fprintf(out, "%7.2f%% %9" PRIu64, share(n->total, p->all), n->total);
	fprintf(out, "  %*s%s\n", (int)(2 * (n->depth - p->first_depth)), "",
		text_escape(funcs_name(p->f, n->name)));
	print_kids(out, p, i);
}

static void print_kids(FILE *out, const struct tree_print *p, uint32_t i)
{
	for (uint32_t k = p->t->kid_start[i]; k < p->t->kid_start[i + 1]; k++)
		if (shown(p, p->t->kids[k]))
			print_node(out, p, p->t->kids[k]);
}

void calltree_print(FILE *out, const struct calltree *t, const struct funcs *f,
		    double min_percent)
{
	struct tree_print p = { t, f, min_percent, t->nodes.v[0].total, 0, "" };

	print_node(out, &p, 0);
}

void calltree_print_under(FILE *out, const struct calltree *t, const struct funcs *f,
			  double min_percent, uint64_t all, const char *prefix)
{
	struct tree_print p = { t, f, min_percent, all, 1, prefix };

	print_kids(out, &p, 0);
}

static uint64_t calltree_weight_self(const struct calltree_node *n, enum calltree_weight w)
{
	return w == WEIGHT_SAMPLES ? n->self : n->target_self;
}

uint64_t calltree_weight_total(const struct calltree_node *n, enum calltree_weight w)
{
	return w == WEIGHT_SAMPLES ? n->total : n->target_total;
}

struct path_walk {
	const struct calltree *t;
	const struct funcs *f;
	enum calltree_weight w;
	calltree_path_fn *fn;
	void *ctx;
	VEC(char) path;		/* the names down to the current node, ';'-joined */
};

static void walk_paths(struct path_walk *pw, uint32_t i)
{
	const struct calltree_node *n = &pw->t->nodes.v[i];
	size_t len = pw->path.len;

	if (!calltree_weight_total(n, pw->w))
		return;
	if (n->depth) {
		const char *name = text_escape_folded(funcs_name(pw->f, n->name));
		size_t name_len = strlen(name);

		VEC_RESERVE(&pw->path, name_len + 2);	/* ';', the name, its NUL */
		if (len)
			pw->path.v[pw->path.len++] = ';';
		memcpy(pw->path.v + pw->path.len, name, name_len + 1);
		pw->path.len += name_len;
		pw->fn(pw->ctx, i, pw->path.v, calltree_weight_self(n, pw->w));
	}
	for (uint32_t k = pw->t->kid_start[i]; k < pw->t->kid_start[i + 1]; k++)
		walk_paths(pw, pw->t->kids[k]);
	pw->path.len = len;
	if (pw->path.v)
		pw->path.v[len] = '\0';
}

void calltree_walk_paths(const struct calltree *t, const struct funcs *f, enum calltree_weight w,
			 calltree_path_fn *fn, void *ctx)
{
	struct path_walk pw = { .t = t, .f = f, .w = w, .fn = fn, .ctx = ctx };

	walk_paths(&pw, 0);
	VEC_FREE(&pw.path);
}

static void print_folded_line(void *ctx, uint32_t node, const char *path, uint64_t self)
{
	if (self)
		fprintf(ctx, "%s %" PRIu64 "\n", path, self);
}

void calltree_print_folded(FILE *out, const struct calltree *t, const struct funcs *f,
			   enum calltree_weight w)
{
	calltree_walk_paths(t, f, w, print_folded_line, out);
}
