#!/bin/bash
# SPDX-License-Identifier: MIT
#
# What reading the ranks of a job together costs: gtrace report (and
# report --ranks) of R recordings merged, one per rank, against gtrace
# report of one recording that holds the same samples, in wall time and
# peak memory. Each rank is the hot workload under a recorder of its own,
# told its rank the way torchrun tells it (RANK, LOCAL_RANK, WORLD_SIZE);
# the single recording follows the same R processes with one recorder.
#
# The recordings aim at SAMPLES (default 1,000,000) samples in all, at FREQ
# (default 4999) Hz: a short calibration run measures the rate the machine
# delivers, and each recording lasts what that rate needs, at most
# MAX_SECONDS (default 150). All of them share the machine's CPUs, so the
# total rate does not grow with R.
#
# usage: bench/ranks.sh   (RANKS="4 8" SAMPLES=1000000 FREQ=4999 BUILD=build)

. "$(dirname "$0")/lib.sh"

RANKS=${RANKS:-4 8}
SAMPLES=${SAMPLES:-1000000}
FREQ=${FREQ:-4999}
MAX_SECONDS=${MAX_SECONDS:-150}
cpus=$(nproc)
[ -x /usr/bin/time ] || { echo "bench: needs GNU time in /usr/bin/time (package time)" >&2; exit 1; }

# processes N SECONDS: the command line of N hot processes at once.
processes() {
	echo "for i in \$(seq $1); do $WORKLOADS/hot $2 & done; wait"
}

"$GTRACE" record -q -F "$FREQ" -o "$WORK/calibrate.data" -- sh -c "$(processes "$cpus" 2)"
rate=$(( $(gtrace_samples "$WORK/calibrate.data") / 2 ))
seconds=$(seconds_for "$rate")
echo "about $rate samples/s ($FREQ Hz asked, $cpus CPUs): recording ${seconds} s each"

# samples_in PATH...: the samples of these recordings together.
samples_in() {
	local n=0 f
	for f in "$@"; do
		n=$(( n + $(gtrace_samples "$f") ))
	done
	echo "$n"
}

results=()
for r in $RANKS; do
	dir=$WORK/ranks$r
	mkdir -p "$dir"
	say "for i in \$(seq 0 $((r - 1))); do RANK=\$i LOCAL_RANK=\$i WORLD_SIZE=$r" \
		"$GTRACE record -q -F $FREQ -o ranks$r/gtrace.%r.data -- $WORKLOADS/hot $seconds & done; wait"
	for ((i = 0; i < r; i++)); do
		RANK=$i LOCAL_RANK=$i WORLD_SIZE=$r "$GTRACE" record -q -F "$FREQ" \
			-o "$dir/gtrace.%r.data" -- "$WORKLOADS/hot" "$seconds" &
	done
	wait
	single=$WORK/single$r.data
	say "$GTRACE record -q -F $FREQ -o single$r.data -- sh -c '$(processes "$r" "$seconds")'"
	"$GTRACE" record -q -F "$FREQ" -o "$single" -- sh -c "$(processes "$r" "$seconds")"

	# Read the files once so that no report pays for the disk.
	cat "$dir"/* "$single" >/dev/null
	say "/usr/bin/time -v $GTRACE report -i ranks$r/ >/dev/null"
	timed "merged$r" "$GTRACE" report -i "$dir"
	say "/usr/bin/time -v $GTRACE report --ranks -i ranks$r/ >/dev/null"
	timed "ranks$r" "$GTRACE" report --ranks -i "$dir"
	say "/usr/bin/time -v $GTRACE report -i single$r.data >/dev/null"
	timed "single$r" "$GTRACE" report -i "$single"

	merged_samples=$(samples_in "$dir"/*)
	merged_bytes=$(cat "$dir"/* | wc -c)
	results+=("report-merged $r $r $merged_samples $merged_bytes $(cat "$WORK/merged$r.result")")
	results+=("report-ranks $r $r $merged_samples $merged_bytes $(cat "$WORK/ranks$r.result")")
	results+=("report-single $r 1 $(samples_in "$single") $(file_size "$single") \
$(cat "$WORK/single$r.result")")
done

# The rates of the runs may differ (a shared machine): compare per sample too.
printf '\n%-14s %5s %5s %9s %12s %9s %12s %12s\n' report ranks files samples file-bytes wall-s \
	max-rss-MiB rss-B/sample
for line in "${results[@]}"; do
	read -r name r files samples bytes wall rss <<<"$line"
	awk -v t="$name" -v r="$r" -v f="$files" -v n="$samples" -v b="$bytes" -v w="$wall" \
		-v m="$rss" 'BEGIN { printf "%-14s %5s %5s %9s %12s %9.2f %12.1f %12.1f\n",
			t, r, f, n, b, w, m / 1024, m * 1024 / n }'
done
