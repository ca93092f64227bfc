# SPDX-License-Identifier: MIT
# Span attributes, counters and meta through the span channel, with the
# lanes example: every attribute of every span reaches the file, a counter
# set by two processes is recorded as their sum, and meta as the last value.
. "$SRCDIR/tests/e2e/lib.sh"

LANES=$WORKLOADS/lanes
[ -x "$LANES" ] || fail "the lanes example is not built ($LANES): run make tests"
need_perf_events

# other_counter FILE NAME: a counter in diagnose's "other counters" list, or -1.
other_counter() {
	awk -v name="$2" '
		/^other counters:/ { on = 1; next }
		on && !/^ / { on = 0 }
		on && $1 == name && $2 ~ /^[0-9]+$/ { print $2; found = 1; exit }
		END { if (!found) print -1 }' "$1"
}

# 2 threads of 400 spans and a child of 100, each span with 12 attributes.
record attrs.data -- "$LANES" --wait-active 5 --attrs --threads 2 --spans 400 --fork >attrs.out
reported=0
for pid in $(awk '/^lanes: pid / { print $3 }' attrs.out); do
	dropped=$(awk -v pid="$pid" '$3 == pid { print $8 }' attrs.out)
	[ "$dropped" = 0 ] || { show attrs.out; fail "pid $pid dropped $dropped spans"; }
	reported=$((reported + $(awk -v pid="$pid" '$3 == pid { print $5 }' attrs.out)))
done
[ "$reported" = 900 ] || { show attrs.out; fail "$reported spans reported, expected 900"; }
run_gtrace diagnose -i attrs.data >attrs.txt
for check in spans=900 span-attrs=10800 processes=2 dropped.bad-message=0; do
	got=$(target_counter attrs.txt "${check%%=*}")
	[ "$got" = "${check#*=}" ] ||
		{ show attrs.txt; fail "target.${check%%=*} is $got, expected ${check#*=}"; }
done
got=$(other_counter attrs.txt lanes.attr-spans)
[ "$got" = 900 ] || { show attrs.txt; fail "counter lanes.attr-spans is $got, expected 900"; }
got=$(awk '$1 == "lanes.mode:" { print $2 }' attrs.txt)
[ "$got" = attrs ] || { show attrs.txt; fail "meta lanes.mode is '$got', expected 'attrs'"; }

# Without --attrs: no attribute rows, no counter, no meta.
record plain.data -- "$LANES" --wait-active 5 --spans 100 >plain.out
run_gtrace diagnose -i plain.data >plain.txt
got=$(target_counter plain.txt span-attrs)
[ "$got" = 0 ] || { show plain.txt; fail "target.span-attrs is $got without attributes"; }
expect_not_contains plain.txt "lanes.attr-spans"
expect_not_contains plain.txt "lanes.mode"
