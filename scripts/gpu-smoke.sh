#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The CUDA collector on a real GPU, with the real driver and CUPTI: builds
# tests/cuda/real-app.cu with nvcc for the GPU found, records its default
# run and each of its modes with gtrace, and checks what only real
# hardware can confirm. The default run: kernels (count and names) on
# their stream lanes, their links to the calls that launched them, NVTX
# ranges (a named domain's on a lane of its own, nesting apart), the
# kernels of a CUDA graph, CUPTI's clock being gtrace's (no kernel before
# its launch call, every span inside the recording), no record lost, no
# filtered call shown, stacks unwound through libcuda and CUPTI, and no
# regression that gtrace diff finds in the same run again.
# Then: occupancy against the runtime's own figure, the launch-to-start
# gap on an idle GPU, DtoH copies and memsets, cuLaunchKernel and
# cuLaunchKernelEx, several launching threads, cudaDeviceReset, exit with
# a kernel running, a second CUPTI client (three ways), NVTX with a second
# libcupti preloaded, the GPU idle that gtrace analyze blames on the host
# (host_prepare, which flame --weight gpu-idle draws) and on
# synchronization, the agent's overhead against a run without gtrace,
# the activity buffer delay; GPU metrics through the driver's NVML (on,
# gpu.sm.util rising from idle while real-app runs, the NVML names
# gtrace and its test double use all in the real library); and PC
# sampling of tests/cuda/pc-app.cu:
# samples collected, the cubin kept and matched, the hot line found, stall
# reasons named, the launches linked to their stacks (with kernel time
# sampled), the stacks through CUPTI's sampling complete, past the stack
# copy too, and its overhead; and kernel regions from
# tests/cuda/kr-real.cu: collected, inside their kernels' runs, compute
# the longest.
#
# Prints one PASS or FAIL line per check and a summary line; exits 0 when
# every check passed, 1 when one failed, 2 when it cannot run at all (the
# reason is printed). Every output stays in the work directory, named at
# the end; with OUT set (the device machine's return folder) the summary
# and an archive of the work directory are also written there.
#
# usage: scripts/gpu-smoke.sh [BUILD-DIR]   (default build)
#
#   GTRACE        gtrace to test (default BUILD-DIR/gtrace)
#   CUDA_HOME     the CUDA toolkit (default /usr/local/cuda); NVCC its nvcc
#   GPU_ARCH      nvcc -arch (default native, then the compute capability
#                 nvidia-smi reports)
#   ITERATIONS    iterations of the default run (default 4)
#   WORK          the work directory (default: a new one under $TMPDIR,
#                 else /tmp, gpu-smoke.XXXXXX: never in the source tree)
#   STEP_TIMEOUT  seconds each step may take (default 120)
#   OVERHEAD_MAX  the largest launch-loop slowdown that passes (default 2)
#   DELAY_MAX_MS  the largest activity buffer delay that passes (default 2000)
#   OUT           also copy the summary and an archive there

# The conditions of check are run through it.
# shellcheck disable=SC2317

set -u

build=${1:-build}
gtrace=${GTRACE:-$build/gtrace}
agent=$build/libgtrace-cuda.so
cuda_home=${CUDA_HOME:-/usr/local/cuda}
nvcc=${NVCC:-$cuda_home/bin/nvcc}
iterations=${ITERATIONS:-4}
work=${WORK-}
step_timeout=${STEP_TIMEOUT:-120}
overhead_max=${OVERHEAD_MAX:-2}
delay_max_ms=${DELAY_MAX_MS:-2000}
srcdir=$(cd "$(dirname "$0")/.." && pwd)
passed=0
failed=0

if [ -n "$work" ]; then
	mkdir -p "$work" || exit 2
else
	work=$(mktemp -d "${TMPDIR:-/tmp}/gpu-smoke.XXXXXX") || exit 2
fi
work=$(cd "$work" && pwd)
app=$work/real-app
summary=$work/summary.txt
: >"$summary"

# say LINE: to the terminal and the summary.
say() {
	echo "$*" | tee -a "$summary"
}

# finish STATUS: leaves everything in the work directory (and OUT) and exits.
finish() {
	say "outputs: $work"
	if [ -n "${OUT-}" ] && [ -d "$OUT" ]; then
		cp "$summary" "$OUT/gpu-smoke-summary.txt"
		# Recordings make most of the bulk: left out past 40 MB.
		exclude=
		[ "$(du -sm "$work" | cut -f1)" -gt 40 ] && exclude='--exclude=*.data'
		tar -czf "$OUT/gpu-smoke.tar.gz" ${exclude:+"$exclude"} \
			-C "$(dirname "$work")" "$(basename "$work")"
	fi
	exit "$1"
}

die() {
	say "gpu-smoke: cannot run: $*"
	finish 2
}

