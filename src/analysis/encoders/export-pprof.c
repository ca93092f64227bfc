/* SPDX-License-Identifier: MIT */
/*
 * pprof's profile, gzipped: the Profile message of profile.proto (package
 * perftools.profiles of github.com/google/pprof), which go tool pprof,
 * Parca, Pyroscope and Grafana read.
 *
 * A profile is an aggregate, stacks with labels and summed values, not a
 * timeline: it is a pass of its own over the model, counting as report
 * does (per thread name and leaf stack node, count_stacks), not an
 * emitter of export.c's walk, which hands over events in time order and
 * not the stack that launched each GPU span. Its sample types, in order:
 *
 *   samples/count        CPU samples
 *   cpu/nanoseconds      the same times the sampling period (the default)
 *   gpu/nanoseconds      the GPU streams' work (kernels, copies, memsets),
 *                        each under the CPU stack its origin linked to, its
 *                        span name the leaf frame, as report's lane work
 *   off-cpu/nanoseconds  each thread's off-CPU intervals, under one frame
 *                        "[off-CPU]": a switch is recorded without a stack
 *
 * Each value counts what falls in the window: the samples in it, the part
 * of a span or interval inside it. Labels: thread (its name when
 * sampled), tid, process (its main thread's name), pid, and rank where the
 * recording says or several are loaded, all as text. A location is a code location of
 * the recording with its functions as the views name them, inlined ones
 * first (lines of one location, as pprof has them), in a mapping per dso
 * with its build-id, marked symbolized so that readers keep the names.
 * Addresses are the recording's: ELF virtual addresses of a file's code,
 * absolute ones in anonymous memory, 0 for a Python frame.
 */
#include "analysis/encoders/export-emitter.h"
#include "analysis/passes/passes.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "contract/meta.h"
#include "format/pb.h"
#include "util/saturate.h"
#include "util/xalloc.h"

enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,

	VALUE_TYPE_TYPE = 1,
	VALUE_TYPE_UNIT = 2,

	SAMPLE_LOCATION_ID = 1,
	SAMPLE_VALUE = 2,
	SAMPLE_LABEL = 3,

	LABEL_KEY = 1,
	LABEL_STR = 2,

	MAPPING_ID = 1,
	MAPPING_MEMORY_START = 2,
	MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILE_OFFSET = 4,
	MAPPING_FILENAME = 5,
	MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7,
	MAPPING_HAS_FILENAMES = 8,
	MAPPING_HAS_LINE_NUMBERS = 9,
	MAPPING_HAS_INLINE_FRAMES = 10,

	LOCATION_ID = 1,
	LOCATION_MAPPING_ID = 2,
	LOCATION_ADDRESS = 3,
	LOCATION_LINE = 4,

	LINE_FUNCTION_ID = 1,
	LINE_LINE = 2,

	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4,
};

/* The sample types, in the order of each sample's values. */
enum value {
	VALUE_SAMPLES,
	VALUE_CPU,
	VALUE_GPU,
	VALUE_OFFCPU,
	VALUES
};

static const struct {
	const char *type, *unit;
} value_types[VALUES] = {
	[VALUE_SAMPLES] = { "samples", "count" },
	[VALUE_CPU] = { "cpu", "nanoseconds" },
	[VALUE_GPU] = { "gpu", "nanoseconds" },
	[VALUE_OFFCPU] = { "off-cpu", "nanoseconds" },
};

#define OFFCPU_FRAME "[off-CPU]"
#define OFFCPU_KEY (1ull << 32)		/* its function's key: past every func id */
#define GZIP_WINDOW_BITS (15 + 16)	/* zlib's largest window, in a gzip container */
#define FLUSH_BYTES (1u << 20)		/* samples kept before they are compressed */
/*
 * Locations a sample keeps, its innermost: twice the native frames the
 * recorder unwinds (UNWIND_MAX_FRAMES), room for its Python frames too.
 * Each sample lists its whole stack: a hostile file's stacks of every
 * depth to 60000 would add up to billions of frames.
 */
#define MAX_FRAMES 512

/* The output: a gzip container, written as its bytes come. */
struct gzip_out {
	FILE *out;
	z_stream z;
	int status;		/* zlib's: Z_OK until the end or an error */
};

