# SPDX-License-Identifier: MIT
# Without frame pointers, DWARF unwinding (the default) still takes every
# sample of the workload's own code back to main, and diagnose agrees; so
# it does through a library frame whose personality routine the unwind
# table names through the GOT, as in any C++ library, and through one
# that realigns its stack.
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events

record nofp.data -- "$WORKLOADS/hot-nofp" 1
run_gtrace flame -i nofp.data --folded >folded.txt
expect_contains folded.txt '^hot-nofp;.*;main;run_workload;compute_outer;hot_leaf [0-9]+$'

# Samples that stopped in the workload's code; each must reach main.
awk '/(run_workload|compute_outer|hot_leaf) [0-9]+$/ { all += $NF; if (/;main;/) whole += $NF }
     END { print all ? int(100 * whole / all) : 0 }' folded.txt >complete
at_least "share of hot-nofp's samples unwound to main" "$(cat complete)" 99

run_gtrace diagnose -i nofp.data >diagnose.txt
expect_contains diagnose.txt '^unwinding:'
at_least "complete unwinds in diagnose" "$(diagnose_percent diagnose.txt complete)" 99

record cleanup.data -- "$WORKLOADS/cleanup" 1
run_gtrace flame -i cleanup.data --folded >cleanup.txt
expect_contains cleanup.txt '^cleanup;.*;main;run_workload;with_cleanup;hot_callback [0-9]+$'
awk '/hot_callback/ { all += $NF; if (/;main;run_workload;with_cleanup;hot_callback/) whole += $NF }
     END { print all ? int(100 * whole / all) : 0 }' cleanup.txt >complete
at_least "share of cleanup's samples unwound through with_cleanup to main" "$(cat complete)" 99

# Through a frame that realigns its stack: its unwind table keeps the CFA
# in a word below rbp (as thousands of libtorch's kernels do).
record realign.data -- "$WORKLOADS/realign-nofp" 1
run_gtrace flame -i realign.data --folded >realign.txt
expect_contains realign.txt '^realign-nofp;.*;main;run_workload;realigned;hot_leaf [0-9]+$'
awk '/(realigned|hot_leaf) [0-9]+$/ { all += $NF; if (/;main;run_workload;realigned/) whole += $NF }
     END { print all ? int(100 * whole / all) : 0 }' realign.txt >complete
at_least "share of realign's samples unwound through realigned to main" "$(cat complete)" 99
