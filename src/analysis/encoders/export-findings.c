/* SPDX-License-Identifier: MIT */
/*
 * analyze's findings as annotations of a timeline: an instant each on the
 * recording's track, named by its rule, with its sentence and its time at
 * stake, where a viewer lists them beside the metadata. A finding of one
 * GPU (gpu-idle) stands at that GPU's first work; the others, which sum
 * the whole recording, at the start of the export.
 */
#include "analysis/encoders/export-emitter.h"
#include "analysis/views/analyze.h"

#define FINDING_CATEGORY "analyze"
#define MESSAGE_KEY "message"
#define AT_STAKE_KEY "ns"

void export_findings(struct exporter *x, const struct export_emitter *e,
		     const struct export_track *global, const struct analyze *a, uint64_t zero,
		     uint64_t from, uint64_t to)
{
	struct strtab *names = &x->f->names;
	uint32_t category, message, at_stake;

	if (!a->findings.len)
		return;
	category = strtab_intern(names, FINDING_CATEGORY);
	message = strtab_intern(names, MESSAGE_KEY);
	at_stake = strtab_intern(names, AT_STAKE_KEY);
	for (size_t i = 0; i < a->findings.len; i++) {
		const struct analyze_finding *fd = &a->findings.v[i];
		const struct export_arg args[] = {
			{ .key = message, .str = fd->message },
			{ .key = at_stake, .value = fd->ns },
		};
		uint64_t at = from;

		if (fd->device >= 0 && (uint64_t)fd->device < a->devices.len &&
		    export_in_window(from, to, a->devices.v[fd->device].first, 0))
			at = a->devices.v[fd->device].first;
		e->instant(x, &(struct export_event){
				      .track = global,
				      .ts = at - zero,
				      .name = strtab_intern(names, fd->rule),
				      .category = category,
				      .args = args,
				      .nargs = sizeof(args) / sizeof(args[0]),
			      });
	}
}