# step NAME COMMAND...: runs COMMAND within the step timeout (SIGINT first,
# so that gtrace record writes its file, then SIGKILL), its output in
# NAME.txt; returns its status (124 when it timed out, which is said).
step() {
	step_name=$1
	shift
	timeout -s INT -k 15 "$step_timeout" "$@" >"$work/$step_name.txt" 2>&1
	step_status=$?
	[ "$step_status" -eq 124 ] && say "note: step '$step_name' timed out after $step_timeout s"
	return "$step_status"
}

# record NAME ARGS...: records ARGS into NAME.data (NAME.txt: the program's
# output, NAME.status: its exit status) and keeps diagnose (NAME.diag),
# threads (NAME.threads) and report --gpu (NAME.gpu) of it. RECORD_OPTS:
# more options of gtrace record.
record() {
	rec=$1
	shift
	# shellcheck disable=SC2086 # options, one word each
	step "$rec" "$gtrace" record -q ${RECORD_OPTS-} -o "$work/$rec.data" -- "$@"
	echo $? >"$work/$rec.status"
	for view in diag threads gpu; do
		case $view in
		diag) step "$rec.$view" "$gtrace" diagnose -i "$work/$rec.data" ;;
		threads) step "$rec.$view" "$gtrace" threads -i "$work/$rec.data" ;;
		gpu) step "$rec.$view" "$gtrace" report -i "$work/$rec.data" --gpu ;;
		esac
		mv "$work/$rec.$view.txt" "$work/$rec.$view"
	done
}

# folded NAME TID: the flame graph of TID, lane work included, into NAME.TID.folded.
folded() {
	"$gtrace" flame -i "$work/$1.data" --tid "${2:-0}" --folded --weight target \
		>"$work/$1.$2.folded" 2>/dev/null
	echo "$work/$1.$2.folded"
}

# check NAME CONDITION...: runs the condition (a command), prints PASS or FAIL.
check() {
	check_name=$1
	shift
	if "$@" >/dev/null 2>&1; then
		passed=$((passed + 1))
		say "PASS $check_name"
	else
		failed=$((failed + 1))
		say "FAIL $check_name"
	fi
}

# has FILE ERE: FILE has a line matching ERE; lacks: it has none.
has() {
	grep -Eq -- "$2" "$1"
}

lacks() {
	! grep -Eq -- "$2" "$1"
}

# counter FILE NAME: a counter of gtrace diagnose output, 0 when not listed.
counter() {
	awk -v name="$2" '$1 == name && $2 ~ /^[0-9]+$/ { print $2; found = 1; exit }
		END { if (!found) print 0 }' "$1"
}

# equals A B, at_least A B, at_most A B, within A LOW HIGH: comparisons of
# numbers (awk's, so that decimals work).
equals() {
	awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 == b + 0) }'
}

at_least() {
	awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }'
}

at_most() {
	awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 <= b + 0) }'
}

within() {
	at_least "$1" "$2" && at_most "$1" "$3"
}

# unwind_pct NAME OUTCOME: the share of NAME's samples whose unwind ended so.
unwind_pct() {
	awk -v outcome="$2" '$1 == outcome && match($0, /[0-9.]+%/) {
		print substr($0, RSTART, RLENGTH - 1); exit }' "$work/$1.diag"
}

# complete_pct NAME: the share of NAME's samples unwound to their outermost
# frame, the kernel's frame-pointer chain past the stack copy included.
complete_pct() {
	awk -v a="$(unwind_pct "$1" complete)" -v b="$(unwind_pct "$1" complete.fp-tail)" \
		'BEGIN { printf "%.2f", a + b }'
}

# failed_pct NAME: the share of NAME's samples whose unwind failed (not
# merely cut short).
failed_pct() {
	awk '$1 ~ /^failed\./ && match($0, /[0-9.]+%/) { p += substr($0, RSTART, RLENGTH - 1) }
		END { printf "%.2f", p }' "$work/$1.diag"
}

# linked_pct NAME: the share of NAME's GPU and API spans linked to a CPU stack.
linked_pct() {
	awk '$1 == "linked" && match($0, /[0-9.]+%/) { print substr($0, RSTART, RLENGTH - 1); exit }' \
		"$work/$1.diag"
}

# tid_of NAME COMM: the first thread of that name in NAME.threads.
tid_of() {
	awk -v comm="$2" '$2 !~ /^0xfff/ && $3 == comm { print $2; exit }' "$work/$1.threads"
}

# lanes_showing NAME KIND ERE: how many lanes of that kind have a line
# matching ERE in their own report (report --tid LANE: one line per span name).
lanes_showing() {
	awk -v kind="$2" '$2 ~ /^0xfff/ && $3 == kind { print $2 }' "$work/$1.threads" |
		while read -r lane; do
			"$gtrace" report -i "$work/$1.data" --tid "$lane" 2>/dev/null |
				grep -Eq -- "$3" && echo "$lane"
		done | wc -l
}

# inside_recording NAME: every lane's spans lie within the program's run.
inside_recording() {
	last=$(awk '$2 !~ /^0xfff/ && $3 == "real-app" { print $NF; exit }' "$work/$1.threads")
	[ -n "$last" ] &&
		awk -v last="$last" '$2 ~ /^0xfff/ && ($(NF - 1) < 0 || $NF > last + 0.5) { bad = 1 }
			END { exit bad }' "$work/$1.threads"
}

