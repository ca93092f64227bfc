#!/bin/bash
# SPDX-License-Identifier: MIT
#
# How late CUPTI's activity buffers reach the CUDA agent, with the test
# doubles of tests/cuda (no GPU needed): fake-app launching LAUNCHES
# kernels of 100 ns over 500 names on two streams, recorded by gtrace. The
# fake CUPTI hands a buffer over once it is full and the work of all its
# records has ended (its worker, every 100 ms), or at a flush; the agent
# measures, per record, the time from the work's end to its buffer's
# arrival (cuda.delay.*). Shown per run: the largest and the mean delay,
# the buffers delivered, and the records whose API call the agent no
# longer knew (cuda.no-origin: the origin table wrapped). To compare
# buffer sizes, run it on two builds (BUILD=...).
#
# usage: bench/cuda-delay.sh   (REPEAT=3 LAUNCHES=200000 BUILD=build)

. "$(dirname "$0")/lib.sh"

REPEAT=${REPEAT:-3}
LAUNCHES=${LAUNCHES:-200000}
APP=$CUDA_DIR/fake-app
use_cuda_doubles "$APP" "$BUILD/libgtrace-cuda.so"

# counter FILE NAME: a counter of gtrace diagnose output, 0 when absent.
counter() {
	awk -v name="$2" '$1 == name { print $2; found = 1; exit } END { if (!found) print 0 }' "$1"
}

echo "delay: $LAUNCHES launches over 500 names"
for round in $(seq "$REPEAT"); do
	"$GTRACE" record -q -o "$WORK/delay.data" -- "$APP" --kernels "$LAUNCHES" >/dev/null
	"$GTRACE" diagnose -i "$WORK/delay.data" >"$WORK/diag"
	max=$(counter "$WORK/diag" cuda.delay.max-us)
	sum=$(counter "$WORK/diag" cuda.delay.sum-us)
	n=$(counter "$WORK/diag" cuda.delay.records)
	echo "$max" >>"$WORK/max"
	awk -v s="$sum" -v n="$n" 'BEGIN { printf "%.0f\n", n ? s / n : 0 }' >>"$WORK/mean"
	printf '  round %d: delay max %.1f ms, mean %.1f ms; %s buffers, %s records without origin\n' \
		"$round" "$(awk -v v="$max" 'BEGIN { print v / 1000 }')" \
		"$(awk -v v="$(tail -n 1 "$WORK/mean")" 'BEGIN { print v / 1000 }')" \
		"$(counter "$WORK/diag" cuda.buffers)" "$(counter "$WORK/diag" cuda.no-origin)"
done
awk -v max="$(median <"$WORK/max")" -v mean="$(median <"$WORK/mean")" 'BEGIN {
	printf "  median: delay max %.1f ms, mean %.1f ms\n", max / 1000, mean / 1000 }'
