# SPDX-License-Identifier: MIT
# --inline: report and flame show the functions the compiler inlined as
# frames of their own, under the function they were inlined into; without
# it they are part of it. hot's workload_mix is inlined into hot_leaf and
# compute_outer, where their loops spend their time.
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events

record hot.data -- "$WORKLOADS/hot" 0.5

# total FILE: the samples of folded stacks.
total() {
	awk '{ n += $NF } END { print n + 0 }' "$1"
}

run_gtrace flame -i hot.data --folded >plain.folded
run_gtrace flame -i hot.data --folded --inline >inline.folded
expect_not_contains plain.folded ';workload_mix[; ]'
expect_contains inline.folded ';main;run_workload;compute_outer;hot_leaf;workload_mix [0-9]+$'
expect_contains inline.folded ';main;run_workload;compute_outer;workload_mix [0-9]+$'
[ "$(total plain.folded)" -eq "$(total inline.folded)" ] ||
	fail "--inline has $(total inline.folded) samples, without it $(total plain.folded)"
# Each stack of the program's the same but for the inlined frames:
# workload.h's helpers (workload_arg inlined into itself, through strtod).
# Stacks outside main (a sample in the dynamic loader, whose functions
# inline others where libc's debug info is installed) are left out.
# merged FILE [SED]: main's folded stacks, edited by SED, summed and sorted.
merged() {
	grep ';main;' "$1" | sed "${2:-}" | awk '{ n[$1] += $2 } END { for (s in n) print s, n[s] }' |
		sort
}
merged plain.folded >plain.merged
merged inline.folded ':a
	s/;workload_\(mix\|now\)\([; ]\)/\2/
	ta
	s/;workload_arg;workload_arg;/;workload_arg;/' >inline.merged
diff -u plain.merged inline.merged >&2 || fail "--inline changed more than the inlined frames"
# hot_leaf's time is its inlined loop's.
hot=$(folded_samples inline.folded ';hot_leaf(;|[^;]* [0-9]+$)')
mix=$(folded_samples inline.folded ';hot_leaf;workload_mix [0-9]+$')
awk -v m="$mix" -v h="$hot" 'BEGIN { exit !(h > 0 && m >= 0.5 * h) }' ||
	{ show inline.folded; fail "$mix of hot_leaf's $hot samples in its inlined workload_mix"; }

# The tree: workload_mix under hot_leaf.
run_gtrace flame -i hot.data --inline --min-percent 0 >inline.tree
awk '/ hot_leaf$/ { depth = index($0, "hot_leaf"); next }
	depth && / workload_mix$/ && index($0, "workload_mix") > depth { found = 1 }
	END { exit !found }' inline.tree || { show inline.tree; fail "flame --inline: no workload_mix under hot_leaf"; }

# report: the self time moves from hot_leaf to workload_mix.
run_gtrace report -i hot.data --no-children >plain.report
run_gtrace report -i hot.data --no-children --inline >inline.report
expect_not_contains plain.report ' workload_mix$'
between "workload_mix's self share with --inline" "$(report_self inline.report workload_mix)" 50 100
between "hot_leaf's self share without --inline" "$(report_self plain.report hot_leaf)" 84 96
awk -v a="$(report_self inline.report hot_leaf)" -v b="$(report_self plain.report hot_leaf)" \
	'BEGIN { exit !(a < b) }' || fail "hot_leaf's self share did not shrink with --inline"
