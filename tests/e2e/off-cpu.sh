# SPDX-License-Identifier: MIT
# A thread that mostly sleeps: its off-CPU time dwarfs its on-CPU time.
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events

record sleep.data -- "$WORKLOADS/sleeper" 40
run_gtrace threads -i sleep.data >threads.txt
on=$(thread_column threads.txt sleeper 5)
off=$(thread_column threads.txt sleeper 6)
[ -n "$off" ] || { show threads.txt; fail "no thread named sleeper"; }
# 40 sleeps of 10 ms: at least 300 ms off the CPU, and 5 times the time on it.
at_least "sleeper's off-CPU ms" "$off" 300
awk -v on="$on" -v off="$off" 'BEGIN { exit !(off + 0 > 5 * (on + 0)) }' ||
	fail "off-CPU ${off} ms is not well above on-CPU ${on} ms"

run_gtrace report -i sleep.data --no-children >report.txt
expect_contains report.txt 'busy_bit$'
