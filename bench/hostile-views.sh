#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The offline views on hostile recordings (tests/hostile/view-recordings,
# reader-recordings):
# wall time and peak RSS of each command, GTRACE's build against another's
# to compare (e.g. GTRACE=/path/to/old/gtrace). Each command runs under
# CAP_SECONDS (default 60) of wall time and 4 GB of address space; one cut
# short prints "capped".
#
#   deep    one stack DEPTH (60000) frames deep, a sample at each depth
#   storm   one launch of STORM (80000) kernel spans, as many PC samples
#   meta    META (80000) meta keys
#   regions REGIONS (40000) kernels and a kernel region of each
#   long    a kernel region of names 256 KiB long, collected LONG (20000) times
#   job     a directory of JOB (2000) recordings, the ranks of a job
#   counters  COUNTERS (300000) counters, read as two ranks
#
# usage: bench/hostile-views.sh   (DEPTH=60000 STORM=80000 META=80000 REGIONS=40000
#                                  LONG=20000 JOB=2000 COUNTERS=300000 GTRACE=build/gtrace)

. "$(dirname "$0")/lib.sh"

DEPTH=${DEPTH:-60000}
STORM=${STORM:-80000}
META=${META:-80000}
REGIONS=${REGIONS:-40000}
LONG=${LONG:-20000}
JOB=${JOB:-2000}
COUNTERS=${COUNTERS:-300000}
CAP_SECONDS=${CAP_SECONDS:-60}
MAKER=$BUILD/tests/hostile/view-recordings
READER_MAKER=$BUILD/tests/hostile/reader-recordings
for tool in "$MAKER" "$READER_MAKER"; do
	[ -x "$tool" ] || { echo "bench: no '$tool': run make tests first" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "bench: needs GNU time in /usr/bin/time (package time)" >&2; exit 1; }

cd "$WORK"
"$MAKER" deep deep.data "$DEPTH"
"$MAKER" storm storm.data "$STORM"
"$MAKER" meta meta.data "$META"
"$READER_MAKER" regions regions.data "$REGIONS"
"$READER_MAKER" long-names long.data "$LONG"
"$READER_MAKER" counters counters.data "$COUNTERS"
mkdir job
"$READER_MAKER" job job "$JOB"
for f in deep storm meta regions long counters; do
	echo "$f.data: $(stat -c %s "$f.data") bytes"
done
echo "job: $JOB recordings, $(du -bs job | cut -f1) bytes"

# run ARGS...: gtrace ARGS under the caps, its wall time and peak RSS.
run() {
	local status=0
	say "$GTRACE $*"
	( ulimit -v 4000000 && exec /usr/bin/time -f '%e %M' -o "$WORK/time" \
		timeout "$CAP_SECONDS" "$GTRACE" "$@" ) >/dev/null 2>"$WORK/err" || status=$?
	if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
		printf '  capped: past %s s\n' "$CAP_SECONDS"
	elif [ "$status" -ne 0 ]; then
		printf '  failed (exit %s): %s\n' "$status" "$(tail -1 "$WORK/err")"
	else
		awk 'END { printf "  %.2f s, %.0f MiB peak RSS\n", $1, $2 / 1024 }' "$WORK/time"
	fi
}

run report -i deep.data
run diff deep.data deep.data
run flame --diff --svg deep-diff.svg deep.data deep.data
run report --gpu-pc -i storm.data
run flame --gpu-pc --folded -i storm.data
run diagnose -i meta.data
run diagnose --format json -i meta.data
run export -o meta.pftrace -i meta.data
run report --gpu -i regions.data
run report --gpu -i long.data
run report --ranks -i job
run diagnose --align collectives -i job
run diagnose -i counters.data -i counters.data
