/* SPDX-License-Identifier: MIT */
/*
 * Perfetto's protobuf trace, as ui.perfetto.dev and trace_processor read
 * it: a Trace message is a run of TracePacket fields (number 1), each
 * written as soon as it is made. The messages and field numbers used are
 * those of Perfetto's protos/perfetto/trace/ (tests/e2e/pftrace.proto
 * lists them):
 *
 *   ClockSnapshot       time 0 on CLOCK_MONOTONIC and CLOCK_REALTIME, when
 *                       the recording read its clocks; the packets' times
 *                       are on the trace's default clock (BOOTTIME)
 *   TrackDescriptor     a process (ProcessDescriptor), a thread
 *                       (ThreadDescriptor), a group, a lane (under its
 *                       process, GPU or calling thread) or the machine's
 *                       or a GPU's metrics (a name, and parent_uuid), a
 *                       counter (CounterDescriptor: a count, or its unit);
 *                       each ranked among its siblings by its uuid, the
 *                       tracks that hold others ordering them by rank
 *   TrackEvent          slice begin and end, instant, counter value (an
 *                       integer, or a double for a metric with decimals);
 *                       flow_ids and terminating_flow_ids; attributes as
 *                       debug annotations
 *   PerfSample          a CPU sample: cpu, pid, tid and its callstack
 *   InternedData        names of events, categories and annotations, and
 *                       the stacks: function names, mappings, frames
 *                       (one per code location), callstacks (one per
 *                       stack node, outermost frame first)
 *
 * Every packet is on one sequence (trusted_packet_sequence_id 1): the
 * first clears its incremental state, those that refer to interned data
 * need it, and each entry is interned in the packet that first uses it.
 * A track uuid is the walk's track id; a flow id the span's row + 1.
 */
#include "analysis/encoders/export-emitter.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "format/pb.h"
#include "util/xalloc.h"

enum {
	TRACE_PACKET = 1,

	PACKET_CLOCK_SNAPSHOT = 6,
	PACKET_TIMESTAMP = 8,
	PACKET_SEQUENCE_ID = 10,
	PACKET_TRACK_EVENT = 11,
	PACKET_INTERNED_DATA = 12,
	PACKET_SEQUENCE_FLAGS = 13,
	PACKET_TRACK_DESCRIPTOR = 60,
	PACKET_PERF_SAMPLE = 66,

	SEQ_INCREMENTAL_STATE_CLEARED = 1,
	SEQ_NEEDS_INCREMENTAL_STATE = 2,

	DESC_UUID = 1,
	DESC_NAME = 2,
	DESC_PROCESS = 3,
	DESC_THREAD = 4,
	DESC_PARENT_UUID = 5,
	DESC_COUNTER = 8,
	DESC_CHILD_ORDERING = 11,
	DESC_SIBLING_ORDER_RANK = 12,
	ORDERING_EXPLICIT = 3,	/* children by their sibling_order_rank */

	SNAPSHOT_CLOCKS = 1,
	SNAPSHOT_PRIMARY_TRACE_CLOCK = 2,
	CLOCK_ID = 1,
	CLOCK_TIMESTAMP = 2,
	BUILTIN_CLOCK_REALTIME = 1,
	BUILTIN_CLOCK_MONOTONIC = 3,
	BUILTIN_CLOCK_BOOTTIME = 6,	/* the trace's clock: what packets without a clock id use */

	PROCESS_PID = 1,
	PROCESS_NAME = 6,
	THREAD_PID = 1,
	THREAD_TID = 2,
	THREAD_NAME = 5,
	COUNTER_UNIT = 3,
	COUNTER_UNIT_NAME = 6,
	UNIT_COUNT = 2,

	EVENT_CATEGORY_IIDS = 3,
	EVENT_DEBUG_ANNOTATIONS = 4,
	EVENT_TYPE = 9,
	EVENT_NAME_IID = 10,
	EVENT_TRACK_UUID = 11,
	EVENT_COUNTER_VALUE = 30,
	EVENT_DOUBLE_COUNTER_VALUE = 44,
	EVENT_FLOW_IDS = 47,
	EVENT_TERMINATING_FLOW_IDS = 48,
	TYPE_SLICE_BEGIN = 1,
	TYPE_SLICE_END = 2,
	TYPE_INSTANT = 3,
	TYPE_COUNTER = 4,

