/* SPDX-License-Identifier: MIT */
/*
 * The span channel's packets made rows: what each copy of the library in a
 * process defines (strings, lanes, counters, GPU code images) and the
 * spans, counters, meta and PC samples that name them, within the limits
 * below. The socket and its connections are ingest.c's.
 */
#include "record/ingest-internal.h"

#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

/*
 * What the processes of a recording may make the recorder keep, all
 * together (gtrace-target(3), LIMITS); past a limit, what they send is
 * refused and counted. (Connections open at once are bounded in ingest.c.)
 */
#define MAX_INSTANCES 8			/* copies of the library in one process */
#define MAX_DEFINITIONS (1u << 19)	/* of processes, strings and lanes */
#define MAX_STRING_BYTES (16u << 20)	/* of the strings defined, each STRING_COST more */
#define MAX_LANES (1u << 18)		/* each is a thread in every view */
#define MAX_META 16384			/* meta changes */
/* What a string costs beyond its text: its copies' headers, its entries. */
#define STRING_COST 64
/* A lanes entry of a wire lane refused past MAX_LANES. */
#define LANE_REFUSED UINT32_MAX

/* What a copy of the library in a process said its ids stand for, kept across reconnections. */
struct target_proc {
	uint32_t pid;
	bool refused;		/* a definition was refused: its unknown ids are not its fault */
	struct u64map strings;	/* wire id -> trace string id */
	/*
	 * wire id -> its definition's trace string ids, kind << 32 | name,
	 * until its first span makes its trace lane: then that lane's id
	 * (LANE_REFUSED past MAX_LANES), the high half 0.
	 */
	struct u64map lanes;
	uint64_t queue_full;	/* the last WIRE_DROPS */
	uint64_t unsent;
	struct u64map counters;	/* trace string id of a name -> its last value */
	struct {		/* the GPU code image being received */
		uint64_t crc, size, got;
		uint8_t *data;	/* NULL: none, or not wanted */
	} cubin;
};

/* What wire id stands for in map m, 0 when undefined. */
static uint64_t lookup(const struct u64map *m, uint32_t id)
{
	uint64_t value = 0;

	u64map_get(m, id, &value);
	return value;
}

static void count(struct ingest *in, enum target_counter k, uint64_t n)
{
	collector_count_target(in->c, k, n);
}

void ingest_cut_cubin_short(struct ingest *in, struct target_proc *p)
{
	if (!p->cubin.data)
		return;
	collector_cubin_cut_short(in->c, p->cubin.crc, p->cubin.size);
	free(p->cubin.data);
	p->cubin.data = NULL;
}

/*
 * The ids of one copy of the library in process pid, kept across its
 * reconnections; NULL, counted, past the limits.
 */
static struct target_proc *proc_of(struct ingest *in, uint32_t pid, uint32_t instance)
{
	uint64_t key = (uint64_t)pid << 32 | instance, i, copies = 0;
	struct target_proc *p;

	if (u64map_get(&in->proc_index, key, &i))
		return in->procs.v[i];
	u64map_get(&in->pids, pid, &copies);
	if (copies >= MAX_INSTANCES || in->definitions >= MAX_DEFINITIONS) {
		count(in, TARGET_REFUSED_INSTANCES, 1);
		return NULL;
	}
	in->definitions++;
	p = xcalloc(1, sizeof(*p));
	p->pid = pid;
	u64map_put(&in->proc_index, key, in->procs.len);
	*VEC_PUSH(&in->procs) = p;
	u64map_put(&in->pids, pid, copies + 1);
	if (!copies)
		count(in, TARGET_PROCESSES, 1);
	return p;
}

/* A definition of p's is refused for a limit, counted as refusal. */
static void refuse(struct ingest *in, struct target_proc *p, enum target_counter refusal)
{
	count(in, refusal, 1);
	p->refused = true;
}

/*
 * Whether wire id may be set in one of p's maps: a new id only within
 * MAX_DEFINITIONS, else refused.
 */
static bool may_define(struct ingest *in, struct target_proc *p, const struct u64map *m,
		       uint32_t id, enum target_counter refusal)
{
	if (u64map_get(m, id, NULL))
		return true;
	if (in->definitions < MAX_DEFINITIONS) {
		in->definitions++;
		return true;
	}
	refuse(in, p, refusal);
	return false;
}

