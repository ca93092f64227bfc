/* SPDX-License-Identifier: MIT */
/* report --ranks: per rank of a merged model, its times and who waited for whom. */
#include "analysis/views/ranks.h"
#include "analysis/views/ranks-private.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "contract/meta.h"
#include "symbols/demangle.h"
#include "util/saturate.h"
#include "util/json.h"
#include "util/text.h"
#include "util/xalloc.h"

/* MPI's blocking collectives and the waits that complete the others, after "MPI_". */
static const char *const mpi_calls[] = {
	"Allgather", "Allgatherv", "Allreduce", "Alltoall", "Alltoallv", "Alltoallw",
	"Barrier", "Bcast", "Exscan", "Gather", "Gatherv", "Reduce", "Reduce_scatter",
	"Reduce_scatter_block", "Scan", "Scatter", "Scatterv",
	"Wait", "Waitall", "Waitany", "Waitsome", NULL
};

/* NCCL's collectives, after "nccl". */
static const char *const nccl_calls[] = {
	"AllGather", "AllReduce", "Bcast", "Broadcast", "Reduce", "ReduceScatter", NULL
};

/*
 * torch.distributed's: the methods of c10d's process groups (C++) and the
 * functions of its distributed_c10d.py.
 */
#define TORCH_PY_FILE "distributed_c10d.py"
static const char *const torch_calls[] = {
	"_allgather_base", "_reduce_scatter_base", "all_gather", "all_gather_into_tensor",
	"all_reduce", "all_to_all", "all_to_all_single", "allgather", "allreduce",
	"allreduce_coalesced", "alltoall", "alltoall_base", "barrier", "broadcast", "gather",
	"reduce", "reduce_scatter", "reduce_scatter_tensor", "scatter", NULL
};

/* What a func is, once looked at. */
enum name_kind { NAME_UNSEEN, NAME_PLAIN, NAME_COLLECTIVE };

static bool listed(const char *s, size_t len, const char *const *list)
{
	for (; *list; list++)
		if (strlen(*list) == len && !strncmp(s, *list, len))
			return true;
	return false;
}

static bool listed_after(const char *s, const char *prefix, const char *const *list)
{
	size_t n = strlen(prefix);

	return !strncmp(s, prefix, n) && listed(s + n, strlen(s + n), list);
}

/* Whether a function of that name, in that dso, is a collective call. */
static bool is_collective_call(struct demangler *d, const char *name, const char *dso)
{
	char *plain;
	const char *s, *end, *base;
	bool yes = false;

	/* PMPI_ and pnccl are the profiling interfaces' names of the same calls. */
	if (listed_after(name, "MPI_", mpi_calls) || listed_after(name, "PMPI_", mpi_calls) ||
	    listed_after(name, "nccl", nccl_calls) || listed_after(name, "pnccl", nccl_calls))
		return true;
	plain = demangle(d, name);
	s = plain ? plain : name;
	if (strstr(s, "c10d::") || !strcmp(dso, TORCH_PY_FILE)) {
		/* The last part of "c10d::ProcessGroupNCCL::allreduce(...)", "all_reduce (f:9)". */
		end = s + strcspn(s, "( ");
		for (base = end; base > s && base[-1] != ':'; base--)
			;
		yes = listed(base, (size_t)(end - base), torch_calls);
	}
	free(plain);
	return yes;
}

static bool func_is_collective(struct funcs *f, uint32_t func, uint8_t *kind)
{
	if (kind[func] == NAME_UNSEEN)
		kind[func] = is_collective_call(&f->demangler, funcs_name(f, f->v.v[func].name),
						funcs_name(f, f->v.v[func].dso))
			     ? NAME_COLLECTIVE : NAME_PLAIN;
	return kind[func] == NAME_COLLECTIVE;
}

