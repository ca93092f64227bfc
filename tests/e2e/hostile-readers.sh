#!/bin/sh
# SPDX-License-Identifier: MIT
# The offline readers on hostile recordings (tests/hostile/reader-recordings),
# each under memory and time ceilings: 40000 kernels and 40000 kernel
# regions (a region's kernel time was a walk over every kernel); a region
# of names 256 KiB long collected 40000 times (each collect hashed them);
# string id 0 and ids past the last string wherever a name or kind is
# expected, through every command that reads a recording; a job of 3000
# recordings (each merge and alignment indexed them all again) and two of
# 300000 counters (each summed by a walk over the others); durations whose
# sums pass 2^64 ns, which stop at 2^64 - 1 instead of wrapping to a few
# ns, and spans whose ends do, which last to the end of time; ranks whose clock pairs, start and end reach the ends of int64, and
# collectives whose ends are 2^63 - 1 ns apart, which --align takes
# without a signed overflow.
. "$SRCDIR/tests/e2e/lib.sh"

MAKER=$BUILD/tests/hostile/reader-recordings
[ -x "$MAKER" ] || fail "the hostile tools are not built ($MAKER): run make tests"

make_recording() {
	"$MAKER" "$@" || fail "reader-recordings $* failed"
}

# json_value FILE KEY: the first number after "KEY": in FILE.
json_value() {
	grep -o "\"$2\": *-\{0,1\}[0-9]*" "$1" | head -1 | sed 's/.*: *//'
}

# --- 40000 kernels, a region of each: each region's kernel time is 10%.
make_recording regions regions.data 40000
bounded_gtrace 300 10 report --gpu -i regions.data
expect_contains "$TESTDIR/stdout" '^# Kernel regions: 40000 regions of 40000 kernels, 40000 collects$'
[ "$(grep -Ec '^ +4 +0\.025 +0\.020 +0\.010 +0\.100 +10\.00% +- +kernel_0+[0-9]+ +loop$' \
	"$TESTDIR/stdout")" -eq 40000 ] || fail "not every region row is 10% of its kernel"
bounded_gtrace 300 10 report --gpu --format json -i regions.data
[ "$(grep -c '"kernel_percent": 10.0000' "$TESTDIR/stdout")" -eq 40000 ] ||
	fail "not every JSON region row is 10% of its kernel"

# --- A regions lane and region of names 256 KiB long, collected 40000 times: each name hashed once.
make_recording long-names long.data 40000
bounded_gtrace 200 10 report --gpu -i long.data
expect_contains "$TESTDIR/stdout" '^# Kernel regions: 1 region of 1 kernel, 40000 collects$'
expect_contains "$TESTDIR/stdout" '^ +160000 +0\.025 +0\.020 +0\.010 +0\.100 +400000\.00% +- +k+ +r+$'
bounded_gtrace 200 10 report --gpu --format json -i long.data

# --- String ids 0 and past the last string: every reader, which must not fail.
make_recording bad-ids bad.data
for cmd in "report" "report --format json -s comm,tid,dso,symbol" "report --gpu" \
	"report --gpu --format json" "report --gpu-pc --sass" "report --gpu-pc --format json" \
	"report --metrics" "report --metrics --format json" "report --ranks" \
	"flame --folded" "flame --weight target --folded" \
	"flame --svg out.svg" "flame --gpu-pc --folded" "flame --gpu-pc --svg pc.svg" \
	"threads" "threads --format json" "diagnose" "diagnose --format json" \
	"analyze" "analyze --format json" \
	"export -o out.pftrace" "export --format chrome -o out.json" \
	"export --format pprof -o out.pb.gz"; do
	# shellcheck disable=SC2086 # the command's words
	bounded_gtrace 200 10 $cmd -i bad.data
done
for cmd in "diff" "diff --format json" "diff --by metrics,threads" "flame --diff --folded" \
	"flame --diff --svg diff.svg"; do
	# shellcheck disable=SC2086
	bounded_gtrace 200 10 $cmd bad.data bad.data
done
# Regions lanes of no name: a dash for their kernel, which is none.
bounded_gtrace 200 10 report --gpu -i bad.data
expect_contains "$TESTDIR/stdout" '^ +8 +0\.025 +0\.020 +0\.010 +0\.100 +- +- +- +k$'

# --- Sums past 2^64 ns: 2^64 - 1, never wrapped to a few ns.
make_recording sums sums.data
bounded_gtrace 200 10 report -i sums.data
for lane in "cuda lane" "cuda-api lane" "cuda-wait lane" "queue lane"; do
	expect_contains "$TESTDIR/stdout" "^ 18446744073709\.551 +100\.00% +2 .*  $lane +big\$"
	expect_contains "$TESTDIR/stdout" "^ +0\.000 +0\.00% +1 .*  $lane +small\$"
