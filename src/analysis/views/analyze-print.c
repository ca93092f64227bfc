/* SPDX-License-Identifier: MIT */
/* gtrace analyze's text and JSON (man/gtrace-analyze.1). */
#include "analysis/views/analyze-private.h"

#include <stdlib.h>

#include "contract/attrs.h"
#include "util/hashmap.h"
#include "util/json.h"
#include "util/xalloc.h"

/* The text's tables of functions behind idle list at most these. */
#define FUNCTIONS_SHOWN 20

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

static double percent(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* The func ids of a stack, root first; *n of them. Free it. */
static uint32_t *stack_funcs(const struct funcs *f, uint32_t node, size_t *n)
{
	VEC(uint32_t) v = {0};

	for (uint32_t depth = 0; node && depth < CALLTREE_MAX_DEPTH;
	     node = stack_caller(f->m, node), depth++) {
		uint32_t k;
		const uint32_t *fn = funcs_of_node(f, node, &k);

		for (uint32_t i = 0; i < k; i++)
			*VEC_PUSH(&v) = fn[i];
	}
	/* Gathered leaf first: turned root first. */
	for (size_t i = 0; i < v.len / 2; i++) {
		uint32_t t = v.v[i];

		v.v[i] = v.v[v.len - 1 - i];
		v.v[v.len - 1 - i] = t;
	}
	*n = v.len;
	return v.v;
}

static const char *func_name(const struct funcs *f, uint32_t func)
{
	return funcs_name(f, f->v.v[func].name);
}

/* A function's host idle: its own (leaf) and its stacks' (inclusive). */
struct func_ns {
	uint32_t func;
	uint64_t self, total;
	size_t stack;		/* the last stack counted in total, + 1 */
};

static int cmp_func_ns(const void *pa, const void *pb)
{
	const struct func_ns *a = pa, *b = pb;

	if (a->self != b->self)
		return a->self > b->self ? -1 : 1;
	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return (a->func > b->func) - (a->func < b->func);
}

/*
 * The functions of nstacks stacks, by their own time, then inclusive: what
 * ran, then what called it; *n of them. Free it. Only the functions of the
 * stacks are visited: a device costs its stacks.
 */
static struct func_ns *stack_functions(const struct analyze_stack *stacks, size_t nstacks,
				       const struct funcs *f, size_t *n)
{
	VEC(struct func_ns) by = {0};
	struct u64map index = {0};

	for (size_t s = 0; s < nstacks; s++) {
		size_t len;
		uint32_t *fn = stack_funcs(f, stacks[s].node, &len);
		uint64_t ns = stacks[s].ns, at;

		for (size_t i = 0; i < len; i++) {
			if (!u64map_get(&index, fn[i], &at)) {
				at = by.len;
				*VEC_PUSH(&by) = (struct func_ns){ .func = fn[i] };
				u64map_put(&index, fn[i], at);
			}
			if (i == len - 1)
				by.v[at].self += ns;
			/* A recursive function counts once a stack. */
			if (by.v[at].stack != s + 1) {
				by.v[at].stack = s + 1;
				by.v[at].total += ns;
			}
		}
		free(fn);
	}
	u64map_free(&index);
	VEC_SORT(&by, cmp_func_ns);
	*n = by.len;
	return by.v;
}

/* A table of the functions of stacks, under its title. */
static void print_functions(FILE *out, const char *title, const struct analyze_stack *stacks,
			    size_t nstacks, const struct funcs *f)
{
	size_t nfuncs;
	struct func_ns *fn = stack_functions(stacks, nstacks, f, &nfuncs);

	fprintf(out, "%s\n", title);
	fprintf(out, "  %12s %12s  %s\n", "SELF ms", "TOTAL ms", "FUNCTION");
	for (size_t i = 0; i < nfuncs && i < FUNCTIONS_SHOWN; i++)
		fprintf(out, "  %12.3f %12.3f  %s\n", ms(fn[i].self), ms(fn[i].total),
			func_name(f, fn[i].func));
	free(fn);
}

static void print_device(FILE *out, const struct analyze_device *d, const struct funcs *f,
			 bool ranks)
{
	static const char *const kinds[] = { "compute", "memory", "communication", "overlap" };
	uint64_t kind_ns[] = { d->compute_ns, d->memory_ns, d->comm_ns, d->overlap_ns };
	char title[160];

	if (ranks)
		fprintf(out, "rank %lld ", (long long)d->rank);
	fprintf(out, "GPU %u of pid %u: %.3f ms from its first work to its last\n", d->device,
		d->pid, ms(d->wall_ns));
	for (int k = 0; k < 4; k++)
		fprintf(out, "  %-16s %12.3f ms %6.1f%%\n", kinds[k], ms(kind_ns[k]),
			percent(kind_ns[k], d->wall_ns));
	fprintf(out, "  %-16s %12.3f ms %6.1f%%  in %llu intervals\n", "idle", ms(d->idle_ns),
		percent(d->idle_ns, d->wall_ns), (unsigned long long)d->gaps);
	fprintf(out, "  %-16s %12llu    %.3f per ms\n", "launches", (unsigned long long)d->launches,
		d->wall_ns ? (double)d->launches * 1e6 / (double)d->wall_ns : 0.0);
	fprintf(out, "idle by cause:\n");
	for (int c = 0; c < IDLE_CAUSES; c++)
		fprintf(out, "  %-16s %12.3f ms %6.1f%%\n", idle_cause_name(c),
			ms(d->idle_causes[c]), percent(d->idle_causes[c], d->idle_ns));
	if (d->idle_causes[IDLE_HOST]) {
		snprintf(title, sizeof(title),
			 "host idle by function (the launching threads' samples, %.3f ms unsampled):",
			 ms(d->host_unsampled_ns));
		print_functions(out, title, d->host_stacks.v, d->host_stacks.len, f);
	}
	if (d->idle_causes[IDLE_SYNC]) {
		snprintf(title, sizeof(title),
			 "synchronization idle by function (the calls' stacks, %.3f ms unlinked):",
			 ms(d->sync_unlinked_ns));
		print_functions(out, title, d->sync_stacks.v, d->sync_stacks.len, f);
	}
}

/* The leaf-most function of a stack that is the program's own (funcs_queued_from). */
static const char *launched_from(const struct funcs *f, uint32_t node)
{
	return node ? func_name(f, funcs_queued_from(f, node)) : "-";
}

/* A finding's stacks and kernels list at most these in the text. */
#define EVIDENCE_SHOWN 5
/* A stack of a finding shows this many frames, leaf first. */
#define FRAMES_SHOWN 6

static const char *limiter_name(uint8_t limiter)
{
	const char *name = limiter < CUDA_OCC_LIMITERS ? cuda_occupancy_limiter_names[limiter] : NULL;

	return name ? name : "unknown";
}

static void print_findings(FILE *out, const struct analyze *a, struct funcs *f)
{
	if (!a->findings.len) {
		fprintf(out, "\nfindings: none\n");
		return;
	}
	fprintf(out, "\nfindings, by the time at stake:\n");
	for (size_t i = 0; i < a->findings.len; i++) {
		const struct analyze_finding *fd = &a->findings.v[i];

		fprintf(out, "  %zu. %s: %.3f ms\n     %s\n", i + 1, fd->rule, ms(fd->ns),
			fd->message);
		for (size_t s = 0; s < fd->stacks.len && s < EVIDENCE_SHOWN; s++) {
			size_t n;
			uint32_t *fn = stack_funcs(f, fd->stacks.v[s].node, &n);

			fprintf(out, "     stack %12.3f ms ", ms(fd->stacks.v[s].ns));
			for (size_t k = 0; k < n && k < FRAMES_SHOWN; k++)
				fprintf(out, " %s%s", k ? "< " : "", func_name(f, fn[n - 1 - k]));
			fprintf(out, "%s\n", !n ? " (linked to no sample)" :
					       n > FRAMES_SHOWN ? " < ..." : "");
			free(fn);
		}
		for (size_t k = 0; k < fd->kernels.len && k < EVIDENCE_SHOWN; k++) {
			const struct finding_kernel *kn = &fd->kernels.v[k];

			fprintf(out, "     kernel %11.3f ms  %llu x %s", ms(kn->ns),
				(unsigned long long)kn->count,
				funcs_name(f, funcs_span_frame(f, kn->name)));
			if (kn->occupancy_permille != UINT32_MAX)
				fprintf(out, ", occupancy %.1f%%, limited by %s",
					kn->occupancy_permille / 10.0, limiter_name(kn->limiter));
			fputc('\n', out);
		}
	}
}

void analyze_print(FILE *out, const struct analyze *a, struct funcs *f)
{
	bool ranks = f->m->ranks.len > 1;

	if (!a->devices.len)
		fprintf(out, "no GPU work in the recording\n");
	for (size_t d = 0; d < a->devices.len; d++) {
		if (d)
			fputc('\n', out);
		print_device(out, &a->devices.v[d], f, ranks);
		critpath_print(out, &a->devices.v[d].critpath, f);
	}
	print_findings(out, a, f);
	if (!a->kernels.len)
		return;
	fprintf(out, "\nlaunches by kernel (short: under %.3f us):\n", (double)a->short_ns / 1e3);
	fprintf(out, "  %8s %16s %8s  %-40s %s\n", "COUNT", "MEDIAN QUEUE us", "SHORT", "KERNEL",
		"SHORT ONES FROM");
	for (size_t i = 0; i < a->kernels.len; i++) {
		const struct analyze_kernel *k = &a->kernels.v[i];

		fprintf(out, "  %8llu %16.3f %8llu  %-40s %s\n", (unsigned long long)k->count,
			(double)k->median_queue_ns / 1e3, (unsigned long long)k->short_count,
			funcs_name(f, funcs_span_frame(f, k->name)),
			k->short_count ? launched_from(f, k->short_node) : "");
	}
}

/* A stack's functions, root first. */
static void json_frames(struct json *j, const char *key, const struct funcs *f, uint32_t node)
{
	size_t n;
	uint32_t *fn = stack_funcs(f, node, &n);

	json_begin_array(j, key, JSON_INLINE);
	for (size_t i = 0; i < n; i++)
		json_string(j, NULL, func_name(f, fn[i]));
	json_end(j);
	free(fn);
}

/* stacks as an array of {frames, ns}. */
static void json_stacks(struct json *j, const char *key, const struct analyze_stack *stacks,
			size_t n, const struct funcs *f)
{
	json_begin_array(j, key, JSON_LINES);
	for (size_t s = 0; s < n; s++) {
		json_begin_object(j, NULL, JSON_INLINE);
		json_frames(j, "frames", f, stacks[s].node);
		json_uint(j, "ns", stacks[s].ns);
		json_end(j);
	}
	json_end(j);
}

static void json_device(struct json *j, const struct analyze_device *d, struct funcs *f)
{
	json_begin_object(j, NULL, JSON_LINES);
	json_uint(j, "device", d->device);
	json_uint(j, "pid", d->pid);
	json_int(j, "rank", d->rank);
	json_uint(j, "wall_ns", d->wall_ns);
	json_uint(j, "compute_ns", d->compute_ns);
	json_uint(j, "memory_ns", d->memory_ns);
	json_uint(j, "communication_ns", d->comm_ns);
	json_uint(j, "overlap_ns", d->overlap_ns);
	json_uint(j, "busy_ns", d->busy_ns);
	json_uint(j, "idle_ns", d->idle_ns);
	json_uint(j, "idle_intervals", d->gaps);
	json_uint(j, "launches", d->launches);
	json_ratio_or_null(j, "launches_per_ms", 3, (double)d->launches * 1e6, (double)d->wall_ns);
	json_begin_object(j, "idle_causes", JSON_INLINE);
	for (int c = 0; c < IDLE_CAUSES; c++)
		json_uint(j, idle_cause_name(c), d->idle_causes[c]);
	json_end(j);
	json_uint(j, "host_unsampled_ns", d->host_unsampled_ns);
	json_stacks(j, "host_stacks", d->host_stacks.v, d->host_stacks.len, f);
	json_uint(j, "sync_unlinked_ns", d->sync_unlinked_ns);
	json_stacks(j, "sync_stacks", d->sync_stacks.v, d->sync_stacks.len, f);
	critpath_json(j, &d->critpath, f);
	json_end(j);
}

static void json_findings(struct json *j, const struct analyze *a, struct funcs *f)
{
	json_begin_array(j, "findings", JSON_LINES);
	for (size_t i = 0; i < a->findings.len; i++) {
		const struct analyze_finding *fd = &a->findings.v[i];

		json_begin_object(j, NULL, JSON_LINES);
		json_string(j, "rule", fd->rule);
		json_string(j, "message", fd->message);
		json_uint(j, "ns", fd->ns);
		json_stacks(j, "stacks", fd->stacks.v, fd->stacks.len, f);
		json_begin_array(j, "kernels", JSON_LINES);
		for (size_t k = 0; k < fd->kernels.len; k++) {
			const struct finding_kernel *kn = &fd->kernels.v[k];

			json_begin_object(j, NULL, JSON_INLINE);
			json_string(j, "name", funcs_name(f, funcs_span_frame(f, kn->name)));
			json_uint(j, "count", kn->count);
			json_uint(j, "ns", kn->ns);
			if (kn->occupancy_permille != UINT32_MAX) {
				json_uint(j, "occupancy_permille", kn->occupancy_permille);
				json_string(j, "limiter", limiter_name(kn->limiter));
			}
			json_end(j);
		}
		json_end(j);
		json_end(j);
	}
	json_end(j);
}

void analyze_print_json(FILE *out, const struct analyze *a, struct funcs *f, const char *path)
{
	struct json j;

	json_begin_document(&j, out, 1);
	json_string(&j, "path", path);
	json_uint(&j, "short_ns", a->short_ns);
	json_begin_array(&j, "devices", JSON_LINES);
	for (size_t d = 0; d < a->devices.len; d++)
		json_device(&j, &a->devices.v[d], f);
	json_end(&j);
	json_begin_array(&j, "launch", JSON_LINES);
	for (size_t i = 0; i < a->kernels.len; i++) {
		const struct analyze_kernel *k = &a->kernels.v[i];

		json_begin_object(&j, NULL, JSON_INLINE);
		json_string(&j, "name", funcs_name(f, funcs_span_frame(f, k->name)));
		json_uint(&j, "count", k->count);
		json_uint(&j, "queued", k->queued);
		json_uint(&j, "median_queue_ns", k->median_queue_ns);
		json_uint(&j, "short", k->short_count);
		if (k->short_node)
			json_frames(&j, "short_frames", f, k->short_node);
		else
			json_null(&j, "short_frames");
		json_end(&j);
	}
	json_end(&j);
	json_findings(&j, a, f);
	json_end(&j);
}
