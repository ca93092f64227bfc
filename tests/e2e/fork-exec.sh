# SPDX-License-Identifier: MIT
# A parent that forks a child which execs another program: both processes
# are followed, each under its own pid and command name.
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events

record fork.data -- "$WORKLOADS/forkexec" 0.8

run_gtrace threads -i fork.data >threads.txt
parent=$(thread_column threads.txt forkexec 1)
child=$(thread_column threads.txt hot 1)
[ -n "$parent" ] || { show threads.txt; fail "no thread named forkexec"; }
[ -n "$child" ] || { show threads.txt; fail "no thread named hot (the exec'd child)"; }
[ "$parent" != "$child" ] || fail "parent and child share pid $parent"

run_gtrace flame -i fork.data --folded >folded.txt
expect_contains folded.txt '^forkexec;.*;main;parent_spin [0-9]+$'
expect_contains folded.txt '^hot;.*;main;run_workload;compute_outer;hot_leaf [0-9]+$'
at_least "child samples in hot_leaf" "$(folded_samples folded.txt '^hot;.*hot_leaf ')" 100

run_gtrace report -i fork.data --no-children --pid "$child" >child.txt
expect_contains child.txt 'hot_leaf$'
expect_not_contains child.txt 'parent_spin$'
run_gtrace report -i fork.data --no-children --comm hot >comm.txt
expect_contains comm.txt 'hot_leaf$'
