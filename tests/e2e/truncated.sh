# SPDX-License-Identifier: MIT
# A recording cut short (a full disk, a killed recorder) still reads: the
# whole chunks before the cut are used and a warning says what was lost.
# Cut inside the header, it is a clean error. Never a crash.
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events

# Long enough for several data chunks (the recorder ends one every second).
record full.data -- "$WORKLOADS/hot" 2.5
size=$(wc -c <full.data)
run_gtrace diagnose -i full.data >full.txt
expect_contains full.txt '^ended: +cleanly'
full_samples=$(diagnose_value full.txt samples)

for cut in 1 8 16 32 64 $((size / 4)) $((size / 2)) $((size * 3 / 4)) $((size - 100)) $((size - 1)); do
	if [ $cut -le 0 ] || [ $cut -ge "$size" ]; then continue; fi
	head -c $cut full.data >cut.data
	for cmd in report flame threads diagnose; do
		"$GTRACE" $cmd -i cut.data >out.txt 2>err.txt </dev/null
		status=$?
		case $status in
		0)
			expect_contains err.txt "warning: 'cut.data' is (truncated|damaged)"
			;;
		1)
			[ "$(wc -l <err.txt)" -eq 1 ] ||
				{ show err.txt; fail "$cmd on a file cut at $cut bytes: not one error line"; }
			;;
		*)
			show err.txt
			fail "$cmd on a file cut at $cut of $size bytes exited with $status"
			;;
		esac
	done
done

# Cut in the last chunk of rows: diagnose says so, and the samples of the
# chunks before the cut are there.
cut_in_last_chunk full.data cut.data
run_gtrace diagnose -i cut.data >cut.txt
expect_contains cut.txt '^ended: +truncated'
cut_samples=$(diagnose_value cut.txt samples)
at_least "samples read before the cut" "$cut_samples" 1
[ "$cut_samples" -lt "$full_samples" ] ||
	fail "the cut file has $cut_samples samples, the whole one $full_samples"
run_gtrace report -i cut.data --no-children >report.txt
expect_contains report.txt '^ *[0-9.]+%'
