/* SPDX-License-Identifier: MIT */
/* script: the samples in perf script's default text layout. */
#include "analysis/views/script.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "contract/meta.h"
#include "util/text.h"
#include "util/xalloc.h"

/* What perf script writes for a symbol or a dso it does not know. */
#define SCRIPT_UNKNOWN "[unknown]"

/*
 * The events whose period is time: perf script prints their period in ns,
 * which gtrace knows from the sampling frequency. Another event's (cycles)
 * varies from sample to sample and was not recorded: it is left out, as
 * perf script leaves out a period it lacks, and each sample counts one.
 */
static const char *const clock_events[] = { META_EVENT_CPU_CLOCK, META_EVENT_TASK_CLOCK, NULL };

static uint64_t script_period(const struct model *m, const char *event)
{
	for (const char *const *e = clock_events; *e; e++)
		if (!strncmp(event, *e, strlen(*e)))
			return model_sample_period_ns(m);
	return 0;
}

/*
 * By index in m->names: the names id of the thread name its samples show,
 * or 0 when the filter leaves them out.
 */
static uint32_t *name_comms(struct funcs *f, const struct sample_filter *flt)
{
	const struct model *m = f->m;
	uint32_t *comm = xcalloc(m->names.len + 1, sizeof(*comm));

	for (size_t ti = 0; ti < m->real_threads; ti++) {
		const struct model_thread *th = &m->threads.v[ti];

		for (uint32_t n = th->first_name; n < th->first_name + th->names; n++)
			if (filter_thread_named(flt, f, th, m->names.v[n].name))
				comm[n] = funcs_thread_named(f, th, m->names.v[n].name);
	}
	return comm;
}

/* The path of loc's dso as perf names it, SCRIPT_UNKNOWN when it has none. */
static const char *dso_path(const struct model *m, const struct tr_loc *l)
{
	const char *path = l->dso && l->dso <= m->t.dsos.len ?
		model_str(m, m->t.dsos.v[l->dso - 1].path) : NULL;

	return path && *path ? path : SCRIPT_UNKNOWN;
}

static void print_frame(FILE *out, uint64_t addr, const char *sym, const char *dso)
{
	fprintf(out, "\t%16" PRIx64 " %s (%s)\n", addr, text_escape(sym), text_escape(dso));
}

/*
 * The frames of a stack node, innermost first: a location's functions, its
 * inlined ones first where f has them, all at its address; a location
 * without symbols SCRIPT_UNKNOWN in its dso, as perf writes it; a Python
 * frame by its name in its source file, at address 0 (it has no address).
 */
static void print_node(FILE *out, const struct funcs *f, uint32_t node)
{
	const struct model *m = f->m;
	uint32_t loc = m->t.nodes.v[node - 1].loc, nsyms, n;
	const struct tr_loc *l = &m->t.locs.v[loc - 1];
	const uint32_t *fn = funcs_of_node(f, node, &n);
	uint64_t addr = model_loc_is_python(m, loc) ? 0 : l->addr;

	model_loc_symbols(m, loc, &nsyms);
	for (uint32_t i = 0; i < n; i++)
		print_frame(out, addr, nsyms ? funcs_name(f, f->v.v[fn[i]].name) : SCRIPT_UNKNOWN,
			    dso_path(m, l));
}

/*
 * A sample's frames, leaf outward; a sample without any, or a node whose
 * location a damaged file lost, shows one unknown frame, as the call tree does.
 */
static void print_stack(FILE *out, const struct funcs *f, uint32_t leaf)
{
	const struct model *m = f->m;
	uint32_t node = leaf;

	do {
		uint32_t loc = node ? m->t.nodes.v[node - 1].loc : 0;

		if (loc && loc <= m->t.locs.len)
			print_node(out, f, node);
		else
			print_frame(out, 0, SCRIPT_UNKNOWN, SCRIPT_UNKNOWN);
	} while ((node = stack_caller(m, node)));
}

int script_write(FILE *out, struct funcs *f, const struct script_opts *o)
{
	const struct model *m = f->m;
	const char *event = model_meta(m, META_EVENT);
	uint64_t period, zero = model_time_zero(m);
	uint64_t from = zero + o->start_ns;
	uint64_t to = o->end_ns > UINT64_MAX - zero ? UINT64_MAX : zero + o->end_ns;
	uint32_t *comm = name_comms(f, o->filter);
	uint32_t *sample_comm = groups_by_name(m, comm);
	bool *node_ok = filter_nodes(f, o->filter);

	if (!event || !*event)
		event = SCRIPT_UNKNOWN;
	period = script_period(m, event);
	for (size_t i = 0; i < m->t.samples.len && !ferror(out); i++) {
		const struct tr_sample *s = &m->t.samples.v[i];
		uint32_t node = s->node <= m->t.nodes.len ? s->node : 0;

		if (!sample_comm[i] || (node_ok && !node_ok[node]) || s->ts < from || s->ts >= to)
			continue;
		fprintf(out, "%s %5" PRIu32 "/%-5" PRIu32 " [%03" PRIu32 "] %5" PRIu64 ".%06" PRIu64
			": ", text_escape(funcs_name(f, sample_comm[i])), s->pid, s->tid, s->cpu,
			s->ts / 1000000000, s->ts % 1000000000 / 1000);
		if (period)
			fprintf(out, "%10" PRIu64 " ", period);
		fprintf(out, "%s: \n", text_escape(event));
		print_stack(out, f, node);
		fputc('\n', out);
	}
	free(node_ok);
	free(sample_comm);
	free(comm);
	return ferror(out) ? -EIO : 0;
}