	ANNOTATION_NAME_IID = 1,
	ANNOTATION_UINT = 3,
	ANNOTATION_DOUBLE = 5,
	ANNOTATION_STRING = 6,

	INTERNED_CATEGORIES = 1,
	INTERNED_EVENT_NAMES = 2,
	INTERNED_ANNOTATION_NAMES = 3,
	INTERNED_FUNCTION_NAMES = 5,
	INTERNED_FRAMES = 6,
	INTERNED_CALLSTACKS = 7,
	INTERNED_MAPPING_PATHS = 17,
	INTERNED_MAPPINGS = 19,
	ENTRY_IID = 1,		/* of every interned entry */
	ENTRY_NAME = 2,		/* of EventName, EventCategory, DebugAnnotationName, InternedString */

	FRAME_FUNCTION_NAME = 2,
	FRAME_MAPPING = 3,
	FRAME_REL_PC = 4,
	CALLSTACK_FRAMES = 2,
	MAPPING_PATHS = 7,

	SAMPLE_CPU = 1,
	SAMPLE_PID = 2,
	SAMPLE_TID = 3,
	SAMPLE_CALLSTACK = 4,
};

/* Which interning index a names id was sent to: bits of perfetto.sent. */
enum {
	SENT_EVENT_NAME = 1 << 0,
	SENT_CATEGORY = 1 << 1,
	SENT_ANNOTATION = 1 << 2,
	SENT_FUNCTION = 1 << 3,
	SENT_MAPPING = 1 << 4,
};

struct perfetto {
	struct gbuf packet;	/* the TracePacket being made */
	struct gbuf interned;	/* its InternedData's fields */
	struct gbuf framing;	/* the packet's tag and length */
	bool cleared;		/* the sequence's state was cleared by a packet */
	bool needs_state;	/* the packet refers to interned data */
	VEC(uint8_t) sent;	/* by names id: SENT_* */
	bool *frame_sent;	/* by loc id; nlocs + 1: the unknown location */
	bool *stack_sent;	/* by node id; nnodes + 1: the empty stack */
	uint32_t unknown_mapping; /* names id of the mapping of frames with no dso */
	VEC(uint32_t) path;	/* scratch: a stack's nodes, innermost first */
};

static void new_packet(struct perfetto *p)
{
	gbuf_reset(&p->packet);
	gbuf_reset(&p->interned);
	p->needs_state = false;
}

static void write_packet(struct exporter *x)
{
	struct perfetto *p = x->state;
	uint32_t flags = p->needs_state ? SEQ_NEEDS_INCREMENTAL_STATE : 0;

	if (p->interned.len)
		pb_bytes(&p->packet, PACKET_INTERNED_DATA, p->interned.data, p->interned.len);
	pb_varint(&p->packet, PACKET_SEQUENCE_ID, 1);
	if (!p->cleared) {
		flags |= SEQ_INCREMENTAL_STATE_CLEARED;
		p->cleared = true;
	}
	if (flags)
		pb_varint(&p->packet, PACKET_SEQUENCE_FLAGS, flags);
	gbuf_reset(&p->framing);
	pb_tag(&p->framing, TRACE_PACKET, PB_LEN);
	gbuf_put_uvarint(&p->framing, p->packet.len);
	fwrite(p->framing.data, 1, p->framing.len, x->out);
	fwrite(p->packet.data, 1, p->packet.len, x->out);
}

/* The SENT_* bits of names id. */
static uint8_t *sent(struct perfetto *p, uint32_t name)
{
	while (p->sent.len <= name)
		*VEC_PUSH(&p->sent) = 0;
	return &p->sent.v[name];
}

/*
 * The iid of names id in one of the interning indexes that take text
 * (field of InternedData), interned into the packet the first time.
 */
