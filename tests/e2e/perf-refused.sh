# SPDX-License-Identifier: MIT
# When the kernel refuses perf_event_open, gtrace says which setting blocks
# it in one line, exits 1, and leaves no recording behind. A seccomp filter
# (tests/workloads/deny-perf.c) refuses it the way a container profile does.
. "$SRCDIR/tests/e2e/lib.sh"

deny="$WORKLOADS/deny-perf"
"$deny" EACCES true || skip seccomp "seccomp filters are not available here"

for err in EACCES EPERM; do
	expect_exit 1 "$deny" $err "$GTRACE" record -o refused.data -- true
	expect_lines stderr 1
	expect_contains stderr '^gtrace: perf_event_open refused: .*seccomp'
	[ ! -e refused.data ] || fail "a refused recording left 'refused.data' behind"
done

expect_exit 1 "$deny" ENOSYS "$GTRACE" record -o refused.data -- true
expect_lines stderr 1
expect_contains stderr '^gtrace: perf_event_open is not available: .*seccomp'
[ ! -e refused.data ] || fail "a refused recording left 'refused.data' behind"

# The command never ran: its output would be here.
expect_exit 1 "$deny" EACCES "$GTRACE" record -o refused.data -- sh -c 'echo ran'
expect_not_contains stdout 'ran'
