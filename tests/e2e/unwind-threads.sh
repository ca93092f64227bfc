# SPDX-License-Identifier: MIT
# Unwinding on helper threads (--unwind-threads, on by default only with
# more than two CPUs) gives the stacks the recorder's own thread gives:
# 40 levels to the thread's start on four threads, and a child that forks and execs
# another program, whose samples must be unwound through the maps of the
# moment they were taken.
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events

record deep.data --unwind-threads 3 -F 2999 -- "$WORKLOADS/recurse-nofp" 40 0.6 4
run_gtrace diagnose -i deep.data >deep.txt
expect_contains deep.txt '^unwind-threads: +3$'
at_least "complete unwinds with 3 unwinding threads" "$(diagnose_percent deep.txt complete)" 99
run_gtrace flame -i deep.data --folded >deep.folded
awk '{ total += $NF }
     /;(main|recursion_thread);run_recursion;/ &&
     /;recurse_leaf [0-9]+$/ { if (gsub(/;recurse_down/, "&") == 40) whole += $NF }
     END { print total ? int(100 * whole / total) : 0 }' deep.folded >share
at_least "share of samples through all 40 levels to the thread's start" "$(cat share)" 95

record fork.data --unwind-threads 2 -- "$WORKLOADS/forkexec" 0.8
run_gtrace flame -i fork.data --folded >fork.folded
expect_contains fork.folded '^forkexec;.*;main;parent_spin [0-9]+$'
expect_contains fork.folded '^hot;.*;main;run_workload;compute_outer;hot_leaf [0-9]+$'
at_least "child samples in hot_leaf" "$(folded_samples fork.folded '^hot;.*hot_leaf ')" 100
run_gtrace diagnose -i fork.data >fork.txt
at_least "complete unwinds of the fork and exec" "$(diagnose_percent fork.txt complete)" 95
