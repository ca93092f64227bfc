# SPDX-License-Identifier: MIT
# Many kernels: 60,000 launches of 500 kernels fill several of the agent's
# activity buffers, which the fake CUPTI hands back from its worker thread
# while the program runs and the rest at the end. Every kernel must arrive
# once, as one span, with no record dropped on the way.
. "$SRCDIR/tests/e2e/lib.sh"
. "$SRCDIR/tests/cuda/lib.sh"

need_cuda_fakes
need_perf_events

record many.data -- "$CUDA_DIR/fake-app" --kernels 60000 --names 500
run_gtrace diagnose -i many.data >diag.txt
expect_counter diag.txt cuda.records.kernel 60000
# 60,000 kernel records of 216 bytes: more than one buffer of 8 MiB.
at_least "buffers" "$(cuda_counter diag.txt cuda.buffers)" 2
for problem in dropped no-timestamp incomplete no-origin; do
	expect_counter diag.txt cuda.$problem 0
done
# The launching thread may outrun the drain of its own "CUDA API" lane (a
# launch every microsecond, slower still under ASan): such drops are
# counted, and every span is either recorded or dropped, never lost.
recorded=$(target_counter diag.txt spans)
dropped=$(awk '/^spans dropped:/ { print $3 }' diag.txt)
reported=$(sed -n 's/^spans dropped:.* of \([0-9]*\) reported.*/\1/p' diag.txt)
[ -n "$reported" ] || reported=$recorded
[ $((recorded + ${dropped:-0})) -eq "$reported" ] ||
	fail "$recorded spans recorded and ${dropped:-0} dropped, but $reported reported"

run_gtrace threads -i many.data >threads.txt
expect_lane threads.txt cuda "GPU0 stream 13" 30000
expect_lane threads.txt cuda "GPU0 stream 14" 30000
run_gtrace report -i many.data --gpu >gpu.txt
expect_contains gpu.txt '^# CUDA kernels: 60000 instances of 500 kernels'
expect_row gpu.txt ' kernel042(float*, int)' ' 120 +0\.100 +0\.100 +0\.100 +0\.100 '

# A small queue (GTRACE_TARGET_QUEUE): the launching thread drops launch
# calls' spans as it fills, but the agent waits for room before each
# quarter of it that a walk of a buffer takes, the first included (the
# walk at exit runs on that thread), so no kernel is lost.
GTRACE_TARGET_QUEUE=1024 record small.data -- "$CUDA_DIR/fake-app" --kernels 20000 --names 50
run_gtrace threads -i small.data >small-threads.txt
expect_lane small-threads.txt cuda "GPU0 stream 13" 10000
expect_lane small-threads.txt cuda "GPU0 stream 14" 10000
