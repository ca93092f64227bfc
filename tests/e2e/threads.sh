# SPDX-License-Identifier: MIT
# Three named threads with work in the ratio 1:2:3: each shows up under its
# name with its own path, and the one with most work has most samples.
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events

record threads.data -- "$WORKLOADS/threads" 1

run_gtrace threads -i threads.data >threads.txt
for name in alpha beta gamma; do
	expect_contains threads.txt " $name "
done
pid=$(thread_column threads.txt alpha 1)
for name in beta gamma; do
	[ "$(thread_column threads.txt $name 1)" = "$pid" ] ||
		fail "thread $name is not in the same process as alpha ($pid)"
done
alpha=$(thread_column threads.txt alpha 4)
gamma=$(thread_column threads.txt gamma 4)
[ "$gamma" -gt "$alpha" ] ||
	fail "gamma has $gamma samples, not more than alpha's $alpha (work 3:1)"

run_gtrace flame -i threads.data --folded >folded.txt
for name in alpha beta gamma; do
	expect_contains folded.txt "^$name;.*;thread_$name;spin_$name [0-9]+\$"
done
expect_not_contains folded.txt 'thread_alpha;spin_(beta|gamma)'

run_gtrace report -i threads.data --no-children --comm beta >beta.txt
expect_contains beta.txt 'spin_beta$'
expect_not_contains beta.txt 'spin_(alpha|gamma)$'
