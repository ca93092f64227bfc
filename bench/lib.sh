# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# Shared by the benchmarks (bash). Set BUILD (default build), GTRACE
# (default $BUILD/gtrace) or PERF (default perf) to compare other builds.

set -euo pipefail

SRCDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$SRCDIR/build}
GTRACE=${GTRACE:-$BUILD/gtrace}
PERF=${PERF:-perf}
WORKLOADS=$BUILD/workloads

for tool in "$GTRACE" "$WORKLOADS/hot-nofp"; do
	[ -x "$tool" ] || { echo "bench: no '$tool': run ./configure && make tests first" >&2; exit 1; }
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/gtrace-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# say CMD...: prints a command as it will run, for the record.
say() {
	echo "+ $*"
}

now() {
	date +%s.%N
}

# compile_bench OUT SOURCE LIBRARY LDLIB [DIR...]: compiles SOURCE (a path
# in the source tree) into OUT against the build's static LIBRARY and
# LDLIB, with each DIR of the source tree on the include path.
compile_bench() {
	local out=$1 src=$2 lib=$3 ldlib=$4 dir flags=() shown=()
	shift 4
	[ -f "$BUILD/$lib" ] || { echo "bench: no '$BUILD/$lib': run make first" >&2; exit 1; }
	for dir in "$@"; do
		flags+=(-I"$SRCDIR/$dir")
		shown+=(-I"$dir")
	done
	say "${CC:-cc} -O2 ${shown[*]} $src $BUILD/$lib $ldlib"
	"${CC:-cc}" -std=c11 -D_GNU_SOURCE -O2 "${flags[@]}" "$SRCDIR/$src" "$BUILD/$lib" "$ldlib" \
		-o "$out"
}

# timed NAME CMD...: runs CMD under GNU time, keeps "wall-s max-rss-kib".
timed() {
	local name=$1
	shift
	/usr/bin/time -v -o "$WORK/$name.time" "$@" >/dev/null 2>"$WORK/$name.err" ||
		{ cat "$WORK/$name.err" >&2; echo "bench: '$*' failed" >&2; exit 1; }
	awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0
			for (i = 1; i <= n; i++) s = s * 60 + t[i]; wall = s }
		/Maximum resident set size/ { rss = $2 }
		END { print wall, rss }' "$WORK/$name.time" >"$WORK/$name.result"
}

# cpu_of NAME: user + system seconds from GNU time's output NAME.time.
cpu_of() {
	awk -F': ' '/User time/ { u = $2 } /System time/ { s = $2 } END { print u + s }' "$WORK/$1.time"
}

# time_attached NAME PID CMD...: runs CMD, with PID in its words replaced by
# the target's pid, under GNU time (NAME.time), then ends the target.
time_attached() {
	local name=$1 pid=$2 args=()
	shift 2
	for a in "$@"; do args+=("${a//PID/$pid}"); done
	/usr/bin/time -v -o "$WORK/$name.time" "${args[@]}" >/dev/null 2>"$WORK/$name.err" ||
		{ cat "$WORK/$name.err" >&2; kill "$pid"; exit 1; }
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null || true
}

# start_training SECONDS: starts the PyTorch training loop
# (bench/pytorch-train.py under PYTHON, default /usr/bin/python3) for
# SECONDS in the background and returns once it trains; its pid in
# TRAINING_PID.
start_training() {
	rm -f "$WORK/ready"
	READY=$WORK/ready RUN_SECONDS=$1 "${PYTHON:-/usr/bin/python3}" \
		"$SRCDIR/bench/pytorch-train.py" >/dev/null &
	TRAINING_PID=$!
	while [ ! -e "$WORK/ready" ]; do
		kill -0 "$TRAINING_PID" 2>/dev/null ||
			{ echo "bench: the training loop failed" >&2; exit 1; }
		sleep 0.1
	done
}

# seconds_for RATE: the seconds of recording that SAMPLES samples need at
# RATE samples/s (the calibration run's), with 10% to spare, at most
# MAX_SECONDS (said when it cuts).
seconds_for() {
	local seconds
	[ "$1" -gt 0 ] || { echo "bench: the calibration run got no samples" >&2; exit 1; }
	seconds=$(( SAMPLES * 11 / 10 / $1 + 1 ))
	if [ "$seconds" -gt "$MAX_SECONDS" ]; then
		echo "note: $SAMPLES samples would take $seconds s here; recording $MAX_SECONDS s" >&2
		seconds=$MAX_SECONDS
	fi
	echo "$seconds"
}

# median: the median of the numbers on stdin, one per line.
median() {
	sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# time_rounds SETUP...: REPEAT interleaved rounds of each SETUP's command,
# the caller's `command_of SETUP OUT` (writing to OUT, SETUP.ROUND.data
# in WORK), their wall times kept for round_wall.
time_rounds() {
	local round setup start
	for setup in "$@"; do
		say "$(command_of "$setup" OUT)"
	done
	for round in $(seq "$REPEAT"); do
		for setup in "$@"; do
			start=$(now)
			# shellcheck disable=SC2046,SC2091 # the command line, split into words, run
			$(command_of "$setup" "$WORK/$setup.$round.data") >/dev/null 2>"$WORK/stderr" ||
				{ cat "$WORK/stderr" >&2; echo "bench: $setup failed" >&2; exit 1; }
			echo "$setup $(awk -v a="$start" -v b="$(now)" 'BEGIN { print b - a }')" \
				>>"$WORK/runs"
		done
	done
}

# round_wall SETUP: the median wall time of SETUP's rounds.
round_wall() {
	awk -v s="$1" '$1 == s { print $2 }' "$WORK/runs" | median
}

# need_perf: exits unless perf is there, for the benchmarks that compare with it.
need_perf() {
	command -v "$PERF" >/dev/null ||
		{ echo "bench: no perf: scripts/install-deps.sh installs it" >&2; exit 1; }
}

# perf_samples FILE: the number of samples in a perf.data file.
perf_samples() {
	"$PERF" script -i "$1" -F tid -G 2>/dev/null | wc -l
}

# gtrace_samples FILE: the number of samples in a recording, from diagnose.
gtrace_samples() {
	"$GTRACE" diagnose -i "$1" 2>/dev/null |
		awk '{ sub(/^[ \t#]+/, "") } /^samples[ :\t]/ && match($0, /[0-9]+/) {
			print substr($0, RSTART, RLENGTH); exit }'
}

file_size() {
	stat -c %s "$1"
}

# use_cuda_doubles FILE...: exits unless the CUDA test doubles and FILEs
# exist, then points programs at the fake driver and the agent at the fake
# CUPTI, with no fault or CUDA tool set up from outside.
CUDA_DIR=$BUILD/tests/cuda
use_cuda_doubles() {
	for file in "$CUDA_DIR/libcupti.so.13" "$@"; do
		[ -e "$file" ] ||
			{ echo "bench: no '$file': configure with CUPTI, then make tests" >&2; exit 1; }
	done
	export LD_LIBRARY_PATH=$CUDA_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	export GTRACE_CUPTI=$CUDA_DIR/libcupti.so.13
	unset CUDA_INJECTION64_PATH NVTX_INJECTION64_PATH FAKE_CUPTI_FAULTS GTRACE_CUDA_AGENT
}