# kernels NAME ERE: instances of the kernels matching ERE in report --gpu
# (an awk string: parentheses as [(]).
kernels() {
	awk -v re="$2" '/^# CUDA copies/ { exit }
		$1 ~ /%$/ && $0 ~ re { n += $3 } END { print n + 0 }' "$work/$1.gpu"
}

# api_calls NAME CALL: calls of CALL in the API table of report --gpu.
api_calls() {
	awk -v call="$2" '/^# CUDA API/ { api = 1 } /^# CPU waiting/ { api = 0 }
		api && $1 ~ /%$/ && $NF == call { n += $3 } END { print n + 0 }' "$work/$1.gpu"
}

# copies NAME KIND: copies (or memsets) of KIND in report --gpu.
copies() {
	awk -v kind="$2" '/^# CUDA copies/ { c = 1 } /^# CUDA API/ { c = 0 }
		c && $1 ~ /%$/ && $NF == kind { n += $3 } END { print n + 0 }' "$work/$1.gpu"
}

# delay_ms NAME max|mean: the activity buffer delay of that recording.
delay_ms() {
	diag=$work/$1.diag
	case $2 in
	max) awk -v us="$(counter "$diag" cuda.delay.max-us)" 'BEGIN { printf "%.1f", us / 1000 }' ;;
	mean) awk -v us="$(counter "$diag" cuda.delay.sum-us)" \
		-v n="$(counter "$diag" cuda.delay.records)" \
		'BEGIN { printf "%.1f", n ? us / n / 1000 : 0 }' ;;
	esac
}

