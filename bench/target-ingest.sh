#!/bin/bash
# SPDX-License-Identifier: MIT
#
# How fast gtrace record takes in lane spans, and what a span costs in the
# file, with the lanes example (tests/workloads/lanes.c) reporting from 2
# threads with no CPU work between spans (--burst).
#
#   ingest  each RATE (spans a second, both threads together) is paced for
#           SECS seconds: the spans the file holds per second, the spans
#           dropped (by the library's full queue, or lost on the way), and
#           whether recorded + dropped adds up to all the spans reported.
#           The highest rate with no drop is the sustained rate.
#   size    100,000 spans over 500 names, with origins, paced so that none
#           is dropped: the file's growth over the same run with no spans,
#           per span; and a run whose threads work 20 us per span (so the
#           file holds their samples too): its whole size per span.
#
# usage: bench/target-ingest.sh   (RATES="1000000 2000000 ..." SECS=3 BUILD=build)

. "$(dirname "$0")/lib.sh"

RATES=${RATES:-"1000000 2000000 3000000 4000000 6000000 8000000 12000000"}
SECS=${SECS:-3}
LANES=$WORKLOADS/lanes
[ -x "$LANES" ] || { echo "bench: no '$LANES': run make tests first" >&2; exit 1; }

# counter DIAGNOSE-FILE NAME: a target counter from gtrace diagnose output.
counter() {
	awk -v name="$2" '/^target:/ { on = 1; next } on && !/^ / { on = 0 }
		on && $1 == name { print $2; exit }' "$1"
}

# lanes_field OUT-FILE N: field N of the "lanes: pid P reported N spans, dropped D" line.
lanes_field() {
	awk -v n="$2" '/^lanes: pid / { v = $n } END { print v + 0 }' "$1"
}

# ratio A B: A / B, with decimals.
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.6f", a / b }'
}

# record_lanes OUT ARGS...: records lanes ARGS into $WORK/OUT.data, its output
# in $WORK/OUT.out and gtrace diagnose's in $WORK/OUT.diag.
record_lanes() {
	local out=$WORK/$1
	shift
	say gtrace record -- lanes "$@"
	"$GTRACE" record -q -o "$out.data" -- "$LANES" --wait-active 5 "$@" >"$out.out"
	"$GTRACE" diagnose -i "$out.data" >"$out.diag"
}

echo "== sustained ingestion: 2 threads, $SECS s per rate"
rows=()
best=0
for rate in $RATES; do
	record_lanes rate --burst --threads 2 --rate "$rate" --run-ms $((SECS * 1000))
	reported=$(lanes_field "$WORK/rate.out" 5)
	lib_dropped=$(lanes_field "$WORK/rate.out" 8)
	spans=$(counter "$WORK/rate.diag" spans)
	dropped=0
	for reason in queue-full unsent no-run wrong-pid bad-message; do
		dropped=$((dropped + $(counter "$WORK/rate.diag" "dropped.$reason")))
	done
	if [ $((spans + dropped)) -eq $((reported + lib_dropped)) ]; then exact=yes; else exact=NO; fi
	rows+=("$(printf '%12d %12d %14.0f %10d %7s' "$rate" "$spans" \
		"$(ratio "$spans" "$SECS")" "$dropped" "$exact")")
	if [ "$dropped" -eq 0 ] && [ "$exact" = yes ] && [ "$rate" -gt "$best" ]; then
		best=$rate
	fi
done
printf '%12s %12s %14s %10s %7s\n' "rate/s" "recorded" "recorded/s" "dropped" "exact"
printf '%s\n' "${rows[@]}"
echo "highest rate with no drop: $best spans/s"

echo
echo "== size: 100,000 spans over 500 names, with origins"
record_lanes base --burst --threads 2 --spans 0 --names 500
record_lanes paced --burst --threads 2 --spans 50000 --names 500 --rate 100000
record_lanes work --threads 2 --spans 50000 --names 500
base=$(file_size "$WORK/base.data")
for run in paced work; do
	spans=$(counter "$WORK/$run.diag" spans)
	size=$(file_size "$WORK/$run.data")
	[ "$spans" -eq 100000 ] || echo "warning: $run recorded $spans spans, not 100000" >&2
	if [ $run = paced ]; then
		printf '%-30s %8d bytes more than no spans: %.2f bytes/span\n' \
			"no CPU work:" $((size - base)) "$(ratio $((size - base)) "$spans")"
	else
		printf '%-30s %8d bytes in all, samples too: %.2f bytes/span\n' \
			"20 us of CPU work per span:" "$size" "$(ratio "$size" "$spans")"
	fi
done
