/* SPDX-License-Identifier: MIT */
/*
 * The Chrome Trace Event Format (JSON), as chrome://tracing, Perfetto and
 * speedscope read it:
 *
 *   {"traceEvents": [...], "stackFrames": {...}, "displayTimeUnit": "ns",
 *    "metadata": {...}}
 *
 * Processes and threads (lanes too, as threads of their process) are
 * named by "M" events; slices are "X" events, instants "i"; a flow is an
 * "s" event on a zero-length "X" at the origin and an "f" bound to the
 * enclosing span; counters are "C" events, their one value keyed by its
 * unit ("value" for a count), the machine's and each GPU's metrics those
 * of a pseudo process of their own. A CPU sample is an instant on
 * its thread, named after its leaf function, whose "sf" names its stack
 * in "stackFrames" (frame "name" and "category": function and dso, then
 * "parent"). Times are in microseconds with the ns as decimals: exact.
 */
#include "analysis/export.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/utf8.h"
#include "util/xalloc.h"

struct chrome {
	bool first;		/* no event written yet: no comma before the next */
	bool *used;		/* by node id: a sample's stack ends there, or a callee's */
};


static void put_name(struct exporter *x, uint32_t name)
{
	utf8_fput_json(x->out, funcs_name(x->f, name));
}

/* value / 10^decimals, exactly: its integer part, then decimals digits. */
static void put_fixed(FILE *out, uint64_t value, uint32_t decimals)
{
	/* 10^19 is the last power of ten a uint64_t holds. */
	int digits = decimals < 19 ? (int)decimals : 19;
	uint64_t div = 1;

	for (int i = 0; i < digits; i++)
		div *= 10;
	if (digits)
		fprintf(out, "%" PRIu64 ".%0*" PRIu64, value / div, digits, value % div);
	else
		fprintf(out, "%" PRIu64, value);
}

/* ns as microseconds, exactly. */
static void put_us(FILE *out, uint64_t ns)
{
	put_fixed(out, ns, 3);
}

/* Starts the next element of traceEvents. */
static void next_event(struct exporter *x)
{
	struct chrome *c = x->state;

	fputs(c->first ? "\n{" : ",\n{", x->out);
	c->first = false;
}

/* Opens an event object: "ph", the name and where it is. */
static void begin_event(struct exporter *x, const char *ph, uint32_t name,
			const struct export_track *t)
{
	next_event(x);
	fprintf(x->out, "\"ph\":\"%s\",\"name\":", ph);
	put_name(x, name);
	fprintf(x->out, ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32, t->pid, t->tid);
}

/* One end of flow id: "s" binds to the slice around it, "f" with "bp":"e" too. */
static void put_flow(struct exporter *x, const char *ph, uint64_t id,
		     const struct export_track *t, uint64_t ts)
{
	next_event(x);
	fprintf(x->out, "\"ph\":\"%s\",\"name\":\"origin\",\"cat\":\"flow\",\"id\":%" PRIu64
		",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 "%s,\"ts\":", ph, id, t->pid, t->tid,
		*ph == 'f' ? ",\"bp\":\"e\"" : "");
	put_us(x->out, ts);
	fputc('}', x->out);
}

static void put_args(struct exporter *x, const struct export_arg *args, size_t n)
{
	fputs(",\"args\":{", x->out);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(',', x->out);
		put_name(x, args[i].key);
		fputc(':', x->out);
		if (args[i].str)
			utf8_fput_json(x->out, args[i].str);
		else
			fprintf(x->out, "%" PRIu64, args[i].value);
	}
	fputc('}', x->out);
}

static void chrome_begin(struct exporter *x)
{
	struct chrome *c = xcalloc(1, sizeof(*c));

	c->first = true;
	c->used = xcalloc(x->m->t.nodes.len + 1, sizeof(*c->used));
	x->state = c;
	fputs("{\"traceEvents\":[", x->out);
}

/* "M" events name processes and threads, and keep tracks in the order made. */
static void chrome_track(struct exporter *x, const struct export_track *t)
{
	const char *what;

	switch (t->kind) {
	case TRACK_GLOBAL:
	case TRACK_PROCESS:
	case TRACK_DEVICE:
		what = "process";
		break;
	case TRACK_THREAD:
	case TRACK_LANE:
		what = "thread";
		break;
	default:
		return;		/* no such thing in the format: GPU lanes have it in their name */
	}
	next_event(x);
	fprintf(x->out, "\"ph\":\"M\",\"name\":\"%s_name\",\"pid\":%" PRIu32
		",\"tid\":%" PRIu32 ",\"args\":{\"name\":", what, t->pid, t->tid);
	put_name(x, t->name);
	fprintf(x->out, "}},\n{\"ph\":\"M\",\"name\":\"%s_sort_index\",\"pid\":%" PRIu32
		",\"tid\":%" PRIu32 ",\"args\":{\"sort_index\":%" PRIu32 "}}",
		what, t->pid, t->tid, t->id);
}

