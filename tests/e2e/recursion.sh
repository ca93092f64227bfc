# SPDX-License-Identifier: MIT
# A stack more than 100 frames deep is unwound to the end, with and without
# frame pointers; with frame pointers, a stack copy too small for it is
# carried on by the kernel's frame-pointer chain, every level once; without
# them, the recording's summary says the copy was too small, and what to ask.
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events

for flavour in recurse recurse-nofp; do
	run_gtrace record -o $flavour.data -- "$WORKLOADS/$flavour" 100 0.6
	expect_contains "$TESTDIR/stderr" '^gtrace: recorded [0-9]+ samples'
	expect_not_contains "$TESTDIR/stderr" 'bytes copied'
	run_gtrace flame -i $flavour.data --folded >$flavour.folded
	expect_contains $flavour.folded ';main;run_recursion;recurse_down;recurse_down;'
	# Samples in recurse_leaf whose stack holds the 100 levels, each once,
	# and main; none with more.
	awk '{ total += $NF }
	     /;main;run_recursion;recurse_down;/ && /;recurse_leaf [0-9]+$/ {
		levels = gsub(/;recurse_down/, "&")
		if (levels == 100) deep += $NF
		if (levels > 100) over += $NF
	     }
	     END { print total ? int(100 * deep / total) : 0, over + 0 }' \
		$flavour.folded >share
	read -r deep over <share
	at_least "$flavour: share of samples unwound through all 100 levels to main" "$deep" 80
	[ "$over" -eq 0 ] || fail "$flavour: $over samples with more than 100 levels"
done

record short.data --call-graph dwarf,2048 -- "$WORKLOADS/recurse" 100 0.6
run_gtrace flame -i short.data --folded >short.folded
awk '{ total += $NF }
     /;main;run_recursion;recurse_down;/ && /;recurse_leaf [0-9]+$/ {
	levels = gsub(/;recurse_down/, "&")
	if (levels == 100) exact += $NF
	if (levels > 100) over += $NF
     }
     END { print total ? int(100 * exact / total) : 0, over + 0 }' short.folded >share
read -r exact over <share
at_least "share of samples through a 2 KiB copy with all 100 levels and main" "$exact" 80
[ "$over" -eq 0 ] || fail "$over samples with more than 100 levels: frames repeated at the join"
run_gtrace diagnose -i short.data >short.diag
at_least "complete.fp-tail share" "$(diagnose_percent short.diag complete.fp-tail)" 80

run_gtrace record -o cut.data --call-graph dwarf,2048 -- "$WORKLOADS/recurse-nofp" 100 0.6
expect_contains "$TESTDIR/stderr" \
	'^gtrace: warning: [0-9]+% of the stacks ran deeper than the 2048 bytes copied of each, and end early; try --call-graph dwarf,65528$'
