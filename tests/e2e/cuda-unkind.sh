# SPDX-License-Identifier: MIT
# The CUDA agent under what real GPUs do and the doubles' default keeps
# away (FAKE_CUPTI_FAULTS, see tests/cuda/fake-cupti.c): GPU clocks that
# jitter and are off, records delivered in the order their work ended,
# streams interleaved, launches from several threads at once, and work that
# had started but not ended at a forced flush. The doubles are
# deterministic (jitter draws from a fixed sequence; FAKE_CUPTI_LOG says
# what was delivered), so each recording is held to exact numbers.
. "$SRCDIR/tests/e2e/lib.sh"
. "$SRCDIR/tests/cuda/lib.sh"

need_cuda_fakes
need_perf_events

# unkind NAME FAULTS [APP-OPTIONS]: records fake-app under FAULTS into
# NAME.data, with the fake CUPTI's log of its records in NAME.log, and
# leaves diagnose and threads output in NAME.diag and NAME.threads.
unkind() {
	name=$1
	FAKE_CUPTI_FAULTS=$2
	FAKE_CUPTI_LOG=$TESTDIR/$name.log
	export FAKE_CUPTI_FAULTS FAKE_CUPTI_LOG
	shift 2
	record "$name.data" -- "$CUDA_DIR/fake-app" "$@"
	unset FAKE_CUPTI_FAULTS FAKE_CUPTI_LOG
	run_gtrace diagnose -i "$name.data" >"$name.diag"
	run_gtrace threads -i "$name.data" >"$name.threads"
}

# Nothing lost, nothing shown that was not work: every record timed, with an origin.
expect_whole() {
	for problem in dropped no-timestamp incomplete no-origin null-buffers; do
		expect_counter "$1.diag" cuda.$problem 0
	done
	expect_counter "$1.diag" cuda.delay.records "$2"
	for outcome in none bad_tid no_thread; do
		[ "$(origins_total "$1.diag" $outcome)" -eq 0 ] ||
			{ show "$1.diag"; fail "$1: lane spans with origin outcome $outcome"; }
	done
}

# The default run's lanes (see tests/e2e/cuda-fake.sh).
expect_default_lanes() {
	expect_lane "$1.threads" cuda "GPU0 stream 13" 15
	expect_lane "$1.threads" cuda "GPU0 stream 14" 8
	expect_lane "$1.threads" cuda "GPU0 stream 7" 3
}

# Jitter: each kernel's statistics are those of the times CUPTI delivered
# (from the log), durations no longer all alike.
unkind jitter jitter=1000
expect_whole jitter 26
expect_default_lanes jitter
run_gtrace report -i jitter.data --gpu --format json >jitter.json
python3 - jitter.json jitter.log <<'PY' ||
	fail "report --gpu is not what CUPTI delivered (see above)"
import json, statistics, sys
names = {"vector_add": "vector_add", "_Z6matmulPfS_S_i": "matmul(float*, float*, float*, int)",
         "_Z10graph_stepPf": "graph_step(float*)", "_Z4tinyv": "tiny()"}
ns = {}
for line in open(sys.argv[2]):
    kind, name, corr, start, end = line.split()
    if kind == "KERNEL":
        ns.setdefault(names[name], []).append(int(end) - int(start))
rows = {r["name"]: r for r in json.load(open(sys.argv[1]))["kernels"]["rows"]}
assert set(rows) == set(ns), (set(rows), set(ns))
for name, d in ns.items():
    r = rows[name]
    want = {"count": len(d), "min_us": min(d) / 1e3, "max_us": max(d) / 1e3,
            "avg_us": sum(d) / len(d) / 1e3, "stddev_us": statistics.stdev(d) / 1e3}
    for key, value in want.items():
        assert abs(r[key] - value) < 0.0015, (name, key, r[key], value)
    assert r["stddev_us"] > 0, r
PY

# A GPU clock 1 s behind: every record starts before its call, each is
# moved to start at its call, its duration kept.
unkind behind offset=-1000000000
expect_whole behind 26
expect_counter behind.diag cuda.causality 26
expect_default_lanes behind
run_gtrace report -i behind.data --gpu >behind.gpu
expect_row behind.gpu ' vector_add' ' 10 +200\.000 +200\.000 +200\.000 +200\.000 +0\.000 '
expect_row behind.gpu ' graph_step(float*)' \
	' 3 +5000\.000 +5000\.000 +5000\.000 +5000\.000 +0\.000 '
app_last=$(thread_column behind.threads fake-app 8)
awk -v last="$app_last" '$2 ~ /^0xfff/ && ($(NF - 1) < 0 || $NF > last + 0.05) { bad = 1 }
	END { exit bad }' behind.threads ||
	{ show behind.threads; fail "moved lane spans lie outside the program's run"; }

# Records in the order their work ended, the streams' interleaved: the
# same recording as in launch order.
unkind ended completion-order
expect_whole ended 26
expect_counter ended.diag cuda.causality 0
expect_default_lanes ended
run_gtrace report -i ended.data --gpu >ended.gpu
expect_contains ended.gpu '^# CUDA kernels: 21 instances of 4 kernels'
expect_row ended.gpu ' matmul(float*, float*, float*, int)' \
	' 4 +500\.000 +500\.000 +500\.000 +500\.000 +0\.000 '
expect_row ended.gpu ' DtoH' ' 1 +2\.000 MB +200\.000 +10\.000 '
# The log holds them as delivered: not in the order of their calls.
sort -n -k3 ended.log | cmp -s - ended.log &&
	fail "completion-order delivered the records in the order of their calls"

# Four threads launching at once, each on its stream and all on one,
# delivered in the order the work ended, with jitter: every kernel on the
# lane of its stream, each with an origin on a thread of the program.
unkind threads completion-order,jitter=1000 --threads 4
expect_whole threads 60
expect_counter threads.diag cuda.records.kernel 60
expect_lane threads.threads cuda "GPU0 stream 13" 20
for stream in 15 16 17 18; do
	expect_lane threads.threads cuda "GPU0 stream $stream" 10
done
[ "$(awk '$3 == "launcher"' threads.threads | wc -l)" -eq 4 ] ||
	{ show threads.threads; fail "not 4 launcher threads"; }

# A kernel that had started by the exit's forced flush comes with its
# start and no end: incomplete, as one that had not started, never a span.
unkind half half-finished --still-running
grep -q '^KERNEL long_kernel [0-9]* [1-9][0-9]* 0$' half.log ||
	{ show half.log; fail "the fake delivered long_kernel without its start"; }
expect_counter half.diag cuda.incomplete 1
expect_counter half.diag cuda.no-timestamp 0
expect_contains half.diag '^cuda\.flush: +incomplete: 1 records still running at exit$'
run_gtrace report -i half.data --gpu >half.gpu
expect_not_contains half.gpu 'long_kernel'
expect_contains half.gpu '^# CUDA kernels: 21 instances'
