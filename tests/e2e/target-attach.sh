# SPDX-License-Identifier: MIT
# gtrace record -p: attached to the running lanes example, gtrace samples
# its threads and takes its spans through the rendezvous socket, then
# leaves it running; a missing or foreign process is refused.
. "$SRCDIR/tests/e2e/lib.sh"

LANES=$WORKLOADS/lanes
[ -x "$LANES" ] || skip "the lanes example is not built ($LANES)"
need_perf_events

# No such process: a child that has been waited for.
true &
gone=$!
wait $gone
expect_exit 1 "$GTRACE" record -o none.data -p $gone
expect_contains "$TESTDIR/stderr" "^gtrace: no process with pid '$gone'\$"
[ ! -e none.data ] || fail "a failed attach left 'none.data'"
expect_exit 2 "$GTRACE" record -p $$ -- true
expect_contains "$TESTDIR/stderr" "cannot both attach to pid $$ and run 'true'"
# Someone else's process, for an ordinary user.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1; then
	expect_exit 1 as_unprivileged "$GTRACE" record -o "/tmp/gtrace-attach-$$.data" -p $$
	expect_contains "$TESTDIR/stderr" "^gtrace: cannot attach to pid '$$': permission denied"
fi

"$LANES" --wait-active 5 --run-ms 3000 >lanes.out 2>lanes.err </dev/null &
lanes_pid=$!
record attach.data -p $lanes_pid --duration 2
kill -0 $lanes_pid 2>/dev/null || fail "the attached process did not outlive the recording"
if [ -n "${XDG_RUNTIME_DIR:-}" ]; then
	rendezvous=$XDG_RUNTIME_DIR/gtrace
else
	rendezvous=/tmp/gtrace-$(id -u)
fi
[ ! -e "$rendezvous/$lanes_pid.sock" ] || fail "'$rendezvous/$lanes_pid.sock' was left behind"
wait $lanes_pid || { show lanes.err; fail "lanes exited with $?"; }
at_least "spans reported" "$(lanes_result lanes.out reported)" 1

run_gtrace threads -i attach.data >threads.txt
[ "$(thread_column threads.txt worker-0 1)" = "$lanes_pid" ] ||
	{ show threads.txt; fail "no thread worker-0 of pid $lanes_pid"; }
at_least "samples of worker-0" "$(thread_column threads.txt worker-0 4)" 1
expect_contains threads.txt "^ +$lanes_pid +0xfff0000[01] +queue +queue 0 +[1-9][0-9]* "
run_gtrace diagnose -i attach.data >diag.txt
at_least "target.spans" "$(target_counter diag.txt spans)" 1
[ "$(target_counter diag.txt dropped.wrong-pid)" -eq 0 ] || { show diag.txt; fail "own spans counted as wrong-pid"; }
expect_contains diag.txt '^command: .*lanes --wait-active 5 --run-ms 3000'
