/* SPDX-License-Identifier: MIT */
/* report --off-cpu: off-CPU time by thread name, stack and reason. */
#include "analysis/views/offcpu.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "contract/counters.h"
#include "util/json.h"
#include "util/saturate.h"
#include "util/text.h"

static const char *const reason_names[TR_OFFCPU_REASONS] = {
	[TR_OFFCPU_UNKNOWN] = "unknown",
	[TR_OFFCPU_BLOCKED] = "blocked",
	[TR_OFFCPU_PREEMPTED] = "preempted",
};

const char *offcpu_reason_name(uint32_t reason)
{
	return reason_names[model_offcpu_reason(reason)];
}

/*
 * The kind of wait a kernel function is part of, by the prefix of its
 * name: the innermost kernel frame of a stack that one of these starts
 * names the wait (gtrace-report(1), --off-cpu). Names differ between
 * kernel versions; these are the ones since 4.x that stay in a stack.
 */
static const struct {
	const char *prefix;
	const char *wait;
} kernel_waits[] = {
	{ "futex_wait", "futex" },
	{ "__futex_wait", "futex" },
	{ "do_futex", "futex" },
	{ "__x64_sys_futex", "futex" },
	{ "do_nanosleep", "sleep" },
	{ "hrtimer_nanosleep", "sleep" },
	{ "common_nsleep", "sleep" },
	{ "__x64_sys_nanosleep", "sleep" },
	{ "__x64_sys_clock_nanosleep", "sleep" },
	{ "io_schedule", "io" },
	{ "blk_", "io" },
	{ "submit_bio", "io" },
	{ "folio_wait", "io" },
	{ "wait_on_page_bit", "io" },
	{ "exc_page_fault", "page-fault" },
	{ "do_user_addr_fault", "page-fault" },
	{ "handle_mm_fault", "page-fault" },
	{ "ep_poll", "poll" },
	{ "do_sys_poll", "poll" },
	{ "do_select", "poll" },
	{ "core_sys_select", "poll" },
	{ "do_wait", "child" },
	{ "kernel_wait4", "child" },
};

/* The wait the stack's innermost kernel frame of kernel_waits names, or NULL. */
static const char *kernel_wait(const struct funcs *f, uint32_t node)
{
	const struct model *m = f->m;

	for (; node && node <= m->t.nodes.len; node = stack_caller(m, node)) {
		const uint32_t *funcs;
		uint32_t n;

		if (!model_loc_is_kernel(m, m->t.nodes.v[node - 1].loc))
			continue;
		funcs = funcs_of_node(f, node, &n);
		for (uint32_t i = 0; i < n; i++) {
			const char *name = funcs_name(f, f->v.v[funcs[i]].name);

			for (size_t k = 0; k < sizeof(kernel_waits) / sizeof(kernel_waits[0]); k++)
				if (!strncmp(name, kernel_waits[k].prefix,
					     strlen(kernel_waits[k].prefix)))
					return kernel_waits[k].wait;
		}
	}
	return NULL;
}

/*
 * An id of the stack's functions, the same for stacks that differ only in
 * their addresses, as report and flame count them: its func ids as text.
 */
static uint32_t stack_id(const struct funcs *f, struct strtab *stacks, uint32_t node)
{
	const struct model *m = f->m;
	VEC(char) text = {0};
	uint32_t id;

	for (node = node <= m->t.nodes.len ? node : 0; node; node = stack_caller(m, node)) {
		uint32_t n;
		const uint32_t *funcs = funcs_of_node(f, node, &n);

		for (uint32_t i = 0; i < n; i++) {
			char one[16];
			int len = snprintf(one, sizeof(one), "%" PRIu32 ",", funcs[i]);

			VEC_APPEND(&text, one, (size_t)len);
		}
	}
	*VEC_PUSH(&text) = '\0';
	id = strtab_intern(stacks, text.v);
	VEC_FREE(&text);
	return id;
}

static int by_time(const void *pa, const void *pb)
{
	const struct offcpu_row *a = pa, *b = pb;

	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	if (a->comm != b->comm)
		return a->comm < b->comm ? -1 : 1;
	if (a->node != b->node)
		return a->node < b->node ? -1 : 1;
	return a->reason < b->reason ? -1 : a->reason > b->reason;
}

void offcpu_report_build(struct offcpu_report *r, struct funcs *f,
			 const struct sample_filter *flt)
{
	const struct model *m = f->m;
	struct model_offcpu_sums sums;
	struct u64map pairs = {0}, index = {0};
	struct strtab stacks = {0};
	uint64_t at;

	memset(r, 0, sizeof(*r));
	r->switch_stacks = model_counter(m, COUNTER_SWITCH_STACKS, &at) && at;
	model_offcpu_sums(m, &sums);
	for (size_t i = 0; i < sums.v.len; i++) {
		const struct model_offcpu_sum *s = &sums.v.v[i];
		long ti = model_real_thread_index(m, s->tid);
		const struct model_thread *th = ti >= 0 ? &m->threads.v[ti] : NULL;
		struct offcpu_row *row;
		uint32_t comm;
		uint64_t key;

		if (!th || !filter_process(flt, m, th->pid) || !filter_thread(flt, f, th))
			continue;
		comm = funcs_thread_name(f, th);
		/* One row per thread name, stack and reason, as report's comm key. */
		key = (uint64_t)u64map_pair_id(&pairs, comm, stack_id(f, &stacks, s->node)) << 2 |
		      s->reason;
		if (u64map_get(&index, key, &at)) {
			row = &r->rows.v[at];
		} else {
			u64map_put(&index, key, r->rows.len);
			row = VEC_PUSH(&r->rows);
			row->comm = comm;
			row->node = s->node;
			row->reason = s->reason;
			row->wait = kernel_wait(f, s->node);
		}
		row->ns = u64_sat_add(row->ns, s->ns);
		row->intervals = u64_sat_add(row->intervals, s->intervals);
		r->total_ns = u64_sat_add(r->total_ns, s->ns);
		r->intervals = u64_sat_add(r->intervals, s->intervals);
	}
	if (r->rows.len)
		qsort(r->rows.v, r->rows.len, sizeof(*r->rows.v), by_time);
	u64map_free(&pairs);
	u64map_free(&index);
	strtab_free(&stacks);
	VEC_FREE(&sums.v);
}

