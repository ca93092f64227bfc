# SPDX-License-Identifier: MIT
# --call-graph fp walks frame pointers: complete stacks for code built with
# them. (GCC still leaves leaf functions without a frame, so the leaf's own
# caller may be missing: only reaching main is checked.)
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events

record fp.data --call-graph fp -- "$WORKLOADS/hot" 1
run_gtrace flame -i fp.data --folded >folded.txt
awk '/(run_workload|compute_outer|hot_leaf) [0-9]+$/ { all += $NF; if (/;main;/) whole += $NF }
     END { print all ? int(100 * whole / all) : 0 }' folded.txt >complete
at_least "share of samples unwound to main with frame pointers" "$(cat complete)" 95
expect_contains folded.txt ';main;run_workload;.*hot_leaf [0-9]+$'

# A DWARF stack size is accepted.
record dwarf.data --call-graph dwarf,8192 -- "$WORKLOADS/hot" 0.3
run_gtrace report -i dwarf.data --no-children >report.txt
expect_contains report.txt 'hot_leaf$'
