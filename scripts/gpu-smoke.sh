#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The CUDA collector on a real GPU, with the real driver and CUPTI: builds
# tests/cuda/real-app.cu with nvcc, records it with gtrace, and checks what
# only real hardware can confirm: the kernels (count and names) on their
# stream lanes, their links to the calls that launched them, the NVTX
# ranges, the kernels of the CUDA graph, and that CUPTI's clock is gtrace's
# (no kernel before its launch call, every span inside the recording).
# Prints one PASS or FAIL line per check, then a summary; exits 0 only when
# every check passed (2 when it cannot run at all).
#
# usage: scripts/gpu-smoke.sh [BUILD-DIR]   (default build; NVCC, GTRACE,
#        CUDA_HOME and ITERATIONS (default 4) may be set)

set -u

build=${1:-build}
gtrace=${GTRACE:-$build/gtrace}
cuda_home=${CUDA_HOME:-/usr/local/cuda}
nvcc=${NVCC:-$cuda_home/bin/nvcc}
iterations=${ITERATIONS:-4}
src=$(cd "$(dirname "$0")/.." && pwd)/tests/cuda/real-app.cu
passed=0
failed=0

die() {
	echo "gpu-smoke: $*" >&2
	exit 2
}

[ -x "$gtrace" ] || die "no gtrace at '$gtrace': run ./configure && make first"
[ -f "$build/libgtrace-cuda.so" ] || die "no CUDA agent in '$build': configure found no CUPTI?"
[ -x "$nvcc" ] || die "no nvcc at '$nvcc' (set NVCC or CUDA_HOME)"
[ -e /proc/driver/nvidia/version ] || die "no NVIDIA driver is loaded: this needs a GPU"

