# SPDX-License-Identifier: MIT
# A stack more than 100 frames deep is unwound to the end, with and without
# frame pointers.
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events

for flavour in recurse recurse-nofp; do
	record $flavour.data -- "$WORKLOADS/$flavour" 100 0.6
	run_gtrace flame -i $flavour.data --folded >$flavour.folded
	expect_contains $flavour.folded ';main;run_recursion;recurse_down;recurse_down;'
	# Samples in recurse_leaf whose stack holds all 100 levels and main.
	awk '{ total += $NF }
	     /;main;run_recursion;recurse_down;/ && /;recurse_leaf [0-9]+$/ {
		if (gsub(/;recurse_down/, "&") >= 100) deep += $NF }
	     END { print total ? int(100 * deep / total) : 0 }' \
		$flavour.folded >share
	at_least "$flavour: share of samples unwound through all 100 levels to main" \
		"$(cat share)" 80
done
