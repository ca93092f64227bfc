#!/bin/bash
# SPDX-License-Identifier: MIT
#
# What opening a hostile recording costs: the recordings of
# tests/hostile/table-bomb and cubin-bomb (a few KB that decompress to
# hundreds of MB of rows, or whose cubins cost 40 bytes a byte to parse),
# each read by report, diagnose and, for the cubins, report --gpu-pc --sass,
# in wall time and peak memory. Each run is capped (ulimit -v 4000000,
# timeout 30): a run that hit the cap says "capped" and how it ended.
#
# Then, unless RATIOS=0, what the recordings of real workloads decode to,
# in times their size (diagnose's "decoded"), against the read limit's
# 1024: short ones of each kind, and a large one of about SAMPLES
# (default 1,000,000) samples at 4999 Hz, as bench/ranks.sh makes.
#
# usage: bench/hostile-files.sh   (GTRACE=... to measure another build;
#        RATIOS=0 to skip the second part; SAMPLES=N)

. "$(dirname "$0")/lib.sh"

HOSTILE=$BUILD/tests/hostile
RATIOS=${RATIOS:-1}
SAMPLES=${SAMPLES:-1000000}
MAX_SECONDS=${MAX_SECONDS:-150}
[ -x /usr/bin/time ] || { echo "bench: needs GNU time in /usr/bin/time (package time)" >&2; exit 1; }
for tool in table-bomb cubin-bomb; do
	[ -x "$HOSTILE/$tool" ] || { echo "bench: no '$HOSTILE/$tool': run make tests first" >&2; exit 1; }
done

# The bombs: name, then the tool's command line (OUT is the file).
bombs=(
	"strings|table-bomb strings OUT"
	"samples|table-bomb samples OUT"
	"samples-x4|table-bomb samples OUT 4"
	"tids-2m|table-bomb tids OUT 1 2048"
	"padded|table-bomb samples OUT 1 262144 256"
	"cubin-rows|cubin-bomb rows OUT"
	"cubin-paths|cubin-bomb paths OUT 6 64"
	"cubin-big|cubin-bomb rows OUT 6 16384 1024"
)

# capped NAME CMD...: runs CMD under the caps; prints "wall-s rss-mib how".
capped() {
	local name=$1 status=0
	shift
	( ulimit -v 4000000; exec /usr/bin/time -f '%e %M' -o "$WORK/$name.time" \
		timeout -k 5 30 "$@" ) >/dev/null 2>"$WORK/$name.err" || status=$?
	awk -v status="$status" -v err="$WORK/$name.err" '
		END {
			how = status == 0 ? "ok" : "exit " status
			while ((getline line < err) > 0)
				if (line ~ /out of memory/) how = "capped: out of memory"
			if (status == 124 || status == 137) how = "capped: timed out"
			if (status == 134) how = "capped: aborted"
			printf "%s %.0f %s\n", $1, $2 / 1024, how
		}' "$WORK/$name.time"
}

echo "gtrace: $GTRACE; each: ulimit -v 4000000; /usr/bin/time timeout 30 gtrace COMMAND -i INPUT"
printf '%-12s %9s  %-24s %8s %9s  %s\n' input file-bytes command wall-s rss-mib result
for entry in "${bombs[@]}"; do
	name=${entry%%|*}
	args=${entry#*|}
	file=$WORK/$name.data
	say "$HOSTILE/${args/OUT/$name.data}"
	# shellcheck disable=SC2086 # the tool's words
	"$HOSTILE/"${args/OUT/$file} || { echo "bench: '$args' failed" >&2; exit 1; }
	cmds=("report" "diagnose")
	[[ $name == cubin* ]] && cmds+=("report --gpu-pc --sass")
	for cmd in "${cmds[@]}"; do
		# shellcheck disable=SC2086 # the command's words
		read -r wall rss how < <(capped "$name" "$GTRACE" $cmd -i "$file")
		printf '%-12s %9s  %-24s %8s %9s  %s\n' "$name" "$(file_size "$file")" "$cmd" \
			"$wall" "$rss" "$how"
	done
done

[ "$RATIOS" = 0 ] && exit 0

# decoded FILE: diagnose's decoded bytes over the file's size, with the limit.
decoded() {
	"$GTRACE" diagnose -i "$1" 2>/dev/null |
		awk '/^decoded:/ { d = $2; r = $4 } /^size:/ { s = $2 } /^samples:/ { n = $2 }
			/^spans:/ { p = $2 }
			END { printf "%10s %9s %8s %8s %7s\n", s, d ? d : "n/a", n, p, d ? r : "n/a" }'
}

# record NAME OPTIONS... -- CMD...: records quietly into WORK/NAME.data.
record() {
	local name=$1
	shift
	say "$GTRACE record -q -o $name.data $*"
	"$GTRACE" record -q -o "$WORK/$name.data" "$@" >/dev/null 2>"$WORK/$name.err" ||
		{ cat "$WORK/$name.err" >&2; echo "bench: recording $name failed" >&2; exit 1; }
}

echo
record hot -- "$WORKLOADS/hot" 2
record threads -- "$WORKLOADS/threads"
record recurse -- "$WORKLOADS/recurse"
record forkexec -- "$WORKLOADS/forkexec"
record hot-fp --call-graph fp -F 4999 -- "$WORKLOADS/hot-nofp" 3
record idle-metrics-1ms --metrics-interval 1ms -- sleep 20
record lanes-attrs -- "$WORKLOADS/lanes" --spans 100000 --names 1 --attrs
if [ -x "$CUDA_DIR/fake-app" ]; then
	use_cuda_doubles
	record cuda-kernels -- "$CUDA_DIR/fake-app" --kernels 300000 --names 1
	if [ -f "$CUDA_DIR/pc-app.sm_90.cubin" ]; then
		record cuda-pc --gpu-pc-sampling -- "$CUDA_DIR/fake-app" \
			--pc-cubin "$CUDA_DIR/pc-app.sm_90.cubin" --launches 2000
	fi
fi
cpus=$(nproc)
record calibrate -F 4999 -- sh -c "for i in \$(seq $cpus); do $WORKLOADS/hot 2 & done; wait"
rate=$(( $(gtrace_samples "$WORK/calibrate.data") / 2 ))
seconds=$(seconds_for "$rate")
record big -F 4999 -- sh -c "for i in \$(seq $cpus); do $WORKLOADS/hot $seconds & done; wait"

echo
printf '%-18s %10s %9s %8s %8s %7s\n' recording file-bytes decoded samples spans times
for f in "$WORK"/*.data; do
	name=$(basename "$f" .data)
	[[ $name == calibrate ]] && continue
	for entry in "${bombs[@]}"; do [[ $name == "${entry%%|*}" ]] && continue 2; done
	printf '%-18s %s\n' "$name" "$(decoded "$f")"
done