static uint64_t intern_name(struct exporter *x, uint32_t field, uint8_t bit, uint32_t name)
{
	struct perfetto *p = x->state;
	uint8_t *bits = sent(p, name);

	p->needs_state = true;
	if (!(*bits & bit)) {
		size_t at = pb_begin(&p->interned, field);

		pb_varint(&p->interned, ENTRY_IID, name);
		pb_string(&p->interned, ENTRY_NAME, funcs_name(x->f, name));
		pb_end(&p->interned, at);
		*bits |= bit;
	}
	return name;
}

static void put_clock(struct gbuf *b, uint64_t clock, uint64_t ts)
{
	size_t at = pb_begin(b, SNAPSHOT_CLOCKS);

	pb_varint(b, CLOCK_ID, clock);
	pb_varint(b, CLOCK_TIMESTAMP, ts);
	pb_end(b, at);
}

/* Time 0 of the trace's clock on the recording machine's clocks, so that absolute time survives. */
static void put_clock_snapshot(struct exporter *x)
{
	struct perfetto *p = x->state;
	size_t at;

	new_packet(p);
	at = pb_begin(&p->packet, PACKET_CLOCK_SNAPSHOT);
	put_clock(&p->packet, BUILTIN_CLOCK_BOOTTIME, 0);
	put_clock(&p->packet, BUILTIN_CLOCK_MONOTONIC, x->monotonic_zero);
	put_clock(&p->packet, BUILTIN_CLOCK_REALTIME, x->realtime_zero);
	pb_varint(&p->packet, SNAPSHOT_PRIMARY_TRACE_CLOCK, BUILTIN_CLOCK_BOOTTIME);
	pb_end(&p->packet, at);
	write_packet(x);
}

static void perfetto_begin(struct exporter *x)
{
	struct perfetto *p = xcalloc(1, sizeof(*p));

	p->frame_sent = xcalloc(x->m->t.locs.len + 2, sizeof(*p->frame_sent));
	p->stack_sent = xcalloc(x->m->t.nodes.len + 2, sizeof(*p->stack_sent));
	p->unknown_mapping = strtab_intern(&x->f->names, "[unknown]");
	x->state = p;
	if (x->realtime_known)
		put_clock_snapshot(x);
}

static void perfetto_track(struct exporter *x, const struct export_track *t)
{
	struct perfetto *p = x->state;
	const char *name = funcs_name(x->f, t->name);
	size_t track, desc;

	new_packet(p);
	track = pb_begin(&p->packet, PACKET_TRACK_DESCRIPTOR);
	pb_varint(&p->packet, DESC_UUID, t->id);
	/* In the order made, as the Chrome JSON's sort indexes. */
	pb_varint(&p->packet, DESC_SIBLING_ORDER_RANK, t->id);
	if (t->kind == TRACK_GLOBAL || t->kind == TRACK_PROCESS || t->kind == TRACK_THREAD ||
	    t->kind == TRACK_GROUP || t->kind == TRACK_DEVICE)
		pb_varint(&p->packet, DESC_CHILD_ORDERING, ORDERING_EXPLICIT);
	switch (t->kind) {
	case TRACK_PROCESS:
		desc = pb_begin(&p->packet, DESC_PROCESS);
		pb_varint(&p->packet, PROCESS_PID, t->pid);
		pb_string(&p->packet, PROCESS_NAME, name);
		pb_end(&p->packet, desc);
		break;
	case TRACK_THREAD:
		desc = pb_begin(&p->packet, DESC_THREAD);
		pb_varint(&p->packet, THREAD_PID, t->pid);
		pb_varint(&p->packet, THREAD_TID, t->tid);
		pb_string(&p->packet, THREAD_NAME, name);
		pb_end(&p->packet, desc);
		break;
	default:
		pb_string(&p->packet, DESC_NAME, name);
		if (t->parent)
			pb_varint(&p->packet, DESC_PARENT_UUID, t->parent);
		if (t->kind == TRACK_COUNTER) {
			desc = pb_begin(&p->packet, DESC_COUNTER);
			if (t->unit)
				pb_string(&p->packet, COUNTER_UNIT_NAME, funcs_name(x->f, t->unit));
			else
				pb_varint(&p->packet, COUNTER_UNIT, UNIT_COUNT);
			pb_end(&p->packet, desc);
		}
	}
	pb_end(&p->packet, track);
	write_packet(x);
}