/* By stack node id: whether a collective call is on its stack. */
static bool *collective_nodes(struct funcs *f)
{
	const struct model *m = f->m;
	bool *coll = xcalloc(m->t.nodes.len + 1, sizeof(*coll));
	uint8_t *kind = xcalloc(f->v.len + 1, sizeof(*kind));

	/* Parents come first: a node is in a collective when its parent is. */
	for (uint32_t node = 1; node <= m->t.nodes.len; node++) {
		uint32_t parent = m->t.nodes.v[node - 1].parent, n;
		const uint32_t *funcs = funcs_of_node(f, node, &n);

		coll[node] = parent < node && coll[parent];
		for (uint32_t i = 0; i < n && !coll[node]; i++)
			coll[node] = func_is_collective(f, funcs[i], kind);
	}
	free(kind);
	return coll;
}

/* The samples of each rank, and those in collective calls. */
static void count_samples(struct rank_report *r, struct funcs *f, const struct sample_filter *flt,
			  const uint32_t *thread_group)
{
	uint32_t *sample_group = groups_by_sample(f->m, thread_group);
	bool *coll = collective_nodes(f);
	uint64_t period = model_sample_period_ns(f->m);
	struct stack_counts sc;

	count_stacks(&sc, f, flt, sample_group);
	for (size_t i = 0; i < sc.c.len; i++) {
		struct rank_row *row = &r->rows.v[sc.c.v[i].group - 1];

		row->samples += sc.c.v[i].count;
		if (coll[sc.c.v[i].node])
			row->coll_samples += sc.c.v[i].count;
	}
	for (size_t i = 0; i < r->rows.len; i++) {
		struct rank_row *row = &r->rows.v[i];

		row->coll_cpu_ns = row->coll_samples * period;
		row->compute_ns = (row->samples - row->coll_samples) * period;
	}
	stack_counts_free(&sc);
	free(coll);
	free(sample_group);
}


static int cmp_by_rank(const void *pa, const void *pb)
{
	const struct collective_kernel *a = pa, *b = pb;

	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return a->start < b->start ? -1 : a->start > b->start;
}

static int cmp_by_name_rank(const void *pa, const void *pb)
{
	const struct collective_kernel *a = pa, *b = pb;

	if (a->name != b->name)
		return a->name < b->name ? -1 : 1;
	return cmp_by_rank(pa, pb);
}

static int cmp_by_collective(const void *pa, const void *pb)
{
	const struct collective_kernel *a = pa, *b = pb;

	if (a->name != b->name)
		return a->name < b->name ? -1 : 1;
	if (a->nth != b->nth)
		return a->nth < b->nth ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->rank < b->rank ? -1 : a->rank > b->rank;
}

/* Adds to *total the part of [start, end) after *covered, in spans sorted by start. */
static void add_union(uint64_t *total, uint64_t *covered, uint64_t start, uint64_t end)
{
	if (end <= *covered)
		return;
	*total += end - (start > *covered ? start : *covered);
	*covered = end;
}

/* GPU busy and collective time per rank: the union of its kernels' spans. */
static void sum_kernels(struct rank_report *r, struct collective_kernel *k, size_t n)
{
	uint64_t all = 0, coll = 0;

	if (n)	/* k is NULL without kernels, which qsort must not get */
		qsort(k, n, sizeof(*k), cmp_by_rank);
	for (size_t i = 0; i < n; i++) {
		struct rank_row *row = &r->rows.v[k[i].rank];

		if (i && k[i].rank != k[i - 1].rank)
			all = coll = 0;
		add_union(&row->gpu_ns, &all, k[i].start, k[i].end);
		if (k[i].name) {
			add_union(&row->coll_gpu_ns, &coll, k[i].start, k[i].end);
			row->coll_kernels++;
		}
	}
}

/*
 * Keeps the collective kernels of k, numbered by name on each rank, in the
 * order of the collectives (name, then nth), each collective's by start;
 * returns how many.
 */
static size_t group_collectives(struct collective_kernel *k, size_t n)
{
	size_t colls = 0;

	for (size_t i = 0; i < n; i++)
		if (k[i].name)
			k[colls++] = k[i];
	if (!colls)
		return 0;
	qsort(k, colls, sizeof(*k), cmp_by_name_rank);
	for (size_t i = 1; i < colls; i++)
		if (k[i].name == k[i - 1].name && k[i].rank == k[i - 1].rank)
			k[i].nth = k[i - 1].nth + 1;
	qsort(k, colls, sizeof(*k), cmp_by_collective);
	return colls;
}

