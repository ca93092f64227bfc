# SPDX-License-Identifier: MIT
# A binary without symbols: each of its functions is one report row, named
# after the dso and the first address its unwind table gives the function
# ("hot-stripped@0x1230"), at the address where the same binary with its
# symbols has that function.
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events
command -v nm >/dev/null || skip tools "nm (binutils) is not installed"

record plain.data -- "$WORKLOADS/hot-nofp" 0.5
record stripped.data -- "$WORKLOADS/hot-stripped" 0.5
run_gtrace report -i plain.data --no-children --dso hot-nofp >plain.txt
run_gtrace report -i stripped.data --no-children --dso hot-stripped >stripped.txt

# Each stripped row is a function's start; each function with 5% of the
# unstripped run's samples has its row (rarer ones may be missed by either run).
nm "$WORKLOADS/hot-nofp" | awk '$2 ~ /^[Tt]$/ { sub(/^0+/, "", $1); print "hot-stripped@0x" $1 }' |
	sort >starts
awk '$1 ~ /%$/ { print $NF }' stripped.txt | sort >stripped.funcs
comm -23 stripped.funcs starts >not-starts
[ ! -s not-starts ] ||
	{ show stripped.txt; show not-starts; fail "stripped rows that are no function's start"; }
for func in $(awk '$1 ~ /%$/ && $1 + 0 >= 5 { print $NF }' plain.txt); do
	addr=$(nm "$WORKLOADS/hot-nofp" | awk -v f="$func" '$3 == f { sub(/^0+/, "", $1); print $1 }')
	[ -n "$addr" ] || fail "no address for '$func' in hot-nofp"
	grep -qx "hot-stripped@0x$addr" stripped.funcs ||
		{ show plain.txt; show stripped.txt; fail "'$func' has no row at its start 0x$addr"; }
done
# hot_leaf's share, under its start address.
leaf=$(nm "$WORKLOADS/hot-nofp" | awk '$3 == "hot_leaf" { sub(/^0+/, "", $1); print $1 }')
at_least "hot_leaf's share in the stripped binary" "$(report_self stripped.txt "hot-stripped@0x$leaf")" 80
exit 0
