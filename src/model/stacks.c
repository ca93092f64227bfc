/* SPDX-License-Identifier: MIT */
/*
 * The stacks as a view shows them: the Python frames merged in, or left
 * out, and the kernel's frames left out (--python, --no-kernel). The
 * nodes are rewritten once, after the load, and every row that names a
 * node follows.
 */
#include <stdlib.h>

#include "model/model-internal.h"
#include "util/xalloc.h"

/* Whether loc is in a dso with one of flags (enum tr_dso_flags). */
static bool loc_in(const struct model *m, uint32_t loc, uint32_t flags)
{
	uint32_t dso = loc && loc <= m->t.locs.len ? m->t.locs.v[loc - 1].dso : 0;

	return dso && dso <= m->t.dsos.len && (m->t.dsos.v[dso - 1].flags & flags);
}

bool model_loc_is_python(const struct model *m, uint32_t loc)
{
	return loc_in(m, loc, TR_DSO_PYTHON);
}

bool model_loc_is_kernel(const struct model *m, uint32_t loc)
{
	return loc_in(m, loc, TR_DSO_KERNEL);
}

/* Whether a dso has one of flags. */
static bool has_dso(const struct model *m, uint32_t flags)
{
	for (size_t i = 0; i < m->t.dsos.len; i++)
		if (m->t.dsos.v[i].flags & flags)
			return true;
	return false;
}

/* The parent of node in nodes; 0 for a corrupt one, as parents come first. */
static uint32_t parent_of(const struct tr_node *nodes, uint32_t node)
{
	uint32_t parent = nodes[node - 1].parent;

	return parent < node ? parent : 0;
}

/*
 * The view's parent of node, given where the nodes before it went (to[id]):
 * its parent's place; but in the Python view a Python frame run by a
 * native frame (the eval loop) goes under that native frame's parent,
 * which hides it there.
 */
static uint32_t view_parent(const struct model *m, enum model_python_view view,
			    const struct tr_node *nodes, const uint32_t *to, uint32_t node)
{
	uint32_t parent = parent_of(nodes, node);

	if (view == MODEL_PYTHON_ON && parent && model_loc_is_python(m, nodes[node - 1].loc) &&
	    !model_loc_is_python(m, nodes[parent - 1].loc))
		return to[parent_of(nodes, parent)];
	return to[parent];
}

/*
 * Rewrites the stack nodes into the Python view and, with no_kernel,
 * without the kernel's frames; every row that names a node follows.
 */
static void rewrite_stacks(struct model *m, enum model_python_view view, bool no_kernel)
{
	struct tr_node *old = m->t.nodes.v;
	size_t n = m->t.nodes.len;
	uint32_t *to;			/* by old node id: its node in the view */
	struct u64map ids = {0};	/* view parent << 32 | loc -> view node id */

	to = xcalloc(n + 1, sizeof(*to));
	m->t.nodes.v = xcalloc(n, sizeof(*m->t.nodes.v));
	m->t.nodes.len = 0;
	m->t.nodes.cap = n;
	for (uint32_t node = 1; node <= n; node++) {
		uint32_t loc = old[node - 1].loc, under, id;

		if ((view == MODEL_PYTHON_OFF && model_loc_is_python(m, loc)) ||
		    (no_kernel && model_loc_is_kernel(m, loc))) {
			/* Dropped: what it called goes where it would have. */
			to[node] = to[parent_of(old, node)];
			continue;
		}
		under = view_parent(m, view, old, to, node);
		id = u64map_pair_id(&ids, under, loc);
		if (id > m->t.nodes.len)
			*VEC_PUSH(&m->t.nodes) = (struct tr_node){ .parent = under, .loc = loc };
		to[node] = id;
	}
	for (size_t i = 0; i < m->t.samples.len; i++) {
		struct tr_sample *s = &m->t.samples.v[i];

		s->node = s->node <= n ? to[s->node] : 0;
	}
	for (size_t i = 0; i < m->t.offcpu.len; i++) {
		struct tr_offcpu *o = &m->t.offcpu.v[i];

		o->node = o->node <= n ? to[o->node] : 0;
	}
	for (size_t i = 0; i < m->folded_offcpu.v.len; i++) {
		struct model_offcpu_sum *o = &m->folded_offcpu.v.v[i];

		o->node = o->node <= n ? to[o->node] : 0;
	}
	u64map_free(&ids);
	free(to);
	free(old);
}

void model_view_stacks(struct model *m, enum model_python_view view, bool no_kernel)
{
	bool python = view != MODEL_PYTHON_BOTH && has_dso(m, TR_DSO_PYTHON);

	no_kernel = no_kernel && has_dso(m, TR_DSO_KERNEL);
	/* Once for both: kernel frames are leaves, under no Python frame's eval loop. */
	if (python || no_kernel)
		rewrite_stacks(m, python ? view : MODEL_PYTHON_BOTH, no_kernel);
}