# launch_gaps NAME KERNEL: "COUNT MEDIAN MAX", the microseconds from each
# launch call to the start of its KERNEL (the flows of the Chrome export),
# the first launch (which loads the kernel) left out.
launch_gaps() {
	"$gtrace" export -i "$work/$1.data" --format chrome -o "$work/$1.json" 2>/dev/null &&
		python3 - "$work/$1.json" "$2" <<-'EOF'
		import json, sys
		events = json.load(open(sys.argv[1]))["traceEvents"]
		starts = {e["id"]: e["ts"] for e in events if e.get("ph") == "s"}
		slices = {(e["tid"], e["ts"]): e["name"] for e in events if e.get("ph") == "X"}
		launches = sorted((starts[e["id"]], e["ts"] - starts[e["id"]]) for e in events
		    if e.get("ph") == "f" and e["id"] in starts
		    and slices.get((e["tid"], e["ts"]), "").startswith(sys.argv[2]))
		gaps = sorted(gap for _, gap in launches[1:]) or [-1]
		print("%d %.1f %.1f" % (len(launches) - 1, gaps[len(gaps) // 2], gaps[-1]))
		EOF
}

# top_cause NAME: "CAUSE PERCENT", the largest idle cause of NAME's GPU (the
# device of gtrace analyze with the most idle) and its share of the idle
# time; "none 0" when the GPU was never idle.
top_cause() {
	"$gtrace" analyze -i "$work/$1.data" --format json >"$work/$1.analyze.json" 2>/dev/null &&
		python3 - "$work/$1.analyze.json" <<-'EOF'
		import json, sys
		devices = [d for d in json.load(open(sys.argv[1]))["devices"] if d["idle_ns"]]
		if not devices:
		    print("none 0")
		else:
		    dev = max(devices, key=lambda d: d["idle_ns"])
		    cause, ns = max(dev["idle_causes"].items(), key=lambda kv: kv[1])
		    print("%s %.1f" % (cause, 100.0 * ns / dev["idle_ns"]))
		EOF
}

# idle_share NAME FUNCTION: the share (percent) of NAME's host idle that
# flame --weight gpu-idle draws under FUNCTION.
idle_share() {
	"$gtrace" flame -i "$work/$1.data" --weight gpu-idle --folded 2>/dev/null |
		tee "$work/$1.idle.folded" |
		awk -v re=";$2[; ]" '{ all += $NF; if ($0 ~ re) hit += $NF }
			END { printf "%.1f", all ? 100 * hit / all : 0 }'
}

# Prerequisites: each missing one makes every check meaningless.
[ -x "$gtrace" ] || die "no gtrace at '$gtrace': run ./configure && make first"
[ -f "$agent" ] || die "no CUDA agent '$agent': configure found no CUPTI?"
[ -x "$nvcc" ] || die "no nvcc at '$nvcc' (set NVCC or CUDA_HOME)"
[ -e /proc/driver/nvidia/version ] || die "no NVIDIA driver is loaded: this needs a GPU"
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi >"$work/nvidia-smi.txt" 2>&1
step true "$gtrace" record -q -o "$work/true.data" -- true ||
	die "gtrace record cannot sample: $(head -n 1 "$work/true.txt")"
command -v python3 >/dev/null 2>&1 || die "no python3 (the launch gaps are read with it)"
cupti=
for lib in "$cuda_home/extras/CUPTI/lib64/libcupti.so.13" "$cuda_home/lib64/libcupti.so.13"; do
	[ -e "$lib" ] && cupti=$lib && break
done
[ -n "$cupti" ] || die "no libcupti.so.13 under '$cuda_home'"
other=$build/tests/cuda/libother-client.so
[ -f "$other" ] || die "no '$other': run make tests"
metrics_dump=$build/tests/metrics/metrics-dump
[ -x "$metrics_dump" ] || die "no '$metrics_dump': run make tests"

# Built for the GPU found: native first, else its compute capability;
# without sibling calls, so that a function's last call keeps it on the stack.
host_flags=-fno-omit-frame-pointer,-fno-optimize-sibling-calls
nvcc_build() {
	step nvcc "$nvcc" -O2 -g -Xcompiler "$host_flags" -arch="$1" \
		"$srcdir/tests/cuda/real-app.cu" -o "$app" && arch=$1
}
if [ -n "${GPU_ARCH-}" ]; then
	nvcc_build "$GPU_ARCH" || die "nvcc -arch=$GPU_ARCH failed (see $work/nvcc.txt)"
elif ! nvcc_build native; then
	cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1)
	if [ -z "$cap" ] || ! nvcc_build "sm_$(echo "$cap" | tr -d .)"; then
		die "nvcc could not build for this GPU (see $work/nvcc.txt; set GPU_ARCH)"
	fi
fi
say "nvcc: $("$nvcc" --version | tail -n 1)"
say "driver: $(head -n 1 /proc/driver/nvidia/version)"
command -v nvidia-smi >/dev/null 2>&1 && say "gpu: $(nvidia-smi -L 2>/dev/null | head -n 1)"

# The default run: per iteration 8 scale, 8 add and 1 busy launches, and a
# graph of 3 scale kernels.
record main "$app" "$iterations"
sed -n '/^CUDA:/,/^other counters:/p' "$work/main.diag" | tee -a "$summary"
main=$(tid_of main real-app)
main_folded=$(folded main "$main")
scale=$((iterations * 11))
add=$((iterations * 8))
check "real-app exits 0 under gtrace record" equals "$(cat "$work/main.status")" 0
check "CUPTI was active" has "$work/main.diag" '^cuda\.status: +active$'
check "no CUPTI warning" lacks "$work/main.diag" '^cuda\.warnings:'
check "the driver is named" has "$work/main.diag" '^cuda\.driver: +NVRM'
check "device 0 is described" has "$work/main.diag" \
	'^cuda\.device\.0: +.*, sm [0-9]+\.[0-9]+, [0-9]+ SMs'
check "CUPTI's timestamps come from gtrace's clock" has "$work/main.diag" '^cuda\.clock: +callback$'
check "$((scale + add + iterations)) kernels of 3 names" has "$work/main.gpu" \
	"^# CUDA kernels: $((scale + add + iterations)) instances of 3 kernels"
check "$scale scale kernels, graph ones included" equals "$(kernels main 'scale[(]')" "$scale"
check "$add add kernels" equals "$(kernels main ' add[(]')" "$add"
check "every kernel record arrived" equals "$(counter "$work/main.diag" cuda.records.kernel)" \
	$((scale + add + iterations))
check "scale and add on two stream lanes or more" at_least \
	"$(lanes_showing main cuda 'scale\(|add\(')" 2
check "copies: 2 HtoD of 4 MiB" has "$work/main.gpu" ' 2 +8\.389 MB .* HtoD$'
check "one graph launch per iteration" has "$work/main.gpu" \
	" $iterations .* cudaGraphLaunch(_v[0-9]+)?\$"
check "no filtered call in the API lane" lacks "$work/main.gpu" \
	' (cudaGetLastError|cudaGetDevice|cuCtxGetCurrent|cuCtxGetDevice)$'
check "every GPU record has its API call" equals "$(counter "$work/main.diag" cuda.no-origin)" 0
check "origins link to CPU stacks" has "$work/main.diag" '^  linked +[1-9][0-9]* '
check "kernels link to launch_batch" has "$main_folded" \
	';launch_batch;([^;]+;)*\[lane\] GPU[0-9]+ stream [0-9]+;(scale|add)\('
check "graph kernels link to launch_graph" has "$main_folded" \
	';launch_graph;([^;]+;)*\[lane\] GPU[0-9]+ stream [0-9]+;scale\('
check "stacks unwound through libcuda and CUPTI ($(complete_pct main)% complete)" \
	at_least "$(complete_pct main)" 95
check "no kernel starts before its launch call" equals \
	"$(counter "$work/main.diag" cuda.causality)" 0
check "every span lies inside the recording" inside_recording main
check "no record lost" equals "$(($(counter "$work/main.diag" cuda.dropped) + \
	$(counter "$work/main.diag" cuda.no-timestamp)))" 0
check "the final flush was clean" has "$work/main.diag" '^cuda\.flush: +clean$'
check "NVTX push/pop ranges" equals "$(lanes_showing main nvtx " $iterations .*  iteration\$")" 1
check "NVTX start/end range" equals "$(lanes_showing main nvtx " 1 .*  verify\$")" 1
# The domain real-app creates: its ranges on a lane of their own, named
# when nvtxDomainCreateA ran, and nesting apart from the default domain's
# although "launches" opens before "iteration" and closes inside it.
check "NVTX domain: a lane named by the domain" has "$work/main.threads" \
	" nvtx +NVTX gtrace-smoke +$iterations "
check "NVTX domain: its push/pop ranges" \
	equals "$(lanes_showing main nvtx " $iterations .*  launches\$")" 1
check "NVTX domain: nests inside the default domain's ranges in flame" has "$main_folded" \
	';\[nvtx\] iteration;\[nvtx gtrace-smoke\] launches;([^;]+;)*launch_batch;'
check "CPU waits in wait_for_gpu" has "$main_folded" \
	';wait_for_gpu;([^;]+;)*\[lane\] CPU wait;cudaStreamSynchronize'
check "buffer delay at most $delay_max_ms ms (max $(delay_ms main max) ms, mean $(delay_ms main mean) ms)" \
	at_most "$(delay_ms main max)" "$delay_max_ms"

# The same run again: gtrace diff finds no kernel or copy regression
# between two runs of unchanged code on the real GPU.
record again "$app" "$iterations"
step diff "$gtrace" diff --fail --by kernel,copy "$work/main.data" "$work/again.data"
diff_status=$?
check "diff: no kernel or copy regression between two unchanged runs (exit $diff_status)" \
	equals "$diff_status" 0

# NVTX with the program's own copy of libcupti loaded first, as PyTorch does.
# shellcheck disable=SC2016 # expanded by that shell
record nvtx sh -c 'LD_PRELOAD="$0${LD_PRELOAD:+:$LD_PRELOAD}" exec "$@"' "$cupti" \
	"$app" "$iterations"
check "second libcupti: real-app exits 0" equals "$(cat "$work/nvtx.status")" 0
check "second libcupti: NVTX push/pop ranges" \
	equals "$(lanes_showing nvtx nvtx " $iterations .*  iteration\$")" 1
check "second libcupti: kernels recorded" equals "$(kernels nvtx 'scale[(]|add[(]|busy[(]')" \
	$((scale + add + iterations))

# GPU metrics from the driver's NVML, read every 20 ms: real-app's default
# run, 100 iterations (about 75% of each a kernel running, some 2.5 s),
# after 1.5 s asleep under gtrace record. NVML's utilization is the share
# of its own sampling period (1/6 s to 1 s) with a kernel running: idle
# (the least value of the first 1.2 s, when NVML's period no longer holds
# the steps before) must be below the most seen while real-app runs.
# sm_util NAME: "IDLE MAX" of gpu.sm.util, of the GPU whose MAX is highest.
sm_util() {
	for gpu in $(awk '$1 == "gpu.sm.util" { sub(/gpu=/, "", $2); print $2 }' "$work/$1.dump"); do
		"$metrics_dump" "$work/$1.data" gpu.sm.util "$gpu" |
			awk '$1 < 1200 && (idle == "" || $2 < idle) { idle = $2 }
				$2 > max { max = $2 }
				END { print (idle == "" ? -1 : idle), max + 0 }'
	done | sort -k2,2n | tail -n 1
}
unset GTRACE_NVML
# shellcheck disable=SC2016 # expanded by that shell
RECORD_OPTS="--metrics-interval 20ms" record metrics sh -c 'sleep 1.5; exec "$0" "$@"' "$app" 100
"$metrics_dump" "$work/metrics.data" >"$work/metrics.dump" 2>&1
say "metrics: $(grep -E '^(metrics-nvml|GPU metrics):' "$work/metrics.diag")"
check "metrics: real-app exits 0" equals "$(cat "$work/metrics.status")" 0
check "metrics: NVML on" has "$work/metrics.diag" \
	'^(metrics-nvml|GPU metrics): +on: [1-9][0-9]* GPUs?$'
for quantity in sm.util mem.used temp; do
	check "metrics: gpu.$quantity of GPU 0 recorded" has "$work/metrics.dump" \
		"^gpu\\.$quantity gpu=0 .* n=[1-9]"
done
# shellcheck disable=SC2046 # its two numbers, or none
set -- $(sm_util metrics) -1 -1
check "metrics: gpu.sm.util rises while real-app runs (idle $1%, max $2%)" \
	awk -v idle="$1" -v max="$2" 'BEGIN { exit !(idle >= 0 && max > 5 && max > idle) }'
step metrics-symbols env BUILD="$(cd "$build" && pwd)" GTRACE="$gtrace" \
	sh "$srcdir/tests/run.sh" e2e/metrics-nvml-symbols
say "metrics: $(grep -E '^(PASS|SKIP|FAIL) ' "$work/metrics-symbols.txt")"
check "metrics: gtrace's NVML names are all in the driver's libnvidia-ml" has \
	"$work/metrics-symbols.txt" '^PASS e2e/metrics-nvml-symbols$'

# Occupancy: gtrace's against cudaOccupancyMaxActiveBlocksPerMultiprocessor.
record occupancy "$app" occupancy
expected=$(awk '$1 == "expected-occupancy" && $2 == "tile" { print $3; exit }' \
	"$work/occupancy.txt")
check "occupancy of tile is the runtime's ${expected:-?}" has "$work/occupancy.gpu" \
	" ${expected:-none} [a-z-]+ +tile\\(float\\*, int\\)\$"

# The launch-to-start gap of kernels launched onto an idle GPU.
record gap "$app" gap
# shellcheck disable=SC2046 # its three numbers, or none
set -- $(launch_gaps gap 'nap(') -1 -1 -1
check "gap: the 20 idle launches link to their kernels" equals "$1" 20
check "launch-to-start gap under 1 ms (median $2 us, max $3 us)" within "$2" 0 1000

# Copies and memsets.
record copies "$app" copies 3
check "3 DtoH copies" equals "$(copies copies DtoH)" 3
check "7 memsets (the clearing one, 3 cudaMemset, 3 cudaMemsetAsync)" \
	equals "$(copies copies memset)" 7

# Driver-API launches, each kernel linked to the function that launched it.
record driver "$app" driver 4
driver_folded=$(folded driver "$(tid_of driver real-app)")
check "driver: 32 cuLaunchKernel calls" at_least "$(api_calls driver cuLaunchKernel)" 32
check "driver: 32 cuLaunchKernelEx calls" at_least "$(api_calls driver cuLaunchKernelEx)" 32
check "driver: 32 scale and 32 add kernels" equals \
	"$(kernels driver 'scale[(]') $(kernels driver ' add[(]')" "32 32"
check "cuLaunchKernel kernels link to launch_driver" has "$driver_folded" \
	';launch_driver;([^;]+;)*\[lane\] GPU[0-9]+ stream [0-9]+;scale\('
check "cuLaunchKernelEx kernels link to launch_driver_ex" has "$driver_folded" \
	';launch_driver_ex;([^;]+;)*\[lane\] GPU[0-9]+ stream [0-9]+;add\('

# Several launching threads, each kernel linked to its own thread.
record threads "$app" threads 50
check "threads: 200 kernels" equals "$(kernels threads 'scale[(]')" 200
for i in 0 1 2 3; do
	tid=$(tid_of threads "launcher-$i")
	check "threads: launcher-$i's kernels link to it" has "$(folded threads "${tid:-0}")" \
		';launch_from_thread;([^;]+;)*\[lane\] GPU[0-9]+ stream [0-9]+;scale\('
done

# cudaDeviceReset, then work on the new context.
record reset "$app" reset 10
check "reset: real-app exits 0" equals "$(cat "$work/reset.status")" 0
check "reset: 10 kernels before and 10 after" equals \
	"$(kernels reset 'scale[(]') $(kernels reset ' add[(]')" "10 10"
check "reset: no record lost" equals "$(($(counter "$work/reset.diag" cuda.dropped) + \
	$(counter "$work/reset.diag" cuda.no-timestamp)))" 0

# Idle causes: 20 kernels of about 1 ms, each launched after 3 ms of
# host_prepare (about 2 ms of host idle before each), then 20 each
# synchronized and followed by 2 ms of after_sync (synchronization idle).
record hostbound "$app" hostbound 20
# shellcheck disable=SC2046 # its two words, or none
set -- $(top_cause hostbound) none 0
check "analyze: hostbound's GPU idle is the host's ($1, $2% of it)" \
	awk -v cause="$1" -v pct="$2" 'BEGIN { exit !(cause == "host" && pct >= 75) }'
share=$(idle_share hostbound host_prepare)
check "flame --weight gpu-idle: host_prepare under $share% of the host idle" at_least "$share" 75
record syncbound "$app" syncbound 20
# shellcheck disable=SC2046 # its two words, or none
set -- $(top_cause syncbound) none 0
check "analyze: syncbound's GPU idle is synchronization ($1, $2% of it)" \
	awk -v cause="$1" -v pct="$2" 'BEGIN { exit !(cause == "synchronization" && pct >= 75) }'

# Exit with a kernel still running: recorded if the exit waited for it,
# else counted as incomplete; never lost silently.
record running "$app" running 2
check "running: real-app exits 0 and the file reads" equals \
	"$(cat "$work/running.status") $(grep -c '^cuda\.flush:' "$work/running.diag")" "0 1"
busy_seen=$(kernels running 'busy[(]')
incomplete=$(counter "$work/running.diag" cuda.incomplete)
check "running: the busy kernel recorded ($busy_seen) or counted incomplete ($incomplete)" \
	equals $((busy_seen + incomplete)) 1
say "running: $(grep '^cuda\.flush:' "$work/running.diag")"

# A second CUPTI client, preloaded into the program (driver mode: the client
# acts at its cuStreamSynchronize calls).
other_client() {
	OTHER_CLIENT_MODE=$2 OTHER_CLIENT_CUPTI=$cupti OTHER_CLIENT_OUT=$work/$1.out
	export OTHER_CLIENT_MODE OTHER_CLIENT_CUPTI OTHER_CLIENT_OUT
	# shellcheck disable=SC2016 # expanded by that shell
	record "$1" sh -c 'LD_PRELOAD="$0${LD_PRELOAD:+:$LD_PRELOAD}" exec "$@"' \
		"$other" "$app" driver 4
	unset OTHER_CLIENT_MODE OTHER_CLIENT_CUPTI OTHER_CLIENT_OUT
}
other_client first subscribe-first
check "client first: its name in the status" has "$work/first.diag" \
	"^cuda\\.status: +subscriber-conflict: '[^']*kineto[^']*' holds the CUPTI subscription\$"
check "client first: CPU samples still recorded" at_least \
	"$(awk '$1 == "samples:" { print $2 }' "$work/first.diag")" 1
other_client later subscribe-later
check "client later: told that gtrace holds CUPTI" has "$work/later.out" '^[0-9]+ .*gtrace'
check "client later: gtrace stays active" has "$work/later.diag" '^cuda\.status: +active$'
check "client later: every kernel recorded" equals \
	"$(kernels later 'scale[(]|add[(]')" 64
other_client taken activity-takeover
check "client takeover: noticed" has "$work/taken.diag" '^cuda\.status: +taken-over: '
say "takeover: $(grep '^cuda\.status:' "$work/taken.diag")"

# The agent's overhead: the launch loop alone, then under gtrace, three
# times each, interleaved; the fastest of each.
for round in 1 2 3; do
	step "bare$round" "$app" launches
	record "launches$round" "$app" launches
done
# shellcheck disable=SC2016 # an awk program
fastest='$1 == "elapsed-s" && (!m || $2 < m) { m = $2 } END { print m }'
bare=$(awk "$fastest" "$work"/bare[123].txt)
traced=$(awk "$fastest" "$work"/launches[123].txt)
ratio=$(awk -v a="${traced:-0}" -v b="${bare:-0}" 'BEGIN { printf "%.2f", b ? a / b : 0 }')
check "overhead: 100000 launches ${bare:-?} s bare, ${traced:-?} s traced (x$ratio)" \
	at_most "$ratio" "$overhead_max"
check "overhead: a ratio was measured" at_least "$ratio" 0.5
check "launches: buffer delay at most $delay_max_ms ms (max $(delay_ms launches1 max) ms, mean $(delay_ms launches1 mean) ms)" \
	at_most "$(delay_ms launches1 max)" "$delay_max_ms"
check "launches: no record lost" equals "$(($(counter "$work/launches1.diag" cuda.dropped) + \
	$(counter "$work/launches1.diag" cuda.no-timestamp)))" 0

# PC sampling: pc-app's hot loop (the line marked PC-HOT-LINE) with the
# real CUPTI, always on. Drivers keep the counters to administrators unless
# NVreg_RestrictProfilingToAdminUsers=0: a refusal shows in the status.
pcapp=$work/pc-app
hot_line=$(grep -n '/\* PC-HOT-LINE \*/' "$srcdir/tests/cuda/pc-app.cu" | cut -d: -f1)
# pc_number NAME LINE ERE: the first number after ERE on diagnose's "PC LINE:".
pc_number() {
	sed -n "s/^PC $2: *//p" "$work/$1.diag" | grep -Eo "$3" | grep -Eo '[0-9.]+' | head -n 1
}
if step nvcc-pc "$nvcc" -O2 -g -lineinfo -Xcompiler "$host_flags" -arch="$arch" \
	"$srcdir/tests/cuda/pc-app.cu" -o "$pcapp"; then
	RECORD_OPTS=--gpu-pc-sampling=rate=0 record pc "$pcapp" 200
	step pc.report "$gtrace" report -i "$work/pc.data" --gpu-pc
	"$gtrace" flame -i "$work/pc.data" --gpu-pc --folded >"$work/pc.folded" 2>/dev/null
	say "pc: $(grep '^GPU PC sampling:' "$work/pc.diag")"
	check "pc: pc-app exits 0 under PC sampling" equals "$(cat "$work/pc.status")" 0
	check "pc: PC sampling on" has "$work/pc.diag" '^GPU PC sampling: +on: kernel-serialized'
	check "pc: samples collected ($(pc_number pc kept '[0-9]+ samples'))" \
		at_least "$(pc_number pc kept '[0-9]+ samples')" 1
	check "pc: the cubin kept, its CRC that of the samples (lines: $(pc_number pc 'source lines' \
		'\([0-9.]+%'))" at_least "$(pc_number pc 'source lines' '\([0-9.]+%')" 90
	check "pc: the hot line $hot_line leads pc_hot" equals "$(awk '$3 ~ /pc_hot/ { getline
		sub(/.*:/, "", $3); print $3; exit }' "$work/pc.report.txt")" "$hot_line"
	check "pc: stall reasons named" has "$work/pc.report.txt" '^#   [a-z_]+ +[a-z]'
	check "pc: pc_hot under launch_hot" has "$work/pc.folded" ';launch_hot;.*\[kernel\] pc_hot'
	# CUPTI's sampling runs deeper than the stack copy on the launching
	# thread: the kernel's frame-pointer chain goes on (complete.fp-tail).
	check "pc: stacks through CUPTI's sampling $(complete_pct pc)% complete ($(unwind_pct \
		pc complete.fp-tail)% past the stack copy), $(failed_pct pc)% failed" \
		at_least "$(complete_pct pc)" 90
	check "pc: at most 1% of the unwinds failed" at_most "$(failed_pct pc)" 1
	# Serialized sampling keeps the launching thread in the driver; only
	# with kernel time sampled (root here) are its launches near a sample.
	if grep -q '^kernel time: *sampled' "$work/pc.diag"; then
		check "pc: launches linked to their CPU stacks ($(linked_pct pc)%)" \
			at_least "$(linked_pct pc)" 90
	fi
	say "pc: $(grep '^PC GetData:' "$work/pc.diag")"
	# Overhead: pc-app alone, traced, and traced with duty-cycled sampling.
	for run in bare trace duty; do
		t0=$(date +%s.%N)
		case $run in
		bare) step pc-bare "$pcapp" 200 ;;
		trace) record pc-trace "$pcapp" 200 ;;
		duty) RECORD_OPTS=--gpu-pc-sampling record pc-duty "$pcapp" 200 ;;
		esac
		awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f\n", b - a }' \
			>"$work/pc-$run.seconds"
	done
	pc_ratio=$(awk -v a="$(cat "$work/pc-duty.seconds")" -v b="$(cat "$work/pc-bare.seconds")" \
		'BEGIN { printf "%.2f", b ? a / b : 0 }')
	check "pc: overhead measured: bare $(cat "$work/pc-bare.seconds") s, traced \
$(cat "$work/pc-trace.seconds") s, with PC sampling $(cat "$work/pc-duty.seconds") s (x$pc_ratio)" \
		at_least "$pc_ratio" 0.5
