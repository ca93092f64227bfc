# SPDX-License-Identifier: MIT
# Every signal that would end the recorder (but those of a fault) ends the
# recording as SIGTERM does: passed on to the command, which ends by it,
# the file closed with its END chunk, the span socket and its directory
# removed; attached, the process is left running. A signal the command
# sends its recorder is not passed back to it. A recorder killed outright
# has its span socket removed all the same.
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events
env --default-signal=INT true 2>/dev/null ||
	skip tools "env cannot reset signals to their default (coreutils 8.31 or later)"
# A command that dies by SIGQUIT or SIGXCPU leaves no core here.
ulimit -c 0

# ended_cleanly FILE: the recording FILE has its END chunk.
ended_cleanly() {
	run_gtrace diagnose -i "$1" >diag.txt
	expect_contains diag.txt '^ended: +cleanly'
}

# A shell started gtrace in the background with SIGINT and SIGQUIT ignored:
# env gives gtrace, and so the command, their default actions back.
for sig in HUP INT QUIT ABRT USR1 USR2 ALRM TERM XCPU VTALRM PROF IO PWR RTMIN RTMAX; do
	rm -f target.pid socket.path
	env --default-signal "$GTRACE" record -q -o sig.data -- sh -c \
		'echo "$GTRACE_TARGET_SOCKET" >socket.path; echo $$ >target.pid; exec sleep 60' \
		</dev/null 2>stderr &
	gtrace_pid=$!
	wait_for target.pid
	kill -s $sig $gtrace_pid
	wait $gtrace_pid
	status=$?
	[ $status -gt 128 ] && [ "$(kill -l $status)" = "$sig" ] ||
		{ show stderr; kill -KILL "$(cat target.pid)"; fail "SIG$sig: gtrace exited with $status, not the command's death by SIG$sig"; }
	kill -0 "$(cat target.pid)" 2>/dev/null && { kill -KILL "$(cat target.pid)"; fail "SIG$sig: the command is left running"; }
	ended_cleanly sig.data
	[ ! -e "$(dirname "$(cat socket.path)")" ] || fail "SIG$sig: the span socket's directory is left"
done

# Attached: the process goes on, the recording ends whole, the socket goes.
sleep 60 &
target=$!
for sig in QUIT USR1; do
	env --default-signal "$GTRACE" record -q -o att.data -p $target </dev/null 2>stderr &
	gtrace_pid=$!
	tries=0
	until [ -S "run/gtrace/$target.sock" ]; do
		tries=$((tries + 1))
		[ $tries -le 400 ] || { kill -KILL $target $gtrace_pid; fail "the recorder never attached"; }
		sleep 0.05
	done
	kill -s $sig $gtrace_pid
	wait $gtrace_pid
	status=$?
	[ $status -eq 0 ] || { show stderr; kill -KILL $target; fail "attached, SIG$sig: gtrace exited with $status"; }
	kill -0 $target || fail "attached, SIG$sig: the process did not survive"
	ended_cleanly att.data
	[ ! -e "run/gtrace/$target.sock" ] || { kill -KILL $target; fail "attached, SIG$sig: the span socket is left"; }
done
kill -KILL $target

# The command signalling its recorder (as a daemon tells its parent it is
# ready) does not end the recording, nor gets the signal back.
env --default-signal "$GTRACE" record -q -o self.data -- sh -c \
	'trap "echo got USR1 >got" USR1; kill -USR1 $PPID; sleep 0.2; echo done >done' \
	</dev/null 2>stderr
status=$?
[ $status -eq 0 ] || { show stderr; fail "a command signalling gtrace: gtrace exited with $status"; }
[ -e done ] && [ ! -e got ] || fail "the command's signal to gtrace was passed back to it"
ended_cleanly self.data

# Killed outright: nothing can finish the file, but the socket still goes.
rm -f target.pid
"$GTRACE" record -q -o killed.data -- sh -c \
	'echo "$GTRACE_TARGET_SOCKET" >socket.path; echo $$ >target.pid; exec sleep 60' \
	</dev/null 2>stderr &
gtrace_pid=$!
wait_for target.pid
kill -KILL $gtrace_pid
wait $gtrace_pid 2>/dev/null
kill -KILL "$(cat target.pid)"
tries=0
while [ -e "$(dirname "$(cat socket.path)")" ]; do
	tries=$((tries + 1))
	[ $tries -le 400 ] || fail "the span socket of a killed recorder is left"
	sleep 0.05
done