size_t collective_end(const struct collective_kernel *k, size_t n, size_t i)
{
	size_t end = i + 1;

	while (end < n && k[end].name == k[i].name && k[end].nth == k[i].nth)
		end++;
	return end;
}

/*
 * The k-th collective kernel of a name on each rank is one collective: the
 * rank that started it last kept the others waiting.
 */
static void match_collectives(struct rank_report *r, struct collective_kernel *k, size_t n)
{
	size_t colls = group_collectives(k, n);

	for (size_t i = 0, end; i < colls; i = end) {
		end = collective_end(k, colls, i);
		if (end - i < 2)
			continue;
		r->rows.v[k[end - 1].rank].started_last++;
		r->matched++;
	}
}

/* What a kernel's name is, cached by string id. */
#define KERNEL_UNSEEN 0
#define KERNEL_PLAIN UINT32_MAX

/* The kernel's collective name: the first string id with its text; 0 for another kernel. */
static uint32_t kernel_name(struct funcs *f, uint32_t *cache, uint32_t name)
{
	const struct model *m = f->m;

	if (cache[name] == KERNEL_UNSEEN) {
		const char *s = model_str(m, name);
		char *plain;

		s = s ? s : "";
		plain = demangle(&f->demangler, s);
		if (ranks_collective_kernel(plain ? plain : s))
			cache[name] = model_string_id(m, s);
		else
			cache[name] = KERNEL_PLAIN;
		free(plain);
	}
	return cache[name] == KERNEL_PLAIN ? 0 : cache[name];
}

/*
 * The kernels of the selected stream lanes (copies left out), in *kernels,
 * and the selected waits on the GPU, by rank index, in wait_ns (NULL: none).
 */
static size_t gather_spans(struct funcs *f, const struct sample_filter *flt,
			   struct collective_kernel **kernels, uint64_t *wait_ns)
{
	const struct model *m = f->m;
	size_t nlanes = m->t.lanes.len;
	bool *selected = xcalloc(nlanes + 1, sizeof(*selected));
	uint32_t *rank = xcalloc(nlanes + 1, sizeof(*rank));
	uint32_t *names = xcalloc(m->t.strings.len + 1, sizeof(*names));
	VEC(struct collective_kernel) found = {0};

	for (size_t ti = m->real_threads; ti < m->threads.len; ti++) {
		const struct model_thread *th = &m->threads.v[ti];
		enum model_lane_class class = model_lane_class(m, th->lane);

		selected[th->lane] = (class == MODEL_LANE_CUDA_STREAM ||
				      class == MODEL_LANE_CUDA_WAIT) && filter_lane(flt, f, th);
		rank[th->lane] = (uint32_t)model_rank_of(m, th->pid);
	}
	for (size_t i = 0; i < m->t.spans.len; i++) {
		const struct tr_span *sp = &m->t.spans.v[i];
		enum model_lane_class class = model_lane_class(m, sp->lane);
		uint32_t name;
		struct collective_kernel *k;

		if ((class != MODEL_LANE_CUDA_STREAM && class != MODEL_LANE_CUDA_WAIT) ||
		    !filter_span(flt, f, selected, sp))
			continue;
		if (class == MODEL_LANE_CUDA_WAIT) {
			if (wait_ns)
				wait_ns[rank[sp->lane]] = u64_sat_add(wait_ns[rank[sp->lane]],
								      sp->dur);
			continue;
		}
		if (model_span_is_copy(m, sp))
			continue;
		name = sp->name <= m->t.strings.len ? kernel_name(f, names, sp->name) : 0;
		k = VEC_PUSH(&found);
		k->rank = rank[sp->lane];
		k->name = name;
		k->start = sp->start;
		k->end = model_span_end(sp);
	}
	free(names);
	free(rank);
	free(selected);
	*kernels = found.v;
	return found.len;
}