done
bounded_gtrace 200 10 report --gpu -i sums.data
expect_contains "$TESTDIR/stdout" '^# CUDA kernels: 3 instances of 2 kernels, 18446744073709\.551 ms of GPU time$'
expect_contains "$TESTDIR/stdout" '^ +100\.00% 18446744073709\.551 +2 .* big$'
expect_contains "$TESTDIR/stdout" '^# CUDA API: 3 calls, 18446744073709\.551 ms$'
expect_contains "$TESTDIR/stdout" '^ +8 2305843009213694\.000 .* 50\.00% +- +big +loop$'
bounded_gtrace 200 10 threads -i sums.data
expect_contains "$TESTDIR/stdout" '^ +100 +100 +sums +2 +0\.0 +18446744073709\.6 '
expect_contains "$TESTDIR/stdout" '^ +100 0xfff00001 +cuda +cuda lane +3 +18446744073709\.6 '
bounded_gtrace 200 10 diagnose -i sums.data
expect_contains "$TESTDIR/stdout" '^target: +14 spans in 5 lanes of 1 process, 18446744073709\.551 ms of target time$'
expect_contains "$TESTDIR/stdout" '^GPU lanes: +1 stream, 3 spans, 18446744073709\.551 ms of GPU time$'
bounded_gtrace 200 10 report --ranks -i sums.data
bounded_gtrace 200 10 diff sums.data sums.data
expect_contains "$TESTDIR/stdout" '^ +thread +1 +1 +0\.0ms +0\.0ms .* sums$'

# --- Spans whose start and length add up past 2^64 ns: they last to the end, never wrap
# round to before their start (an NVTX range taking no sample then).
make_recording span-ends ends.data
bounded_gtrace 200 10 flame --folded -i ends.data
expect_contains "$TESTDIR/stdout" '^ends;\[nvtx\] forever;main 3$'
bounded_gtrace 200 10 analyze -i ends.data
bounded_gtrace 200 10 export --format chrome -o ends.json -i ends.data

# --- A job of 3000 recordings: each merged and aligned at the cost of its own rows.
mkdir job
make_recording job job 3000
bounded_gtrace 300 10 report --ranks -i job
expect_contains "$TESTDIR/stdout" '^ +2999 '
bounded_gtrace 300 10 diagnose --align collectives --format json -i job
tr '{' '\n' <"$TESTDIR/stdout" | grep '"rank": 2999,' >rank2999.json ||
	{ show "$TESTDIR/stdout"; fail "diagnose shows no rank 2999"; }
[ "$(json_value rank2999.json aligned_by)" = 2 ] && [ "$(json_value rank2999.json shift_ns)" = -2999 ] ||
	{ show rank2999.json; fail "rank 2999 is not aligned by 2 collectives, 2999 ns back"; }
bounded_gtrace 300 10 diagnose -i job
expect_contains "$TESTDIR/stdout" '^  rank2999\.c3 +1$'

# --- Two recordings of 300000 counters each: the job's sums, by name.
make_recording counters counters.data 300000
bounded_gtrace 300 10 diagnose -i counters.data -i counters.data
expect_contains "$TESTDIR/stdout" '^  c299999 +2$'

# --- Clock pairs, start and end at the ends of int64: shifts and drifts stop there.
make_recording clocks clocks0.data 0
make_recording clocks clocks1.data 1
bounded_gtrace 200 10 diagnose --format json -i clocks0.data -i clocks1.data
tr '{' '\n' <"$TESTDIR/stdout" | grep '"rank": 1,' >rank1.json ||
	{ show "$TESTDIR/stdout"; fail "diagnose shows no rank 1"; }
[ "$(json_value rank1.json shift_ns)" = 9223372036854775807 ] ||
	{ show rank1.json; fail "rank 1's shift is not 2^63 - 1"; }
[ "$(json_value rank1.json drift_ns)" = -9223372036854775808 ] ||
	{ show rank1.json; fail "rank 1's drift is not -2^63"; }
for cmd in "diagnose" "report --ranks" "report" "threads" "export -o clocks.pftrace" \
	"export --format chrome -o clocks.json"; do
	# shellcheck disable=SC2086
	bounded_gtrace 200 10 $cmd -i clocks0.data -i clocks1.data
done

# --- Collectives 2^63 - 1 ns apart, one way then the other: the median gap is 0.
make_recording collectives coll0.data 0
make_recording collectives coll1.data 1
bounded_gtrace 200 10 diagnose --align collectives --format json -i coll0.data -i coll1.data
tr '{' '\n' <"$TESTDIR/stdout" | grep '"rank": 1,' >rank1.json ||
	{ show "$TESTDIR/stdout"; fail "diagnose shows no rank 1"; }
[ "$(json_value rank1.json aligned_by)" = 2 ] && [ "$(json_value rank1.json shift_ns)" = 0 ] &&
	[ "$(json_value rank1.json residual_ns)" = 9223372036854775807 ] ||
	{ show rank1.json; fail "rank 1 is not aligned by 2 collectives, shift 0, residual 2^63 - 1"; }
bounded_gtrace 200 10 report --ranks --align collectives -i coll0.data -i coll1.data
bounded_gtrace 200 10 report --ranks --align clocks -i coll0.data -i coll1.data
exit 0
