# SPDX-License-Identifier: MIT
# gtrace_kr_submit on a kernel-regions buffer made to be slow: 200000
# events in one lane, 100000 begins then 100000 ends that close none. Its
# cost is linear in the events: well within a few seconds, all counted.
. "$SRCDIR/tests/e2e/lib.sh"

FLOOD=$BUILD/tests/hostile/kr-flood
[ -x "$FLOOD" ] || fail "the hostile tools are not built ($FLOOD): run make tests"

bounded 200 10 "$FLOOD" 200000
[ "$bounded_status" -eq 0 ] || { show "$TESTDIR/stderr"; fail "kr-flood exited with $bounded_status"; }
expect_contains "$TESTDIR/stdout" '^kr-flood: 200000 events, 0 spans, 200000 unmatched$'
