/* SPDX-License-Identifier: MIT */
/*
 * The recorder's metrics: the /proc parsers on texts as the kernel writes
 * them (and broken ones), the tables' encoding of a series, and the model's
 * values by series.
 */
#include <errno.h>

#include "format/buf.h"
#include "format/tables.h"
#include "model/model.h"
#include "record/procstat.h"
#include "test.h"

#define TEXT(s) s, sizeof(s) - 1

static void test_parse_stat(void)
{
	/* A command name with a space and a ')' of its own. */
	static const char stat[] =
		"4242 (a b) c) R 1 4242 4242 0 -1 4194560 1500 0 7 0 250 31 0 0 20 0 3 0 "
		"12345 104857600 2560 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0";
	struct proc_stat st;

	CHECK(!procstat_parse_stat(TEXT(stat), &st));
	CHECK(st.state == 'R');
	CHECK_EQ_U64(st.minflt, 1500);
	CHECK_EQ_U64(st.majflt, 7);
	CHECK_EQ_U64(st.utime, 250);
	CHECK_EQ_U64(st.stime, 31);
	CHECK_EQ_U64(st.threads, 3);
	CHECK_EQ_U64(st.rss_pages, 2560);
	/* Cut before rss, and no ')' at all. */
	CHECK(procstat_parse_stat(stat, 60, &st) == -EINVAL);
	CHECK(procstat_parse_stat(TEXT("4242 (x R 1"), &st) == -EINVAL);
}

static void test_parse_status_io(void)
{
	static const char status[] = "Name:\tx\nThreads:\t1\n"
				     "voluntary_ctxt_switches:\t17\n"
				     "nonvoluntary_ctxt_switches:\t4\n";
	static const char io[] = "rchar: 100\nwchar: 200\nsyscr: 1\nsyscw: 2\n"
				 "read_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n";
	uint64_t a = 0, b = 0;

	CHECK(!procstat_parse_ctxsw(TEXT(status), &a, &b));
	CHECK_EQ_U64(a, 17);
	CHECK_EQ_U64(b, 4);
	CHECK(procstat_parse_ctxsw(TEXT("Name:\tx\n"), &a, &b) == -EINVAL);
	CHECK(!procstat_parse_io(TEXT(io), &a, &b));
	CHECK_EQ_U64(a, 4096);
	CHECK_EQ_U64(b, 8192);
	/* "read_bytes" must start a line: not "cancelled_write_bytes". */
	CHECK(procstat_parse_io(TEXT("cancelled_write_bytes: 5\nread_bytes: 1\n"), &a, &b) ==
	      -EINVAL);
}

static void test_parse_machine(void)
{
	uint64_t ticks[SYS_CPU_MODES], total, avail, load;

	CHECK(!procstat_parse_cpu(TEXT("cpu  10 1 20 300 4 0 5 6 0 0\ncpu0 5 0 10 150 2 0 2 3 0 0\n"),
				  ticks));
	CHECK_EQ_U64(ticks[SYS_CPU_USER], 10);
	CHECK_EQ_U64(ticks[SYS_CPU_IDLE], 300);
	CHECK_EQ_U64(ticks[SYS_CPU_STEAL], 6);
	CHECK(procstat_parse_cpu(TEXT("cpu0 1 2 3\n"), ticks) == -EINVAL);
	CHECK(procstat_parse_cpu(TEXT("cpu  1 2 3\n"), ticks) == -EINVAL);
	CHECK(!procstat_parse_meminfo(TEXT("MemTotal:       24576000 kB\nMemFree:  1 kB\n"
					   "MemAvailable:   20000000 kB\n"), &total, &avail));
	CHECK_EQ_U64(total, 24576000);
	CHECK_EQ_U64(avail, 20000000);
	CHECK(!procstat_parse_loadavg(TEXT("1.57 0.80 0.33 2/300 4242\n"), &load));
	CHECK_EQ_U64(load, 157);
	CHECK(procstat_parse_loadavg(TEXT("1.5"), &load) == -EINVAL);
}

/*
 * Two series over a hundred ticks: a value costs two bytes before
 * compression, and the model gives each series its values back in
 * time order, leaving out values that no tick claims.
 */
static void test_series_round_trip(void)
{
	struct tr_tables t = {0}, back = {0}, values_only = {0};
	struct gbuf out = {0};
	struct model m = {0};
	const struct model_point *p;
	size_t n;

	*VEC_PUSH(&t.strings) = strdup("proc.rss");
	*VEC_PUSH(&t.strings) = strdup("KiB");
	*VEC_PUSH(&t.strings) = strdup("proc.cpu.user");
	*VEC_PUSH(&t.strings) = strdup("%");
	*VEC_PUSH(&t.metrics) = (struct tr_metric){ 1, 2, 4242, 0, 0 };
	*VEC_PUSH(&t.metrics) = (struct tr_metric){ 3, 4, 4242, 0, 1 };
	for (uint64_t i = 0; i < 100; i++) {
		*VEC_PUSH(&t.metric_ticks) = (struct tr_metric_tick){ 1000000000 + i * 100000000, 2 };
		*VEC_PUSH(&t.metric_values) = (struct tr_metric_value){ 1, 65536 + i * 4 };
		*VEC_PUSH(&t.metric_values) = (struct tr_metric_value){ 2, 1990 + i % 3 * 5 };
	}
	/* Claimed by no tick. */
	*VEC_PUSH(&t.metric_values) = (struct tr_metric_value){ 1, 1 };
	/* The values alone: a byte for the series, a byte for what the value moved. */
	values_only.metric_values = t.metric_values;
	tr_tables_encode(&values_only, &out);
	CHECK(out.len <= 2 * 201 + 12);
	gbuf_reset(&out);
	tr_tables_encode(&t, &out);
	CHECK(!tr_tables_decode(&back, out.data, out.len));
	CHECK_EQ_U64(back.metric_values.len, 201);
	CHECK_EQ_U64(back.metric_values.v[199].value, 1990 + 99 % 3 * 5);

	m.t = back;
	model_index(&m);
	CHECK_EQ_U64(model_metric_find(&m, "proc.cpu.user", 4242, 0), 2);
	CHECK_EQ_U64(model_metric_find(&m, "proc.cpu.user", 1, 0), 0);
	p = model_metric_points(&m, 1, &n);
	CHECK_EQ_U64(n, 100);
	CHECK(p && p[0].ts == 1000000000 && p[99].value == 65536 + 99 * 4);
	CHECK(p && p[99].ts == 1000000000 + 99 * 100000000ull);
	CHECK(!model_metric_points(&m, 3, &n) && n == 0);
	model_free(&m);
	tr_tables_free(&t);
	gbuf_free(&out);
}

int main(void)
{
	RUN(test_parse_stat);
	RUN(test_parse_status_io);
	RUN(test_parse_machine);
	RUN(test_series_round_trip);
	return test_summary();
}