/* Opens a packet at ts with a TrackEvent of type on track t; returns where the event's body starts. */
static size_t begin_event(struct exporter *x, uint64_t ts, int type,
			  const struct export_track *t)
{
	struct perfetto *p = x->state;
	size_t at;

	new_packet(p);
	pb_varint(&p->packet, PACKET_TIMESTAMP, ts);
	at = pb_begin(&p->packet, PACKET_TRACK_EVENT);
	pb_varint(&p->packet, EVENT_TYPE, (uint64_t)type);
	pb_varint(&p->packet, EVENT_TRACK_UUID, t->id);
	return at;
}

static void end_event(struct exporter *x, size_t at)
{
	struct perfetto *p = x->state;

	pb_end(&p->packet, at);
	write_packet(x);
}

/* The name, category, attributes and flows of a slice's begin or an instant. */
static void put_event(struct exporter *x, const struct export_event *e)
{
	struct perfetto *p = x->state;
	struct gbuf *b = &p->packet;

	pb_varint(b, EVENT_NAME_IID, intern_name(x, INTERNED_EVENT_NAMES, SENT_EVENT_NAME, e->name));
	pb_varint(b, EVENT_CATEGORY_IIDS,
		  intern_name(x, INTERNED_CATEGORIES, SENT_CATEGORY, e->category));
	for (size_t i = 0; i < e->nargs; i++) {
		size_t at = pb_begin(b, EVENT_DEBUG_ANNOTATIONS);

		pb_varint(b, ANNOTATION_NAME_IID, intern_name(x, INTERNED_ANNOTATION_NAMES,
							      SENT_ANNOTATION, e->args[i].key));
		if (e->args[i].str)
			pb_string(b, ANNOTATION_STRING, e->args[i].str);
		else if (e->args[i].decimals)
			pb_double(b, ANNOTATION_DOUBLE,
				  (double)e->args[i].value / pow(10, e->args[i].decimals));
		else
			pb_varint(b, ANNOTATION_UINT, e->args[i].value);
		pb_end(b, at);
	}
	for (size_t i = 0; i < e->nflows_out; i++)
		pb_fixed64(b, EVENT_FLOW_IDS, e->flows_out[i].id);
	if (e->flow_in)
		pb_fixed64(b, EVENT_TERMINATING_FLOW_IDS, e->flow_in);
}

/* Begin and end: the reader orders all packets by time, so the end can go now. */
static void perfetto_slice(struct exporter *x, const struct export_event *e)
{
	size_t at = begin_event(x, e->ts, TYPE_SLICE_BEGIN, e->track);

	put_event(x, e);
	end_event(x, at);
	at = begin_event(x, e->ts + e->dur, TYPE_SLICE_END, e->track);
	end_event(x, at);
}

static void perfetto_instant(struct exporter *x, const struct export_event *e)
{
	size_t at = begin_event(x, e->ts, TYPE_INSTANT, e->track);

	put_event(x, e);
	end_event(x, at);
}

/* The frame of a stack node's location: its function in its dso's mapping, at its address. */
static uint64_t intern_frame(struct exporter *x, uint32_t node)
{
	const struct model *m = x->m;
	struct perfetto *p = x->state;
	uint32_t loc = node ? m->t.nodes.v[node - 1].loc : 0, n;
	uint64_t iid = loc && loc <= m->t.locs.len ? loc : m->t.locs.len + 1;
	const uint32_t *fn;
	const struct func *func;
	uint32_t mapping;
	size_t at;

	if (p->frame_sent[iid])
		return iid;
	fn = funcs_of_node(x->f, node, &n);
	func = &x->f->v.v[fn[n - 1]];
	mapping = func->dso ? func->dso : p->unknown_mapping;
	intern_name(x, INTERNED_FUNCTION_NAMES, SENT_FUNCTION, func->name);
	if (!(*sent(p, mapping) & SENT_MAPPING)) {
		intern_name(x, INTERNED_MAPPING_PATHS, SENT_MAPPING, mapping);
		at = pb_begin(&p->interned, INTERNED_MAPPINGS);
		pb_varint(&p->interned, ENTRY_IID, mapping);
		pb_varint(&p->interned, MAPPING_PATHS, mapping);
		pb_end(&p->interned, at);
	}
	at = pb_begin(&p->interned, INTERNED_FRAMES);
	pb_varint(&p->interned, ENTRY_IID, iid);
	pb_varint(&p->interned, FRAME_FUNCTION_NAME, func->name);
	pb_varint(&p->interned, FRAME_MAPPING, mapping);
	pb_varint(&p->interned, FRAME_REL_PC, iid <= m->t.locs.len ? m->t.locs.v[loc - 1].addr : 0);
	pb_end(&p->interned, at);
	p->frame_sent[iid] = true;
	return iid;
}

