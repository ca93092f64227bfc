# SPDX-License-Identifier: MIT
# The CUDA runtime domain end to end, on the test doubles: fake-rt-app (see
# its header for what it does) calls the fake runtime, which works through
# the fake driver as the real one does. Each runtime call is one span on
# the CUDA API lane, the driver calls it makes none of their own; its GPU
# work links back to it; the calls that wait (frees included, which wait
# implicitly) are on the CPU wait lane; cudaDeviceReset loses nothing that
# ran before it; the hot queries (cudaGetDevice, cudaGetLastError) are left
# out unless --cuda-api=all; and no API activity record reaches the agent.
. "$SRCDIR/tests/e2e/lib.sh"
. "$SRCDIR/tests/cuda/lib.sh"

need_cuda_fakes
for file in libcudart.so.13 fake-rt-app; do
	[ -e "$CUDA_DIR/$file" ] || fail "the CUDA test doubles are not built ($CUDA_DIR/$file): run make tests"
done
need_perf_events

record rt.data -- "$CUDA_DIR/fake-rt-app"
run_gtrace threads -i rt.data >threads.txt
# 24 runtime calls: not the 20 queries, not the 31 driver calls nested in them.
expect_lane threads.txt cuda-api "CUDA API" 24
expect_lane threads.txt cuda-wait "CPU wait" 5
expect_lane threads.txt cuda "GPU0 stream 13" 13	# memset, 10 vector_add, DtoH, last_step
expect_lane threads.txt cuda "GPU0 stream 7" 3	# HtoD, 2 matmul

run_gtrace report -i rt.data --gpu >gpu.txt
expect_contains gpu.txt '^# CUDA kernels: 13 instances of 3 kernels'
expect_contains gpu.txt '^# CUDA API: 24 calls'
expect_row gpu.txt ' cudaLaunchKernel' ' 13 '
expect_not_contains gpu.txt ' cuLaunchKernel$'
expect_not_contains gpu.txt ' cuCtxCreate_v4$'
expect_not_contains gpu.txt ' cudaGetDevice$'
expect_not_contains gpu.txt ' cudaGetLastError$'
# The waits, the frees among them: the first waits for the matmuls (400 us).
awk '/^# CPU waiting on the GPU/ { on = 1 } on' gpu.txt >waits.txt
expect_row waits.txt ' cudaStreamSynchronize' ' 1 '
expect_row waits.txt ' cudaDeviceSynchronize' ' 1 '
expect_row waits.txt ' cudaMemcpy' ' 1 '
expect_row waits.txt ' cudaFree' ' 2 +[0-9.]+ +[0-9.]+ +[0-9.]+ +([3-9][0-9]{2}|[0-9]{4,})\.'
expect_not_contains waits.txt ' cudaMemcpyAsync$'
# The kernel still running when cudaDeviceReset began: the reset waited
# for it, and the flush at its start did not take it as incomplete.
expect_row gpu.txt ' last_step()' ' 1 +5000\.000 '

# export names each call's API, the runtime's here.
run_gtrace export -i rt.data --format chrome -o rt.json
expect_contains rt.json '"name":"cudaLaunchKernel",.*"api\.domain":"runtime"'
expect_not_contains rt.json '"api\.domain":[0-9]'

run_gtrace diagnose -i rt.data >diag.txt
expect_contains diag.txt '^cuda\.status: +active$'
expect_contains diag.txt '^cuda\.flush: +clean$'
expect_counter diag.txt cuda.records.kernel 13
for problem in dropped no-timestamp incomplete causality no-origin; do
	expect_counter diag.txt cuda.$problem 0
done
# No RUNTIME or DRIVER record: the callbacks make those spans.
expect_counter diag.txt cuda.records.runtime 0
expect_counter diag.txt cuda.records.driver 0
expect_counter diag.txt cuda.records.other 0
# Every GPU span found the runtime call that queued it, on the program's thread.
for outcome in none bad_tid no_thread; do
	[ "$(origins_total diag.txt $outcome)" -eq 0 ] ||
		{ show diag.txt; fail "lane spans with origin outcome $outcome"; }
done

# Every call, the queries included, with --cuda-api=all; still no nested driver call.
record all.data --cuda-api=all -- "$CUDA_DIR/fake-rt-app"
run_gtrace threads -i all.data >all-threads.txt
expect_lane all-threads.txt cuda-api "CUDA API" 44
run_gtrace report -i all.data --gpu >all-gpu.txt
expect_row all-gpu.txt ' cudaGetDevice' ' 10 '
expect_row all-gpu.txt ' cudaGetLastError' ' 10 '
expect_not_contains all-gpu.txt ' cuLaunchKernel$'
