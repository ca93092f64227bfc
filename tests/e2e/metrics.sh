# SPDX-License-Identifier: MIT
# Process metrics against what the kernel itself says: memsteps grows its
# memory to 64 MiB in four steps while two threads burn CPU, and prints its
# peak resident size (VmHWM) and the CPU it had (near 200% of one CPU on an
# idle machine). report --metrics must show that peak within 5%, the same
# CPU within 25 points, the machine's series, and its text and JSON forms.
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events
need_python3

record steps.data -- "$WORKLOADS/memsteps" 4 16 0.3 >steps.out
peak=$(sed -n 's/^peak-kib: //p' steps.out)
own_cpu=$(sed -n 's/^cpu-percent: //p' steps.out)
[ -n "$peak" ] && [ -n "$own_cpu" ] || { show steps.out; fail "memsteps printed no peak or CPU"; }

run_gtrace report -i steps.data --metrics --format json >metrics.json
# stat PROCESS-SERIES FIELD: memsteps' series' FIELD from the JSON.
stat() {
	python3 -c 'import json, sys
doc = json.load(open("metrics.json"))
rows = [s for s in doc["series"] if s["comm"] == "memsteps" and s["name"] == sys.argv[1]]
print(rows[0][sys.argv[2]] if rows else -1)' "$1" "$2"
}
rss=$(stat proc.rss max)
awk -v rss="$rss" -v peak="$peak" 'BEGIN { d = rss - peak; if (d < 0) d = -d; exit !(d <= peak * 0.05) }' ||
	fail "peak RSS in the metrics is $rss KiB, memsteps says $peak KiB"
# Its CPU: user and system, against its own count (a busy machine gives it less).
cpu=$(awk -v u="$(stat proc.cpu.user mean)" -v s="$(stat proc.cpu.system mean)" 'BEGIN { print u + s }')
awk -v cpu="$cpu" -v own="$own_cpu" 'BEGIN { d = cpu - own; if (d < 0) d = -d; exit !(d <= 25) }' ||
	fail "memsteps' mean CPU in the metrics is $cpu%, it counted $own_cpu% itself"
awk -v max="$(stat proc.cpu.user max)" 'BEGIN { exit !(max <= 250) }' ||
	fail "memsteps used $(stat proc.cpu.user max)% of a CPU on two threads"

# The text form: the machine and the process, each series with its unit.
run_gtrace report -i steps.data --metrics >metrics.txt
expect_contains metrics.txt '^machine$'
expect_contains metrics.txt '^pid [0-9]+ \(memsteps\)$'
expect_contains metrics.txt '^ +sys\.cpu\.user .*%$'
expect_contains metrics.txt '^ +proc\.rss .* MiB$'

# threads: the process's peak RSS and mean CPU beside its threads.
run_gtrace threads -i steps.data >threads.txt
expect_contains threads.txt 'memsteps'
exit 0
