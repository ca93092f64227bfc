# SPDX-License-Identifier: MIT
# The CUDA agent end to end, on the test doubles: fake-app (see its header
# for what it does and the occupancy computed by hand) recorded by the real
# gtrace record, which injects the agent into it. Its GPU work must land on
# the right stream lanes with the simulated durations, link back to the
# functions that queued it, and show in report --gpu, threads, flame and
# diagnose.
. "$SRCDIR/tests/e2e/lib.sh"
. "$SRCDIR/tests/cuda/lib.sh"

need_cuda_fakes
need_perf_events

record app.data -- "$CUDA_DIR/fake-app"

# One lane per stream, and the process's API, wait and NVTX lanes.
run_gtrace threads -i app.data >threads.txt
expect_lane threads.txt cuda "GPU0 stream 13" 15	# memset, 10 vector_add, 4 tiny
expect_lane threads.txt cuda "GPU0 stream 14" 8	# 4 matmul, 3 graph kernels, DtoH
expect_lane threads.txt cuda "GPU0 stream 7" 3	# 2 HtoD, DtoD on the default stream
expect_lane threads.txt cuda-wait "CPU wait" 6
expect_lane threads.txt nvtx NVTX 4
expect_lane threads.txt cuda-api "CUDA API" 50

# One clock: GPU spans fall inside the recording, as the program's own
# thread does (CUPTI's default clock would put them decades away).
app_last=$(thread_column threads.txt fake-app 8)
awk -v last="$app_last" '$2 ~ /^0xfff/ && ($(NF - 1) < 0 || $NF > last + 0.05) { bad = 1 }
	END { exit bad }' threads.txt ||
	{ show threads.txt; fail "lane spans lie outside the program's run"; }

run_gtrace report -i app.data --gpu >gpu.txt
expect_contains gpu.txt '^# CUDA kernels: 21 instances of 4 kernels'
# Instances, durations (avg, median, min, max: all the simulated one),
# grid, block, registers and the occupancy computed by hand in fake-app.c.
expect_row gpu.txt ' vector_add' \
	' 10 +200\.000 +200\.000 +200\.000 +200\.000 +0\.000 +4096x1x1 +256x1x1 +24 +100\.0% warps '
expect_row gpu.txt ' matmul(float*, float*, float*, int)' \
	' 4 +500\.000 +500\.000 +500\.000 +500\.000 +0\.000 +64x64x1 +16x16x1 +64 +50\.0% registers '
expect_row gpu.txt ' graph_step(float*)' \
	' 3 +5000\.000 +5000\.000 +5000\.000 +5000\.000 +0\.000 +1024x1x1 +128x1x1 +32 +37\.5% shared-memory '
expect_row gpu.txt ' tiny()' \
	' 4 +5\.000 +5\.000 +5\.000 +5\.000 +0\.000 +1x1x1 +32x1x1 +16 +50\.0% blocks '
