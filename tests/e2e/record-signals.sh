# SPDX-License-Identifier: MIT
# Signals: SIGTERM sent to gtrace reaches the command, which decides how to
# end; SIGINT too, unless ignored from the start; a recorder killed
# outright leaves the chunks it had written readable (without symbols:
# those come at the end).
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events

# record_signalled SIGNAL DATA SCRIPT [PREFIX...]: gtrace record (after
# PREFIX, a command that runs it) of sh -c SCRIPT into DATA, in the
# background as a script's job; once SCRIPT wrote DATA.ready, SIGNAL to
# gtrace alone; $status is gtrace's exit status.
record_signalled() {
	signal=$1
	data=$2
	script=$3
	shift 3
	"$@" "$GTRACE" record -q -o "$data" -- sh -c "$script" </dev/null 2>stderr &
	gtrace_pid=$!
	wait_for "$data.ready"
	kill -"$signal" $gtrace_pid
	wait $gtrace_pid
	status=$?
}

record_signalled TERM term.data \
	'trap "exit 7" TERM; echo up >term.data.ready; while :; do sleep 0.05; done'
[ $status -eq 7 ] || { show stderr; fail "gtrace exited with $status, not the command's 7"; }
run_gtrace diagnose -i term.data >term.txt
expect_contains term.txt '^ended: +cleanly'

# A script's background job starts with SIGINT ignored, as gtrace-record(1)
# says: kill -INT leaves the recording going until the command ends by
# itself (status 0); kill -TERM ends both (the command's 143); with SIGINT
# not ignored, SIGINT to gtrace alone is passed on (the command's 130).
record_signalled INT bg-int.data 'echo up >bg-int.data.ready; sleep 1.5'
[ $status -eq 0 ] || { show stderr; fail "SIGINT to a background gtrace: status $status, not 0"; }
run_gtrace diagnose -i bg-int.data --format json >bg-int.json
python3 - bg-int.json <<'PY' || fail "SIGINT to a background gtrace cut the command short"
import json, sys
d = json.load(open(sys.argv[1]))
assert float(d["meta"]["duration"]) >= 1.4, d["meta"]["duration"]
PY
record_signalled TERM bg-term.data 'echo up >bg-term.data.ready; exec sleep 30'
[ $status -eq 143 ] || { show stderr; fail "SIGTERM to a background gtrace: status $status, not 143"; }
record_signalled INT fg-int.data 'echo up >fg-int.data.ready; exec sleep 30' \
	env --default-signal=INT
[ $status -eq 130 ] || { show stderr; fail "SIGINT to gtrace, not ignored: status $status, not 130"; }

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
