# SPDX-License-Identifier: MIT
# gtrace record -p: attached to the running lanes example, gtrace samples
# its threads, those it starts after the attach too, and takes its spans
# through the rendezvous socket, each one; ^C (SIGINT) ends the recording
# and leaves the process running, and so does the process's exit; a missing
# or foreign process is refused. Each step waits for what it needs (lanes
# says when its spans reached the recorder), never for a fixed time.
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

# start_lanes OUT ARGS...: starts lanes with ARGS in the background, its
# output to OUT, and waits until it runs (the shell has exec'd it): sets
# $lanes_pid. lanes waits for a recorder before it starts its workers. The
# trap ends it if the test fails first.
start_lanes() {
	out=$1
	shift
	"$LANES" --wait-active 60 "$@" >"$out" 2>"$out.err" </dev/null &
	lanes_pid=$!
	trap 'kill $lanes_pid 2>/dev/null' EXIT
	lanes_exe=$(readlink -f "$LANES")
	tries=0
	until [ "$(readlink "/proc/$lanes_pid/exe" 2>/dev/null)" = "$lanes_exe" ]; do
		tries=$((tries + 1))
		[ $tries -le 400 ] || fail "lanes did not start"
		sleep 0.05
	done
}

# lanes_done DATA OUT: lanes (its output OUT) exits 0, and the recording
# DATA, ended cleanly, holds every span it reported, 2000 on each lane, all
# on lanes' pid, and samples of both its workers, threads it started after
# the recorder attached (each about 40 ms on its CPU: 40 samples).
lanes_done() {
	wait $lanes_pid
	status=$?
	trap - EXIT
	[ $status -eq 0 ] || { show "$2.err"; fail "lanes exited with $status"; }
	reported=$(lanes_result "$2" reported)
	[ "$reported" -eq 4000 ] && [ "$(lanes_result "$2" dropped)" -eq 0 ] ||
		{ show "$2"; fail "lanes reported $reported spans, expected 4000 and none dropped"; }
	run_gtrace diagnose -i "$1" >"$1.diag"
	expect_counters "$1.diag" spans=4000 dropped.wrong-pid=0
	run_gtrace threads -i "$1" >"$1.threads"
	for worker in worker-0 worker-1; do
		[ "$(thread_column "$1.threads" $worker 1)" = "$lanes_pid" ] ||
			{ show "$1.threads"; fail "$1: no thread $worker of pid $lanes_pid"; }
		at_least "$1: samples of $worker" "$(thread_column "$1.threads" $worker 4)" 1
	done
	expect_contains "$1.threads" "^ +$lanes_pid +0xfff0000[01] +queue +queue 0 +2000 "
	expect_contains "$1.threads" "^ +$lanes_pid +0xfff0000[01] +queue +queue 1 +2000 "
	expect_contains "$1.diag" '^ended: +cleanly'
}

if [ -n "${XDG_RUNTIME_DIR:-}" ]; then
	rendezvous=$XDG_RUNTIME_DIR/gtrace
else
	rendezvous=/tmp/gtrace-$(id -u)
fi

# ^C: lanes reports its spans once it found the recorder, flushes them to
# it, prints its counts and lingers until SIGUSR1; then SIGINT ends the
# recording, as ^C does (env gives gtrace back the SIGINT that a shell
# takes from what it starts in the background).
start_lanes lanes.out --threads 2 --spans 2000 --linger
env --default-signal=INT "$GTRACE" record -q -o attach.data -p $lanes_pid 2>attach.err </dev/null &
gtrace_pid=$!
wait_for lanes.out
kill -INT $gtrace_pid
wait $gtrace_pid
status=$?
[ $status -eq 0 ] || { show attach.err; fail "^C ended the attached recording with status $status"; }
kill -0 $lanes_pid 2>/dev/null || fail "the attached process did not outlive the recording"
[ ! -e "$rendezvous/$lanes_pid.sock" ] || fail "'$rendezvous/$lanes_pid.sock' was left behind"
kill -USR1 $lanes_pid
lanes_done attach.data lanes.out
expect_contains attach.data.diag '^command: .*lanes --wait-active 60 --threads 2 --spans 2000 --linger$'

# The process's exit ends the recording by itself.
start_lanes exit.out --threads 2 --spans 2000
record exit.data -p $lanes_pid
lanes_done exit.data exit.out