/* The spans a packet carries, whatever else is wrong with it. */
static uint64_t spans_in(const struct wire_header *h, size_t len)
{
	const struct wire_span *s = (const void *)(h + 1);
	size_t room = (len - sizeof(*h)) / sizeof(struct wire_span);
	size_t n = h->count < room ? h->count : room;
	uint64_t spans = 0;

	if (h->type == WIRE_SPANS)
		return n;
	if (h->type != WIRE_SPANS_ATTRS || len > WIRE_MAX_PACKET)
		return 0;
	for (size_t i = 0; i < n; i += 1 + wire_attr_entries(s[i].nattrs))
		spans++;
	return spans;
}

static void reject(struct conn *k, enum target_counter dropped_as)
{
	k->state = CONN_REJECTED;
	k->dropped_as = dropped_as;
}

static void on_hello(struct ingest *in, struct conn *k, const struct wire_hello *m)
{
	if (m->pid != k->pid || k->proc) {
		/* Speaking for another process: nothing it sends is believed. */
		reject(k, TARGET_DROPPED_WRONG_PID);
		return;
	}
	k->proc = proc_of(in, k->pid, m->instance);
	if (!k->proc)
		reject(k, TARGET_DROPPED_LIMIT);
}

static bool on_string(struct ingest *in, struct conn *k, const struct wire_string *m,
		      size_t len)
{
	struct target_proc *p = k->proc;
	char *s = (char *)(m + 1);
	uint32_t was;

	if (!m->id || m->len > WIRE_MAX_STRING || m->len != len - sizeof(*m))
		return false;
	s[m->len] = '\0';	/* the packet buffer has room after the packet */
	/* A reconnecting process defines its strings again: that costs nothing more. */
	was = (uint32_t)lookup(&p->strings, m->id);
	if (was && !strcmp(collector_string(in->c, was), s))
		return true;
	if (in->string_bytes + m->len + STRING_COST > MAX_STRING_BYTES) {
		refuse(in, p, TARGET_REFUSED_STRINGS);
		return true;
	}
	if (may_define(in, p, &p->strings, m->id, TARGET_REFUSED_STRINGS)) {
		u64map_put(&p->strings, m->id, collector_intern(in->c, s));
		in->string_bytes += m->len + STRING_COST;
	}
	return true;
}

static bool on_lane(struct ingest *in, struct conn *k, const struct wire_lane *m)
{
	struct target_proc *p = k->proc;
	uint64_t kind = lookup(&p->strings, m->kind);
	uint64_t name = lookup(&p->strings, m->name);
	uint64_t was = lookup(&p->lanes, m->id);

	if (!m->id || !kind || !name)
		return false;
	/* A reconnecting process defines its lanes again: they stay the same. */
	if ((!was || was >> 32) && may_define(in, p, &p->lanes, m->id, TARGET_REFUSED_LANES))
		u64map_put(&p->lanes, m->id, kind << 32 | name);
	return true;
}

/*
 * The trace lane of a wire lane, made on its first span (a forked child
 * defines again every lane its parent had, most of which it never uses);
 * LANE_REFUSED past MAX_LANES, counted once; 0 when undefined.
 */
static uint32_t lane_of(struct ingest *in, struct target_proc *p, uint32_t id)
{
	uint64_t def = lookup(&p->lanes, id);
	uint32_t lane;

	if (!(def >> 32))
		return (uint32_t)def;
	if (in->lanes < MAX_LANES) {
		lane = collector_add_lane(in->c, p->pid, (uint32_t)(def >> 32), (uint32_t)def);
		in->lanes++;
	} else {
		refuse(in, p, TARGET_REFUSED_LANES);
		lane = LANE_REFUSED;
	}
	u64map_put(&p->lanes, id, lane);
	return lane;
}

/*
 * Appends the attribute rows of span index span from its n entries at e;
 * false, with none appended, when a key is unknown.
 */
static bool take_attrs(struct ingest *in, const struct target_proc *p, uint32_t span,
		       const struct wire_span *e, uint32_t nattrs, size_t *nrows)
{
	size_t first = *nrows;
	struct wire_attrs entry;

	for (uint32_t i = 0; i < nattrs; i++) {
		struct tr_span_attr *row = &in->attrs[*nrows];
		uint32_t slot = i % WIRE_ATTRS_PER_ENTRY;

		if (!slot)
			memcpy(&entry, &e[i / WIRE_ATTRS_PER_ENTRY], sizeof(entry));
		row->span = span;
		row->key = (uint32_t)lookup(&p->strings, entry.key[slot]);
		row->value = entry.value[slot];
		if (!row->key) {
			*nrows = first;
			return false;
		}
		++*nrows;
	}
	return true;
}

/*
 * A packet of n entries: spans, or with attrs spans and their attribute
 * entries. A span naming what was refused, or undefined in a process that
 * had definitions refused, is dropped for the limit; else for a bad message.
 */