static void gzip_begin(struct gzip_out *g, FILE *out)
{
	memset(g, 0, sizeof(*g));
	g->out = out;
	g->status = deflateInit2(&g->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, GZIP_WINDOW_BITS, 8,
				 Z_DEFAULT_STRATEGY);
}

/* Compresses len bytes at data (the end with finish). */
static void gzip_write(struct gzip_out *g, const uint8_t *data, uInt len, bool finish)
{
	unsigned char chunk[1 << 16];
	size_t n;

	g->z.next_in = (uint8_t *)data;
	g->z.avail_in = len;
	while (g->status == Z_OK) {
		g->z.next_out = chunk;
		g->z.avail_out = sizeof(chunk);
		g->status = deflate(&g->z, finish ? Z_FINISH : Z_NO_FLUSH);
		n = sizeof(chunk) - g->z.avail_out;
		if (g->status == Z_BUF_ERROR)
			g->status = Z_OK;	/* nothing to do: all of it taken */
		if (n && fwrite(chunk, 1, n, g->out) != n)
			g->status = Z_ERRNO;
		if (g->z.avail_out)
			break;		/* all of it taken, all out */
	}
}

/* Compresses b's bytes (the end with finish), a slice zlib counts at a time, and empties b. */
static void gzip_put(struct gzip_out *g, struct gbuf *b, bool finish)
{
	size_t at = 0, slice = 1u << 30;

	do {
		size_t n = b->len - at < slice ? b->len - at : slice;

		gzip_write(g, b->data ? b->data + at : NULL, (uInt)n, finish && at + n == b->len);
		at += n;
	} while (at < b->len);
	gbuf_reset(b);
}

/* 0, or -EIO when zlib or the output failed. */
static int gzip_end(struct gzip_out *g)
{
	int status = g->status;

	deflateEnd(&g->z);
	return status == Z_STREAM_END ? 0 : -EIO;
}

struct pprof {
	const struct model *m;
	struct funcs *f;
	const struct sample_filter *flt;
	uint64_t from, to;		/* the window in CLOCK_MONOTONIC ns, to excluded */
	struct gzip_out gz;
	struct gbuf msg;		/* the Profile's fields not compressed yet */
	struct gbuf locations, functions; /* its tables of those, compressed last */
	struct strtab strings;		/* string_table[id]; [0] is "" */
	bool *loc_written;		/* by loc id */
	uint64_t *dso_limit;		/* by dso id: past its highest address used, 0 unused */
	struct u64map function_ids;	/* func id, or OFFCPU_KEY -> function id */
	struct u64map extra_locs;	/* the same -> location id of a frame of no code location */
	uint64_t next_loc;		/* the next location id past the recording's locs */
	uint32_t *name_thread;		/* by m->names index: its thread's index */
	uint32_t *name_group;		/* by m->names index: index + 1, 0 not selected */
	bool ranks;			/* label the rank */
	VEC(uint64_t) stack;		/* location ids of the sample being written, leaf first */
};

static uint64_t string_index(struct pprof *p, const char *s)
{
	return s && *s ? strtab_intern(&p->strings, s) : 0;
}

/*
 * The function id of key: a func id, or OFFCPU_KEY. Its Function, named
 * name, in the source file of sym (NULL: unknown), is written on first use.
 */
static uint64_t function_id(struct pprof *p, uint64_t key, const char *name,
			    const struct tr_symbol *sym)
{
	uint64_t id;
	size_t at;

	if (u64map_get(&p->function_ids, key, &id))
		return id;
	id = p->function_ids.len + 1;
	u64map_put(&p->function_ids, key, id);
	at = pb_begin(&p->functions, PROFILE_FUNCTION);
	pb_varint(&p->functions, FUNCTION_ID, id);
	pb_varint(&p->functions, FUNCTION_NAME, string_index(p, name));
	pb_varint(&p->functions, FUNCTION_SYSTEM_NAME, string_index(p, name));
	if (sym && sym->file)
		pb_varint(&p->functions, FUNCTION_FILENAME,
			  string_index(p, model_str(p->m, sym->file)));
	pb_end(&p->functions, at);
	return id;
}

