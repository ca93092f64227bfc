# SPDX-License-Identifier: MIT
# What the CUDA driver and the agent find by name, checked with nm -D, since
# a failed lookup there is silent: the agent exports the entry points of
# the driver and of the NVTX loader (InitializeInjection and
# InitializeInjectionNvtx2); every CUPTI function the agent resolves
# (CUPTI_FUNCTIONS in src/cuda/cupti-api.h) exists in the installed
# libcupti, and in the fake one the tests use; and both CUPTIs export the
# NVTX entry point the agent forwards to.
. "$SRCDIR/tests/e2e/lib.sh"

agent=$BUILD/libgtrace-cuda.so
grep -q '^HAVE_CUPTI = 1' "$SRCDIR/config.mk" 2>/dev/null ||
	skip cuda "configure found no CUPTI (HAVE_CUPTI=0): the CUDA agent is not built"
[ -f "$agent" ] || fail "the CUDA agent is not built ($agent): run make tests"
command -v nm >/dev/null 2>&1 || skip tools "nm (binutils) is not installed"
cupti=$(sed -n 's/^CUPTI_LIB = //p' "$SRCDIR/config.mk")
[ -e "$cupti" ] || skip cuda "config.mk names no installed libcupti ('$cupti')"

# exports FILE: the names of the functions FILE exports, without versions.
exports() {
	nm -D --defined-only "$1" >nm.out || { show nm.out; fail "nm -D '$1' failed"; }
	awk '$2 == "T" || $2 == "W" || $2 == "i" { sub(/@.*/, "", $3); print $3 }' nm.out
}

exports "$agent" >agent.syms
for name in InitializeInjection InitializeInjectionNvtx2; do
	grep -qx "$name" agent.syms || { show agent.syms; fail "'$agent' does not export $name"; }
done

sed -n 's/^[[:space:]]*X(\(cupti[A-Za-z0-9_]*\)).*/\1/p' "$SRCDIR/src/cuda/cupti-api.h" >needed.syms
[ "$(wc -l <needed.syms)" -ge 5 ] ||
	{ show needed.syms; fail "found too few CUPTI functions in src/cuda/cupti-api.h"; }
exports "$cupti" >cupti.syms
# make tests builds the fake wherever it builds the agent.
exports "$BUILD/tests/cuda/libcupti.so.13" >fake.syms
while read -r name; do
	grep -qx "$name" cupti.syms || fail "the agent needs $name, which '$cupti' does not export"
	grep -qx "$name" fake.syms ||
		fail "the agent needs $name, which the fake libcupti (tests/cuda/fake-cupti.c) lacks"
done <needed.syms

# The agent hands the NVTX loader's call on to CUPTI's entry point.
grep -qx InitializeInjectionNvtx2 cupti.syms ||
	fail "'$cupti' does not export InitializeInjectionNvtx2"
grep -qx InitializeInjectionNvtx2 fake.syms ||
	fail "the fake libcupti (tests/cuda/fake-cupti.c) does not export InitializeInjectionNvtx2"
