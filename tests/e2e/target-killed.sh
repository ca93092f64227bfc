# SPDX-License-Identifier: MIT
# A recorder killed while the lanes example reports spans: the program
# notices nothing but its own drop count and exits 0, and the recording
# reads up to its last whole chunk, lane work included.
. "$SRCDIR/tests/e2e/lib.sh"

LANES=$WORKLOADS/lanes
[ -x "$LANES" ] || fail "the lanes example is not built ($LANES): run make tests"
need_perf_events

# lanes reports until told to stop (SIGUSR1), so the recorder is killed
# while spans still come however slow this machine is.
"$GTRACE" record -q -o killed.data -- sh -c \
	'"$0" --wait-active 5 --run-ms 60000 >lanes.out &
	 echo $! >lanes.pid; wait $!; echo $? >lanes.status' \
	"$LANES" </dev/null 2>stderr &
gtrace_pid=$!

# A failed test leaves no lanes running (the remover takes the socket).
cleanup() {
	[ -s lanes.pid ] && [ ! -e lanes.status ] && kill "$(cat lanes.pid)" 2>/dev/null
}
trap cleanup EXIT

# Until a chunk with spans is written (readers take a file being written).
tries=0
until "$GTRACE" threads -i killed.data 2>/dev/null </dev/null | grep -q ' 0xfff00000 '; do
	tries=$((tries + 1))
	[ $tries -le 400 ] || { kill -KILL $gtrace_pid; fail "no chunk with spans was written"; }
	sleep 0.05
done
kill -KILL $gtrace_pid
wait $gtrace_pid 2>/dev/null

wait_for lanes.pid
kill -USR1 "$(cat lanes.pid)"
wait_for lanes.status
[ "$(cat lanes.status)" -eq 0 ] || { show lanes.out; fail "lanes exited with $(cat lanes.status)"; }
at_least "spans reported" "$(lanes_result lanes.out reported)" 1

"$GTRACE" threads -i killed.data >threads.txt 2>err.txt </dev/null ||
	{ show err.txt; fail "the recording of a killed gtrace does not read"; }
expect_contains err.txt "warning: 'killed.data' is truncated"
expect_contains threads.txt '^ +[0-9]+ +0xfff00000 +queue +queue [01] +[1-9][0-9]* '
