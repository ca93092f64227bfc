# SPDX-License-Identifier: MIT
# gtrace record's CUDA injection set-up: the command's environment names
# the agent (CUDA_INJECTION64_PATH, NVTX_INJECTION64_PATH unless the user
# set it, and LD_PRELOAD after what it held) and the CUPTI it loads;
# gtrace's own environment is left alone; and each reason not to inject
# (--no-cuda, an unreadable GTRACE_CUDA_AGENT, no CUPTI, another CUDA
# tool) leaves the environment untouched and says why in the
# cuda.injection meta.
. "$SRCDIR/tests/e2e/lib.sh"

agent=$BUILD/libgtrace-cuda.so
grep -q '^HAVE_CUPTI = 1' "$SRCDIR/config.mk" 2>/dev/null ||
	skip cuda "configure found no CUPTI (HAVE_CUPTI=0): the CUDA agent is not built"
[ -f "$agent" ] || fail "the CUDA agent is not built ($agent): run make tests"
need_perf_events
unset GTRACE_CUPTI GTRACE_CUDA_AGENT CUDA_INJECTION64_PATH NVTX_INJECTION64_PATH
agent=$(cd "$(dirname "$agent")" && pwd -P)/libgtrace-cuda.so
cupti=$(readlink -f "$(sed -n 's/^CUPTI_LIB = //p' "$SRCDIR/config.mk")")

# A command that prints the variables injection touches.
env_probe='for v in CUDA_INJECTION64_PATH LD_PRELOAD NVTX_INJECTION64_PATH GTRACE_CUPTI; do
	eval "echo $v=\${$v-unset}"; done'

# injection FILE: the cuda.injection meta of recording FILE.
injection() {
	run_gtrace diagnose -i "$1" >diag.txt
	sed -n 's/^cuda\.injection: *//p' diag.txt
}

LD_PRELOAD=/nonexistent/keep.so record on.data -- sh -c "$env_probe" >on.env
expect_contains on.env "^CUDA_INJECTION64_PATH=$agent\$"
expect_contains on.env "^LD_PRELOAD=/nonexistent/keep.so:$agent\$"
expect_contains on.env "^NVTX_INJECTION64_PATH=$agent\$"
expect_contains on.env "^GTRACE_CUPTI=$cupti\$"
[ "$(injection on.data)" = "$agent" ] || { show diag.txt; fail "cuda.injection is not the agent"; }
expect_contains diag.txt '^cuda\.driver: +(none: no NVIDIA kernel driver loaded|NVRM)'

# The agent hears --cuda-api through GTRACE_CUDA_API.
api_probe='echo "GTRACE_CUDA_API=${GTRACE_CUDA_API-unset}"'
record api.data -- sh -c "$api_probe" >api.env
expect_contains api.env '^GTRACE_CUDA_API=filtered$'
record api.data --cuda-api=all -- sh -c "$api_probe" >api.env
expect_contains api.env '^GTRACE_CUDA_API=all$'

# A CUPTI named by GTRACE_CUPTI is the one the agent gets; NVTX goes
# through the agent to it.
cp "$cupti" my-cupti.so
GTRACE_CUPTI=my-cupti.so record mine.data -- sh -c "$env_probe" >mine.env
expect_contains mine.env "^GTRACE_CUPTI=$TESTDIR/my-cupti.so\$"
expect_contains mine.env "^NVTX_INJECTION64_PATH=$agent\$"

# Another NVTX tool the user chose is left in place.
NVTX_INJECTION64_PATH=/x/nvtx-tool.so record nvtx.data -- sh -c "$env_probe" >nvtx.env
expect_contains nvtx.env "^NVTX_INJECTION64_PATH=/x/nvtx-tool\.so\$"
expect_contains nvtx.env "^CUDA_INJECTION64_PATH=$agent\$"

# off REASON-REGEX FILE: nothing injected, and the meta says why.
off() {
	expect_contains "$2.env" '^CUDA_INJECTION64_PATH=(unset|/x/other-tool\.so)$'
	expect_contains "$2.env" '^LD_PRELOAD=unset$'
	expect_contains "$2.env" '^NVTX_INJECTION64_PATH=unset$'
	injection "$2.data" >why.txt
	expect_contains why.txt "^off: $1"
}

record no.data --no-cuda -- sh -c "$env_probe" >no.env
off '--no-cuda$' no
GTRACE_CUDA_AGENT=/nonexistent/agent.so record bad.data -- sh -c "$env_probe" >bad.env
off "cannot read GTRACE_CUDA_AGENT '/nonexistent/agent.so'" bad
GTRACE_CUPTI=/nonexistent/libcupti.so record nocupti.data -- sh -c "$env_probe" >nocupti.env
off "no CUPTI at '/nonexistent/libcupti.so'" nocupti
CUDA_INJECTION64_PATH=/x/other-tool.so record other.data -- sh -c "$env_probe" >other.env
off "CUDA_INJECTION64_PATH names '/x/other-tool.so' already" other

exit 0
