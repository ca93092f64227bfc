# SPDX-License-Identifier: MIT
# The NVML names gtrace relies on are NVIDIA's: every nvml* function that
# src/record/nvml.c looks up is exported by the test double
# (tests/metrics/fake-nvml.c, in either build), and, where a real
# libnvidia-ml is installed, every nvml* function the double exports and
# nvml.c names is in the real library too, so that a misspelt name cannot
# pass the tests on the double alone. The clock event reasons have two
# names (nvml.c takes either): the real library needs one of them.
# NVML_REAL names the real library to check against instead of looking.
. "$SRCDIR/tests/e2e/lib.sh"

fake=$BUILD/tests/metrics/libnvidia-ml.so.1
old=$BUILD/tests/metrics/old-names/libnvidia-ml.so.1
[ -f "$fake" ] && [ -f "$old" ] || fail "the NVML test double is not built ($fake): run make tests"
command -v nm >/dev/null 2>&1 || skip tools "no nm (binutils)"

reasons='nvmlDeviceGetCurrentClocksEventReasons|nvmlDeviceGetCurrentClocksThrottleReasons'

# exported LIB: the nvml* functions LIB exports, one a line, sorted.
exported() {
	nm -D --defined-only "$1" | awk '$2 ~ /^[TtWi]$/ && $3 ~ /^nvml/ { sub(/@.*/, "", $3); print $3 }' |
		sort -u
}

grep -o '"nvml[A-Za-z0-9_]*"' "$SRCDIR/src/record/nvml.c" | tr -d '"' | sort -u >named.txt
[ -s named.txt ] || fail "src/record/nvml.c names no nvml* function"
exported "$fake" >fake.txt
exported "$old" >old.txt
sort -u fake.txt old.txt >doubles.txt
missing=$(comm -23 named.txt doubles.txt)
[ -z "$missing" ] || fail "the NVML test double lacks what src/record/nvml.c looks up:" $missing

# The real library: NVML_REAL, else the driver's where the loader finds
# it, else the toolkit's stub.
real=${NVML_REAL-}
if [ -z "$real" ]; then
	cuda_home=${CUDA_HOME:-$(sed -n 's/^CUDA_HOME = //p' "$SRCDIR/config.mk" 2>/dev/null)}
	for lib in $(ldconfig -p 2>/dev/null | awk '$1 == "libnvidia-ml.so.1" && /x86-64/ { print $NF }') \
		/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1 /usr/lib64/libnvidia-ml.so.1 \
		/usr/local/cuda/lib64/stubs/libnvidia-ml.so \
		${cuda_home:+"$cuda_home/lib64/stubs/libnvidia-ml.so"} \
		${cuda_home:+"$cuda_home/targets/x86_64-linux/lib/stubs/libnvidia-ml.so"}; do
		[ -f "$lib" ] && real=$lib && break
	done
fi
[ -n "$real" ] || skip nvml "no real libnvidia-ml installed (ldconfig -p, /usr/lib/x86_64-linux-gnu," \
	"/usr/local/cuda/lib64/stubs, \$CUDA_HOME/lib64/stubs); the double's names cannot be checked"
[ -f "$real" ] || fail "NVML_REAL '$real' is not a file"
echo "checking against $real"
exported "$real" >real.txt
[ -s real.txt ] || fail "'$real' exports no nvml* function"

# Every name but the reasons' must be there; one of those.
sort -u fake.txt named.txt | grep -Ev "^($reasons)\$" >wanted.txt
missing=$(comm -23 wanted.txt real.txt)
[ -z "$missing" ] || fail "'$real' lacks these functions of the double or of nvml.c:" $missing
grep -Eqx "$reasons" real.txt ||
	fail "'$real' has neither nvmlDeviceGetCurrentClocksEventReasons nor its older name"
