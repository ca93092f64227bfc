# SPDX-License-Identifier: MIT
# Time in system calls is sampled where the kernel allows it (root,
# CAP_PERFMON, perf_event_paranoid <= 1), charged to the user stack that
# made the call; '-e EVENT:u' leaves it out, and an ordinary user at
# perf_event_paranoid 2 gets user time only, as perf falls back to ':u'.
# diagnose says which.
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events

paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
record all.data -e cpu-clock -- "$WORKLOADS/syscalls" 0.5
run_gtrace diagnose -i all.data >all.diag
if [ "$(id -u)" -eq 0 ] || [ "$paranoid" -le 1 ]; then
	expect_contains all.diag '^event: +cpu-clock$'
	expect_contains all.diag '^kernel time: +sampled, charged to the calling user stack$'
	run_gtrace flame -i all.data --folded >all.folded
	# Nearly all of read_zero's time is in read(2), under its caller.
	at_least "share of samples in read under read_zero" \
		"$(folded_share all.folded ';main;run_workload;read_zero;[^;]*read [0-9]+$')" 80
else
	expect_contains all.diag '^kernel time: +not sampled: refused; '
fi

record user.data -e cpu-clock:u -- "$WORKLOADS/syscalls" 0.5
run_gtrace diagnose -i user.data >user.diag
expect_contains user.diag '^event: +cpu-clock:u$'
expect_contains user.diag "^kernel time: +not sampled \\(':u' asked for user time only\\)\$"
run_gtrace report -i user.data >user.report
expect_contains user.report "^# Samples: [0-9]+ of event 'cpu-clock:u'\$"
# Samples per ms on the CPU (a loaded machine gives the two runs different
# times on it): all of it sampled, at 999 Hz; user time alone, under a
# third of that.
if grep -q '^kernel time: +sampled' all.diag; then
	run_gtrace threads -i all.data >all.threads
	run_gtrace threads -i user.data >user.threads
	all_samples=$(diagnose_value all.diag samples)
	all_ms=$(thread_column all.threads syscalls 5)
	all_rate=$(awk -v n="$all_samples" -v ms="$all_ms" 'BEGIN { print n / ms }')
	user_rate=$(awk -v n="$(diagnose_value user.diag samples)" \
		-v ms="$(thread_column user.threads syscalls 5)" 'BEGIN { print n / ms }')
	sampled_for "samples in $all_ms ms on the CPU, kernel time too" "$all_samples" "$all_ms" 999
	awk -v u="$user_rate" -v a="$all_rate" 'BEGIN { exit !(u * 3 < a) }' ||
		fail "user time alone gave $user_rate samples per ms on the CPU, with the kernel's $all_rate: expected under a third"
fi

# An ordinary user where perf_event_paranoid is 2: user time, said so.
if [ "$paranoid" -eq 2 ]; then
	mkdir user && chmod 1777 user && cd user || exit 1
	as_unprivileged "$GTRACE" record -q -o plain.data -- "$WORKLOADS/syscalls" 0.2 \
		>out.txt 2>err.txt </dev/null || { show err.txt; fail "unprivileged record failed"; }
	run_gtrace diagnose -i plain.data >plain.diag
	expect_contains plain.diag '^event: +cpu-clock:u$|^event: +cycles:u$'
	expect_contains plain.diag '^kernel time: +not sampled: refused; root, CAP_PERFMON or perf_event_paranoid <= 1 allows it$'
fi
exit 0
