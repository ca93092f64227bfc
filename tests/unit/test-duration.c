/* SPDX-License-Identifier: MIT */
/* The one parser of the time options (util/duration.h). */
#include <stdint.h>

#include "util/duration.h"

#include "test.h"

static uint64_t parsed(const char *s, uint64_t bare_unit_ns)
{
	uint64_t ns = 12345;

	CHECK(duration_parse(s, bare_unit_ns, &ns) == 0);
	return ns;
}

static void test_units(void)
{
	/* What the options' help shows: --metrics-interval 500us, --duration 1s. */
	CHECK(parsed("500us", 1) == 500000);
	CHECK(parsed("1s", 1000000000) == 1000000000);
	CHECK(parsed("2.5s", 1) == 2500000000ull);
	CHECK(parsed("300ms", 1) == 300000000);
	CHECK(parsed("750ns", 1000000000) == 750);
	CHECK(parsed("0.5ms", 1) == 500000);
}

static void test_bare_number_in_the_options_unit(void)
{
	/* --duration documents seconds, the views' times nanoseconds. */
	CHECK(parsed("30", 1000000000) == 30000000000ull);
	CHECK(parsed("0.3", 1000000000) == 300000000);
	CHECK(parsed("5000", 1) == 5000);
	CHECK(parsed("0", 1) == 0);
}

static void test_refused(void)
{
	static const char *const bad[] = {
		"", "soon", "-1", " 1s", "+1s", "1 s", "1sec", "1m", "1h", "1ss", "1mss",
		"s", "inf", "nan", "0x10", "1e30s", "ms5",
	};
	uint64_t ns;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ns = 7;
		CHECK(duration_parse(bad[i], 1, &ns) < 0);
		CHECK(ns == 7);
	}
}

int main(void)
{
	RUN(test_units);
	RUN(test_bare_number_in_the_options_unit);
	RUN(test_refused);
	return test_summary();
}
