# SPDX-License-Identifier: MIT
# Signals: SIGTERM sent to gtrace reaches the command, which decides how to
# end; a recorder killed outright leaves the chunks it had written readable
# (without symbols: those come at the end).
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events

"$GTRACE" record -q -o term.data -- sh -c \
	'trap "exit 7" TERM; echo up >ready; while :; do sleep 0.05; done' \
	</dev/null 2>stderr &
gtrace_pid=$!
wait_for ready
kill -TERM $gtrace_pid
wait $gtrace_pid
status=$?
[ $status -eq 7 ] || { show stderr; fail "gtrace exited with $status, not the command's 7"; }
run_gtrace diagnose -i term.data >term.txt
expect_contains term.txt '^ended: +cleanly'

# Killed with SIGKILL after its first chunk: what was written still reads.
"$GTRACE" record -q -o killed.data -- sh -c \
	'echo $$ >target.pid; exec "$0" 30' \
	"$WORKLOADS/hot" </dev/null 2>stderr &
gtrace_pid=$!
wait_for target.pid
# The header is 32 bytes; the first chunk follows after about a second.
tries=0
while [ "$(wc -c <killed.data 2>/dev/null || echo 0)" -le 64 ]; do
	tries=$((tries + 1))
	[ $tries -le 400 ] || { kill -KILL "$(cat target.pid)" $gtrace_pid; fail "no chunk written"; }
	sleep 0.05
done
kill -KILL $gtrace_pid
wait $gtrace_pid 2>/dev/null
kill -KILL "$(cat target.pid)" 2>/dev/null
"$GTRACE" report -i killed.data --no-children >report.txt 2>err.txt </dev/null ||
	{ show err.txt; fail "the recording of a killed gtrace does not read"; }
expect_contains err.txt "warning: 'killed.data' is truncated"
# Names are written at the end: these come from the local file (killed-names).
expect_contains report.txt '^ *[0-9.]+% +[0-9]+ +hot +hot '
