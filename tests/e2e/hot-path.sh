# SPDX-License-Identifier: MIT
# One hot path: report, flame (tree, folded, SVG) and threads all show
# main -> run_workload -> compute_outer -> hot_leaf, with hot_leaf on top.
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events

record hot.data -- "$WORKLOADS/hot" 1

run_gtrace report -i hot.data --no-children >report.txt
expect_contains report.txt '^#'
expect_contains report.txt 'hot_leaf$'
# hot does 9 rounds in hot_leaf for each in compute_outer: 90% and 10% of
# its samples, give or take the sampling's noise (about 1.5 points at 400
# samples; 6 allowed).
between "hot_leaf's self share in the report" "$(report_self report.txt hot_leaf)" 84 96
between "compute_outer's self share in the report" "$(report_self report.txt compute_outer)" 4 16

run_gtrace report -i hot.data >children.txt
for sym in main run_workload compute_outer hot_leaf; do
	expect_contains children.txt " $sym\$"
done

run_gtrace flame -i hot.data --folded >folded.txt
expect_contains folded.txt '^hot;'
expect_contains folded.txt ';main;run_workload;compute_outer;hot_leaf [0-9]+$'
between "share of folded samples in hot_leaf" \
	"$(folded_share folded.txt ';main;run_workload;compute_outer;hot_leaf ')" 84 96

run_gtrace flame -i hot.data >tree.txt
for sym in main run_workload compute_outer hot_leaf; do
	expect_contains tree.txt "$sym"
done

run_gtrace flame -i hot.data --svg flame.svg >/dev/null
expect_contains flame.svg '<svg'
expect_contains flame.svg 'hot_leaf'
expect_contains flame.svg '</svg>'

# Without Python frames, every Python view is the recording as it is.
run_gtrace report -i hot.data >report-default.txt
run_gtrace flame -i hot.data --folded >folded-default.txt
run_gtrace export -i hot.data -o - >export-default.pftrace
for opts in "--python on" "--python off" "--python both" "--no-python-lines"; do
	run_gtrace report -i hot.data $opts >report-py.txt
	cmp -s report-default.txt report-py.txt || fail "report $opts changed the report"
	run_gtrace flame -i hot.data --folded $opts >folded-py.txt
	cmp -s folded-default.txt folded-py.txt || fail "flame $opts changed the stacks"
	run_gtrace export -i hot.data -o - $opts >export-py.pftrace
	cmp -s export-default.pftrace export-py.pftrace || fail "export $opts changed the trace"
done

run_gtrace threads -i hot.data >threads.txt
expect_contains threads.txt ' hot '
