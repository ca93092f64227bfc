# SPDX-License-Identifier: MIT
# gtrace record exits with the target's status, like the shell would, and
# still writes the recording.
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events

expect_exit 0 "$GTRACE" record -q -o ok.data -- true
# A recording with next to no samples still reads.
for cmd in report flame threads diagnose; do
	run_gtrace $cmd -i ok.data >/dev/null
done
expect_exit 3 "$GTRACE" record -q -o three.data -- sh -c 'exit 3'
[ -s three.data ] || fail "no recording for a target that exited with 3"

expect_exit 139 "$GTRACE" record -q -o crash.data -- "$WORKLOADS/crasher" 0.2
[ -s crash.data ] || fail "no recording for a target killed by SIGSEGV"
run_gtrace report -i crash.data --no-children >crash.txt
expect_contains crash.txt 'doomed_work$'

expect_exit 127 "$GTRACE" record -q -o missing.data -- ./no-such-command
expect_contains stderr 'no-such-command'

printf '#!/bin/sh\nexit 0\n' >not-executable
chmod 644 not-executable
expect_exit 126 "$GTRACE" record -q -o noexec.data -- ./not-executable
expect_contains stderr 'not-executable'
