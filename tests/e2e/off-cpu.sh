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

# Why it was off: the sleeper blocked (it slept), nearly all of its time
# off the CPU; report --off-cpu puts that time under a stack of its own.
run_gtrace threads -i sleep.data --off-cpu >why.txt
blocked=$(thread_column why.txt sleeper 7)
preempted=$(thread_column why.txt sleeper 8)
[ -n "$blocked" ] || { show why.txt; fail "threads --off-cpu has no sleeper row"; }
at_least "sleeper's blocked ms" "$blocked" 400
at_least "sleeper's blocked ms against its off-CPU ms ($off) less its preempted ($preempted)" \
	"$blocked" "$(awk -v o="$off" -v p="$preempted" 'BEGIN { print o - p - 1 }')"
run_gtrace report -i sleep.data --off-cpu >offcpu.txt
awk '$1 !~ /^#/ && NF { print; exit }' offcpu.txt >top.txt
expect_contains top.txt ' blocked +[a-z-]+ +sleeper +.*(busy_bit|nap|nanosleep)'
run_gtrace report -i sleep.data --off-cpu --format json >offcpu.json
expect_contains offcpu.json '"reason": "blocked"'
run_gtrace diagnose -i sleep.data >sleep.diag
switch_stacks=$(awk '$1 == "switch-stacks" { print $2; exit }' sleep.diag)
if [ "${switch_stacks:-0}" -gt 0 ]; then
	# Sampled at each switch out, with the kernel's frames: it went off
	# the CPU in the kernel's nanosleep, a sleep.
	expect_contains top.txt ' blocked +sleep +sleeper +.*nanosleep.* <- nap <- main'
	run_gtrace report -i sleep.data --off-cpu --no-kernel >no-kernel.txt
	expect_not_contains no-kernel.txt 'do_nanosleep|schedule'
	expect_contains no-kernel.txt ' blocked +- +sleeper +[^ ]*nanosleep <- '
	expect_contains offcpu.json '"stacks": "switch"'
else
	expect_contains offcpu.json '"stacks": "last_sample"'
fi

# Three spinning threads on one CPU take it from each other: each is
# preempted, still runnable, and report --off-cpu says so under its spin.
record busy.data -e cpu-clock -- taskset -c 0 "$WORKLOADS/threads" 0.2
run_gtrace threads -i busy.data --off-cpu >busy.txt
at_least "gamma's preempted ms (3 threads on one CPU)" "$(thread_column busy.txt gamma 8)" 5
run_gtrace report -i busy.data --off-cpu >busy-offcpu.txt
expect_contains busy-offcpu.txt ' preempted +[a-z-]+ +gamma +(.* <- )?spin_gamma <- thread_gamma'
# The main thread waits for the others in pthread_join: a futex.
if [ "${switch_stacks:-0}" -gt 0 ]; then
	expect_contains busy-offcpu.txt ' blocked +futex +threads +.*futex.*pthread_clockjoin|pthread_join'
fi
expect_exit 2 "$GTRACE" report -i busy.data --off-cpu --dso threads
expect_contains "$TESTDIR/stderr" 'cannot be used with --off-cpu'

# An ordinary user where perf_event_paranoid is 2: no kernel time, no
# switch samples, still each interval's reason, and no error.
if [ "$(id -u)" -eq 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -eq 2 ]; then
	mkdir user && chmod 1777 user && cd user || exit 1
	as_unprivileged "$GTRACE" record -q -e cpu-clock -o plain.data -- "$WORKLOADS/sleeper" 10 \
		>out.txt 2>err.txt </dev/null || { show err.txt; fail "unprivileged record failed"; }
	run_gtrace report -i plain.data --off-cpu >plain.txt
	expect_contains plain.txt ' blocked +- +sleeper +'
	expect_not_contains plain.txt 'kernel|schedule'
	run_gtrace diagnose -i plain.data >plain.diag
	expect_contains plain.diag '^  switch-stacks +0$'
fi
