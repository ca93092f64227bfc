# SPDX-License-Identifier: MIT
# diagnose describes the recording: what ran, for how long, how it was
# sampled, what was lost, how well it unwound and symbolized, the file.
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events

record diag.data -F 499 -- "$WORKLOADS/hot" 0.5
run_gtrace diagnose -i diag.data >diag.txt
for key in command duration event frequency samples lost throttled unwinding \
	   complete symbols chunks bytes ratio kernel perf_event_paranoid ended; do
	grep -iq -- "$key" diag.txt || { show diag.txt; fail "diagnose does not mention '$key'"; }
done
expect_contains diag.txt 'hot'
expect_contains diag.txt '499'
expect_contains diag.txt 'cpu-clock|cycles'
expect_contains diag.txt '^ended: +cleanly'
at_least "unwind complete in diagnose" "$(diagnose_percent diag.txt complete)" 95