# Copies by kind: count, bytes, average time and bandwidth.
expect_row gpu.txt ' HtoD' ' 2 +2\.000 MB +100\.000 +10\.000 '
expect_row gpu.txt ' DtoH' ' 1 +2\.000 MB +200\.000 +10\.000 '
expect_row gpu.txt ' DtoD' ' 1 +4\.000 MB +40\.000 +100\.000 '
expect_row gpu.txt ' memset' ' 1 +1\.000 MB +10\.000 +100\.000 '
# The same tables as JSON, with the keys gtrace-report(1) lists.
run_gtrace report -i app.data --gpu --format json >gpu.json
python3 - gpu.json <<'PY' || fail "report --gpu --format json is not the table (see above)"
import json, sys
d = json.load(open(sys.argv[1]))
assert set(d) == {"version", "path", "kernels", "copies", "api", "waits", "kernel_regions"}, d
stats = {"name", "count", "total_ms", "avg_us", "median_us", "min_us", "max_us", "stddev_us"}
kernels = {r["name"]: r for r in d["kernels"]["rows"]}
assert d["kernels"]["count"] == 21 and len(kernels) == 4, d["kernels"]
va = kernels["vector_add"]
assert set(va) == stats | {"grid", "block", "regs", "occupancy_permille", "configs"}, va
assert va["count"] == 10 and va["median_us"] == 200 and va["grid"] == [4096, 1, 1], va
assert va["block"] == [256, 1, 1] and va["regs"] == 24 and va["occupancy_permille"] == 1000, va
copies = {r["name"]: r for r in d["copies"]["rows"]}
assert set(copies["HtoD"]) == stats | {"bytes", "gbps", "min_gbps", "max_gbps"}, copies
assert copies["HtoD"]["bytes"] == 2000000 and abs(copies["HtoD"]["gbps"] - 10) < 1e-9, copies
assert all(set(r) == stats for r in d["api"]["rows"] + d["waits"]["rows"])
assert d["waits"]["count"] == 6 and d["kernel_regions"] == [], d["waits"]
PY
# API calls, and the synchronizing ones again as CPU waits.
expect_row gpu.txt ' cuLaunchKernel' ' 18 '
expect_row gpu.txt ' cuGraphLaunch' ' 1 '
awk '/^# CPU waiting on the GPU/ { on = 1 } on' gpu.txt >waits.txt
expect_row waits.txt ' cuStreamSynchronize' ' 2 '
expect_row waits.txt ' cuMemcpyHtoD_v2' ' 2 '
expect_row waits.txt ' cuCtxSynchronize' ' 1 '
expect_row waits.txt ' cuMemcpyDtoD_v2' ' 1 '
expect_not_contains waits.txt ' cuLaunchKernel$'

# A stream lane on its own: its spans by name.
lane=$(awk '$2 ~ /^0xfff/ && $3 == "cuda" && $4 == "GPU0" && $6 == "14" { print $2 }' threads.txt)
run_gtrace report -i app.data --tid "$lane" >lane.txt
expect_row lane.txt '  graph_step(float*)' ' 3 +5000\.000 +5000\.000 +5000\.000 '
expect_row lane.txt '  [CUDA memcpy DtoH]' ' 1 +200\.000 '

# The NVTX lane: the push/pop and start/end ranges by their messages.
nvtx=$(awk '$2 ~ /^0xfff/ && $3 == "nvtx" { print $2 }' threads.txt)
run_gtrace report -i app.data --tid "$nvtx" >nvtx.txt
expect_row nvtx.txt '  epoch' ' 1 '
# (Avg, then Min: a step holds 4 ms of CPU work, the checkpoint a 40 us copy.)
expect_row nvtx.txt '  step' ' 2 +[0-9.]+ +([4-9][0-9]{3}|[0-9]{5,})\.'
expect_row nvtx.txt '  checkpoint' ' 1 +([4-9][0-9]|[0-9]{3,})\.'
# ... and as a report key: samples inside "step" and "epoch".
run_gtrace report -i app.data --sort nvtx >by-nvtx.txt
expect_row by-nvtx.txt '  step' '%'
expect_row by-nvtx.txt '  epoch' '%'

# Origins: the program's thread queued the kernels from launch_batch and
# launch_graph, inside the NVTX range that was open, and waited in
# wait_for_gpu.
app=$(thread_column threads.txt fake-app 2)
run_gtrace flame -i app.data --tid "$app" --folded --weight target >folded.txt
expect_contains folded.txt ';launch_batch;([^;]+;)*\[lane\] GPU0 stream 13;vector_add [0-9]+$'
expect_contains folded.txt ';launch_batch;([^;]+;)*\[lane\] GPU0 stream 14;matmul\(float\*, float\*, float\*, int\) [0-9]+$'
expect_contains folded.txt ';launch_graph;([^;]+;)*\[lane\] GPU0 stream 14;graph_step\(float\*\) [0-9]+$'
expect_contains folded.txt '^fake-app;\[nvtx\] epoch;\[nvtx\] step;([^;]+;)*launch_batch;'
expect_contains folded.txt ';wait_for_gpu;([^;]+;)*\[lane\] CPU wait;cuStreamSynchronize [0-9]+$'
run_gtrace report -i app.data --tid "$app" >app.txt
expect_contains app.txt '^# Lane work queued from these threads: [1-9][0-9]* spans'