/* The kernels and waits of the selected lanes. */
static void count_spans(struct rank_report *r, struct funcs *f, const struct sample_filter *flt)
{
	uint64_t *wait_ns = xcalloc(r->rows.len + 1, sizeof(*wait_ns));
	struct collective_kernel *kernels;
	size_t n = gather_spans(f, flt, &kernels, wait_ns);

	for (size_t i = 0; i < r->rows.len; i++)
		r->rows.v[i].gpu_wait_ns = u64_sat_add(r->rows.v[i].gpu_wait_ns, wait_ns[i]);
	sum_kernels(r, kernels, n);
	match_collectives(r, kernels, n);
	free(kernels);
	free(wait_ns);
}

size_t collective_kernels(struct funcs *f, struct collective_kernel **out)
{
	struct sample_filter all = {0};
	size_t n = gather_spans(f, &all, out, NULL);

	return group_collectives(*out, n);
}

/* CPU time and, for recordings without their start and end, the span of their events. */
static void count_threads(struct rank_report *r, struct funcs *f, const struct sample_filter *flt,
			  uint32_t *thread_group)
{
	const struct model *m = f->m;
	uint64_t *first = xcalloc(r->rows.len, sizeof(*first));
	uint64_t *last = xcalloc(r->rows.len, sizeof(*last));

	for (size_t ti = 0; ti < m->threads.len; ti++) {
		const struct model_thread *th = &m->threads.v[ti];
		size_t rank = model_rank_of(m, th->pid);

		if (th->first_ts && (!first[rank] || th->first_ts < first[rank]))
			first[rank] = th->first_ts;
		if (th->last_ts > last[rank])
			last[rank] = th->last_ts;
		if (ti >= m->real_threads || !filter_thread(flt, f, th))
			continue;
		thread_group[ti] = (uint32_t)rank + 1;
		r->rows.v[rank].cpu_ns = u64_sat_add(r->rows.v[rank].cpu_ns,
						     model_thread_oncpu_ns(m, th));
	}
	for (size_t i = 0; i < r->rows.len; i++) {
		const struct model_rank *mr = &m->ranks.v[i];

		if (mr->start_ns && mr->end_ns > mr->start_ns)
			r->rows.v[i].wall_ns = mr->end_ns - mr->start_ns;
		else if (last[i] > first[i])
			r->rows.v[i].wall_ns = last[i] - first[i];
	}
	free(last);
	free(first);
}

static double coll_share(const struct rank_row *row)
{
	return row->samples ? (double)row->coll_samples / (double)row->samples : 0.0;
}

/* The rank the others waited for: by the kernels matched if any, else by compute time. */
static void find_straggler(struct rank_report *r)
{
	size_t sampled = 0;
	uint64_t coll = 0;

	r->basis = STRAGGLER_NONE;
	if (r->matched) {
		r->basis = STRAGGLER_GPU;
		r->straggler = 0;
		for (size_t i = 1; i < r->rows.len; i++)
			if (r->rows.v[i].started_last > r->rows.v[r->straggler].started_last)
				r->straggler = i;
		return;
	}
	for (size_t i = 0; i < r->rows.len; i++) {
		sampled += r->rows.v[i].samples != 0;
		coll += r->rows.v[i].coll_samples;
	}
	if (sampled < 2 || !coll)
		return;
	r->basis = STRAGGLER_CPU;
	r->straggler = 0;
	for (size_t i = 1; i < r->rows.len; i++)
		if (r->rows.v[i].compute_ns > r->rows.v[r->straggler].compute_ns)
			r->straggler = i;
}