/* One Line of a location: function key, named name, at the source line of sym (NULL: none). */
static void put_line(struct pprof *p, uint64_t key, const char *name, const struct tr_symbol *sym)
{
	size_t at = pb_begin(&p->locations, LOCATION_LINE);

	pb_varint(&p->locations, LINE_FUNCTION_ID, function_id(p, key, name, sym));
	if (sym && sym->line)
		pb_varint(&p->locations, LINE_LINE, sym->line);
	pb_end(&p->locations, at);
}

static const char *func_name(const struct pprof *p, uint32_t func)
{
	return funcs_name(p->f, p->f->v.v[func].name);
}

/*
 * The Location of loc id loc, first met at stack node node: its funcs,
 * innermost first, each at the line of its symbol row (a row each with
 * inline frames; the outermost row without; a Python frame's one row).
 */
static void write_location(struct pprof *p, uint32_t loc, uint32_t node)
{
	const struct model *m = p->m;
	const struct tr_loc *l = &m->t.locs.v[loc - 1];
	uint32_t n, nsyms;
	const uint32_t *fn = funcs_of_node(p->f, node, &n);
	const struct tr_symbol *syms = model_loc_symbols(m, loc, &nsyms);
	size_t at;

	p->loc_written[loc] = true;
	at = pb_begin(&p->locations, PROFILE_LOCATION);
	pb_varint(&p->locations, LOCATION_ID, loc);
	if (l->dso && l->dso <= m->t.dsos.len) {
		uint64_t addr = model_loc_is_python(m, loc) ? 0 : l->addr;

		pb_varint(&p->locations, LOCATION_MAPPING_ID, l->dso);
		pb_varint(&p->locations, LOCATION_ADDRESS, addr);
		if (addr >= p->dso_limit[l->dso])
			p->dso_limit[l->dso] = addr + (addr < UINT64_MAX);
	}
	for (uint32_t i = 0; i < n; i++)
		put_line(p, fn[i], func_name(p, fn[i]), n <= nsyms ? &syms[nsyms - n + i] : NULL);
	pb_end(&p->locations, at);
}

/*
 * The location id of a frame of no code location (a span name's, the
 * off-CPU one, the unknown one): function key named name, written on
 * first use.
 */
static uint64_t frame_location(struct pprof *p, uint64_t key, const char *name)
{
	uint64_t id;
	size_t at;

	if (u64map_get(&p->extra_locs, key, &id))
		return id;
	id = p->next_loc++;
	u64map_put(&p->extra_locs, key, id);
	at = pb_begin(&p->locations, PROFILE_LOCATION);
	pb_varint(&p->locations, LOCATION_ID, id);
	put_line(p, key, name, NULL);
	pb_end(&p->locations, at);
	return id;
}

static uint64_t func_location(struct pprof *p, uint32_t func)
{
	return frame_location(p, func, func_name(p, func));
}

/* Appends node's stack to p->stack, leaf first: a location per loc. */
static void push_stack(struct pprof *p, uint32_t node)
{
	const struct model *m = p->m;

	if (!node) {
		*VEC_PUSH(&p->stack) = func_location(p, p->f->unknown);
		return;
	}
	for (; node && p->stack.len < MAX_FRAMES; node = stack_caller(m, node)) {
		uint32_t loc = m->t.nodes.v[node - 1].loc;

		if (!loc || loc > m->t.locs.len) {
			*VEC_PUSH(&p->stack) = func_location(p, p->f->unknown);
			continue;
		}
		if (!p->loc_written[loc])
			write_location(p, loc, node);
		*VEC_PUSH(&p->stack) = loc;
	}
}

/* A label of text: continuous profilers keep those, numbers too are text. */
static void put_label(struct pprof *p, const char *key, const char *str)
{
	size_t at = pb_begin(&p->msg, SAMPLE_LABEL);

	pb_varint(&p->msg, LABEL_KEY, string_index(p, key));
	pb_varint(&p->msg, LABEL_STR, string_index(p, str));
	pb_end(&p->msg, at);
}

static void put_number_label(struct pprof *p, const char *key, int64_t num)
{
	char text[24];

	snprintf(text, sizeof(text), "%" PRId64, num);
	put_label(p, key, text);
}