static void chrome_slice(struct exporter *x, const struct export_event *e)
{
	begin_event(x, "X", e->name, e->track);
	fputs(",\"cat\":", x->out);
	put_name(x, e->category);
	fputs(",\"ts\":", x->out);
	put_us(x->out, e->ts);
	fputs(",\"dur\":", x->out);
	put_us(x->out, e->dur);
	if (e->nargs)
		put_args(x, e->args, e->nargs);
	fputc('}', x->out);
	if (e->flow_in)
		put_flow(x, "f", e->flow_in, e->track, e->ts);
}

/* A flow's start is a zero-length slice, for the "s" to bind to. */
static void chrome_instant(struct exporter *x, const struct export_event *e)
{
	if (e->flow_out) {
		chrome_slice(x, e);
		put_flow(x, "s", e->flow_out, e->track, e->ts);
		return;
	}
	begin_event(x, "i", e->name, e->track);
	fputs(",\"s\":\"t\",\"cat\":", x->out);
	put_name(x, e->category);
	fputs(",\"ts\":", x->out);
	put_us(x->out, e->ts);
	if (e->nargs)
		put_args(x, e->args, e->nargs);
	fputc('}', x->out);
}

/* The func of a stack node: its location's outermost function. */
static const struct func *node_func(const struct funcs *f, uint32_t node)
{
	uint32_t n;
	const uint32_t *fn = funcs_of_node(f, node, &n);

	return &f->v.v[fn[n - 1]];
}

static void chrome_sample(struct exporter *x, const struct export_track *t,
			  const struct tr_sample *s, uint64_t ts)
{
	struct chrome *c = x->state;

	begin_event(x, "i", node_func(x->f, s->node)->name, t);
	fputs(",\"s\":\"t\",\"cat\":\"cpu\",\"ts\":", x->out);
	put_us(x->out, ts);
	if (s->node) {
		fprintf(x->out, ",\"sf\":%" PRIu32, s->node);
		c->used[s->node] = true;
	}
	fprintf(x->out, ",\"args\":{\"cpu\":%" PRIu32 "%s}}", s->cpu,
		s->flags & TR_SAMPLE_TRUNCATED ? ",\"truncated\":1" : "");
}

static void chrome_counter(struct exporter *x, const struct export_track *t, uint64_t ts,
			   uint64_t value, uint32_t decimals)
{
	begin_event(x, "C", t->name, t);
	fputs(",\"ts\":", x->out);
	put_us(x->out, ts);
	fputs(",\"args\":{", x->out);
	if (t->unit)
		put_name(x, t->unit);
	else
		fputs("\"value\"", x->out);
	fputc(':', x->out);
	put_fixed(x->out, value, decimals);
	fputs("}}", x->out);
}

/* The frames of the stacks the samples used: each node, its function and caller. */
static void put_stack_frames(struct exporter *x)
{
	const struct model *m = x->m;
	struct chrome *c = x->state;
	bool first = true;

	/* A node's parent has a smaller id: one pass down marks every caller. */
	for (uint32_t node = (uint32_t)m->t.nodes.len; node > 0; node--) {
		uint32_t parent = m->t.nodes.v[node - 1].parent;

		if (c->used[node] && parent && parent < node)
			c->used[parent] = true;
	}
	fputs("],\n\"stackFrames\":{", x->out);
	for (uint32_t node = 1; node <= m->t.nodes.len; node++) {
		const struct func *fn = node_func(x->f, node);
		uint32_t parent = m->t.nodes.v[node - 1].parent;

		if (!c->used[node])
			continue;
		fprintf(x->out, "%s\n\"%" PRIu32 "\":{\"name\":", first ? "" : ",", node);
		first = false;
		put_name(x, fn->name);
		fputs(",\"category\":", x->out);
		put_name(x, fn->dso);
		if (parent && parent < node)
			fprintf(x->out, ",\"parent\":\"%" PRIu32 "\"", parent);
		fputc('}', x->out);
	}
}

static void chrome_end(struct exporter *x)
{
	const struct model *m = x->m;
	bool first = true;

	put_stack_frames(x);
	fputs("},\n\"displayTimeUnit\":\"ns\",\n\"metadata\":{", x->out);
	for (size_t i = 0; i < m->t.meta.len; i++) {
		if (!export_meta_last(m, i))
			continue;
		fputs(first ? "\n" : ",\n", x->out);
		first = false;
		utf8_fput_json(x->out, m->t.meta.v[i].key);
		fputc(':', x->out);
		utf8_fput_json(x->out, m->t.meta.v[i].value);
	}
	fputs("}}\n", x->out);
}

static void chrome_free(struct exporter *x)
{
	struct chrome *c = x->state;

	free(c->used);
	free(c);
	x->state = NULL;
}

const struct export_emitter export_chrome = {
	.begin = chrome_begin,
	.track = chrome_track,
	.slice = chrome_slice,
	.instant = chrome_instant,
	.sample = chrome_sample,
	.counter = chrome_counter,
	.end = chrome_end,
	.free = chrome_free,
};