else
	check "pc: nvcc builds pc-app for $arch (see nvcc-pc.txt)" false
fi

# Kernel regions: kr-compile.cu's kernels, their regions collected through
# gtrace/kernel-regions.cuh; every region within a run of a kernel, give or
# take the clock error diagnose states, and compute the longest region.
krreal=$work/kr-real
if step nvcc-kr "$nvcc" -O2 -arch="$arch" -I"$srcdir/include" -I"$srcdir/tests/cuda" \
	"$srcdir/tests/cuda/kr-real.cu" "$build/libgtrace-target.a" -lpthread -o "$krreal"; then
	record kr "$krreal" 20
	"$gtrace" export -i "$work/kr.data" --format chrome -o "$work/kr.json" >/dev/null 2>&1
	say "kr: $(grep -E '^Kernel regions:|^KR clock error:' "$work/kr.diag" | tr '\n' ' ')"
	check "kr: kr-real exits 0" equals "$(cat "$work/kr.status")" 0
	check "kr: 40 buffers of regions collected" has "$work/kr.diag" \
		'^Kernel regions: +40 buffers collected'
	check "kr: no unmatched or colliding events" has "$work/kr.diag" \
		'^KR mismatches: +0 unmatched begins or ends, 0 collisions$'
	kr_error_us=$(sed -n 's/^KR clock error: *at most \([0-9.]*\) us$/\1/p' "$work/kr.diag")
	check "kr: every region inside a run of its kernel (within ${kr_error_us:-?} us)" \
		python3 - "$work/kr.json" "${kr_error_us:-0}" <<'PY'
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
slack = float(sys.argv[2])
names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
         if e.get("ph") == "M" and e.get("name") == "thread_name"}
slices = [e for e in events if e.get("ph") == "X"]
runs = [(e["ts"], e["ts"] + e["dur"]) for e in slices
        if names.get((e["pid"], e["tid"]), "").startswith("GPU")]
regions = [(e["ts"], e["ts"] + e["dur"]) for e in slices
           if " b" in names.get((e["pid"], e["tid"]), "")
           and names[(e["pid"], e["tid"])].split(" ")[0] in ("one_group", "three_groups")]
assert runs and regions
assert all(any(b - slack <= r0 and r1 <= e + slack for b, e in runs) for r0, r1 in regions)
PY
	check "kr: compute the longest region of one_group" equals "$(awk '$(NF - 1) == "one_group" {
		sub(/%/, "", $6); if ($6 + 0 > best) { best = $6 + 0; name = $NF } } END { print name }' \
		"$work/kr.gpu")" compute
else
	check "kr: nvcc builds kr-real for $arch (see nvcc-kr.txt)" false
fi

say "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && finish 0
finish 1
