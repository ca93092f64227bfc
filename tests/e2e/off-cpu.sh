# SPDX-License-Identifier: MIT
# A thread that mostly sleeps: its time off the CPU holds its sleeps, its
# time on and off the CPU make up its life, its samples its time on it.
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events

record sleep.data -e cpu-clock -- "$WORKLOADS/sleeper" 40
run_gtrace threads -i sleep.data >threads.txt
samples=$(thread_column threads.txt sleeper 4)
on=$(thread_column threads.txt sleeper 5)
off=$(thread_column threads.txt sleeper 6)
life_ms=$(awk -v first="$(thread_column threads.txt sleeper 7)" \
	-v last="$(thread_column threads.txt sleeper 8)" 'BEGIN { print 1000 * (last - first) }')
[ -n "$off" ] || { show threads.txt; fail "no thread named sleeper"; }
# 40 sleeps of at least 10 ms each, whatever else a loaded machine adds.
at_least "sleeper's off-CPU ms" "$off" 400
# On and off add up to the thread's life (First to Last: to 1 ms, the
# columns' rounding), and it was sampled 999 times a second of CPU time.
between "on + off-CPU ms (life $life_ms ms)" "$(awk -v a="$on" -v b="$off" 'BEGIN { print a + b }')" \
	"$(awk -v l="$life_ms" 'BEGIN { print l * 0.98 - 1 }')" \
	"$(awk -v l="$life_ms" 'BEGIN { print l * 1.02 + 1 }')"
sampled_for "samples in $on ms on the CPU at 999 Hz" "$samples" "$on" 999

run_gtrace report -i sleep.data --no-children >report.txt
expect_contains report.txt 'busy_bit$'
