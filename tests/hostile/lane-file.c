/* SPDX-License-Identifier: MIT */
/*
 * A recording with more lanes than there are synthetic tids, whose lane
 * rows compress to almost nothing, and a real thread whose tid is a lane's:
 * a reader that numbered lanes on past the tids would give its last lanes
 * the tids of real threads, and rename them.
 *
 *   lane-file OUT LANES
 *
 * Process VICTIM_PID has the real threads "victim" (its main thread) and
 * "squatter" (tid TR_SYNTHETIC_TID_BASE, the first lane's); LANES lanes
 * "lane", of kind "queue", the first and the last with a span.
 */
#include <stdio.h>
#include <stdlib.h>

#include "tests/unit/synth.h"

#define VICTIM_PID 4242

int main(int argc, char **argv)
{
	struct synth s = {0};
	uint32_t app, node, lanes;
	int err;

	if (argc != 3) {
		fprintf(stderr, "usage: lane-file OUT LANES\n");
		return 2;
	}
	lanes = (uint32_t)strtoul(argv[2], NULL, 0);
	app = synth_dso(&s, "/usr/bin/victim");
	node = synth_stack(&s, (uint32_t[]){ synth_loc(&s, app, 0x1000, "main") }, 1);
	synth_task(&s, TR_TASK_NEW, VICTIM_PID, VICTIM_PID, 0, SYNTH_T0);
	synth_comm(&s, VICTIM_PID, VICTIM_PID, "victim");
	synth_task(&s, TR_TASK_NEW, VICTIM_PID, TR_SYNTHETIC_TID_BASE, 0, SYNTH_T0);
	synth_comm(&s, VICTIM_PID, TR_SYNTHETIC_TID_BASE, "squatter");
	synth_samples(&s, VICTIM_PID, VICTIM_PID, node, 10);
	synth_samples(&s, VICTIM_PID, TR_SYNTHETIC_TID_BASE, node, 10);
	for (uint32_t i = 1; i <= lanes; i++)
		synth_lane_kind(&s, VICTIM_PID, "queue", "lane");
	synth_span(&s, 1, "work", SYNTH_T0, 1000);
	synth_span(&s, lanes, "work", SYNTH_T0, 1000);
	err = synth_write(&s, argv[1], TR_FEAT_CPU_SAMPLES | TR_FEAT_LANES);
	synth_free(&s);
	if (err) {
		fprintf(stderr, "lane-file: cannot write '%s': %s\n", argv[1], tr_strerror(err));
		return 1;
	}
	return 0;
}
