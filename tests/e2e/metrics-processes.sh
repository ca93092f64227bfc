# SPDX-License-Identifier: MIT
# The metrics thread follows the processes of a recording as they come and
# go: 200 children living together are read and then let go, without the
# recorder keeping a file of any of them open; a command that exits at once
# still leaves a recording with the machine's metrics, and no RSS of 0 read
# as it exited; --no-metrics and bad intervals.
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events

# counter FILE NAME: a counter from diagnose's JSON, -1 when absent.
counter() {
	run_gtrace diagnose -i "$1" --format json >"$1.json"
	python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["counters"].get(sys.argv[2], -1))' "$1.json" "$2"
}

need_python3

# $PPID of the shell is the recorder: its open files before and after.
# Three files for each process still followed: on a busy machine the
# recorder may not have taken in the last exits yet, so the count is taken
# once it is within 20 processes' of the start, or after 10 s; a leak
# would keep 600.
record many.data --metrics-interval 5ms -- sh -c '
	ls /proc/$PPID/fd | wc -l >fds.before
	i=0
	while [ $i -lt 200 ]; do sleep 0.5 & i=$((i + 1)); done
	wait
	i=0
	while [ "$(ls /proc/$PPID/fd | wc -l)" -gt $(($(cat fds.before) + 60)) ] &&
		[ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	ls /proc/$PPID/fd | wc -l >fds.after'
before=$(cat fds.before)
after=$(cat fds.after)
[ "$after" -le $((before + 60)) ] ||
	fail "the recorder had $before files open before 200 children and $after after"
at_least "processes the metrics followed" "$(counter many.data metrics.processes)" 150

# A command that exits at once: the first reading is there.
record quick.data -- true
at_least "metrics readings of a command that exits at once" "$(counter quick.data metrics.ticks)" 1
run_gtrace report -i quick.data >/dev/null
# Read as it exits, its memory already gone, a process has no RSS figure,
# not 0 KiB: '-' in threads, no value in report --metrics (gtrace-threads(1)).
for i in 1 2 3 4 5 6; do
	record "exit$i.data" -- true
	run_gtrace threads -i "exit$i.data" >"exit$i.threads"
	run_gtrace report -i "exit$i.data" --metrics >"exit$i.metrics"
	expect_not_contains "exit$i.threads" ' 0 KiB'
	expect_not_contains "exit$i.metrics" '^ +proc\.rss .* 0 KiB'
done

record none.data --no-metrics -- true
[ "$(counter none.data metrics.ticks)" = -1 ] || fail "--no-metrics still read metrics"

for bad in 0 50us 2h abc; do
	expect_exit 2 "$GTRACE" record --metrics-interval "$bad" -- true
	expect_contains "$TESTDIR/stderr" "^gtrace: invalid metrics interval '$bad'"
done
exit 0
