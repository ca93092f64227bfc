#!/bin/bash
# SPDX-License-Identifier: MIT
#
# What GPU PC sampling costs in the file and in the agent, with the test
# doubles of tests/cuda (no GPU needed): fake-app running the kernels of
# tests/cuda/pc-app.cu's sm_90 cubin LAUNCHES times each, the fake CUPTI
# sampling every 2^PERIOD cycles, always on and kernel-serialized.
#
#   bucket  bytes per stored stall-reason bucket: the file's growth over
#           the same run recorded without --gpu-pc-sampling, cubin left
#           out (--gpu-cubin-max 0), per bucket kept; CPU sampling at
#           -F 1 so that it adds next to nothing either way. Goal: at
#           most 4 bytes (the compact schema the issue cites: ~30 a row).
#           The fake gives every launch the same counts, which zstd folds
#           away: a floor, not a figure for real kernels. Hence also the
#           synthetic one of tests/unit/test-format, with random counts
#           and stall reasons: the honest upper figure.
#   cubin   the cubin's bytes in the file: the growth from keeping it.
#   getdata the agent's time per cuptiPCSamplingGetData call, its handling
#           of the records included (cuda.pc.getdata-ns / -calls).
#
# Each run is shown, then the medians of REPEAT (default 3).
#
# usage: bench/gpu-pc.sh   (REPEAT=3 LAUNCHES=200 PERIOD=10 BUILD=build)

. "$(dirname "$0")/lib.sh"

REPEAT=${REPEAT:-3}
LAUNCHES=${LAUNCHES:-200}
PERIOD=${PERIOD:-10}
APP=$CUDA_DIR/fake-app
CUBIN=$CUDA_DIR/pc-app.sm_90.cubin
use_cuda_doubles "$APP" "$CUBIN" "$BUILD/libgtrace-cuda.so"

# run NAME OPTIONS...: records fake-app into NAME.data; its diagnose in NAME.diag.
run() {
	local name=$1
	shift
	"$GTRACE" record -q -F 1 -o "$WORK/$name.data" "$@" -- \
		"$APP" --pc-cubin "$CUBIN" --launches "$LAUNCHES" >/dev/null
	"$GTRACE" diagnose -i "$WORK/$name.data" >"$WORK/$name.diag"
}

# pc_field DIAG LINE ERE: the first number after ERE on diagnose's "PC LINE:".
pc_field() {
	sed -n "s/^PC $2: *//p" "$1" | grep -Eo "$3" | grep -Eo '[0-9.]+' | head -n 1
}

say "$GTRACE record -F 1 --gpu-pc-sampling=period=$PERIOD,rate=0 [--gpu-cubin-max 0] -- fake-app --pc-cubin pc-app.sm_90.cubin --launches $LAUNCHES"
for round in $(seq "$REPEAT"); do
	run plain
	run nocubin --gpu-pc-sampling=period="$PERIOD",rate=0 --gpu-cubin-max 0
	run pc --gpu-pc-sampling=period="$PERIOD",rate=0
	pairs=$(pc_field "$WORK/nocubin.diag" kept '^[0-9]+ pairs')
	plain=$(file_size "$WORK/plain.data")
	nocubin=$(file_size "$WORK/nocubin.data")
	pc=$(file_size "$WORK/pc.data")
	calls=$(pc_field "$WORK/pc.diag" GetData '^[0-9]+ calls')
	us=$(pc_field "$WORK/pc.diag" GetData '[0-9.]+ us each')
	awk -v b="$(( nocubin - plain ))" -v n="$pairs" 'BEGIN { printf "%.2f\n", b / n }' >>"$WORK/bucket"
	echo $(( pc - nocubin )) >>"$WORK/cubin"
	echo "$us" >>"$WORK/getdata"
	printf '  round %d: %s buckets in %d bytes (%.2f a bucket); cubin %d bytes in the file (%s raw); GetData %s calls, %s us each\n' \
		"$round" "$pairs" $(( nocubin - plain )) "$(tail -n 1 "$WORK/bucket")" \
		"$(tail -n 1 "$WORK/cubin")" "$(file_size "$CUBIN")" "$calls" "$us"
done
echo "  median: $(median <"$WORK/bucket") bytes a bucket, cubin $(median <"$WORK/cubin") bytes, GetData $(median <"$WORK/getdata") us a call"
say "$BUILD/tests/test-format (synthetic: 2000 launches of 4 kernels, 18 stall reasons)"
"$BUILD/tests/test-format" | grep 'PC sample buckets'
