/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_TESTS_TEST_H
#define GTRACE_TESTS_TEST_H

/*
 * A minimal unit-test harness. Each tests/unit/test-*.c is one program:
 *
 *	static void test_round_trip(void) { CHECK(x == 1); CHECK_EQ_U64(a, b); }
 *	int main(void) { RUN(test_round_trip); return test_summary(); }
 *
 * A failed CHECK reports file:line and the expression and marks the test
 * failed without stopping it. Exit status: 0 all passed, 1 some failed,
 * 77 skipped (return test_skip(...), which says why).
 */

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_failures;
static int test_current_failed;

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			printf("  %s:%d: CHECK(%s) failed\n", __FILE__,        \
			       __LINE__, #cond);                               \
			test_current_failed = 1;                               \
		}                                                              \
	} while (0)

#define CHECK_EQ_U64(a, b)                                                     \
	do {                                                                   \
		uint64_t check_a_ = (uint64_t)(a), check_b_ = (uint64_t)(b);   \
		if (check_a_ != check_b_) {                                    \
			printf("  %s:%d: %s == %s failed: %" PRIu64            \
			       " != %" PRIu64 "\n",                            \
			       __FILE__, __LINE__, #a, #b, check_a_, check_b_);  \
			test_current_failed = 1;                               \
		}                                                              \
	} while (0)

#define CHECK_STREQ(a, b)                                                      \
	do {                                                                   \
		const char *check_a_ = (a), *check_b_ = (b);                   \
		if (!check_a_ || !check_b_ || strcmp(check_a_, check_b_)) {    \
			printf("  %s:%d: %s == %s failed: \"%s\" != \"%s\"\n", \
			       __FILE__, __LINE__, #a, #b,                     \
			       check_a_ ? check_a_ : "(null)",                 \
			       check_b_ ? check_b_ : "(null)");                \
			test_current_failed = 1;                               \
		}                                                              \
	} while (0)

#define RUN(fn)                                                                \
	do {                                                                   \
		test_current_failed = 0;                                       \
		fn();                                                          \
		printf("%s %s\n", test_current_failed ? "FAIL" : "ok  ", #fn); \
		test_failures += test_current_failed;                          \
	} while (0)

static inline int test_summary(void)
{
	return test_failures ? 1 : 0;
}

/*
 * The program cannot test here for want of REQUIREMENT, a name of
 * tests/requirements: prints "SKIP(REQUIREMENT): why" for tests/run.sh and
 * returns the exit status of a skip, 77. What the code under test or the
 * test itself fails to do is a failure, not a skip.
 */
__attribute__((format(printf, 2, 3)))
static inline int test_skip(const char *requirement, const char *fmt, ...)
{
	va_list ap;

	printf("SKIP(%s): ", requirement);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	return 77;
}

#endif
