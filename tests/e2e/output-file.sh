# SPDX-License-Identifier: MIT
# Where the recording goes: ./gtrace.data by default, the previous one kept
# as gtrace.data.old, -o elsewhere; one summary line on stderr unless -q.
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events

run_gtrace record -- "$WORKLOADS/hot" 0.3 >out.txt
[ -s gtrace.data ] || fail "no gtrace.data in the current directory"
expect_lines "$TESTDIR/stderr" 1
expect_contains "$TESTDIR/stderr" "^gtrace: recorded [0-9]+ samples from [0-9]+ threads? \\([0-9]+ lost\\) in 'gtrace.data' \\("
cp gtrace.data first.data

run_gtrace record -- "$WORKLOADS/hot" 0.3 >/dev/null
cmp -s gtrace.data.old first.data || fail "the previous gtrace.data was not kept as gtrace.data.old"
run_gtrace report >report.txt
expect_contains report.txt 'hot_leaf$'

run_gtrace record -q -o other.data -- "$WORKLOADS/hot" 0.3 >/dev/null
[ -s other.data ] || fail "-o other.data wrote nothing"
[ -s "$TESTDIR/stderr" ] && { show "$TESTDIR/stderr"; fail "-q still printed on stderr"; }

# The target's own output and input are untouched.
run_gtrace record -q -o echo.data -- sh -c 'echo to-stdout; echo to-stderr >&2' >echo.txt
expect_contains echo.txt '^to-stdout$'
expect_contains "$TESTDIR/stderr" '^to-stderr$'