/* A Sample of p->stack, values v, with the labels of thread name group. */
static void put_sample(struct pprof *p, uint32_t group, const uint64_t v[VALUES])
{
	const struct model *m = p->m;
	uint32_t name = group - 1;
	const struct model_thread *th = &m->threads.v[p->name_thread[name]];
	long main_thread = model_real_thread_index(m, th->pid);
	size_t at = pb_begin(&p->msg, PROFILE_SAMPLE), list;

	list = pb_begin(&p->msg, SAMPLE_LOCATION_ID);
	for (size_t i = 0; i < p->stack.len; i++)
		gbuf_put_uvarint(&p->msg, p->stack.v[i]);
	pb_end(&p->msg, list);
	list = pb_begin(&p->msg, SAMPLE_VALUE);
	for (int i = 0; i < VALUES; i++)
		gbuf_put_uvarint(&p->msg, v[i] > INT64_MAX ? INT64_MAX : v[i]);
	pb_end(&p->msg, list);
	put_label(p, "thread", funcs_name(p->f, funcs_thread_named(p->f, th, m->names.v[name].name)));
	put_number_label(p, "tid", th->tid);
	if (main_thread >= 0)
		put_label(p, "process",
			  funcs_name(p->f, funcs_thread_name(p->f, &m->threads.v[main_thread])));
	put_number_label(p, "pid", th->pid);
	if (p->ranks)
		put_number_label(p, "rank", pid_rank(m, th->pid));
	pb_end(&p->msg, at);
	p->stack.len = 0;
	if (p->msg.len >= FLUSH_BYTES)
		gzip_put(&p->gz, &p->msg, false);
}

/* The ns of [start, start + dur) inside the window. */
static uint64_t in_window_ns(const struct pprof *p, uint64_t start, uint64_t dur)
{
	uint64_t end = u64_sat_add(start, dur);

	if (start < p->from)
		start = p->from;
	if (end > p->to)
		end = p->to;
	return end > start ? end - start : 0;
}

/* By sample index, the group of its thread's name (index + 1), 0 when not selected. */
static uint32_t *select_samples(struct pprof *p)
{
	const struct model *m = p->m;
	uint32_t *groups;

	for (size_t ti = 0; ti < m->real_threads; ti++) {
		const struct model_thread *th = &m->threads.v[ti];

		for (uint32_t k = 0; k < th->names; k++) {
			uint32_t name = th->first_name + k;

			p->name_thread[name] = (uint32_t)ti;
			if (filter_thread_named(p->flt, p->f, th, m->names.v[name].name))
				p->name_group[name] = name + 1;
		}
	}
	groups = groups_by_name(m, p->name_group);
	for (size_t i = 0; i < m->t.samples.len; i++)
		if (!in_window_ns(p, m->t.samples.v[i].ts, 1))
			groups[i] = 0;
	return groups;
}

static void write_cpu(struct pprof *p, const uint32_t *groups)
{
	uint64_t period = model_sample_period_ns(p->m);
	struct stack_counts sc;

	count_stacks(&sc, p->f, p->flt, groups);
	for (size_t i = 0; i < sc.c.len; i++) {
		const struct stack_count *c = &sc.c.v[i];
		uint64_t v[VALUES] = { c->count, 0, 0, 0 };

		v[VALUE_CPU] = period && c->count > UINT64_MAX / period ? UINT64_MAX
								       : c->count * period;
		push_stack(p, c->node);
		put_sample(p, c->group, v);
	}
	stack_counts_free(&sc);
}

/* Lane work of one span name, lane and stack: the GPU ns queued from there. */
struct gpu_work {
	uint32_t group, node, span;	/* span: funcs_span of the span's lane and name */
	uint64_t ns;
};

static int cmp_gpu_work(const void *pa, const void *pb)
{
	const struct gpu_work *a = pa, *b = pb;

	if (a->group != b->group)
		return a->group < b->group ? -1 : 1;
	if (a->node != b->node)
		return a->node < b->node ? -1 : 1;
	return a->span < b->span ? -1 : a->span > b->span;
}

