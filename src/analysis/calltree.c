/* SPDX-License-Identifier: MIT */
/* The merged call tree and its text views: indented tree and folded stacks. */
#include "analysis/analysis.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

struct tree_builder {
	struct calltree *t;
	struct u64map kids;	/* parent << 32 | name -> node */
	struct u64map memo;	/* group << 32 | stack node -> tree node of its innermost frame */
	VEC(uint32_t) path;	/* stack nodes not yet in the tree, innermost first */
};

static uint32_t child_of(struct tree_builder *b, uint32_t parent, uint32_t name)
{
	uint64_t key = (uint64_t)parent << 32 | name, at;
	struct calltree_node *n;

	if (u64map_get(&b->kids, key, &at))
		return (uint32_t)at;
	at = b->t->nodes.len;
	n = VEC_PUSH(&b->t->nodes);
	n->parent = parent;
	n->name = name;
	n->depth = b->t->nodes.v[parent].depth + 1;
	u64map_put(&b->kids, key, at);
	return (uint32_t)at;
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

/* The tree node of a stack's innermost frame, adding what is missing. */
static uint32_t tree_node_of(struct tree_builder *b, const struct funcs *f,
			     uint32_t group, uint32_t node)
{
	const struct tr_node *nodes = f->m->t.nodes.v;
	uint32_t at = child_of(b, 0, group);	/* the thread name */
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

static int cmp_kids(const void *pa, const void *pb, void *pctx)
{
	const struct kids_order *o = pctx;
	const struct calltree_node *a = &o->t->nodes.v[*(const uint32_t *)pa];
	const struct calltree_node *b = &o->t->nodes.v[*(const uint32_t *)pb];

	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return strcmp(funcs_name(o->f, a->name), funcs_name(o->f, b->name));
}

/* Totals up the tree and lists each node's children, largest first. */
static void finish_tree(struct calltree *t, const struct funcs *f)
{
	struct kids_order order = { .t = t, .f = f };
	size_t len = t->nodes.len;
	uint32_t *fill;

	/* Children are created after their parent: one backward pass sums. */
	for (size_t i = len; i-- > 1;) {
		t->nodes.v[i].total += t->nodes.v[i].self;
		t->nodes.v[t->nodes.v[i].parent].total += t->nodes.v[i].total;
	}
	t->nodes.v[0].total += t->nodes.v[0].self;

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

void calltree_build(struct calltree *t, struct funcs *f, const struct sample_filter *flt)
{
	const struct model *m = f->m;
	struct tree_builder b = { .t = t };
	uint32_t *thread_name = xcalloc(m->real_threads + 1, sizeof(*thread_name));
	struct stack_counts sc;
	struct calltree_node *root;

	memset(t, 0, sizeof(*t));
	root = VEC_PUSH(&t->nodes);
	root->name = strtab_intern(&f->names, "all");
	for (size_t ti = 0; ti < m->real_threads; ti++)
		if (!flt || filter_thread(flt, f, &m->threads.v[ti]))
			thread_name[ti] = funcs_thread_name(f, &m->threads.v[ti]);
	count_stacks(&sc, f, flt, thread_name);
	for (size_t i = 0; i < sc.c.len; i++) {
		uint32_t leaf = tree_node_of(&b, f, sc.c.v[i].group, sc.c.v[i].node);

		t->nodes.v[leaf].self += sc.c.v[i].count;
	}
	finish_tree(t, f);

	stack_counts_free(&sc);
	free(thread_name);
	u64map_free(&b.kids);
	u64map_free(&b.memo);
	VEC_FREE(&b.path);
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

static void print_node(FILE *out, const struct calltree *t, const struct funcs *f,
		       uint32_t i, double min_percent)
{
	const struct calltree_node *n = &t->nodes.v[i];
	uint64_t all = t->nodes.v[0].total;

	fprintf(out, "%7.2f%% %9" PRIu64 "  %*s%s\n", share(n->total, all), n->total,
		(int)(2 * n->depth), "", funcs_name(f, n->name));
	for (uint32_t k = t->kid_start[i]; k < t->kid_start[i + 1]; k++) {
		uint64_t total = t->nodes.v[t->kids[k]].total;

		if (!total || share(total, all) < min_percent)
			break;	/* children are sorted: the rest are smaller */
		print_node(out, t, f, t->kids[k], min_percent);
	}
}

void calltree_print(FILE *out, const struct calltree *t, const struct funcs *f,
		    double min_percent)
{
	print_node(out, t, f, 0, min_percent);
}

static void print_folded(FILE *out, const struct calltree *t, const struct funcs *f,
			 uint32_t i, const char **names)
{
	const struct calltree_node *n = &t->nodes.v[i];

	if (n->depth)
		names[n->depth - 1] = funcs_name(f, n->name);
	if (n->self && n->depth) {
		for (uint32_t d = 0; d < n->depth; d++)
			fprintf(out, "%s%s", d ? ";" : "", names[d]);
		fprintf(out, " %" PRIu64 "\n", n->self);
	}
	for (uint32_t k = t->kid_start[i]; k < t->kid_start[i + 1]; k++)
		print_folded(out, t, f, t->kids[k], names);
}

void calltree_print_folded(FILE *out, const struct calltree *t, const struct funcs *f)
{
	uint32_t max_depth = 0;
	const char **names;

	for (size_t i = 0; i < t->nodes.len; i++)
		if (t->nodes.v[i].depth > max_depth)
			max_depth = t->nodes.v[i].depth;
	names = xcalloc(max_depth + 1, sizeof(*names));
	print_folded(out, t, f, 0, names);
	free(names);
}
