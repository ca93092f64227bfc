# SPDX-License-Identifier: MIT
# Attached (-p) to a program that sleeps, computes 0.3 s of CPU time, then
# sleeps again, threads gives its times as they were: the sleep before the
# attach found it asleep is off the CPU (it starts in the state /proc
# says, not on the CPU), the sleep it is in when the recording stops is
# off the CPU up to the end, so on and off make up the whole recording.
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events
need_python3

python3 -c '
import os, time
open("ready", "w").write(str(os.getpid()))
time.sleep(1.0)
t0 = time.thread_time()
while time.thread_time() - t0 < 0.3:
    pass
time.sleep(30)' </dev/null &
target=$!
wait_for ready
run_gtrace record -q -o attach.data -p $target --duration 2.5
kill $target
wait $target 2>/dev/null

run_gtrace threads -i attach.data >threads.txt
on=$(thread_column threads.txt python3 5)
off=$(thread_column threads.txt python3 6)
last=$(thread_column threads.txt python3 8)
[ -n "$on" ] || { show threads.txt; fail "no thread named python3"; }
# 0.3 s of CPU time, whatever the machine's load; a little more for the
# interpreter around it.
between "on-CPU ms" "$on" 250 450
at_least "off-CPU ms (asleep before and after)" "$off" 1800
# The last sleep lasts to the end of the recording: --duration's 2.5 s.
between "the thread's Last s" "$last" 2.4 2.7
exit 0
