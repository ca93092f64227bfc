/* SPDX-License-Identifier: MIT */
/*
 * diff's rows of analyze: each recording analyzed as `gtrace analyze`
 * with its defaults does, its findings by rule and its devices' idle
 * time by cause, each device by its number (and rank), as pids change
 * from run to run.
 */
#include "analysis/views/diff-private.h"

#include <stdlib.h>

#include "analysis/views/analyze.h"
#include "util/xalloc.h"

/* "GPU 0", "rank 1 GPU 0": a device as both recordings name it. */
static void device_name(char *buf, size_t size, const struct model *m,
			const struct analyze_device *d)
{
	if (m->ranks.len > 1)
		snprintf(buf, size, "rank %lld GPU %u", (long long)d->rank, d->device);
	else
		snprintf(buf, size, "GPU %u", d->device);
}

struct diff_figure *diff_findings(struct funcs *f, const struct diff_opts *o, size_t *n)
{
	const struct model *m = f->m;
	VEC(struct diff_figure) v = {0};
	struct origin_links links;
	struct analyze an;

	origins_link(&links, m, origins_default_window(m));
	analyze_build(&an, m, &(struct analyze_opts){ .filter = o->filter,
						      .short_ns = ANALYZE_DEFAULT_SHORT_NS,
						      .links = &links, .funcs = f });
	for (size_t i = 0; i < an.findings.len; i++) {
		const struct analyze_finding *fd = &an.findings.v[i];
		struct diff_figure *fig = VEC_PUSH(&v);

		*fig = (struct diff_figure){ .kind = DIFF_RULE, .ns = fd->ns };
		snprintf(fig->name, sizeof(fig->name), "%s", fd->rule);
		if (fd->device >= 0)
			device_name(fig->where, sizeof(fig->where), m,
				    &an.devices.v[fd->device]);
	}
	/* A cause of no idle time makes no row: one that only one recording has is. */
	for (size_t d = 0; d < an.devices.len; d++)
		for (int c = 0; c < IDLE_CAUSES; c++) {
			struct diff_figure *fig;

			if (!an.devices.v[d].idle_causes[c])
				continue;
			fig = VEC_PUSH(&v);

			*fig = (struct diff_figure){ .kind = DIFF_IDLE,
						     .ns = an.devices.v[d].idle_causes[c] };
			snprintf(fig->name, sizeof(fig->name), "%s idle",
				 idle_cause_name((enum idle_cause)c));
			device_name(fig->where, sizeof(fig->where), m, &an.devices.v[d]);
		}
	analyze_free(&an);
	origins_free(&links);
	*n = v.len;
	return v.v;
}
