#!/bin/bash
# SPDX-License-Identifier: MIT
#
# What the CUDA agent costs per kernel launch, and what a kernel costs in
# the file, with the test doubles of tests/cuda (no GPU needed): fake-app
# launching LAUNCHES kernels of 100 ns over 500 names on two streams.
#
#   launch  the process's CPU time per launch (all its threads: the API
#           callbacks on the launching thread, record processing on
#           CUPTI's threads, the spans' way to the recorder) in three
#           set-ups: the fake driver alone; the fake CUPTI with a
#           do-nothing client (tests/cuda/null-agent.c); gtrace record
#           with the agent. The agent's cost is the third minus the
#           second. Goal: at most 1 us. Also shown: the launch loop's time
#           per launch (the latency the application sees) and the CPU time
#           of gtrace record itself per launch.
#   size    100,000 kernels over 500 names, every detail kept: the file's
#           growth over a run of 1,000 kernels, per kernel (each launch
#           also leaves its cuLaunchKernel span on the CUDA API lane).
#           Goal: at most 4 bytes.
#
# Each set-up runs REPEAT (default 3) times; every run is shown, then the
# medians.
#
# usage: bench/cuda-launch.sh   (REPEAT=3 LAUNCHES=200000 BUILD=build)

. "$(dirname "$0")/lib.sh"

REPEAT=${REPEAT:-3}
LAUNCHES=${LAUNCHES:-200000}
CUDA_DIR=$BUILD/tests/cuda
APP=$CUDA_DIR/fake-app
for file in "$APP" "$CUDA_DIR/libcupti.so.13" "$CUDA_DIR/libnull-agent.so" \
	    "$BUILD/libgtrace-cuda.so"; do
	[ -e "$file" ] || { echo "bench: no '$file': configure with CUPTI, then make tests" >&2; exit 1; }
done
export LD_LIBRARY_PATH=$CUDA_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export GTRACE_CUPTI=$CUDA_DIR/libcupti.so.13
unset CUDA_INJECTION64_PATH NVTX_INJECTION64_PATH FAKE_CUPTI_FAULTS GTRACE_CUDA_AGENT

# figure OUT WHAT: from fake-app's output, the ns per launch of its line
# "launches in" (the loop) or "process CPU" (all threads).
figure() {
	awk -v what="$2" 'index($0, what) && /ns per launch$/ { print $(NF - 3); exit }' "$1"
}

# cpu_seconds CMD...: runs CMD (its output in $WORK/out) and prints the CPU
# seconds (user + system) of it and its children.
cpu_seconds() {
	local TIMEFORMAT='%U %S'

	{ time "$@" >"$WORK/out" 2>&1; } 2>"$WORK/time"
	awk '{ print $1 + $2 }' "$WORK/time"
}

echo "launch: $LAUNCHES launches over 500 names"
for setup in alone null-client gtrace; do
	: >"$WORK/$setup.cpu"
	: >"$WORK/$setup.loop"
	: >"$WORK/$setup.recorder"
done
for round in $(seq "$REPEAT"); do
	"$APP" --kernels "$LAUNCHES" >"$WORK/out"
	figure "$WORK/out" "process CPU" >>"$WORK/alone.cpu"
	figure "$WORK/out" "launches in" >>"$WORK/alone.loop"
	CUDA_INJECTION64_PATH=$CUDA_DIR/libnull-agent.so "$APP" --kernels "$LAUNCHES" >"$WORK/out"
	figure "$WORK/out" "process CPU" >>"$WORK/null-client.cpu"
	figure "$WORK/out" "launches in" >>"$WORK/null-client.loop"
	total=$(cpu_seconds "$GTRACE" record -q -o "$WORK/launch.data" -- "$APP" --kernels "$LAUNCHES")
	app=$(figure "$WORK/out" "process CPU")
	echo "$app" >>"$WORK/gtrace.cpu"
	figure "$WORK/out" "launches in" >>"$WORK/gtrace.loop"
	awk -v t="$total" -v app="$app" -v n="$LAUNCHES" \
		'BEGIN { printf "%.1f\n", t * 1e9 / n - app }' >>"$WORK/gtrace.recorder"
	printf '  round %d: CPU ns per launch: alone %s, null client %s, gtrace %s (recorder %s more);' \
		"$round" "$(tail -n 1 "$WORK/alone.cpu")" "$(tail -n 1 "$WORK/null-client.cpu")" \
		"$app" "$(tail -n 1 "$WORK/gtrace.recorder")"
	printf ' loop ns per launch: %s, %s, %s\n' "$(tail -n 1 "$WORK/alone.loop")" \
		"$(tail -n 1 "$WORK/null-client.loop")" "$(tail -n 1 "$WORK/gtrace.loop")"
done
null_cpu=$(median <"$WORK/null-client.cpu")
gtrace_cpu=$(median <"$WORK/gtrace.cpu")
echo "  median CPU ns per launch: alone $(median <"$WORK/alone.cpu"), null client $null_cpu," \
	"gtrace $gtrace_cpu, recorder $(median <"$WORK/gtrace.recorder")"
awk -v a="$gtrace_cpu" -v b="$null_cpu" 'BEGIN {
	printf "  the agent: %.0f ns of CPU per launch (goal: at most 1000)\n", a - b }'

echo "size: 100000 kernels over 500 names, against 1000"
for round in $(seq "$REPEAT"); do
	"$GTRACE" record -q -o "$WORK/small.data" -- "$APP" --kernels 1000 >/dev/null
	"$GTRACE" record -q -o "$WORK/large.data" -- "$APP" --kernels 100000 >/dev/null
	small=$(file_size "$WORK/small.data")
	large=$(file_size "$WORK/large.data")
	awk -v s="$small" -v l="$large" -v r="$round" 'BEGIN {
		printf "  round %d: %d and %d bytes: %.2f bytes per kernel\n", r, s, l, (l - s) / 99000 }' |
		tee -a "$WORK/size.txt"
done
echo "  median: $(awk '{ print $(NF - 3) }' "$WORK/size.txt" | median) bytes per kernel (goal: at most 4)"
