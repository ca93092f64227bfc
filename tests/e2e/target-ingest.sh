# SPDX-License-Identifier: MIT
# The span channel of gtrace record, with the lanes example: every span it
# reports is recorded on its lane; under overload every span is either
# recorded or counted as dropped; a forked child reports under its own pid;
# a process outside the recording that finds the socket is turned away,
# its spans counted.
. "$SRCDIR/tests/e2e/lib.sh"

LANES=$WORKLOADS/lanes
[ -x "$LANES" ] || fail "the lanes example is not built ($LANES): run make tests"
need_perf_events

# expect_equal WHAT GOT WANT
expect_equal() {
	[ "$2" = "$3" ] || fail "$1 is $2, expected $3"
}

# lane_spans THREADS-FILE PID NAME: the Spans of lane NAME of process PID in
# gtrace threads output; -1 when there is no such lane.
lane_spans() {
	awk -v pid="$2" -v name="$3" '
		$1 == pid && $2 ~ /^0xfff/ {
			lane = $4
			for (i = 5; i <= NF - 4; i++)
				lane = lane " " $i
			if (lane == name) { print $(NF - 3); found = 1; exit }
		}
		END { if (!found) print -1 }' "$1"
}

# All spans arrive, each on its lane.
record normal.data -- "$LANES" --wait-active 5 --threads 2 --lanes 3 --spans 1500 >normal.out
expect_equal "spans reported" "$(lanes_result normal.out reported)" 3000
expect_equal "spans the library dropped" "$(lanes_result normal.out dropped)" 0
pid=$(lanes_result normal.out pid)
run_gtrace diagnose -i normal.data >normal.txt
expect_counters normal.txt spans=3000 lanes=3 processes=1 dropped.queue-full=0 \
	dropped.unsent=0 dropped.no-run=0 dropped.wrong-pid=0 dropped.bad-message=0
at_least "target.batches" "$(target_counter normal.txt batches)" 1
run_gtrace threads -i normal.data >normal-threads.txt
for lane in 0 1 2; do
	spans=$(lane_spans normal-threads.txt "$pid" "queue $lane")
	[ "$spans" -eq 1000 ] ||
		{ show normal-threads.txt; fail "lane 'queue $lane' has $spans spans, expected 1000"; }
done

# Overload: a queue of 64 spans and no pause between them. What the library
# took is recorded, what it dropped is counted, and together they are all.
GTRACE_TARGET_QUEUE=64
export GTRACE_TARGET_QUEUE
record burst.data -- "$LANES" --wait-active 5 --burst --threads 2 --spans 20000 >burst.out
unset GTRACE_TARGET_QUEUE
reported=$(lanes_result burst.out reported)
dropped=$(lanes_result burst.out dropped)
expect_equal "spans reported and dropped" $((reported + dropped)) 40000
at_least "spans dropped under overload" "$dropped" 1
run_gtrace diagnose -i burst.data >burst.txt
expect_counters burst.txt spans="$reported" dropped.queue-full="$dropped" dropped.unsent=0

# A child reports under its own pid, on its own lane only.
record fork.data -- "$LANES" --wait-active 5 --fork --spans 100 >fork.out
parent=$(lanes_result fork.out pid)
child=$(awk -v parent="$parent" '/^lanes: pid / && $3 != parent { print $3; exit }' fork.out)
[ -n "$child" ] || { show fork.out; fail "the child printed no counts"; }
run_gtrace threads -i fork.data >fork-threads.txt
for check in "$parent:queue 0:100" "$parent:queue 1:100" "$child:child 0:100" \
	"$child:queue 0:-1" "$parent:child 0:-1"; do
	lane_pid=${check%%:*}
	rest=${check#*:}
	spans=$(lane_spans fork-threads.txt "$lane_pid" "${rest%:*}")
	[ "$spans" -eq "${rest##*:}" ] ||
		{ show fork-threads.txt; fail "pid $lane_pid lane '${rest%:*}' has $spans spans, expected ${rest##*:}"; }
done
run_gtrace diagnose -i fork.data >fork.txt
expect_counters fork.txt spans=300 processes=2

# A process that is not part of the recording, given the socket's path:
# its spans are read and counted, not recorded.
"$GTRACE" record -q -o foreign.data -- sh -c \
	'echo "$GTRACE_TARGET_SOCKET" >socket.path; while [ ! -e done ]; do sleep 0.05; done' \
	</dev/null 2>stderr &
gtrace_pid=$!
wait_for socket.path
GTRACE_TARGET_SOCKET=$(cat socket.path) "$LANES" --wait-active 5 --spans 300 >foreign.out ||
	{ touch done; fail "lanes outside the recording exited with $?"; }
touch done
wait $gtrace_pid || { show stderr; fail "gtrace record exited with $?"; }
[ ! -e "$(cat socket.path)" ] || fail "the span socket '$(cat socket.path)' was left behind"
[ ! -e "$(dirname "$(cat socket.path)")" ] || fail "the span socket's directory was left behind"
run_gtrace diagnose -i foreign.data >foreign.txt
expect_counters foreign.txt spans=0 processes=0 \
	dropped.wrong-pid="$(lanes_result foreign.out reported)"
