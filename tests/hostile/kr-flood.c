/* SPDX-License-Identifier: MIT */
/*
 * A kernel-regions buffer that a decoder searching the open begins for
 * each end takes quadratic time on: one leader's lane of EVENTS events,
 * half of them begins of one region, then as many ends of another, so that
 * no end finds a begin and each looks past all of them. Handed to
 * gtrace_kr_submit as an application would, then decoded for the counts.
 *
 *   kr-flood EVENTS
 *
 * Prints "kr-flood: N events, S spans, U unmatched".
 */
#include <stdio.h>
#include <stdlib.h>

#include "target/kregions.h"
#include "tests/unit/kr-encode.h"

static const char *const region_names[] = { "open", "close" };

int main(int argc, char **argv)
{
	uint64_t events = argc == 2 ? strtoull(argv[1], NULL, 0) : 0;
	uint64_t *buf = buffer_new(events + 1);
	struct launch l = launch_1d(1, 1);
	struct leader k = leader_1d(buf, &l, 0, 0);
	struct tgt_kr_decoded d;
	int err;

	if (argc != 2) {
		fprintf(stderr, "usage: kr-flood EVENTS\n");
		return 2;
	}
	for (uint64_t i = 0; i < events; i++) {
		if (i < events / 2)
			begin(&k, 0, 1000 + i);
		else
			end(&k, 1, 1000 + i);
	}
	err = gtrace_kr_submit(buf, buffer_words(buf), "flood", region_names, 2, 0, 0);
	if (!err)
		err = tgt_kr_decode(buf, buffer_words(buf), 2, &d);
	if (err) {
		fprintf(stderr, "kr-flood: the buffer did not decode: error %d\n", err);
		return 1;
	}
	printf("kr-flood: %llu events, %zu spans, %llu unmatched\n", (unsigned long long)d.events,
	       d.n_spans, (unsigned long long)d.unmatched);
	tgt_kr_decoded_free(&d);
	free(buf);
	return 0;
}