/* The callstack of a leaf node: its frames, outermost first. */
static uint64_t intern_callstack(struct exporter *x, uint32_t node)
{
	const struct model *m = x->m;
	struct perfetto *p = x->state;
	uint64_t iid = node ? node : m->t.nodes.len + 1;
	size_t at;

	p->needs_state = true;
	if (p->stack_sent[iid])
		return iid;
	p->path.len = 0;
	*VEC_PUSH(&p->path) = node;
	/* A node's parent has a smaller id; a damaged file's loop ends here too. */
	for (uint32_t n = node; n && p->path.len < CALLTREE_MAX_DEPTH;) {
		uint32_t parent = m->t.nodes.v[n - 1].parent;

		if (!parent || parent >= n)
			break;
		*VEC_PUSH(&p->path) = parent;
		n = parent;
	}
	for (size_t i = 0; i < p->path.len; i++)
		intern_frame(x, p->path.v[i]);
	at = pb_begin(&p->interned, INTERNED_CALLSTACKS);
	pb_varint(&p->interned, ENTRY_IID, iid);
	for (size_t i = p->path.len; i-- > 0;)
		pb_varint(&p->interned, CALLSTACK_FRAMES, intern_frame(x, p->path.v[i]));
	pb_end(&p->interned, at);
	p->stack_sent[iid] = true;
	return iid;
}

static void perfetto_sample(struct exporter *x, const struct export_track *t,
			    const struct tr_sample *s, uint64_t ts)
{
	struct perfetto *p = x->state;
	size_t at;

	new_packet(p);
	pb_varint(&p->packet, PACKET_TIMESTAMP, ts);
	at = pb_begin(&p->packet, PACKET_PERF_SAMPLE);
	pb_varint(&p->packet, SAMPLE_CPU, s->cpu);
	pb_varint(&p->packet, SAMPLE_PID, t->pid);
	pb_varint(&p->packet, SAMPLE_TID, t->tid);
	pb_varint(&p->packet, SAMPLE_CALLSTACK, intern_callstack(x, s->node));
	pb_end(&p->packet, at);
	write_packet(x);
}

static void perfetto_counter(struct exporter *x, const struct export_track *t, uint64_t ts,
			     uint64_t value, uint32_t decimals)
{
	struct perfetto *p = x->state;
	size_t at = begin_event(x, ts, TYPE_COUNTER, t);

	if (decimals)
		pb_double(&p->packet, EVENT_DOUBLE_COUNTER_VALUE, (double)value / pow(10, decimals));
	else
		pb_varint(&p->packet, EVENT_COUNTER_VALUE, value);
	end_event(x, at);
}

/* Nothing to close: a trace is its packets. */
static void perfetto_end(struct exporter *x)
{
}

static void perfetto_free(struct exporter *x)
{
	struct perfetto *p = x->state;

	gbuf_free(&p->packet);
	gbuf_free(&p->interned);
	gbuf_free(&p->framing);
	VEC_FREE(&p->sent);
	VEC_FREE(&p->path);
	free(p->frame_sent);
	free(p->stack_sent);
	free(p);
	x->state = NULL;
}

const struct export_emitter export_perfetto = {
	.begin = perfetto_begin,
	.track = perfetto_track,
	.slice = perfetto_slice,
	.instant = perfetto_instant,
	.sample = perfetto_sample,
	.counter = perfetto_counter,
	.end = perfetto_end,
	.free = perfetto_free,
};