void offcpu_report_free(struct offcpu_report *r)
{
	VEC_FREE(&r->rows);
}

static size_t shown(const struct offcpu_report *r, size_t limit)
{
	return limit && limit < r->rows.len ? limit : r->rows.len;
}

/* The stack innermost first, "a <- b <- c"; "[unknown stack]" without one. */
static void put_stack(FILE *out, const struct funcs *f, uint32_t node)
{
	const struct model *m = f->m;
	bool first = true;

	if (!node || node > m->t.nodes.len) {
		fputs("[unknown stack]", out);
		return;
	}
	for (; node; node = stack_caller(m, node)) {
		const uint32_t *funcs;
		uint32_t n;

		funcs = funcs_of_node(f, node, &n);
		for (uint32_t i = 0; i < n; i++) {
			fprintf(out, "%s%s", first ? "" : " <- ",
				text_escape(funcs_name(f, f->v.v[funcs[i]].name)));
			first = false;
		}
	}
}

void offcpu_report_print(FILE *out, const struct offcpu_report *r, const struct funcs *f,
			 const char *path, size_t limit)
{
	int comm_width = 7;

	fprintf(out, "# Off-CPU: %.1f ms in %" PRIu64 " intervals\n", (double)r->total_ns / 1e6,
		r->intervals);
	fprintf(out, "# File: %s\n", text_escape(path));
	fputs(r->switch_stacks
		      ? "# Stack: where each thread went off, sampled at the switch\n#\n"
		      : "# Stack: the one each thread last ran in (its last sample) before it went off\n"
			"#\n", out);
	for (size_t i = 0; i < shown(r, limit); i++) {
		int len = (int)strlen(text_escape(funcs_name(f, r->rows.v[i].comm)));

		comm_width = len > comm_width ? len : comm_width;
	}
	fprintf(out, "# %10s  %7s  %9s  %-9s  %-10s  %-*s  %s\n#\n", "Off-CPU ms", "%",
		"Intervals", "Reason", "Wait", comm_width, "Command", "Stack (innermost first)");
	for (size_t i = 0; i < shown(r, limit); i++) {
		const struct offcpu_row *row = &r->rows.v[i];

		fprintf(out, "  %10.1f  %6.2f%%  %9" PRIu64 "  %-9s  %-10s  %-*s  ",
			(double)row->ns / 1e6,
			r->total_ns ? 100.0 * (double)row->ns / (double)r->total_ns : 0.0,
			row->intervals, offcpu_reason_name(row->reason), row->wait ? row->wait : "-",
			comm_width, text_escape(funcs_name(f, row->comm)));
		put_stack(out, f, row->node);
		fputc('\n', out);
	}
}

void offcpu_report_print_json(FILE *out, const struct offcpu_report *r,
			      const struct funcs *f, const char *path, size_t limit)
{
	const struct model *m = f->m;
	struct json j;

	json_begin_document(&j, out, 1);
	json_string(&j, "path", path);
	json_fixed(&j, "offcpu_ms", 3, (double)r->total_ns / 1e6);
	json_uint(&j, "intervals", r->intervals);
	json_string(&j, "stacks", r->switch_stacks ? "switch" : "last_sample");
	json_begin_array(&j, "rows", JSON_LINES);
	for (size_t i = 0; i < shown(r, limit); i++) {
		const struct offcpu_row *row = &r->rows.v[i];

		json_begin_object(&j, NULL, JSON_INLINE);
		json_fixed(&j, "offcpu_ms", 3, (double)row->ns / 1e6);
		json_uint(&j, "intervals", row->intervals);
		json_string(&j, "reason", offcpu_reason_name(row->reason));
		if (row->wait)
			json_string(&j, "wait", row->wait);
		else
			json_null(&j, "wait");
		json_string(&j, "comm", funcs_name(f, row->comm));
		json_begin_array(&j, "stack", JSON_INLINE);
		for (uint32_t node = row->node <= m->t.nodes.len ? row->node : 0; node;
		     node = stack_caller(m, node)) {
			uint32_t n;
			const uint32_t *funcs = funcs_of_node(f, node, &n);

			for (uint32_t k = 0; k < n; k++) {
				json_begin_object(&j, NULL, JSON_INLINE);
				json_string(&j, "symbol", funcs_name(f, f->v.v[funcs[k]].name));
				json_string(&j, "dso", funcs_name(f, f->v.v[funcs[k]].dso));
				json_end(&j);
			}
		}
		json_end(&j);
		json_end(&j);
	}
	json_end(&j);
	json_end(&j);
}