static int cmp_rows(const void *pa, const void *pb, void *pctx)
{
	const struct rank_row *a = pa, *b = pb;
	const struct model *m = pctx;
	int64_t ra = m->ranks.v[a->index].rank, rb = m->ranks.v[b->index].rank;

	if (ra != rb)
		return ra < rb ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

static const char *rank_host(const struct model *m, size_t index)
{
	return model_rank_meta(m, index, META_HOSTNAME);
}

static size_t count_hosts(const struct rank_report *r, const struct model *m)
{
	struct strtab hosts = {0};
	size_t n;

	for (size_t i = 0; i < r->rows.len; i++)
		if (rank_host(m, r->rows.v[i].index))
			strtab_intern(&hosts, rank_host(m, r->rows.v[i].index));
	n = hosts.len;
	strtab_free(&hosts);
	return n;
}

void rank_report_build(struct rank_report *r, struct funcs *f, const struct sample_filter *flt)
{
	const struct model *m = f->m;
	uint32_t *thread_group = xcalloc(m->threads.len + 1, sizeof(*thread_group));
	size_t straggler_index = 0, kept = 0;

	memset(r, 0, sizeof(*r));
	for (size_t i = 0; i < m->ranks.len; i++)
		VEC_PUSH(&r->rows)->index = i;
	count_threads(r, f, flt, thread_group);
	count_samples(r, f, flt, thread_group);
	count_spans(r, f, flt);
	/* Only the ranks --rank selects: the others have nothing counted. */
	for (size_t i = 0; i < r->rows.len; i++)
		if (filter_rank(flt, m->ranks.v[r->rows.v[i].index].rank))
			r->rows.v[kept++] = r->rows.v[i];
	r->rows.len = kept;
	find_straggler(r);
	if (r->basis != STRAGGLER_NONE)
		straggler_index = r->rows.v[r->straggler].index;
	if (r->rows.len)
		qsort_r(r->rows.v, r->rows.len, sizeof(*r->rows.v), cmp_rows, (void *)m);
	for (size_t i = 0; i < r->rows.len; i++)
		if (r->rows.v[i].index == straggler_index)
			r->straggler = i;
	r->hosts = count_hosts(r, m);
	free(thread_group);
}

void rank_report_free(struct rank_report *r)
{
	VEC_FREE(&r->rows);
}

static double secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

/* The mean compute time of the ranks with samples other than the straggler. */
static double others_compute(const struct rank_report *r)
{
	double sum = 0;
	size_t n = 0;

	for (size_t i = 0; i < r->rows.len; i++)
		if (i != r->straggler && r->rows.v[i].samples) {
			sum += secs(r->rows.v[i].compute_ns);
			n++;
		}
	return n ? sum / (double)n : 0.0;
}

static void print_straggler(FILE *out, const struct rank_report *r, const struct model *m)
{
	const struct rank_row *row = &r->rows.v[r->straggler];
	int64_t rank = m->ranks.v[row->index].rank;

	switch (r->basis) {
	case STRAGGLER_GPU:
		fprintf(out, "# Straggler: rank %" PRId64 ", the last to start %" PRIu64 " of the %"
			PRIu64 " collective kernels run by several ranks\n", rank,
			row->started_last, r->matched);
		break;
	case STRAGGLER_CPU:
		fprintf(out, "# Straggler: rank %" PRId64 ", %.3f s on a CPU outside collective "
			"calls against %.3f s for the other ranks on average\n", rank,
			secs(row->compute_ns), others_compute(r));
		break;
	case STRAGGLER_NONE:
		fprintf(out, "# Straggler: none: %s\n", r->rows.len < 2 ? "one rank"
			: "no collective call or kernel in two ranks or more");
		break;
	}
}

void rank_report_print(FILE *out, const struct rank_report *r, const struct model *m,
		       const char *path, size_t limit)
{
	size_t rows = limit && limit < r->rows.len ? limit : r->rows.len;
	int width = 4;

	for (size_t i = 0; i < rows; i++) {
		const char *host = rank_host(m, r->rows.v[i].index);
		int len = host ? (int)strlen(text_escape(host)) : 1;

		if (len > width)
			width = len;
	}
	fprintf(out, "# Ranks: %zu recording%s on %zu host%s\n", r->rows.len,
		r->rows.len == 1 ? "" : "s", r->hosts, r->hosts == 1 ? "" : "s");
	if (path)
		fprintf(out, "# File: %s\n", text_escape(path));
	fprintf(out, "# Wall: the recording's length; CPU: its threads' time on a CPU; Compute, "
		"Coll CPU: its samples outside and in collective calls (MPI, NCCL, c10d)\n"
		"# GPU: time when any of its kernels ran; Coll GPU: its nccl kernels; GPU wait: "
		"its threads' waits on the GPU; Last: collective kernels it started last\n"
		"#\n#%5s  %-*s %9s %9s %9s %10s %9s %10s %10s %7s\n#\n", "Rank", width, "Host",
		"Wall s", "CPU s", "Compute s", "Coll CPU s", "GPU s", "Coll GPU s", "GPU wait s",
		"Last");
	for (size_t i = 0; i < rows; i++) {
		const struct rank_row *row = &r->rows.v[i];
		const char *host = rank_host(m, row->index);
		char last[32] = "-";

		if (r->matched)
			snprintf(last, sizeof(last), "%" PRIu64, row->started_last);
		fprintf(out, " %5" PRId64 "  %-*s %9.3f %9.3f %9.3f %10.3f %9.3f %10.3f %10.3f "
			"%7s%s\n",
			m->ranks.v[row->index].rank, width, host ? text_escape(host) : "-",
			secs(row->wall_ns),
			secs(row->cpu_ns), secs(row->compute_ns), secs(row->coll_cpu_ns),
			secs(row->gpu_ns), secs(row->coll_gpu_ns), secs(row->gpu_wait_ns), last,
			r->basis != STRAGGLER_NONE && i == r->straggler ? "  straggler" : "");
	}
	fprintf(out, "#\n");
	print_straggler(out, r, m);
}

/* A number, or null when it is negative (unknown). */
static void json_int_or_null(struct json *j, const char *key, int64_t v)
{
	if (v >= 0)
		json_int(j, key, v);
	else
		json_null(j, key);
}

void rank_report_print_json(FILE *out, const struct rank_report *r, const struct model *m,
			    const char *path, size_t limit)
{
	size_t rows = limit && limit < r->rows.len ? limit : r->rows.len;
	struct json j;

	json_begin_document(&j, out, 1);
	json_string(&j, "path", path);
	json_uint(&j, "hosts", r->hosts);
	json_begin_array(&j, "ranks", JSON_LINES);
	for (size_t i = 0; i < rows; i++) {
		const struct rank_row *row = &r->rows.v[i];
		const struct model_rank *mr = &m->ranks.v[row->index];

		json_begin_object(&j, NULL, JSON_INLINE);
		json_int(&j, "rank", mr->rank);
		json_string(&j, "host", rank_host(m, row->index));
		json_string(&j, "path", mr->path);
		json_int_or_null(&j, "local_rank", mr->local_rank);
		json_int_or_null(&j, "world_size", mr->world_size);
		json_fixed(&j, "wall_s", 6, secs(row->wall_ns));
		json_fixed(&j, "cpu_s", 6, secs(row->cpu_ns));
		json_fixed(&j, "gpu_s", 6, secs(row->gpu_ns));
		json_fixed(&j, "compute_s", 6, secs(row->compute_ns));
		json_fixed(&j, "collective_cpu_s", 6, secs(row->coll_cpu_ns));
		json_fixed(&j, "collective_gpu_s", 6, secs(row->coll_gpu_ns));
		json_fixed(&j, "gpu_wait_s", 6, secs(row->gpu_wait_ns));
		json_uint(&j, "samples", row->samples);
		json_uint(&j, "collective_samples", row->coll_samples);
		json_fixed(&j, "collective_percent", 4, 100.0 * coll_share(row));
		json_uint(&j, "collective_kernels", row->coll_kernels);
		json_uint(&j, "started_last", row->started_last);
		json_bool(&j, "straggler", r->basis != STRAGGLER_NONE && i == r->straggler);
		json_end(&j);
	}
	json_end(&j);
	json_uint(&j, "matched_collectives", r->matched);
	if (r->basis == STRAGGLER_NONE) {
		json_null(&j, "straggler");
	} else {
		json_begin_object(&j, "straggler", JSON_INLINE);
		json_int(&j, "rank", m->ranks.v[r->rows.v[r->straggler].index].rank);
		json_string(&j, "basis", r->basis == STRAGGLER_GPU ? "gpu" : "cpu");
		json_end(&j);
	}
	json_end(&j);
}

bool ranks_collective_kernel(const char *name)
{
	return !strncmp(name, "nccl", 4);
}
