# SPDX-License-Identifier: MIT
# gtrace record -p: attached to the running lanes example, gtrace samples
# its threads and takes its spans through the rendezvous socket, then
# leaves it running; a missing or foreign process is refused.
. "$SRCDIR/tests/e2e/lib.sh"

LANES=$WORKLOADS/lanes
[ -x "$LANES" ] || fail "the lanes example is not built ($LANES): run make tests"
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
# Someone else's process, for an ordinary user (in a directory it may
# write to, so that only the attach can fail).
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1; then
	mkdir user
	chmod 1777 user
	cd user || exit 1
	expect_exit 1 as_unprivileged "$GTRACE" record -o user.data -p $$
	cd "$TESTDIR" || exit 1
	expect_contains "$TESTDIR/stderr" "^gtrace: cannot attach to pid '$$': permission denied"
	[ ! -e user/user.data ] || fail "a refused attach left 'user.data'"
fi

# lanes reports until told to stop (SIGUSR1), so it outlives the recording
# however slow this machine is; the trap ends it if the test fails first.
"$LANES" --wait-active 5 --run-ms 60000 >lanes.out 2>lanes.err </dev/null &
lanes_pid=$!
trap 'kill $lanes_pid 2>/dev/null' EXIT
# Attach to lanes itself, not to the shell that is still about to exec it.
lanes_exe=$(readlink -f "$LANES")
tries=0
until [ "$(readlink "/proc/$lanes_pid/exe" 2>/dev/null)" = "$lanes_exe" ]; do
	tries=$((tries + 1))
	[ $tries -le 400 ] || fail "lanes did not start"
	sleep 0.05
done
record attach.data -p $lanes_pid --duration 2
kill -0 $lanes_pid 2>/dev/null || fail "the attached process did not outlive the recording"
kill -USR1 $lanes_pid
if [ -n "${XDG_RUNTIME_DIR:-}" ]; then
	rendezvous=$XDG_RUNTIME_DIR/gtrace
else
	rendezvous=/tmp/gtrace-$(id -u)
fi
[ ! -e "$rendezvous/$lanes_pid.sock" ] || fail "'$rendezvous/$lanes_pid.sock' was left behind"
wait $lanes_pid
status=$?
trap - EXIT
[ $status -eq 0 ] || { show lanes.err; fail "lanes exited with $status"; }
at_least "spans reported" "$(lanes_result lanes.out reported)" 1

run_gtrace threads -i attach.data >threads.txt
[ "$(thread_column threads.txt worker-0 1)" = "$lanes_pid" ] ||
	{ show threads.txt; fail "no thread worker-0 of pid $lanes_pid"; }
at_least "samples of worker-0" "$(thread_column threads.txt worker-0 4)" 1
expect_contains threads.txt "^ +$lanes_pid +0xfff0000[01] +queue +queue 0 +[1-9][0-9]* "
run_gtrace diagnose -i attach.data >diag.txt
at_least "target.spans" "$(target_counter diag.txt spans)" 1
[ "$(target_counter diag.txt dropped.wrong-pid)" -eq 0 ] || { show diag.txt; fail "own spans counted as wrong-pid"; }
expect_contains diag.txt '^command: .*lanes --wait-active 5 --run-ms 60000'
