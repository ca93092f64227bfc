/* SPDX-License-Identifier: MIT */
#include "contract/counters.h"

const struct counter_name kr_counters[KR_COUNTERS] = {
	[KR_BUFFERS] = { "kr.buffers", "buffers collected" },
	[KR_EVENTS] = { "kr.events", "events decoded" },
	[KR_OVERFLOWED] = { "kr.overflowed", "buffers overflowed" },
	[KR_EVENTS_LOST] = { "kr.events-lost", "events lost" },
	[KR_UNMATCHED] = { "kr.unmatched", "unmatched begins or ends" },
	[KR_COLLISIONS] = { "kr.collisions", "collisions" },
	[KR_LANES_CAPPED] = { "kr.lanes-capped", "lanes capped" },
	[KR_BAD_EVENTS] = { "kr.bad-events", "events" },
	[KR_BAD_BUFFERS] = { "kr.bad-buffers", "buffers" },
};
