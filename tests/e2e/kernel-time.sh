# SPDX-License-Identifier: MIT
# Time in system calls is sampled where the kernel allows it (root,
# CAP_PERFMON, perf_event_paranoid <= 1), with the kernel's frames, named
# from /proc/kallsyms, above the user stack that made the call (hidden by
# the views' --no-kernel); '-e EVENT:u' leaves it out, and an ordinary
# user at perf_event_paranoid 2 gets user time only, as perf falls back to
# ':u', and no kernel frame. diagnose says which.
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events

paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
record all.data -e cpu-clock -- "$WORKLOADS/syscalls" 0.5
run_gtrace diagnose -i all.data >all.diag
if [ "$(id -u)" -eq 0 ] || [ "$paranoid" -le 1 ]; then
	expect_contains all.diag '^event: +cpu-clock$'
	expect_contains all.diag "^kernel time: +sampled, the kernel's frames above the calling user stack\$"
	expect_contains all.diag '^kernel-frames: +kept, (named from /proc/kallsyms|unnamed: /proc/kallsyms hid)'
	run_gtrace flame -i all.data --folded >all.folded
	# Nearly all of read_zero's time is in read(2), under its caller, in
	# the kernel's frames of the read: its entry, and vfs_read or ksys_read
	# (or the zeroing, where kallsyms names nothing), for most.
	at_least "share of samples in read under read_zero" \
		"$(folded_share all.folded ';main;run_workload;read_zero;[^;]*read;')" 80
	if grep -q '^kernel-frames: +kept, named' all.diag; then
		at_least "share of samples in the kernel's read" \
			"$(folded_share all.folded ';read_zero;[^;]*read;.*(vfs_read|ksys_read|sys_read)')" 60
	fi
	run_gtrace report -i all.data --no-children >all.report
	expect_contains all.report ' syscalls +\[kernel\.kallsyms\] +'
	# Without them, the leaf is the system call's wrapper again.
	run_gtrace flame -i all.data --folded --no-kernel >user-only.folded
	at_least "share of samples in read under read_zero, --no-kernel" \
		"$(folded_share user-only.folded ';main;run_workload;read_zero;[^;]*read [0-9]+$')" 80
	run_gtrace report -i all.data --no-kernel >no-kernel.report
	expect_not_contains no-kernel.report 'kernel\.kallsyms'
	run_gtrace script -i all.data --no-kernel >no-kernel.script
	expect_not_contains no-kernel.script 'kernel\.kallsyms'
	# script lists the kernel's frames first, innermost, then the user's.
	run_gtrace script -i all.data >all.script
	awk '/cpu-clock/ { k = 0; next } /kernel\.kallsyms/ { k = 1; next }
		k && / read_zero \(/ { found = 1 } END { exit !found }' all.script ||
		fail "no sample with kernel frames above read_zero in script's output"
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
	expect_not_contains plain.diag '^kernel-frames:'
	run_gtrace report -i plain.data --no-children >plain.report
	expect_not_contains plain.report 'kernel\.kallsyms'
fi
exit 0
