#!/bin/bash
# SPDX-License-Identifier: MIT
#
# How fast a long recording is reported, and in how much memory: perf report
# against gtrace report, each on its own recording of the same deep-stack
# workload (one recurse process per CPU, DEPTH frames deep). Both recordings
# walk frame pointers, so they hold the same stacks; GTRACE_CALL_GRAPH=dwarf
# records gtrace's the default way instead.
#
# Each recording aims at SAMPLES (default 1,000,000) samples at FREQ
# (default 4999) Hz per CPU. A short calibration run measures the rate the
# machine really delivers (virtual machines often deliver less than asked),
# and the recordings last what that rate needs, at most MAX_SECONDS (default
# 400) each: with 2 CPUs, 1M samples take some 100 to 250 s per recorder.
#
# Then the curve: gtrace report on the first 1/8, 1/4 and 1/2 of its
# recording (a file cut between chunks reads up to its last whole one)
# and on all of it, each with its samples, wall time and peak memory: the
# memory of a report grows with the distinct stacks, not the samples.
# BASELINE=PATH, another gtrace binary, reports each part too, marked (b).
#
# usage: bench/report-speed.sh   (SAMPLES=1000000 FREQ=4999 DEPTH=60 BUILD=build BASELINE=)

. "$(dirname "$0")/lib.sh"
need_perf

SAMPLES=${SAMPLES:-1000000}
FREQ=${FREQ:-4999}
DEPTH=${DEPTH:-60}
GTRACE_CALL_GRAPH=${GTRACE_CALL_GRAPH:-fp}
MAX_SECONDS=${MAX_SECONDS:-400}
cpus=$(nproc)
[ -x /usr/bin/time ] || { echo "bench: needs GNU time in /usr/bin/time (package time)" >&2; exit 1; }

# workload SECONDS: the command line, one deep recursion per CPU.
workload() {
	echo "for i in \$(seq $cpus); do $WORKLOADS/recurse $DEPTH $1 & done; wait"
}

"$PERF" record -q -F "$FREQ" -g -o "$WORK/calibrate.data" -- sh -c "$(workload 2)" 2>/dev/null
rate=$(( $(perf_samples "$WORK/calibrate.data") / 2 ))
run_seconds=$(seconds_for "$rate")
echo "about $rate samples/s ($FREQ Hz asked, $cpus CPUs): recording ${run_seconds} s per recorder"

perf_data=$WORK/perf.data
gtrace_data=$WORK/gtrace.data
cmd=$(workload "$run_seconds")
say "$PERF record -q -F $FREQ -g -o perf.data -- sh -c '$cmd'"
"$PERF" record -q -F "$FREQ" -g -o "$perf_data" -- sh -c "$cmd"
say "$GTRACE record -q -F $FREQ --call-graph $GTRACE_CALL_GRAPH -o gtrace.data -- sh -c '$cmd'"
"$GTRACE" record -q -F "$FREQ" --call-graph "$GTRACE_CALL_GRAPH" -o "$gtrace_data" -- sh -c "$cmd"

# Read both files once so that neither report pays for the disk.
cat "$perf_data" "$gtrace_data" >/dev/null

say "/usr/bin/time -v $PERF report -i perf.data --stdio --no-children >/dev/null"
timed perf "$PERF" report -i "$perf_data" --stdio --no-children
say "/usr/bin/time -v $GTRACE report -i gtrace.data --no-children >/dev/null"
timed gtrace "$GTRACE" report -i "$gtrace_data" --no-children

printf '\n%-8s %9s %12s %9s %12s\n' report samples file-bytes wall-s max-rss-MiB
for tool in perf gtrace; do
	case $tool in
	perf) samples=$(perf_samples "$perf_data") bytes=$(file_size "$perf_data") ;;
	gtrace) samples=$(gtrace_samples "$gtrace_data") bytes=$(file_size "$gtrace_data") ;;
	esac
	read -r wall rss <"$WORK/$tool.result"
	awk -v t="$tool" -v n="$samples" -v b="$bytes" -v w="$wall" -v r="$rss" 'BEGIN {
		printf "%-8s %9s %12s %9.2f %12.1f\n", t, n, b, w, r / 1024 }'
done

printf '\n%-8s %9s %12s %9s %12s\n' part samples file-bytes wall-s max-rss-MiB
bytes=$(file_size "$gtrace_data")
for part in 8 4 2 1; do
	cut=$WORK/part-$part.data
	head -c $((bytes / part)) "$gtrace_data" >"$cut"
	for build in gtrace ${BASELINE:+baseline}; do
		case $build in
		gtrace) bin=$GTRACE label=1/$part ;;
		baseline) bin=$BASELINE label="1/$part(b)" ;;
		esac
		timed "$build-$part" "$bin" report -i "$cut" --no-children
		read -r wall rss <"$WORK/$build-$part.result"
		awk -v p="$label" -v n="$(gtrace_samples "$cut")" -v b="$((bytes / part))" \
			-v w="$wall" -v r="$rss" 'BEGIN {
			printf "%-8s %9s %12s %9.2f %12.1f\n", p, n, b, w, r / 1024 }'
	done
done
