# SPDX-License-Identifier: MIT
# A real CUDA program (tests/cuda/real-app.cu, built by nvcc) recorded on a
# machine without a GPU or an NVIDIA driver, with the real CUPTI: it fails
# as it would without gtrace, and its exit status comes through; the CPU
# samples are recorded; diagnose says that no GPU was available; and
# scripts/gpu-smoke.sh refuses to run, saying why.
. "$SRCDIR/tests/e2e/lib.sh"

app=$BUILD/tests/cuda/real-app
grep -q '^HAVE_CUPTI = 1' "$SRCDIR/config.mk" 2>/dev/null ||
	skip cuda "configure found no CUPTI (HAVE_CUPTI=0): the CUDA agent is not built"
[ -f "$BUILD/libgtrace-cuda.so" ] || fail "the CUDA agent is not built ($BUILD/libgtrace-cuda.so): run make tests"
[ -x "$app" ] || skip nvcc "no nvcc built the real CUDA program ($app)"
if [ -e /proc/driver/nvidia/version ]; then
	skip no-gpu-driver "this machine has an NVIDIA driver: scripts/gpu-smoke.sh checks real GPUs"
fi
need_perf_events
unset GTRACE_CUPTI GTRACE_CUDA_AGENT CUDA_INJECTION64_PATH NVTX_INJECTION64_PATH

# The program's own status and message without gtrace...
expect_exit 2 "$app"
expect_contains "$TESTDIR/stderr" '^real-app: cuda'
cp "$TESTDIR/stderr" alone.txt

# ... and the same under gtrace record.
expect_exit 2 "$GTRACE" record -q -o real.data -- "$app"
expect_contains "$TESTDIR/stderr" '^real-app: cuda'
[ -s real.data ] || fail "gtrace record wrote no 'real.data'"

run_gtrace threads -i real.data >threads.txt
expect_contains threads.txt ' real-app +[0-9]+ '
run_gtrace diagnose -i real.data >diag.txt
expect_contains diag.txt '^cuda\.injection: +/.*libgtrace-cuda\.so$'
expect_contains diag.txt '^cuda\.driver: +none: no NVIDIA kernel driver loaded$'
expect_contains diag.txt '^CUDA: +no GPU was available'

# scripts/gpu-smoke.sh says why it cannot run here, and keeps its directory.
expect_exit 2 env WORK=smoke sh "$SRCDIR/scripts/gpu-smoke.sh" "$BUILD"
expect_contains "$TESTDIR/stdout" '^gpu-smoke: cannot run: no NVIDIA driver is loaded'
expect_contains smoke/summary.txt '^gpu-smoke: cannot run: no NVIDIA driver is loaded'
