# SPDX-License-Identifier: MIT
# The CUDA agent when CUPTI misbehaves: each fault of the fake CUPTI
# (FAKE_CUPTI_FAULTS, see tests/cuda/fake-cupti.c) is counted or explained
# by diagnose, never shown as real work, and the program runs on to its own
# end with its CPU samples recorded.
. "$SRCDIR/tests/e2e/lib.sh"
. "$SRCDIR/tests/cuda/lib.sh"

need_cuda_fakes
need_perf_events

# faulty NAME FAULTS [APP-OPTIONS]: records fake-app with FAULTS into
# NAME.data (the program must exit 0) and leaves diagnose, threads and
# report --gpu output in NAME.diag, NAME.threads and NAME.gpu.
faulty() {
	name=$1
	FAKE_CUPTI_FAULTS=$2
	export FAKE_CUPTI_FAULTS
	shift 2
	record "$name.data" -- "$CUDA_DIR/fake-app" "$@"
	unset FAKE_CUPTI_FAULTS
	run_gtrace diagnose -i "$name.data" >"$name.diag"
	run_gtrace threads -i "$name.data" >"$name.threads"
	[ "$(thread_column "$name.threads" fake-app 4)" -gt 0 ] ||
		{ show "$name.threads"; fail "$name: no CPU samples of the program"; }
}

# gpu_spans NAME: the spans on the GPU stream lanes of NAME.threads.
gpu_spans() {
	awk '$2 ~ /^0xfff/ && $3 == "cuda" { n += $(NF - 3) } END { print n + 0 }' "$1.threads"
}

expect_gpu_spans() {
	got=$(gpu_spans "$1")
	if [ "$got" -ne "$2" ]; then
		show "$1.threads"
		fail "$1: $got spans on GPU lanes, expected $2"
	fi
}

# Kernel records without times are counted, not shown as zero-length work.
faulty zero zero-timestamps=2
expect_counter zero.diag cuda.records.kernel 21
expect_counter zero.diag cuda.no-timestamp 2
expect_gpu_spans zero 24
run_gtrace report -i zero.data --gpu >zero.gpu
expect_contains zero.gpu '^# CUDA kernels: 19 instances'
expect_not_contains zero.gpu ' 0\.000 +0\.000 +0\.000 +0\.000 +0\.000 '

# Records CUPTI dropped, and a NULL buffer it delivered.
faulty dropped dropped=7,null-buffer
expect_counter dropped.diag cuda.dropped 7
expect_counter dropped.diag cuda.null-buffers 1
expect_gpu_spans dropped 26

# Kernels that CUPTI says started before their launch call: counted, and
# moved to start at the call.
faulty early causality=3
expect_counter early.diag cuda.causality 3
expect_gpu_spans early 26

# Names freed once the buffer is handed back, and records delivered newest
# first: the agent copied the names and joined every record to its call.
faulty freed names-freed,out-of-order
run_gtrace report -i freed.data --gpu >freed.gpu
expect_contains freed.gpu '^# CUDA kernels: 21 instances of 4 kernels'
expect_row freed.gpu ' vector_add' ' 10 +200\.000 '
expect_not_contains freed.gpu 'ZZZZ'
expect_counter freed.diag cuda.no-origin 0
expect_gpu_spans freed 26

# Work still running at exit comes with no end: counted as incomplete and
# said by cuda.flush, never a span.
faulty running "" --still-running
expect_counter running.diag cuda.incomplete 1
expect_contains running.diag '^cuda\.flush: +incomplete: 1 records still running at exit$'
expect_gpu_spans running 26
run_gtrace report -i running.data --gpu >running.gpu
expect_not_contains running.gpu 'long_kernel'

# CUPTI cannot be used at all: the program runs untouched, CPU sampling
# goes on, and diagnose says why.
faulty conflict subscriber-conflict
expect_contains conflict.diag '^cuda\.status: +subscriber-conflict: '
expect_gpu_spans conflict 0
faulty fatal fatal
expect_contains fatal.diag '^cuda\.status: +cupti-error: cuptiActivityEnable.*: CUPTI_ERROR_UNKNOWN$'
expect_gpu_spans fatal 0
faulty old old-version
expect_contains old.diag '^cuda\.status: +cupti-too-old: 120000 < 130000$'
expect_gpu_spans old 0
# CUDA 13.0's first CUPTI, before Update 1 fixed a crash in flushing and a
# deadlock in disabling kernel records: collected, with a warning.
FAKE_CUPTI_VERSION=130000
export FAKE_CUPTI_VERSION
faulty ga ""
unset FAKE_CUPTI_VERSION
expect_contains ga.diag '^cuda\.status: +active$'
expect_contains ga.diag '^CUDA: .*CUPTI 130000 is CUDA 13\.0 before Update 1'
expect_gpu_spans ga 26
echo "not a library" >"$TESTDIR/libcupti.so.13"
GTRACE_CUPTI=$TESTDIR/libcupti.so.13
faulty broken ""
expect_contains broken.diag '^cuda\.status: +cupti-unavailable: .*libcupti\.so\.13'
expect_gpu_spans broken 0
GTRACE_CUPTI=$TESTDIR/no-such-libcupti.so.13
faulty missing ""
expect_contains missing.diag "^cuda\\.injection: +off: .*no-such-libcupti"
expect_gpu_spans missing 0