static bool on_spans(struct ingest *in, struct conn *k, const struct wire_span *s, uint32_t n,
		     bool attrs)
{
	struct target_proc *p = k->proc;
	uint32_t spans = 0, limited = 0, extra;
	size_t ok = 0, nattrs = 0;

	for (uint32_t i = 0; i < n; i += 1 + extra, spans++) {
		struct tr_span *row = &in->rows[ok];
		bool unknown;

		extra = attrs ? wire_attr_entries(s[i].nattrs) : 0;
		if (attrs && (s[i].nattrs > WIRE_MAX_ATTRS || extra > n - i - 1))
			return false;
		row->lane = lane_of(in, p, s[i].lane);
		row->name = (uint32_t)lookup(&p->strings, s[i].name);
		unknown = !row->lane || !row->name;
		if (row->lane == LANE_REFUSED || (unknown && p->refused)) {
			limited++;
			continue;
		}
		if (unknown || s[i].end_ns < s[i].start_ns)
			continue;
		if (extra && !take_attrs(in, p, (uint32_t)ok, &s[i + 1], s[i].nattrs, &nattrs)) {
			limited += p->refused;
			continue;
		}
		row->start = s[i].start_ns;
		row->dur = s[i].end_ns - s[i].start_ns;
		row->origin_tid = s[i].origin_tid;
		/* A time without a tid is kept: a broken origin, not none. */
		row->origin_ts = s[i].origin_ns;
		ok++;
	}
	count(in, TARGET_BATCHES, 1);
	count(in, TARGET_DROPPED_LIMIT, limited);
	count(in, TARGET_DROPPED_BAD_MESSAGE, spans - ok - limited);
	collector_add_spans(in->c, in->rows, ok, in->attrs, nattrs);
	return true;
}

/* Names and keys of the target's own are "<area>.<what>": never the recorder's. */
static bool namespaced(const char *s, size_t len)
{
	return memchr(s, '.', len) != NULL;
}

static bool on_counters(struct ingest *in, struct conn *k, const struct wire_counter *m,
			uint32_t n)
{
	struct target_proc *p = k->proc;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t name = (uint32_t)lookup(&p->strings, m[i].name);
		const char *text = collector_string(in->c, name);
		uint64_t last = 0;

		if (!name)
			return false;
		if (!namespaced(text, strlen(text)))
			continue;
		u64map_get(&p->counters, name, &last);
		/* Cumulative per process: the trace's counter is the sum over processes. */
		if (collector_add_to_counter(in->c, name, m[i].value - last))
			u64map_put(&p->counters, name, m[i].value);
	}
	return true;
}

static bool on_meta(struct ingest *in, const struct wire_meta *m, size_t len)
{
	const char *text = (const char *)(m + 1);
	char *key, *value;

	if ((uint64_t)m->key_len + m->value_len != len - sizeof(*m) || !m->key_len ||
	    m->key_len > WIRE_MAX_STRING || m->value_len > WIRE_MAX_STRING ||
	    memchr(text, '\0', m->key_len + m->value_len))
		return false;
	if (!namespaced(text, m->key_len))
		return true;
	/* Each change is a row of the chunk until it is written: they are bounded too. */
	if (in->meta >= MAX_META) {
		count(in, TARGET_REFUSED_META, 1);
		return true;
	}
	in->meta++;
	key = xstrndup(text, m->key_len);
	value = xstrndup(text + m->key_len, m->value_len);
	collector_meta(in->c, key, value);
	free(key);
	free(value);
	return true;
}

static void on_drops(struct ingest *in, struct conn *k, const struct wire_drops *m)
{
	struct target_proc *p = k->proc;

	/* Cumulative per process: only growth is news. */
	if (m->queue_full > p->queue_full) {
		count(in, TARGET_DROPPED_QUEUE_FULL, m->queue_full - p->queue_full);
		p->queue_full = m->queue_full;
	}
	if (m->unsent > p->unsent) {
		count(in, TARGET_DROPPED_UNSENT, m->unsent - p->unsent);
		p->unsent = m->unsent;
	}
}

/*
 * A part of a GPU code image. Parts come in order; an image the recording
 * has already, or has no room for, is skipped to its end.
 */
