/* SPDX-License-Identifier: MIT */
/*
 * src/contract/: each counter table names every counter of its enum, under
 * its group's prefix, no name twice; the counters that diagnose says in
 * words have them; each value of an enum attribute has its name, and each
 * copy kind a span name that report --gpu takes for a copy.
 */
#include <stdbool.h>

#include "contract/attrs.h"
#include "contract/counters.h"
#include "contract/spans.h"
#include "test.h"

static const struct {
	const struct counter_name *v;
	size_t n;
	const char *prefix;
} groups[] = {
	{ target_counters, TARGET_COUNTERS, TARGET_COUNTER_PREFIX },
	{ python_counters, PYTHON_COUNTERS, PYTHON_COUNTER_PREFIX },
	{ metrics_counters, METRICS_COUNTERS, "metrics." },
	{ cuda_counters, CUDA_COUNTERS, CUDA_COUNTER_PREFIX },
	{ kr_counters, KR_COUNTERS, KR_COUNTER_PREFIX },
};

#define NGROUPS (sizeof(groups) / sizeof(groups[0]))

static bool has_prefix(const char *s, const char *prefix)
{
	return s && !strncmp(s, prefix, strlen(prefix));
}

static void test_named(void)
{
	for (size_t g = 0; g < NGROUPS; g++)
		for (size_t i = 0; i < groups[g].n; i++)
			if (!has_prefix(groups[g].v[i].name, groups[g].prefix)) {
				printf("  %s counter %zu: '%s'\n", groups[g].prefix, i,
				       groups[g].v[i].name ? groups[g].v[i].name : "(null)");
				CHECK(!"a counter without its group's name");
			}
}

static void test_unique(void)
{
	for (size_t g = 0; g < NGROUPS; g++)
		for (size_t i = 0; i < groups[g].n; i++)
			for (size_t h = g; h < NGROUPS; h++)
				for (size_t j = h == g ? i + 1 : 0; j < groups[h].n; j++)
					if (groups[g].v[i].name && groups[h].v[j].name &&
					    !strcmp(groups[g].v[i].name, groups[h].v[j].name)) {
						printf("  '%s' twice\n", groups[g].v[i].name);
						CHECK(!"a counter name twice");
					}
}

/* Diagnose sums the spans dropped by their prefix. */
static void test_target_dropped(void)
{
	for (int i = 0; i < TARGET_COUNTERS; i++)
		CHECK_EQ_U64(has_prefix(target_counters[i].name, TARGET_DROPPED_PREFIX),
			     i >= TARGET_DROPPED_QUEUE_FULL && i <= TARGET_DROPPED_LIMIT);
}

static void test_words(void)
{
	static const enum cuda_counter cuda_worded[] = {
		CUDA_CNT_DROPPED, CUDA_CNT_NO_TIMESTAMP, CUDA_CNT_INCOMPLETE, CUDA_CNT_CAUSALITY,
		CUDA_CNT_NO_ORIGIN, CUDA_CNT_NULL_BUFFERS, CUDA_CNT_PC_WINDOWS,
		CUDA_CNT_PC_WINDOWS_FAILED, CUDA_CNT_PC_REFUSED, CUDA_CNT_PC_DROPPED,
		CUDA_CNT_PC_BUFFER_FULL, CUDA_CNT_PC_UNSENT, CUDA_CNT_PC_CUBINS,
		CUDA_CNT_PC_CUBINS_OVER_CAP, CUDA_CNT_PC_CUBINS_UNSENT,
		CUDA_CNT_PC_CUBINS_CUT_SHORT,
	};

	for (size_t i = 0; i < sizeof(cuda_worded) / sizeof(cuda_worded[0]); i++)
		CHECK(cuda_counters[cuda_worded[i]].words);
	for (int i = 0; i < KR_COUNTERS; i++)
		CHECK(kr_counters[i].words);
	for (int i = 0; i < METRICS_COUNTERS; i++)
		CHECK(!metrics_counters[i].words == (i == METRICS_CPU_NS));
}

static void test_limiter_names(void)
{
	CHECK(!cuda_occupancy_limiter_names[CUDA_OCC_LIMIT_UNKNOWN]);
	for (int i = CUDA_OCC_LIMIT_UNKNOWN + 1; i < CUDA_OCC_LIMITERS; i++)
		CHECK(cuda_occupancy_limiter_names[i] && *cuda_occupancy_limiter_names[i]);
}

/* What report --gpu takes for a copy: the prefix, a kind, "]". */
static void test_copy_spans(void)
{
	size_t plen = strlen(CUDA_COPY_SPAN_PREFIX);

	for (int i = 0; i < CUDA_COPY_KINDS; i++) {
		const char *name = cuda_copy_spans[i];

		CHECK(has_prefix(name, CUDA_COPY_SPAN_PREFIX) && strlen(name) > plen + 1 &&
		      name[strlen(name) - 1] == ']');
	}
}

int main(void)
{
	RUN(test_named);
	RUN(test_unique);
	RUN(test_target_dropped);
	RUN(test_words);
	RUN(test_limiter_names);
	RUN(test_copy_spans);
	return test_summary();
}
