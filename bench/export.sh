#!/bin/bash
# SPDX-License-Identifier: MIT
#
# What gtrace export costs on a big recording: about SAMPLES (default
# 1,000,000) CPU samples of deep stacks and SPANS (default 100,000) lane
# spans with origins, in one recording: one recurse process per CPU,
# DEPTH (60) frames deep, sampled at FREQ (20000) Hz with frame pointers,
# while the lanes example reports its spans from 2 threads. A short
# calibration run measures the sample rate the machine delivers; the
# recording lasts what SAMPLES need, at most MAX_SECONDS (120).
#
#   speed   wall time and peak memory of the export in each format, against
#           gtrace threads on the same file (which loads the model and
#           prints a few lines): the difference is what exporting adds.
#   size    the recording as gtrace.data, .pftrace, .json, pprof's .pb.gz
#           and the SQLite database (when gtrace has it built in), and each
#           against gtrace.data; bytes per sample (an export of the recurse
#           processes only: --comm recurse) and per span (of the lanes
#           only: --tid of the lanes; none for pprof, a profile of the CPU
#           stacks).
#
# usage: bench/export.sh   (SAMPLES=1000000 SPANS=100000 FREQ=20000 DEPTH=60 BUILD=build)

. "$(dirname "$0")/lib.sh"

SAMPLES=${SAMPLES:-1000000}
SPANS=${SPANS:-100000}
FREQ=${FREQ:-20000}
DEPTH=${DEPTH:-60}
MAX_SECONDS=${MAX_SECONDS:-120}
cpus=$(nproc)
LANES=$WORKLOADS/lanes
[ -x "$LANES" ] || { echo "bench: no '$LANES': run make tests first" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench: needs GNU time in /usr/bin/time (package time)" >&2; exit 1; }

# workload SECONDS SPANS: the command line: the recursions, and the lanes
# example reporting SPANS spans meanwhile.
workload() {
	echo "for i in \$(seq $cpus); do $WORKLOADS/recurse $DEPTH $1 & done;" \
	     "$LANES --wait-active 5 --threads 2 --spans $(($2 / 2)) >/dev/null; wait"
}

"$GTRACE" record -q -F "$FREQ" --call-graph fp -o "$WORK/calibrate.data" -- \
	sh -c "$(workload 2 1000)"
rate=$(( $(gtrace_samples "$WORK/calibrate.data") / 2 ))
run_seconds=$(seconds_for "$rate")
echo "about $rate samples/s ($FREQ Hz asked, $cpus CPUs): recording ${run_seconds} s"

data=$WORK/gtrace.data
cmd=$(workload "$run_seconds" "$SPANS")
say "$GTRACE record -q -F $FREQ --call-graph fp -o gtrace.data -- sh -c '$cmd'"
"$GTRACE" record -q -F "$FREQ" --call-graph fp -o "$data" -- sh -c "$cmd"
samples=$(gtrace_samples "$data")
spans=$("$GTRACE" threads -i "$data" | awk '$2 ~ /^0x/ { n += $(NF - 3) } END { print n + 0 }')
lanes=$("$GTRACE" threads -i "$data" | awk '$2 ~ /^0x/ { printf "%s%s", sep, $2; sep = "," }')
cat "$data" >/dev/null
formats="perfetto chrome pprof"
"$GTRACE" --version | grep -q '^sqlite export: yes' && formats="$formats sqlite"

say "/usr/bin/time -v $GTRACE threads -i gtrace.data >/dev/null"
timed load "$GTRACE" threads -i "$data"
for format in $formats; do
	say "/usr/bin/time -v $GTRACE export -i gtrace.data --format $format -o $WORK/all.$format"
	timed $format "$GTRACE" export -i "$data" --format $format -o "$WORK/all.$format"
	say "$GTRACE export -i gtrace.data --format $format --comm recurse -o samples.$format"
	"$GTRACE" export -i "$data" --format $format --comm recurse -o "$WORK/samples.$format"
	say "$GTRACE export -i gtrace.data --format $format --tid $lanes -o spans.$format"
	"$GTRACE" export -i "$data" --format $format --tid "$lanes" -o "$WORK/spans.$format"
done
recurse_samples=$("$GTRACE" threads -i "$data" |
	awk '$3 == "recurse" { n += $4 } END { print n + 0 }')

printf '\nrecording: %s samples (%s of recurse), %s spans; gtrace.data %s bytes\n' \
	"$samples" "$recurse_samples" "$spans" "$(file_size "$data")"
printf '\n%-9s %12s %7s %9s %12s %14s %12s\n' what file-bytes x-data wall-s max-rss-MiB \
	bytes/sample bytes/span
read -r wall rss <"$WORK/load.result"
awk -v b="$(file_size "$data")" -v w="$wall" -v r="$rss" -v n="$samples" -v s="$spans" 'BEGIN {
	printf "%-9s %12d %7.2f %9.2f %12.1f %14s %12s\n", "threads", b, 1, w, r / 1024, "-", "-" }'
for format in $formats; do
	read -r wall rss <"$WORK/$format.result"
	awk -v f="$format" -v b="$(file_size "$WORK/all.$format")" -v w="$wall" -v r="$rss" \
	    -v d="$(file_size "$data")" \
	    -v bs="$(file_size "$WORK/samples.$format")" -v n="$recurse_samples" \
	    -v bl="$(file_size "$WORK/spans.$format")" -v s="$spans" 'BEGIN {
		per_span = f == "pprof" ? "-" : sprintf("%.1f", bl / s)
		printf "%-9s %12d %7.2f %9.2f %12.1f %14.1f %12s\n", f, b, b / d, w, r / 1024,
		       bs / n, per_span }'
done
