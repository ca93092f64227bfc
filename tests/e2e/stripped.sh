# SPDX-License-Identifier: MIT
# A binary without symbols: each of its functions is one report row, named
# after the dso and the first address its unwind table gives the function
# ("hot-stripped@0x1230"), one to one with the functions of the same
# binary with its symbols, at the same addresses.
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events
command -v nm >/dev/null || skip "nm (binutils) is not installed"

record plain.data -- "$WORKLOADS/hot-nofp" 0.5
record stripped.data -- "$WORKLOADS/hot-stripped" 0.5
run_gtrace report -i plain.data --no-children --dso hot-nofp >plain.txt
run_gtrace report -i stripped.data --no-children --dso hot-stripped >stripped.txt

# Each function of the unstripped run, by its address, and its row in the stripped one.
awk '$1 ~ /%$/ { print $NF }' plain.txt | sort >plain.funcs
awk '$1 ~ /%$/ { print $NF }' stripped.txt | sort >stripped.funcs
for func in $(cat plain.funcs); do
	addr=$(nm "$WORKLOADS/hot-nofp" | awk -v f="$func" '$3 == f { sub(/^0+/, "", $1); print $1 }')
	[ -n "$addr" ] || fail "no address for '$func' in hot-nofp"
	echo "hot-stripped@0x$addr"
done | sort >expected.funcs
cmp -s expected.funcs stripped.funcs ||
	{ show plain.txt; show stripped.txt; fail "the stripped rows are not the functions' starts one to one"; }
# hot_leaf's share, under its start address.
leaf=$(nm "$WORKLOADS/hot-nofp" | awk '$3 == "hot_leaf" { sub(/^0+/, "", $1); print $1 }')
at_least "hot_leaf's share in the stripped binary" "$(report_self stripped.txt "hot-stripped@0x$leaf")" 80
exit 0
