#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Where a recording's bytes go, by table and by column (table-sizes.c):
# FILE's chunks decoded and encoded again by this build, so that two
# builds (BUILD=...) compare their encodings on the same rows. Without
# FILE, the threads workload recorded for TARGET_SECONDS at FREQ Hz, as
# bench/overhead.sh records it.
#
# usage: bench/table-sizes.sh [FILE]   (FREQ=999 TARGET_SECONDS=5 BUILD=build)

. "$(dirname "$0")/lib.sh"

FREQ=${FREQ:-999}
TARGET_SECONDS=${TARGET_SECONDS:-5}
tool=$WORK/table-sizes
compile_bench "$tool" bench/table-sizes.c libgtrace-core.a -lzstd src

file=${1:-}
if [ -z "$file" ]; then
	file=$WORK/threads.data
	say "$GTRACE record -q -F $FREQ -o OUT -- $WORKLOADS/threads $TARGET_SECONDS"
	"$GTRACE" record -q -F "$FREQ" -o "$file" -- "$WORKLOADS/threads" "$TARGET_SECONDS" \
		>/dev/null 2>&1 || { echo "bench: the threads workload's record failed" >&2; exit 1; }
	echo "file: $(file_size "$file") bytes, $(gtrace_samples "$file") samples"
fi
"$tool" "$file"
