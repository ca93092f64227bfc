# SPDX-License-Identifier: MIT
# diagnose describes the recording: what ran, for how long, how it was
# sampled, what was lost, how well it unwound and symbolized, the file;
# each value what the recording of a known program must hold.
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events

record diag.data -F 499 -e cpu-clock -- "$WORKLOADS/hot" 0.5
run_gtrace diagnose -i diag.data >diag.txt

# value KEY: the rest of diagnose's "KEY:" line, its spacing dropped.
value() {
	sed -n "s/^$1: *//p" diag.txt
}

# expect_value KEY VALUE: diagnose's "KEY:" line says VALUE.
expect_value() {
	got=$(value "$1")
	[ "$got" = "$2" ] || { show diag.txt; fail "diagnose's $1 is '$got', expected '$2'"; }
}

expect_value file diag.data
expect_value size "$(wc -c <diag.data | tr -d ' ') bytes"
expect_value ended cleanly
expect_value command "$WORKLOADS/hot 0.5"
expect_value event cpu-clock
expect_value 'frequency (Hz)' 499
expect_value 'call graph' dwarf
expect_value kernel "$(uname -r)"
expect_value perf_event_paranoid "$(cat /proc/sys/kernel/perf_event_paranoid)"
expect_value 'gtrace version' "$(sed -n 's/^VERSION = //p' "$SRCDIR/config.mk")"
expect_value hostname "$(uname -n)"
expect_value exit-status 0
expect_value threads 1
expect_value processes 1
expect_value 'lost records' 0
expect_value throttled 0
expect_value lanes 0
expect_value spans 0
# hot runs half a second (and its start and exit, well under half a second
# more on a loaded machine): a sample each 1/499 s of the CPU time it got
# in it (threads tells: sampled_for); each counted, each stack
# unwound to the end and named.
duration=$(value duration)
between "duration (s)" "${duration% s}" 0.5 1
run_gtrace threads -i diag.data >threads.txt
on_cpu_ms=$(thread_column threads.txt hot 5)
samples=$(value samples)
sampled_for "samples in $on_cpu_ms ms on the CPU at 499 Hz" "$samples" "$on_cpu_ms" 499
expect_value 'samples counted' "$samples"
expect_value 'truncated stacks' '0 (0.00%)'
expect_value unwinding "$samples stacks"
expect_contains diag.txt "^  complete +$samples +100\\.00%\$"
expect_contains diag.txt "^leaf resolved: +$samples of $samples samples \\(100\\.00%\\)\$"
# Every location named but those outside every mapping: a switch out in
# the middle of the exec (a loaded machine preempts it there) sees the
# user registers of the image being left.
symbols_line=$(sed -n 's/^symbols: *//p' diag.txt)
resolved=$(echo "$symbols_line" | sed -n 's/^\([0-9]*\) of .*/\1/p')
locations=$(echo "$symbols_line" | sed -n 's/^[0-9]* of \([0-9]*\) locations.*/\1/p')
unmapped=$(echo "$symbols_line" | sed -n 's/.*, \([0-9]*\) outside every mapping$/\1/p')
[ -n "$resolved" ] && [ "$((resolved + ${unmapped:-0}))" = "$locations" ] ||
	fail "not every location in a mapping was named: '$symbols_line'"
between "locations outside every mapping" "${unmapped:-0}" 0 3
