# SPDX-License-Identifier: MIT
# gtrace diff on the CUDA test doubles: fake-app recorded as it is and
# with vector_add 10% slower (FAKE_CUDA_SLOWER): vector_add alone is a
# kernel regression and --fail exits 3; two unchanged runs show none. The
# fake durations are exact, so kernels and copies are compared alone: API
# calls take real, noisy time.
. "$SRCDIR/tests/e2e/lib.sh"
. "$SRCDIR/tests/cuda/lib.sh"

need_cuda_fakes
need_perf_events

record base.data -- "$CUDA_DIR/fake-app"
record again.data -- "$CUDA_DIR/fake-app"
FAKE_CUDA_SLOWER=vector_add=10
export FAKE_CUDA_SLOWER
record slow.data -- "$CUDA_DIR/fake-app"
unset FAKE_CUDA_SLOWER

expect_exit 3 "$GTRACE" diff --fail --by kernel,copy base.data slow.data
cp stdout slow.txt
expect_contains slow.txt '^  kernel +10 +10 +200\.0us +220\.0us +\+10\.0% .* regression +vector_add$'
[ "$(grep -c ' regression ' slow.txt)" -eq 1 ] || { show slow.txt; fail "more than vector_add regressed"; }
expect_contains slow.txt '^  kernel .* same +matmul\(float\*, float\*, float\*, int\)$'
expect_exit 0 "$GTRACE" diff --fail --by kernel,copy base.data again.data
expect_contains stdout ': 0 regressions, 0 improvements, 0 added, 0 removed$'
# Copies carry their bytes and rate: fake-app's 2 HtoD of 1 MB at 10 GB/s.
run_gtrace diff --by copy --format json base.data slow.data >copy.json
python3 - copy.json <<'PY' || fail "the HtoD copies' bytes or rate are wrong (see above)"
import json, sys
rows = {r["name"]: r for r in json.load(open(sys.argv[1]))["rows"]}
htod = rows["[CUDA memcpy HtoD]"]["new"]
assert htod["count"] == 2 and htod["bytes"] == 2000000, htod
assert abs(htod["gbps"] - 10) < 0.01, htod
PY
exit 0