static void write_gpu(struct pprof *p, const uint32_t *groups, const struct origin_links *links)
{
	const struct model *m = p->m;
	size_t n;
	struct lane_work *work = lane_work_select(p->f, p->flt, groups, links, &n);
	struct u64map index = {0}, pairs = {0};	/* (group, pair) -> entry; (node, span) -> pair */
	VEC(struct gpu_work) sums = {0};

	for (size_t i = 0; i < n; i++) {
		const struct tr_span *sp = &m->t.spans.v[work[i].span];
		uint64_t ns = in_window_ns(p, sp->start, sp->dur), at, key;
		uint32_t span;

		if (model_lane_class(m, sp->lane) != MODEL_LANE_CUDA_STREAM || !ns)
			continue;
		span = funcs_span(p->f, sp->lane, sp->name);
		key = (uint64_t)work[i].group << 32 | u64map_pair_id(&pairs, work[i].node, span);
		if (!u64map_get(&index, key, &at)) {
			at = sums.len;
			u64map_put(&index, key, at);
			*VEC_PUSH(&sums) = (struct gpu_work){ work[i].group, work[i].node, span, 0 };
		}
		sums.v[at].ns = u64_sat_add(sums.v[at].ns, ns);
	}
	if (sums.len)
		VEC_SORT(&sums, cmp_gpu_work);
	for (size_t i = 0; i < sums.len; i++) {
		uint64_t v[VALUES] = { [VALUE_GPU] = sums.v[i].ns };

		*VEC_PUSH(&p->stack) = func_location(p, sums.v[i].span);
		push_stack(p, sums.v[i].node);
		put_sample(p, sums.v[i].group, v);
	}
	VEC_FREE(&sums);
	u64map_free(&index);
	u64map_free(&pairs);
	free(work);
}

/*
 * Each selected thread name's off-CPU time in the window: an interval
 * counts under the name its thread had when it was switched out. The
 * dso filter selects by the sampled frame, which an interval has not.
 */
static void write_offcpu(struct pprof *p)
{
	const struct model *m = p->m;
	uint64_t *ns;

	if (p->flt && p->flt->dsos.len)
		return;
	ns = xcalloc(m->names.len + 1, sizeof(*ns));
	for (size_t i = 0; i < m->t.offcpu.len; i++) {
		const struct tr_offcpu *oc = &m->t.offcpu.v[i];
		long ti = oc->tid < TR_SYNTHETIC_TID_BASE ? model_real_thread_index(m, oc->tid) : -1;
		size_t name;

		if (ti < 0 || oc->end < oc->start)
			continue;
		name = model_name_at(m, &m->threads.v[ti], oc->start);
		if (p->name_group[name])
			ns[name] = u64_sat_add(ns[name], in_window_ns(p, oc->start,
								      oc->end - oc->start));
	}
	for (size_t name = 0; name < m->names.len; name++) {
		uint64_t v[VALUES] = { [VALUE_OFFCPU] = ns[name] };

		if (!ns[name])
			continue;
		*VEC_PUSH(&p->stack) = frame_location(p, OFFCPU_KEY, OFFCPU_FRAME);
		put_sample(p, (uint32_t)name + 1, v);
	}
	free(ns);
}

/* A mapping per dso that a location is in: its path and build-id, its code symbolized. */
static void write_mappings(struct pprof *p)
{
	const struct model *m = p->m;

	for (uint32_t dso = 1; dso <= m->t.dsos.len; dso++) {
		const struct tr_dso *d = &m->t.dsos.v[dso - 1];
		size_t at;

		if (!p->dso_limit[dso])
			continue;
		at = pb_begin(&p->msg, PROFILE_MAPPING);
		pb_varint(&p->msg, MAPPING_ID, dso);
		pb_varint(&p->msg, MAPPING_MEMORY_START, 0);
		pb_varint(&p->msg, MAPPING_MEMORY_LIMIT, p->dso_limit[dso]);
		pb_varint(&p->msg, MAPPING_FILE_OFFSET, 0);
		pb_varint(&p->msg, MAPPING_FILENAME, string_index(p, model_str(m, d->path)));
		if (d->build_id_len && d->build_id_len <= TR_BUILD_ID_MAX) {
			char hex[2 * TR_BUILD_ID_MAX + 1];

			for (uint32_t i = 0; i < d->build_id_len; i++)
				snprintf(hex + 2 * i, 3, "%02x", d->build_id[i]);
			pb_varint(&p->msg, MAPPING_BUILD_ID, string_index(p, hex));
		}
		pb_varint(&p->msg, MAPPING_HAS_FUNCTIONS, 1);
		pb_varint(&p->msg, MAPPING_HAS_FILENAMES, 1);
		pb_varint(&p->msg, MAPPING_HAS_LINE_NUMBERS, 1);
		pb_varint(&p->msg, MAPPING_HAS_INLINE_FRAMES, 1);
		pb_end(&p->msg, at);
	}
}

