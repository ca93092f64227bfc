# SPDX-License-Identifier: MIT
# gtrace record's options: bad values are usage errors (exit 2, one line);
# a command that cannot start leaves no recording and the previous one in
# place; --duration stops a command that would run on.
. "$SRCDIR/tests/e2e/lib.sh"

# expect_usage_error ARGS...: gtrace record ARGS exits 2 with one error line.
expect_usage_error() {
	expect_exit 2 "$GTRACE" record "$@"
	[ "$(grep -c '^gtrace: ' stderr)" -eq 1 ] ||
		{ show stderr; fail "'gtrace record $*' did not print one error line"; }
}

expect_usage_error -F 0 -- true
expect_usage_error -F lots -- true
expect_usage_error -F 99999999 -- true
expect_usage_error -e bogus -- true
expect_contains stderr "'bogus'"
expect_usage_error --cuda-api everything -- true
expect_contains stderr "'everything'"
expect_usage_error --call-graph lbr -- true
expect_usage_error --call-graph dwarf,100 -- true
expect_usage_error --call-graph dwarf,65536 -- true
expect_usage_error --duration -1 -- true
expect_usage_error --duration soon -- true
expect_usage_error --duration 0ms -- true
expect_usage_error --duration 1m -- true
expect_usage_error --metrics-interval 50us -- true
expect_usage_error --metrics-interval 2h -- true
expect_usage_error -o
expect_usage_error -q
[ ! -e gtrace.data ] || fail "a usage error wrote gtrace.data"

expect_exit 0 "$GTRACE" record --help
expect_contains stdout '^usage: gtrace record'

need_perf_events

# No command started: no file, and the previous recording is untouched.
echo previous >gtrace.data
expect_exit 127 "$GTRACE" record -- no-such-command-here
expect_contains stderr "^gtrace: command not found: 'no-such-command-here'$"
[ "$(cat gtrace.data)" = previous ] || fail "a failed start replaced gtrace.data"
[ ! -e gtrace.data.old ] || fail "a failed start left gtrace.data.old"
mkdir subdir
expect_exit 126 "$GTRACE" record -o dir.data -- ./subdir
[ ! -e dir.data ] || fail "a command that could not run left dir.data"

# The command is also found without "--".
expect_exit 0 "$GTRACE" record -q -o nodash.data true
[ -s nodash.data ] || fail "no recording without '--'"

# --duration ends a command that would otherwise run for minutes; the
# stop it asked for is not the command's failure.
expect_exit 0 timeout 60 "$GTRACE" record -q -o dur.data --duration 0.3 -- sleep 120
run_gtrace diagnose -i dur.data >dur.txt
expect_contains dur.txt '^ended: +cleanly'

# Every time option takes what the help shows: a number with ns, us, ms or s.
expect_exit 0 timeout 60 "$GTRACE" record -q -o units.data --duration 300ms \
	--metrics-interval 500us -- sleep 120
run_gtrace diagnose -i units.data >units.txt
expect_contains units.txt '^ended: +cleanly'
expect_contains units.txt '^metrics: +every 500.000 us'
