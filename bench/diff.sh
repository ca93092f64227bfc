#!/bin/bash
# SPDX-License-Identifier: MIT
#
# gtrace diff's figures (issue 10), each with the regress workload
# (tests/workloads/regress.c) recorded RUN_SECONDS (2) at 999 Hz:
#
#   false positives  PAIRS (20) pairs of unchanged runs: the share of
#                    pairs with any significant row (goal: at most 1 in 20)
#   smallest         the smallest slowdown of a function holding 10% of the
#                    samples that diff flags as a regression in at least 4
#                    of REPEATS (5) pairs, for slowdowns of 5..50%
#   speed            wall time and peak memory of gtrace diff on two
#                    recordings of about SAMPLES (1,000,000) samples of
#                    deep stacks (recurse on every CPU at 20000 Hz, frame
#                    pointers), against perf diff on perf.data files of
#                    the same workloads (skipped without perf)
#
# usage: bench/diff.sh   (PAIRS=20 REPEATS=5 RUN_SECONDS=2 SAMPLES=1000000 BUILD=build)

. "$(dirname "$0")/lib.sh"

PAIRS=${PAIRS:-20}
REPEATS=${REPEATS:-5}
SECONDS_RUN=${RUN_SECONDS:-2}
SAMPLES=${SAMPLES:-1000000}
MAX_SECONDS=${MAX_SECONDS:-60}
REGRESS=$WORKLOADS/regress
[ -x "$REGRESS" ] || { echo "bench: no '$REGRESS': run make tests first" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench: needs GNU time in /usr/bin/time (package time)" >&2; exit 1; }

# rec NAME ARGS...: records regress ARGS into NAME.data.
rec() {
	local name=$1
	shift
	"$GTRACE" record -q -F 999 -o "$WORK/$name.data" -- "$REGRESS" "$@"
}

# significant BASE NEW: how many rows of the diff are significant.
significant() {
	"$GTRACE" diff --format json "$WORK/$1.data" "$WORK/$2.data" 2>/dev/null |
		grep -c '"significant": true' || true
}

# target_regressed BASE NEW: 1 when target is a regression, else 0.
target_regressed() {
	"$GTRACE" diff --format json "$WORK/$1.data" "$WORK/$2.data" 2>/dev/null |
		grep -c '"name": "target", "where": "regress", "status": "regression"' || true
}

say "$REGRESS $SECONDS_RUN, recorded twice per pair, $PAIRS pairs: gtrace diff BASE NEW"
flagged=0
for i in $(seq "$PAIRS"); do
	rec a "$SECONDS_RUN"
	rec b "$SECONDS_RUN"
	[ "$(significant a b)" -gt 0 ] && flagged=$((flagged + 1))
done
echo "false positives: $flagged of $PAIRS unchanged pairs had a significant row"

say "$REGRESS $SECONDS_RUN 0 10 against $REGRESS $SECONDS_RUN SLOWER 10, $REPEATS pairs each"
smallest=none
for slower in 5 10 15 20 30 40 50; do
	hits=0
	for i in $(seq "$REPEATS"); do
		rec base "$SECONDS_RUN" 0 10
		rec slow "$SECONDS_RUN" "$slower" 10
		hits=$((hits + $(target_regressed base slow)))
	done
	echo "target (10% of the samples) ${slower}% slower: a regression in $hits of $REPEATS pairs"
	if [ "$smallest" = none ] && [ $((hits * 5)) -ge $((REPEATS * 4)) ]; then
		smallest=$slower
	fi
done
echo "smallest regression found in 4 of 5 pairs: ${smallest}%"

cpus=$(nproc)
workload() {
	echo "for i in \$(seq $cpus); do $WORKLOADS/recurse 60 $1 & done; wait"
}
"$GTRACE" record -q -F 20000 --call-graph fp -o "$WORK/calibrate.data" -- sh -c "$(workload 2)"
rate=$(( $(gtrace_samples "$WORK/calibrate.data") / 2 ))
run_seconds=$(seconds_for "$rate")
for side in base new; do
	say "$GTRACE record -q -F 20000 --call-graph fp -o $side.data -- sh -c '$(workload "$run_seconds")'"
	"$GTRACE" record -q -F 20000 --call-graph fp -o "$WORK/$side.data" -- \
		sh -c "$(workload "$run_seconds")"
done
timed gdiff "$GTRACE" diff "$WORK/base.data" "$WORK/new.data"
read -r wall rss <"$WORK/gdiff.result"
echo "gtrace diff: $(gtrace_samples "$WORK/base.data") and $(gtrace_samples "$WORK/new.data") samples: ${wall} s, ${rss} KiB peak"
if command -v "$PERF" >/dev/null; then
	for side in base new; do
		"$PERF" record -q -F 20000 -g -o "$WORK/$side.perf" -- \
			sh -c "$(workload "$run_seconds")" 2>/dev/null
	done
	timed pdiff "$PERF" diff "$WORK/base.perf" "$WORK/new.perf"
	read -r wall rss <"$WORK/pdiff.result"
	echo "perf diff: $(perf_samples "$WORK/base.perf") and $(perf_samples "$WORK/new.perf") samples: ${wall} s, ${rss} KiB peak"
else
	echo "perf diff: skipped (no perf)"
fi
