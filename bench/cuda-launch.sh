#!/bin/bash
# SPDX-License-Identifier: MIT
#
# What the CUDA agent costs per kernel launch, and what a kernel costs in
# the file, with the test doubles of tests/cuda (no GPU needed).
#
#   launch  LAUNCHES launches of 100 ns kernels on two kinds of program:
#           driver   fake-app --kernels: cuLaunchKernel over 500 names on
#                    two streams
#           runtime  fake-rt-app --kernels: cudaGetDevice, cudaLaunchKernel
#                    (a cuLaunchKernel inside) and cudaGetLastError per
#                    launch, as frameworks launch
#           For each, the process's CPU time per launch (all its threads:
#           the API callbacks on the launching thread, record processing
#           on CUPTI's threads, the spans' way to the recorder) in three
#           set-ups: the program alone; with the fake CUPTI and a
#           do-nothing client (tests/cuda/null-agent.c); under gtrace
#           record with the agent. The agent's cost is the third minus the
#           second. Goal: at most 1 us. Also shown: the launch loop's time
#           per launch (the latency the application sees), the CPU time
#           of gtrace record itself per launch, and the spans written per
#           launch (kernels and CUDA API calls, dropped ones included).
#           BASELINE_AGENT=path adds a fourth set-up, gtrace record with
#           that agent (an older build), in the same rounds.
#   size    100,000 kernels over 500 names, every detail kept: the file's
#           growth over a run of 1,000 kernels, per kernel (each launch
#           also leaves its cuLaunchKernel span on the CUDA API lane).
#           Goal: at most 4 bytes.
#
# Each set-up runs REPEAT (default 3) times; every run is shown, then the
# medians.
#
# usage: bench/cuda-launch.sh   (REPEAT=3 LAUNCHES=200000 BUILD=build
#                                AGENT=$BUILD/libgtrace-cuda.so BASELINE_AGENT=)

. "$(dirname "$0")/lib.sh"

REPEAT=${REPEAT:-3}
LAUNCHES=${LAUNCHES:-200000}
APP=$CUDA_DIR/fake-app
RT_APP=$CUDA_DIR/fake-rt-app
AGENT=${AGENT:-$BUILD/libgtrace-cuda.so}
BASELINE_AGENT=${BASELINE_AGENT:-}
use_cuda_doubles "$APP" "$RT_APP" "$CUDA_DIR/libnull-agent.so" "$AGENT" \
	${BASELINE_AGENT:+"$BASELINE_AGENT"}

# figure OUT WHAT: from the program's output, the ns per launch of its line
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

# spans_per_launch FILE: the spans the program's processes wrote per
# launch, from FILE: those recorded, and those dropped on the way (the
# launching thread can outrun the drain of its lane).
spans_per_launch() {
	"$GTRACE" diagnose -i "$1" 2>/dev/null |
		awk -v n="$LAUNCHES" '/^spans:/ { spans = $2 }
			/^spans dropped:/ { sub(/.* of /, ""); spans = $1 }
			END { printf "%.2f\n", spans / n }'
}

# under_gtrace SETUP AGENT CMD...: one round of CMD under gtrace record
# with AGENT; appends its figures to $WORK/SETUP.*.
under_gtrace() {
	local setup=$1 agent=$2 total app
	shift 2

	total=$(GTRACE_CUDA_AGENT=$agent cpu_seconds "$GTRACE" record -q -o "$WORK/launch.data" -- "$@")
	app=$(figure "$WORK/out" "process CPU")
	echo "$app" >>"$WORK/$setup.cpu"
	figure "$WORK/out" "launches in" >>"$WORK/$setup.loop"
	awk -v t="$total" -v app="$app" -v n="$LAUNCHES" \
		'BEGIN { printf "%.1f\n", t * 1e9 / n - app }' >>"$WORK/$setup.recorder"
	spans_per_launch "$WORK/launch.data" >>"$WORK/$setup.spans"
}

# bench_launches NAME CMD...: the launch figures of one program.
bench_launches() {
	local name=$1 setups="alone null-client gtrace" setup null_cpu
	shift

	[ -z "$BASELINE_AGENT" ] || setups="$setups baseline"
	echo "launch ($name): $LAUNCHES launches: $*"
	for setup in $setups; do
		for what in cpu loop recorder spans; do
			: >"$WORK/$setup.$what"
		done
	done
	for round in $(seq "$REPEAT"); do
		"$@" >"$WORK/out"
		figure "$WORK/out" "process CPU" >>"$WORK/alone.cpu"
		figure "$WORK/out" "launches in" >>"$WORK/alone.loop"
		CUDA_INJECTION64_PATH=$CUDA_DIR/libnull-agent.so "$@" >"$WORK/out"
		figure "$WORK/out" "process CPU" >>"$WORK/null-client.cpu"
		figure "$WORK/out" "launches in" >>"$WORK/null-client.loop"
		under_gtrace gtrace "$AGENT" "$@"
		[ -z "$BASELINE_AGENT" ] || under_gtrace baseline "$BASELINE_AGENT" "$@"
		printf '  round %d: CPU ns per launch:' "$round"
		for setup in $setups; do
			printf ' %s %s' "$setup" "$(tail -n 1 "$WORK/$setup.cpu")"
		done
		printf '; loop ns per launch:'
		for setup in $setups; do
			printf ' %s' "$(tail -n 1 "$WORK/$setup.loop")"
		done
		printf '; spans per launch: %s' "$(tail -n 1 "$WORK/gtrace.spans")"
		[ -z "$BASELINE_AGENT" ] || printf ' (baseline %s)' "$(tail -n 1 "$WORK/baseline.spans")"
		echo
	done
	null_cpu=$(median <"$WORK/null-client.cpu")
	echo "  median CPU ns per launch: alone $(median <"$WORK/alone.cpu"), null client $null_cpu," \
		"gtrace $(median <"$WORK/gtrace.cpu") (recorder $(median <"$WORK/gtrace.recorder") more)"
	for setup in gtrace ${BASELINE_AGENT:+baseline}; do
		awk -v a="$(median <"$WORK/$setup.cpu")" -v b="$null_cpu" -v who="$setup" \
			-v s="$(median <"$WORK/$setup.spans")" 'BEGIN {
			printf "  %s: the agent %.0f ns of CPU per launch (goal: at most 1000), %s spans per launch\n",
				who, a - b, s }'
	done
}

bench_launches driver "$APP" --kernels "$LAUNCHES"
bench_launches runtime "$RT_APP" --kernels "$LAUNCHES"

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
