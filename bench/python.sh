#!/bin/bash
# SPDX-License-Identifier: MIT
#
# gtrace on a CPython program (tests/workloads/pywork.py) beside perf -g and
# no recorder, and the same for a native program of about the same length:
#
#   slowdown    the command's wall time over the run without a recorder
#   cpu/sample  the recorder's CPU time per sample: the command's user+sys
#               CPU (recorder and target) minus the target's own, over the
#               samples recorded; Python against native says what reading
#               Python stacks costs
#   python      of the samples of Python threads, the share whose Python
#               stack was read and matched the native stack, and the share
#               that did not match (the thread moved on before the read:
#               the stack the read would have given belongs to another
#               moment)
#   misattributed  of the samples in each C routine of the workload (zlib,
#               SHA-256, bz2), the share whose innermost Python frame of
#               pywork.py is another function or line than the one that
#               calls the routine (tests/e2e/pyframes.py)
#
# usage: bench/python.sh   (PYTHON=python3.11 ROUNDS=4 REPEAT=3 FREQ=999 BUILD=build)

. "$(dirname "$0")/lib.sh"
need_perf

PYTHON=${PYTHON:-/usr/bin/python3.11}
ROUNDS=${ROUNDS:-4}
REPEAT=${REPEAT:-3}
FREQ=${FREQ:-999}
[ -x "$PYTHON" ] || { echo "bench: no CPython 3.11 (set PYTHON)" >&2; exit 1; }
python_cmd="$PYTHON $SRCDIR/tests/workloads/pywork.py $ROUNDS"

# The native program, calibrated to the Python one's length.
start=$(now)
$python_cmd
py_s=$(awk -v a="$start" -v b="$(now)" 'BEGIN { print b - a }')
"$WORKLOADS/hot-nofp" --loops 500 2>"$WORK/calibrate"
loops=$(awk -v s="$py_s" '/^hot: / { print int(500 * s / $(NF - 1)) }' "$WORK/calibrate")
native_cmd="$WORKLOADS/hot-nofp --loops $loops"

# command_of SETUP CMD OUT: CMD under that set-up, writing to OUT.
command_of() {
	case $1 in
	none) echo "$2" ;;
	perf-g) echo "$PERF record -q -F $FREQ -g -o $3 -- $2" ;;
	gtrace) echo "$GTRACE record -q -F $FREQ -o $3 -- $2" ;;
	esac
}

echo "python: $python_cmd"
echo "native: $native_cmd"
for setup in none perf-g gtrace; do
	say "$(command_of "$setup" CMD OUT)"
done
echo "$REPEAT rounds, interleaved, on $(nproc) CPUs"

for round in $(seq "$REPEAT"); do
	for target in python native; do
		cmd=${target}_cmd
		for setup in none perf-g gtrace; do
			out=$WORK/$target.$setup.$round.data
			# shellcheck disable=SC2046 # the command line, split into words
			/usr/bin/time -f "%e %U %S" -o "$WORK/time" $(command_of "$setup" "${!cmd}" "$out") \
				>/dev/null 2>"$WORK/stderr" ||
				{ cat "$WORK/stderr" >&2; echo "bench: $target $setup failed" >&2; exit 1; }
			read -r wall user sys <"$WORK/time"
			samples=0
			[ "$setup" = gtrace ] && samples=$(gtrace_samples "$out")
			echo "$target $setup $wall $(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }') $samples" \
				>>"$WORK/runs"
		done
	done
	echo "  round $round done"
done

# stat TARGET SETUP COLUMN: the median of that column over the rounds.
stat() {
	awk -v t="$1" -v s="$2" -v c="$3" '$1 == t && $2 == s { print $c }' "$WORK/runs" | median
}

echo
printf "%-8s %-8s %9s %9s %12s\n" target setup wall-s slowdown cpu/sample
for target in python native; do
	base=$(stat "$target" none 3)
	base_cpu=$(stat "$target" none 4)
	for setup in none perf-g gtrace; do
		wall=$(stat "$target" "$setup" 3)
		cpu=$(stat "$target" "$setup" 4)
		samples=$(stat "$target" "$setup" 5)
		awk -v t="$target" -v s="$setup" -v w="$wall" -v b="$base" -v c="$cpu" -v bc="$base_cpu" \
			-v n="$samples" 'BEGIN { printf "%-8s %-8s %9.3f %8.1f%% %12s\n", t, s, w,
				100 * (w / b - 1), (n > 0 ? sprintf("%.1f us", 1e6 * (c - bc) / n) : "-") }'
	done
done

echo
for round in $(seq "$REPEAT"); do
	"$GTRACE" diagnose -i "$WORK/python.gtrace.$round.data"
done | awk '$1 == "python.matched" { m += $2 } $1 == "python.mismatch" { x += $2 }
	$1 ~ /^python\.(no-thread-state|read-failed|exited)$/ { o += $2 }
	END { n = m + x + o
	      printf "python stacks: %d samples of Python threads: %.1f%% read and matched, " \
		"%.1f%% mismatched (moved on before the read), %.1f%% not read\n",
		n, 100 * m / n, 100 * x / n, 100 * o / n }'

echo
for round in $(seq "$REPEAT"); do
	"$GTRACE" flame -i "$WORK/python.gtrace.$round.data" --folded
done | python3 "$SRCDIR/tests/e2e/pyframes.py" "$SRCDIR/tests/workloads/pywork.py" \
	'zlib=^\[libz|^deflate|^adler32=compress_work=zlib.compress(' \
	'sha256=^\[libcrypto|^SHA256=hash_work=hashlib.sha256(' \
	'bz2=^\[libbz2|^BZ2_=bzip_work=bz2.compress(' || true
