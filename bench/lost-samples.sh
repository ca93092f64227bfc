#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Samples lost at high rates (issue 11): recurse, DEPTH (30) frames deep on
# THREADS (8) CPU-bound threads for SECONDS (3), recorded at each of FREQS
# (999 10000 20000) by gtrace with DWARF unwinding and with frame pointers,
# and by perf record -g and --call-graph dwarf; for each, the samples kept
# and lost, and the slowdown: the work recurse did bare over the work it did
# recorded, in the same time. The target runs without frame pointers for
# dwarf and with them for fp, as perf's would.
#
# usage: bench/lost-samples.sh   (SECONDS=3 DEPTH=30 THREADS=8 FREQS="999 10000 20000")

. "$(dirname "$0")/lib.sh"

RUN=${RUN_SECONDS:-3}
DEPTH=${DEPTH:-30}
THREADS=${THREADS:-8}
FREQS=${FREQS:-999 10000 20000}

# descents NAME: the work recurse reported in $WORK/NAME.out.
descents() {
	sed -n 's/^descents: //p' "$WORK/$1.out"
}

# slowdown BARE NAME: bare work over NAME's.
slowdown() {
	awk -v b="$(descents "$1")" -v t="$(descents "$2")" 'BEGIN { printf "%.2f", t ? b / t : 0 }'
}

for flavour in recurse recurse-nofp; do
	say "$WORKLOADS/$flavour $DEPTH $RUN $THREADS"
	"$WORKLOADS/$flavour" "$DEPTH" "$RUN" "$THREADS" >"$WORK/bare-$flavour.out"
done

printf '%-12s %6s %9s %9s %8s %9s\n' setup Hz samples lost lost-% slowdown
for freq in $FREQS; do
	for mode in dwarf fp; do
		target=recurse-nofp
		[ $mode = fp ] && target=recurse
		say "$GTRACE record -q -F $freq --call-graph $mode -- $target $DEPTH $RUN $THREADS"
		"$GTRACE" record -q -F "$freq" --call-graph $mode -o "$WORK/g.data" -- \
			"$WORKLOADS/$target" "$DEPTH" "$RUN" "$THREADS" >"$WORK/g-$mode-$freq.out"
		"$GTRACE" diagnose -i "$WORK/g.data" --format json >"$WORK/g.json"
		read -r n lost < <(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(d["recorded"]["samples"], d["counters"].get("lost", 0))' "$WORK/g.json")
		printf '%-12s %6s %9s %9s %8.2f %9s\n' "gtrace-$mode" "$freq" "$n" "$lost" \
			"$(awk -v l="$lost" -v n="$n" 'BEGIN { print l + n ? 100 * l / (l + n) : 0 }')" \
			"$(slowdown "bare-$target" "g-$mode-$freq")"
		command -v "$PERF" >/dev/null || continue
		opt=-g
		[ $mode = dwarf ] && opt=--call-graph=dwarf
		say "$PERF record -q -F $freq $opt -- $target $DEPTH $RUN $THREADS"
		"$PERF" record -q -F "$freq" $opt -o "$WORK/p.data" -- \
			"$WORKLOADS/$target" "$DEPTH" "$RUN" "$THREADS" >"$WORK/p-$mode-$freq.out" 2>/dev/null
		n=$(perf_samples "$WORK/p.data")
		lost=$("$PERF" report -i "$WORK/p.data" --stats 2>/dev/null |
			awk '/LOST_SAMPLES events:/ && !/\(/ { print $NF; f = 1 } END { if (!f) print 0 }')
		printf '%-12s %6s %9s %9s %8.2f %9s\n' "perf-$mode" "$freq" "$n" "$lost" \
			"$(awk -v l="$lost" -v n="$n" 'BEGIN { print l + n ? 100 * l / (l + n) : 0 }')" \
			"$(slowdown "bare-$target" "p-$mode-$freq")"
	done
done