work=$(mktemp -d "${TMPDIR:-/tmp}/gtrace-gpu-smoke.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT

# check NAME CONDITION...: runs the condition (a command), prints PASS or FAIL.
check() {
	name=$1
	shift
	if "$@" >/dev/null 2>&1; then
		passed=$((passed + 1))
		echo "PASS $name"
	else
		failed=$((failed + 1))
		echo "FAIL $name"
	fi
}

# has FILE ERE: FILE has a line matching ERE.
has() {
	grep -Eq -- "$2" "$1"
}

# counter FILE NAME: a counter of gtrace diagnose output, 0 when not listed.
counter() {
	awk -v name="$2" '$1 == name && $2 ~ /^[0-9]+$/ { print $2; found = 1; exit }
		END { if (!found) print 0 }' "$1"
}

# equals A B, at_least A B: comparisons of numbers.
equals() {
	[ "$1" -eq "$2" ]
}

at_least() {
	[ "$1" -ge "$2" ]
}

# lanes_showing KIND ERE: how many lanes of that kind have a line matching
# ERE in their own report (report --tid LANE: one line per span name).
lanes_showing() {
	awk -v kind="$1" '$2 ~ /^0xfff/ && $3 == kind { print $2 }' "$work/threads.txt" |
		while read -r lane; do
			"$gtrace" report -i "$work/real.data" --tid "$lane" 2>/dev/null | grep -Eq -- "$2" &&
				echo "$lane"
		done | wc -l
}

# inside_recording: every lane's spans lie within the program's run.
inside_recording() {
	last=$(awk '$2 !~ /^0xfff/ && $3 == "real-app" { print $NF; exit }' "$work/threads.txt")
	[ -n "$last" ] &&
		awk -v last="$last" '$2 ~ /^0xfff/ && ($(NF - 1) < 0 || $NF > last + 0.5) { bad = 1 }
			END { exit bad }' "$work/threads.txt"
}

echo "building real-app with $nvcc"
"$nvcc" -O2 -g -Xcompiler -fno-omit-frame-pointer -gencode arch=compute_80,code=sm_80 \
	-gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90 \
	"$src" -o "$work/real-app" || die "nvcc failed"
"$nvcc" --version | tail -n 1
head -n 1 /proc/driver/nvidia/version

echo "recording real-app $iterations"
"$gtrace" record -q -o "$work/real.data" -- "$work/real-app" "$iterations" >"$work/record.txt" 2>&1
status=$?
"$gtrace" diagnose -i "$work/real.data" >"$work/diag.txt" 2>&1
"$gtrace" threads -i "$work/real.data" >"$work/threads.txt" 2>&1
"$gtrace" report -i "$work/real.data" --gpu >"$work/gpu.txt" 2>&1
main=$(awk '$2 !~ /^0xfff/ && $3 == "real-app" { print $2; exit }' "$work/threads.txt")
"$gtrace" flame -i "$work/real.data" --tid "${main:-0}" --folded --weight target \
	>"$work/folded.txt" 2>&1
sed -n '/^CUDA:/,/^other counters:/p' "$work/diag.txt"

# Per iteration: 8 scale, 8 add and 1 busy launches, and a graph of 3
# scale kernels.
scale=$((iterations * 11))
add=$((iterations * 8))
check "real-app exits 0 under gtrace record" equals "$status" 0
check "CUPTI was active" has "$work/diag.txt" '^cuda\.status: +active$'
check "the driver is named" has "$work/diag.txt" '^cuda\.driver: +NVRM'
check "device 0 is described" has "$work/diag.txt" '^cuda\.device\.0: +.*, sm [0-9]+\.[0-9]+, [0-9]+ SMs'
check "$((scale + add + iterations)) kernels of 3 names" has "$work/gpu.txt" \
	"^# CUDA kernels: $((scale + add + iterations)) instances of 3 kernels"
check "$scale scale kernels, graph ones included" has "$work/gpu.txt" \
	" $scale .* scale\\(float\\*, float, int\\)\$"
check "$add add kernels" has "$work/gpu.txt" " $add .* add\\(float\\*, float const\\*, int\\)\$"
check "every kernel record arrived" equals "$(counter "$work/diag.txt" cuda.records.kernel)" \
	$((scale + add + iterations))
check "scale and add on two stream lanes or more" at_least "$(lanes_showing cuda 'scale\(|add\(')" 2
check "copies: 2 HtoD of 4 MiB" has "$work/gpu.txt" ' 2 +8\.389 MB .* HtoD$'
check "one graph launch per iteration" has "$work/gpu.txt" " $iterations .* cudaGraphLaunch(_v[0-9]+)?\$"
check "every GPU record has its API call" equals "$(counter "$work/diag.txt" cuda.no-origin)" 0
check "origins link to CPU stacks" has "$work/diag.txt" '^  linked +[1-9][0-9]* '
check "kernels link to launch_batch" has "$work/folded.txt" \
	';launch_batch;([^;]+;)*\[lane\] GPU[0-9]+ stream [0-9]+;(scale|add)\('
check "graph kernels link to launch_graph" has "$work/folded.txt" \
	';launch_graph;([^;]+;)*\[lane\] GPU[0-9]+ stream [0-9]+;scale\('
check "no kernel starts before its launch call" equals "$(counter "$work/diag.txt" cuda.causality)" 0
check "every span lies inside the recording" inside_recording
check "no record lost" equals "$(($(counter "$work/diag.txt" cuda.dropped) + \
	$(counter "$work/diag.txt" cuda.no-timestamp)))" 0
check "the final flush was clean" has "$work/diag.txt" '^cuda\.flush: +clean$'
check "NVTX push/pop ranges" equals "$(lanes_showing nvtx " $iterations .*  iteration\$")" 1
check "NVTX start/end range" equals "$(lanes_showing nvtx " 1 .*  verify\$")" 1
check "CPU waits in wait_for_gpu" has "$work/folded.txt" \
	';wait_for_gpu;([^;]+;)*\[lane\] CPU wait;cudaStreamSynchronize'

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