static void put_value_type(struct pprof *p, uint32_t field, enum value v)
{
	size_t at = pb_begin(&p->msg, field);

	pb_varint(&p->msg, VALUE_TYPE_TYPE, string_index(p, value_types[v].type));
	pb_varint(&p->msg, VALUE_TYPE_UNIT, string_index(p, value_types[v].unit));
	pb_end(&p->msg, at);
}

/* The sample types, the period, the window's time and length. */
static void write_header(struct pprof *p)
{
	const struct model *m = p->m;
	uint64_t period = model_sample_period_ns(m);
	uint64_t end = p->to < m->last_ts ? p->to : m->last_ts;
	int64_t offset;

	for (int v = 0; v < VALUES; v++)
		put_value_type(p, PROFILE_SAMPLE_TYPE, v);
	if (model_clock_offset(model_meta(m, META_CLOCK_START), &offset))
		pb_varint(&p->msg, PROFILE_TIME_NANOS,
			  (uint64_t)i64_sat_add(offset, (int64_t)(p->from > INT64_MAX
								  ? INT64_MAX : p->from)));
	pb_varint(&p->msg, PROFILE_DURATION_NANOS, end > p->from ? end - p->from : 0);
	put_value_type(p, PROFILE_PERIOD_TYPE, VALUE_CPU);
	pb_varint(&p->msg, PROFILE_PERIOD, period);
	/* Without a sampling rate, the CPU time is unknown: samples show instead. */
	pb_varint(&p->msg, PROFILE_DEFAULT_SAMPLE_TYPE,
		  string_index(p, value_types[period ? VALUE_CPU : VALUE_SAMPLES].type));
}

static void write_strings(struct pprof *p)
{
	pb_string(&p->msg, PROFILE_STRING_TABLE, "");
	for (uint32_t id = 1; id <= p->strings.len; id++)
		pb_string(&p->msg, PROFILE_STRING_TABLE, strtab_get(&p->strings, id));
}

int export_pprof(FILE *out, struct funcs *f, const struct export_opts *o, uint64_t from,
		 uint64_t to)
{
	const struct model *m = f->m;
	struct pprof p = {
		.m = m,
		.f = f,
		.flt = o->filter,
		.from = from,
		.to = to,
		.next_loc = m->t.locs.len + 1,
		.ranks = m->ranks.len > 1 || m->ranks.v[0].has_rank,
	};
	uint32_t *groups;
	int err;

	p.loc_written = xcalloc(m->t.locs.len + 1, sizeof(*p.loc_written));
	p.dso_limit = xcalloc(m->t.dsos.len + 1, sizeof(*p.dso_limit));
	p.name_thread = xcalloc(m->names.len + 1, sizeof(*p.name_thread));
	p.name_group = xcalloc(m->names.len + 1, sizeof(*p.name_group));
	gzip_begin(&p.gz, out);
	groups = select_samples(&p);
	write_cpu(&p, groups);
	write_gpu(&p, groups, o->links);
	write_offcpu(&p);
	write_mappings(&p);
	write_header(&p);
	write_strings(&p);
	/* The fields of a message may come in any order: the tables go last. */
	gzip_put(&p.gz, &p.msg, false);
	gzip_put(&p.gz, &p.locations, false);
	gzip_put(&p.gz, &p.functions, true);
	err = gzip_end(&p.gz);

	free(groups);
	free(p.loc_written);
	free(p.dso_limit);
	free(p.name_thread);
	free(p.name_group);
	gbuf_free(&p.msg);
	gbuf_free(&p.locations);
	gbuf_free(&p.functions);
	strtab_free(&p.strings);
	u64map_free(&p.function_ids);
	u64map_free(&p.extra_locs);
	VEC_FREE(&p.stack);
	return err ? err : ferror(out) ? -EIO : 0;
}
