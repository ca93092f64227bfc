# SPDX-License-Identifier: MIT
# The CUDA agent next to other CUPTI clients, on the test doubles
# (tests/cuda/other-client.c, preloaded into fake-app), and when CUPTI
# refuses part of what the agent asks: a subscriber that came first is
# named; one that comes later is told "gtrace"; an activity-only client
# that takes the buffers is noticed at exit; a kind CUPTI refuses is a
# warning next to an "active" status; a refused timestamp callback leaves
# the records on CUPTI's clock, converted.
. "$SRCDIR/tests/e2e/lib.sh"
. "$SRCDIR/tests/cuda/lib.sh"

need_cuda_fakes
need_perf_events
other=$CUDA_DIR/libother-client.so
[ -e "$other" ] || fail "the other CUPTI client is not built ($other): run make tests"

# with_other NAME MODE [FAULTS]: records the default fake-app run with the
# other client in MODE into NAME.data, its diagnose and threads output in
# NAME.diag and NAME.threads, what the client's subscription got in NAME.out.
with_other() {
	FAKE_CUPTI_FAULTS=${3-}
	OTHER_CLIENT_MODE=$2
	OTHER_CLIENT_OUT=$TESTDIR/$1.out
	export FAKE_CUPTI_FAULTS OTHER_CLIENT_MODE OTHER_CLIENT_OUT
	# Preloaded in the program only: gtrace may be a sanitized build.
	record "$1.data" -- sh -c 'LD_PRELOAD="$0:$LD_PRELOAD" exec "$1"' "$other" \
		"$CUDA_DIR/fake-app"
	unset FAKE_CUPTI_FAULTS OTHER_CLIENT_MODE OTHER_CLIENT_OUT
	run_gtrace diagnose -i "$1.data" >"$1.diag"
	run_gtrace threads -i "$1.data" >"$1.threads"
}

# torch.profiler started first: gtrace names it and records CPU only.
with_other first subscribe-first
expect_contains first.diag "^cuda\\.status: +subscriber-conflict: 'CUPTI for kineto' holds the CUPTI subscription\$"
expect_contains first.diag "^CUDA: +'CUPTI for kineto' held the CUPTI subscription; GPU activity was not recorded"
expect_lane first.threads cuda "GPU0 stream 13" -1
[ "$(thread_column first.threads fake-app 4)" -gt 0 ] ||
	{ show first.threads; fail "no CPU samples of the program"; }

# Under nsys: CUPTI names the tool.
FAKE_CUPTI_FAULTS=subscriber-conflict
export FAKE_CUPTI_FAULTS
record nsys.data -- "$CUDA_DIR/fake-app"
unset FAKE_CUPTI_FAULTS
run_gtrace diagnose -i nsys.data >nsys.diag
expect_contains nsys.diag "^CUDA: +'Nsight Systems' held the CUPTI subscription; GPU activity was not recorded, CPU samples were\$"

# torch.profiler started inside a gtrace recording: it fails, told that
# gtrace holds CUPTI; gtrace records on.
with_other later subscribe-later
expect_contains later.out "^39 CUPTI for gtrace\$"
expect_contains later.diag '^cuda\.status: +active$'
expect_lane later.threads cuda "GPU0 stream 13" 15

# An activity-only client takes the buffers at the first stream
# synchronize: the copies queued after it (DtoH, DtoD) never reach gtrace.
with_other taken activity-takeover
expect_contains taken.diag '^cuda\.status: +taken-over: another CUPTI client took the activity buffers; 2 launches, copies and memsets queued after [0-9.]+ s from cuInit were not recorded$'
expect_contains taken.diag '^CUDA: +another CUPTI client took the activity buffers'

# A kind CUPTI refuses: a warning; the status, the verdict and the other
# kinds' lanes stay.
FAKE_CUPTI_FAULTS=fail-kind=MEMSET
export FAKE_CUPTI_FAULTS
record nomemset.data -- "$CUDA_DIR/fake-app"
unset FAKE_CUPTI_FAULTS
run_gtrace diagnose -i nomemset.data >nomemset.diag
run_gtrace threads -i nomemset.data >nomemset.threads
expect_contains nomemset.diag '^cuda\.status: +active$'
expect_contains nomemset.diag '^cuda\.warnings: +cuptiActivityEnable\(MEMSET\): CUPTI_ERROR_NOT_SUPPORTED$'
expect_contains nomemset.diag '^CUDA: +CUPTI was active: GPU activity was recorded, but some CUPTI calls failed \(cuda\.warnings\)$'
expect_not_contains nomemset.diag 'not recorded'
expect_lane nomemset.threads cuda "GPU0 stream 13" 14	# the memset is missing
expect_counter nomemset.diag cuda.records.memset 0

# No timestamp callback: CUPTI's clock (CLOCK_REALTIME in the fake) plus
# the measured offset puts every record right after its call, with the
# lengths the fake driver gave.
FAKE_CUPTI_FAULTS=no-timestamp-callback
export FAKE_CUPTI_FAULTS
record clock.data -- "$CUDA_DIR/fake-app"
unset FAKE_CUPTI_FAULTS
run_gtrace diagnose -i clock.data >clock.diag
run_gtrace threads -i clock.data >clock.threads
run_gtrace report -i clock.data --gpu >clock.gpu
expect_contains clock.diag '^cuda\.status: +active$'
expect_contains clock.diag '^cuda\.clock: +cupti\+offset: cuptiActivityRegisterTimestampCallback: CUPTI_ERROR_NOT_SUPPORTED$'
expect_counter clock.diag cuda.causality 0
expect_counter clock.diag cuda.no-origin 0
expect_lane clock.threads cuda "GPU0 stream 13" 15
# The 26 GPU spans, on CUPTI's clock converted, link to their calls.
expect_origins clock.diag 26 20 '^GPU0 stream '
expect_row clock.gpu ' vector_add' ' 10 +200\.000 '

record callback.data -- "$CUDA_DIR/fake-app"
run_gtrace diagnose -i callback.data >callback.diag
expect_contains callback.diag '^cuda\.clock: +callback$'
expect_not_contains callback.diag '^cuda\.warnings:'
exit 0
