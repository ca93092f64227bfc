/* SPDX-License-Identifier: MIT */
/*
 * src/contract/: each counter table names every counter of its enum, under
 * its group's prefix, no name twice; the counters that diagnose says in
 * words have them; each value of an enum attribute has its name, each copy
 * kind a span name that says its kind back, and the names the producers give
 * lanes read back as they were written.
 */
#include <stdbool.h>

#include "contract/attrs.h"
#include "contract/counters.h"
#include "contract/lanes.h"
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

/* Each enum-valued attribute's values have names but the unknown 0, as report --gpu shows them. */
static void test_value_names(void)
{
	static const struct {
		const char *key;
		uint32_t n;
		const char *one;	/* the name of value 1 */
	} enums[] = {
		{ CUDA_ATTR_OCCUPANCY_LIMITER, CUDA_OCC_LIMITERS, "warps" },
		{ CUDA_ATTR_COPY_KIND, CUDA_COPY_KINDS, "HtoD" },
		{ CUDA_ATTR_COPY_SRC, CUDA_MEMORY_KINDS, "pageable" },
		{ CUDA_ATTR_COPY_DST, CUDA_MEMORY_KINDS, "pageable" },
		{ CUDA_ATTR_API_DOMAIN, CUDA_API_DOMAINS, "runtime" },
		{ NVTX_ATTR_KIND, NVTX_KINDS, "push-pop" },
	};
	const char *const *names;
	uint32_t n;

	for (size_t e = 0; e < sizeof(enums) / sizeof(enums[0]); e++) {
		names = attr_value_names(enums[e].key, &n);
		CHECK(names && n == enums[e].n && !names[0]);
		CHECK_STREQ(names[1], enums[e].one);
		for (uint32_t i = 1; i < n; i++)
			CHECK(!names[i] || *names[i]);
	}
	for (int i = CUDA_OCC_LIMIT_UNKNOWN + 1; i < CUDA_OCC_LIMITERS; i++)
		CHECK(cuda_occupancy_limiter_names[i]);
	CHECK(cuda_api_domain_names[CUDA_API_DRIVER] && nvtx_kind_names[NVTX_KIND_START_END]);
	for (int i = CUDA_MEMORY_UNKNOWN + 1; i < CUDA_MEMORY_KINDS; i++)
		CHECK(cuda_memory_kind_names[i]);
	CHECK_STREQ(cuda_memory_kind_names[CUDA_MEMORY_PINNED], "pinned");
	CHECK(!attr_value_names(CUDA_ATTR_BYTES, &n) && n == 0);
	CHECK(!attr_value_names(NULL, &n) && n == 0);
}

/* What report --gpu takes for a copy: the prefix, a kind, "]". */
/* Each copy kind's span name says its kind back, as report --gpu shows it. */
static void test_copy_spans(void)
{
	static const char *const shown[CUDA_COPY_KINDS] = {
		"0", "HtoD", "DtoH", "3", "4", "5", "6", "7", "DtoD", "HtoH", "PtoP",
	};
	const char *kind;
	char buf[32];
	int len;

	for (int i = 0; i < CUDA_COPY_KINDS; i++) {
		kind = cuda_copy_span_kind(cuda_copy_spans[i], &len);
		snprintf(buf, sizeof(buf), "%.*s", len, kind);
		CHECK_STREQ(buf, shown[i]);
		/* export names copy.kind as the span does, or by number. */
		snprintf(buf, sizeof(buf), "%d", i);
		CHECK_STREQ(cuda_copy_kind_names[i] ? cuda_copy_kind_names[i] : buf, shown[i]);
	}
	kind = cuda_copy_span_kind(CUDA_MEMSET_SPAN, &len);
	CHECK(len == 6 && !strncmp(kind, "memset", 6));
	kind = cuda_copy_span_kind("[CUDA memcpy ", &len);
	CHECK(len == 13 && !strncmp(kind, "[CUDA memcpy ", 13));
	kind = cuda_copy_span_kind(NULL, &len);
	CHECK(len == 0);
}

/* The device of the agent's lanes, as it names them; nothing else has one. */
static void test_lane_device(void)
{
	char name[64];
	uint32_t d = 7;

	snprintf(name, sizeof(name), CUDA_DEVICE_LANE_PREFIX "%u stream %u", 3u, 13u);
	CHECK(cuda_lane_device(name, &d) && d == 3);
	snprintf(name, sizeof(name), CUDA_DEVICE_LANE_PREFIX "%u PC sampling", 4294967295u);
	CHECK(cuda_lane_device(name, &d) && d == 4294967295u);
	CHECK(!cuda_lane_device(CUDA_DEVICE_LANE_PREFIX "4294967296 stream 1", &d));
	CHECK(!cuda_lane_device(CUDA_DEVICE_LANE_PREFIX " 1 stream 1", &d));
	CHECK(!cuda_lane_device(CUDA_DEVICE_LANE_PREFIX, &d));
	CHECK(!cuda_lane_device("worker 0", &d));
	CHECK(!cuda_lane_device(NULL, &d));
}

static void test_kernel_len(void)
{
	CHECK_EQ_U64(kregions_lane_kernel_len("attn_fwd b0 g3"), 8);
	CHECK_EQ_U64(kregions_lane_kernel_len("attn_fwd b12 g0"), 8);
	CHECK_EQ_U64(kregions_lane_kernel_len("attn_fwd" KREGIONS_STATS_LANE_SUFFIX), 8);
	CHECK_EQ_U64(kregions_lane_kernel_len("x b1 g2 regions"), 7);
	CHECK_EQ_U64(kregions_lane_kernel_len("foo regions b0 g0"), 11);
	CHECK_EQ_U64(kregions_lane_kernel_len("a b g1"), 6);
	CHECK_EQ_U64(kregions_lane_kernel_len("plain"), 5);
	CHECK_EQ_U64(kregions_lane_kernel_len(""), 0);
}

int main(void)
{
	RUN(test_named);
	RUN(test_unique);
	RUN(test_target_dropped);
	RUN(test_words);
	RUN(test_value_names);
	RUN(test_copy_spans);
	RUN(test_lane_device);
	RUN(test_kernel_len);
	return test_summary();
}