static bool on_cubin(struct ingest *in, struct conn *k, const struct wire_cubin *m, size_t len)
{
	struct target_proc *p = k->proc;
	size_t part = len - sizeof(*m);

	if (m->offset > m->size || part > m->size - m->offset)
		return false;
	if (m->offset == 0) {
		ingest_cut_cubin_short(in, p);
		p->cubin.crc = m->crc;
		p->cubin.size = m->size;
		p->cubin.got = 0;
		p->cubin.data = collector_cubin_wanted(in->c, m->crc, m->size)
			? xmalloc(m->size ? m->size : 1) : NULL;
	} else if (m->crc != p->cubin.crc || m->size != p->cubin.size ||
		   m->offset != p->cubin.got) {
		return false;
	}
	if (p->cubin.data)
		memcpy(p->cubin.data + m->offset, m + 1, part);
	p->cubin.got += part;
	if (p->cubin.data && p->cubin.got == p->cubin.size) {
		collector_add_cubin(in->c, p->cubin.crc, p->cubin.data, p->cubin.size);
		p->cubin.data = NULL;
	}
	return true;
}

static bool on_pc_samples(struct ingest *in, struct conn *k, const struct wire_pc_sample *m,
			  uint32_t n)
{
	struct target_proc *p = k->proc;

	for (uint32_t i = 0; i < n; i++) {
		struct tr_pc_sample *row = &in->pc_rows[i];

		row->pid = p->pid;
		row->correlation = m[i].correlation;
		row->cubin = collector_cubin_id(in->c, m[i].cubin_crc);
		row->function = (uint32_t)lookup(&p->strings, m[i].function);
		row->pc = m[i].pc;
		row->stall = (uint32_t)lookup(&p->strings, m[i].stall);
		row->count = m[i].count;
		if (!row->function || !row->stall)
			return false;
	}
	collector_add_pc_samples(in->c, in->pc_rows, n);
	return true;
}

/* Handles a well-formed-looking packet of an open connection; false if malformed. */
static bool on_packet(struct ingest *in, struct conn *k, const struct wire_header *h,
		      size_t len)
{
	const void *body = h + 1;
	size_t body_len = len - sizeof(*h);

	if (h->type == WIRE_HELLO) {
		if (body_len != sizeof(struct wire_hello))
			return false;
		on_hello(in, k, body);
		return true;
	}
	if (!k->proc)
		return false;
	switch (h->type) {
	case WIRE_STRING:
		return body_len >= sizeof(struct wire_string) &&
		       on_string(in, k, body, body_len);
	case WIRE_LANE:
		return body_len == sizeof(struct wire_lane) && on_lane(in, k, body);
	case WIRE_SPANS:
	case WIRE_SPANS_ATTRS:
		if (body_len != (size_t)h->count * sizeof(struct wire_span))
			return false;
		return on_spans(in, k, body, h->count, h->type == WIRE_SPANS_ATTRS);
	case WIRE_COUNTERS:
		if (body_len != (size_t)h->count * sizeof(struct wire_counter))
			return false;
		return on_counters(in, k, body, h->count);
	case WIRE_META:
		return body_len >= sizeof(struct wire_meta) && on_meta(in, body, body_len);
	case WIRE_DROPS:
		if (body_len != sizeof(struct wire_drops))
			return false;
		on_drops(in, k, body);
		return true;
	case WIRE_CUBIN:
		return body_len >= sizeof(struct wire_cubin) && on_cubin(in, k, body, body_len);
	case WIRE_PC_SAMPLES:
		if (body_len != (size_t)h->count * sizeof(struct wire_pc_sample) ||
		    h->count > WIRE_PC_SAMPLES_PER_PACKET)
			return false;
		return on_pc_samples(in, k, body, h->count);
	default:
		return false;
	}
}

void ingest_take_packet(struct ingest *in, struct conn *k, size_t len, bool no_run)
{
	const struct wire_header *h = (const void *)in->packet;

	/* MSG_TRUNC: len is the whole packet's, even past the buffer. */
	if (len < sizeof(*h))
		return;
	if (len > WIRE_MAX_PACKET || h->version != WIRE_VERSION)
		count(in, TARGET_DROPPED_BAD_MESSAGE, spans_in(h, len));
	else if (no_run)
		count(in, TARGET_DROPPED_NO_RUN, spans_in(h, len));
	else if (k->state == CONN_REJECTED)
		count(in, k->dropped_as, spans_in(h, len));
	else if (!on_packet(in, k, h, len))
		count(in, TARGET_DROPPED_BAD_MESSAGE, spans_in(h, len));
}

void ingest_free_procs(struct ingest *in)
{
	for (size_t i = 0; i < in->procs.len; i++) {
		u64map_free(&in->procs.v[i]->strings);
		u64map_free(&in->procs.v[i]->lanes);
		u64map_free(&in->procs.v[i]->counters);
		free(in->procs.v[i]);
	}
	VEC_FREE(&in->procs);
	u64map_free(&in->proc_index);
	u64map_free(&in->pids);
}