run_gtrace diagnose -i app.data >diag.txt
expect_contains diag.txt '^cuda\.status: +active$'
expect_contains diag.txt '^cuda\.cupti-version: +130001$'
expect_contains diag.txt '^cuda\.driver-version: +13\.0$'
expect_contains diag.txt '^cuda\.device\.0: +Fake GPU, sm 9\.0, 132 SMs, 81920 MiB$'
expect_contains diag.txt '^cuda\.device\.0\.clock-khz: +1980000$'
expect_contains diag.txt '^cuda\.flush: +clean$'
expect_contains diag.txt '^cuda\.injection: +/.*/libgtrace-cuda\.so$'
expect_counter diag.txt cuda.records.kernel 21
expect_counter diag.txt cuda.records.memcpy 4
expect_counter diag.txt cuda.records.memset 1
expect_counter diag.txt cuda.records.sync 3
expect_counter diag.txt cuda.records.device 1
expect_counter diag.txt cuda.records.context 1
for problem in dropped no-timestamp incomplete causality no-origin null-buffers; do
	expect_counter diag.txt cuda.$problem 0
done
# The buffer delay, from each record's work end to its buffer's arrival:
# the program's one buffer came at the context's destruction, after at
# least the 4 ms of CPU work in launch_graph that followed the first copy.
expect_counter diag.txt cuda.delay.records 26
at_least "cuda.delay.max-us" "$(cuda_counter diag.txt cuda.delay.max-us)" 4000
at_least "cuda.delay.sum-us" "$(cuda_counter diag.txt cuda.delay.sum-us)" \
	"$(cuda_counter diag.txt cuda.delay.max-us)"
# Every span of the 86 (50 API calls, 6 waits, 4 NVTX ranges, 26 on the
# streams) has an origin on the program's thread, linked to a sample of
# it, or some too far.
expect_origins diag.txt 86 70

# The program's exit status comes through; a child forked after CUDA was
# initialized exits cleanly (the fake CUPTI aborts a flush from it).
expect_exit 5 "$GTRACE" record -q -o exit.data -- "$CUDA_DIR/fake-app" --exit 5
record fork.data -- "$CUDA_DIR/fake-app" --fork
run_gtrace diagnose -i fork.data >fork.txt
expect_counter fork.txt cuda.records.kernel 21

# A kernel opting in to more shared memory than a block gets by default:
# its occupancy needs the opt-in limit, which only the driver tells. The
# driver refuses calls inside CU_INIT_FINISHED, so the limits come from
# asking again at the context's creation.
record more.data -- "$CUDA_DIR/fake-app" --optin --two-contexts
run_gtrace report -i more.data --gpu >more.txt
expect_row more.txt ' big_tile(float*)' \
	' 1 +5\.000 +5\.000 +5\.000 +5\.000 +0\.000 +1024x1x1 +128x1x1 +32 +12\.5% shared-memory '
# A second context on the device numbers its streams as the first does:
# its stream 13 is a lane of its own, named with its context.
run_gtrace threads -i more.data >more-threads.txt
expect_lane more-threads.txt cuda "GPU0 stream 13" 16	# the default run's 15, big_tile
expect_lane more-threads.txt cuda "GPU0 ctx 2 stream 13" 2

# A peer copy between two devices: its own kind, bandwidth and devices.
FAKE_CUDA_DEVICES=2
export FAKE_CUDA_DEVICES
record peer.data -- "$CUDA_DIR/fake-app" --peer
unset FAKE_CUDA_DEVICES
run_gtrace report -i peer.data --gpu >peer.txt
expect_row peer.txt ' PtoP' ' 1 +5\.000 MB +100\.000 +50\.000 '
run_gtrace diagnose -i peer.data >peer-diag.txt
expect_contains peer-diag.txt '^cuda\.device\.1: +Fake GPU, sm 9\.0'
