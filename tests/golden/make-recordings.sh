#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Makes the golden recordings, tests/golden/recordings/*.data, once, by
# hand (tests/golden/README says when): each short, from the workloads of
# tests/workloads/, the CUDA doubles of tests/cuda/ and the NVML double of
# tests/metrics/, or written by a tool of tests/golden/; then stamped
# (tests/golden/stamp.c) so that they hold no name of the machine that made
# them: its host name is "golden" (rank 1's "golden-2", as if made on
# another machine), the repository "/src/gtrace", $HOME "/home/user" and
# the scratch folder they were recorded in "/tmp/golden".
# Needs what the e2e tests they come from need: perf_event_open, CUPTI's
# headers and nvcc (the PC sampling cubin), python3.11. Afterwards run
# `make golden-update` and review the diff of tests/golden/expected/.
#
# usage: tests/golden/make-recordings.sh [BUILD]   (default build; after make tests)
set -eu

SRCDIR=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-$SRCDIR/build}" && pwd)
GTRACE=$BUILD/gtrace
WORKLOADS=$BUILD/workloads
CUDA_DIR=$BUILD/tests/cuda
GOLDEN=$BUILD/tests/golden
OUT=$SRCDIR/tests/golden/recordings

for file in "$GTRACE" "$GOLDEN/stamp" "$GOLDEN/origins" "$BUILD/tests/ranks/retime" \
	"$CUDA_DIR/fake-app" "$CUDA_DIR/kr-app" "$CUDA_DIR/pc-app.sm_90.cubin" \
	"$BUILD/tests/metrics/libnvidia-ml.so.1"; do
	[ -e "$file" ] || { echo "make-recordings: no '$file': run make tests" >&2; exit 1; }
done
py311=
for py in /usr/bin/python3.11 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.11*/bin/python3.11; do
	[ -x "$py" ] && py311=$py && break
done
[ -n "$py311" ] || { echo "make-recordings: no CPython 3.11" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/gtrace-golden.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
mkdir raw barrier
unset FAKE_CUPTI_FAULTS FAKE_CUPTI_VERSION FAKE_CUDA_DEVICES GTRACE_CUDA_AGENT \
	CUDA_INJECTION64_PATH NVTX_INJECTION64_PATH FAKE_NVML GTRACE_NVML RANK WORLD_SIZE

# record NAME [RECORD-OPTIONS] -- CMD...: records CMD into raw/NAME.data.
record() {
	name=$1
	shift
	echo "recording $name" >&2
	"$GTRACE" record -q -o "raw/$name.data" "$@" >/dev/null
}

# CPU only, DWARF stacks: three threads; a program before and after a
# change, for diff; Python frames.
record cpu -F 199 --no-metrics -- "$WORKLOADS/threads" 0.3
record regress-base --no-metrics -- "$WORKLOADS/regress" 1
record regress-new --no-metrics -- "$WORKLOADS/regress" 1 50
record python -F 99 --no-metrics -- "$py311" "$SRCDIR/tests/workloads/pywork.py" 1
# Lanes that a program reports through libgtrace-target, its origins linked.
record lanes --no-metrics -- "$WORKLOADS/lanes" --threads 2 --spans 100 --queue-work
# Metrics, with one GPU of the NVML double.
(
	GTRACE_NVML=$BUILD/tests/metrics/libnvidia-ml.so.1
	FAKE_NVML="gpus=1; sm=10,60,90; memutil=5,30; mem_used_mib=1024,4096; temp=61"
	export GTRACE_NVML FAKE_NVML
	record metrics -F 99 --metrics-interval 50ms -- "$WORKLOADS/memsteps" 2 4 0.15
)

# CUDA on the doubles: kernels, copies, a memset, NVTX ranges, a graph;
# PC samples and their cubin; kernel regions; two ranks of a job.
LD_LIBRARY_PATH=$CUDA_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
GTRACE_CUPTI=$CUDA_DIR/libcupti.so.13
export LD_LIBRARY_PATH GTRACE_CUPTI
record cuda --no-metrics -- "$CUDA_DIR/fake-app" --nvtx-more
record cuda-pc --no-metrics --gpu-pc-sampling=period=12,rate=0 -- \
	"$CUDA_DIR/fake-app" --pc-cubin "$CUDA_DIR/pc-app.sm_90.cubin" --launches 2
record kregions --no-metrics -- "$CUDA_DIR/kr-app" --launches 2
for rank in 0 1; do
	(
		RANK=$rank WORLD_SIZE=2 FAKE_APP_SLOW_RANK=1 FAKE_APP_BARRIER=$work/barrier
		export RANK WORLD_SIZE FAKE_APP_SLOW_RANK FAKE_APP_BARRIER
		record "rank.$rank" --no-metrics -- "$CUDA_DIR/fake-app" --collectives 5
	) &
done
wait
[ -s raw/rank.0.data ] && [ -s raw/rank.1.data ] ||
	{ echo "make-recordings: a rank failed" >&2; exit 1; }
# Rank 1 as another machine's would be, whose realtime clock is 5 ms off:
# its clock pairs misplace it, its collectives put it back (--align).
"$BUILD/tests/ranks/retime" raw/rank.1.data raw/rank.1.moved 5000000 realtime
mv raw/rank.1.moved raw/rank.1.data

# Written, not recorded: span origins of every outcome.
"$GOLDEN/origins" raw/origins.data

rm -f "$OUT"/*.data "$OUT"/ranks/*.data
mkdir -p "$OUT/ranks"
for raw in raw/*.data; do
	name=${raw#raw/}
	host=golden
	case $name in rank.*) name=ranks/$name ;; esac
	case $name in ranks/rank.1.data) host=golden-2 ;; esac
	"$GOLDEN/stamp" "$raw" "$OUT/$name" "$BUILD=/src/gtrace/build" "$SRCDIR=/src/gtrace" \
		"$work=/tmp/golden" "$HOME=/home/user" "hostname:=$host"
done
ls -l "$OUT" "$OUT/ranks"
