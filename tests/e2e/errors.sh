# SPDX-License-Identifier: MIT
# Bad input gets one "gtrace: ..." line on stderr and a non-zero exit,
# never a crash.
. "$SRCDIR/tests/e2e/lib.sh"

# expect_one_error CODE CMD...: CMD exits CODE with exactly one error line.
expect_one_error() {
	expect_exit "$@"
	expect_contains stderr '^gtrace: '
	[ "$(grep -c '^gtrace: ' stderr)" -eq 1 ] ||
		{ show stderr; fail "'$*' printed more than one error line"; }
}

expect_one_error 2 "$GTRACE" no-such-command
expect_exit 2 "$GTRACE"
for cmd in record report flame threads diagnose analyze diff; do
	expect_one_error 2 "$GTRACE" $cmd --no-such-option
	expect_contains stderr 'no-such-option'
done
expect_one_error 2 "$GTRACE" report -n not-a-number
expect_one_error 2 "$GTRACE" analyze --device -1
expect_contains stderr "invalid device '-1'"
expect_one_error 2 "$GTRACE" analyze --short 3X
expect_contains stderr "invalid time '3X' for --short"
for cmd in report flame export; do
	expect_one_error 2 "$GTRACE" $cmd -i missing.data --python maybe
	expect_contains stderr "invalid --python 'maybe'; use on, off or both"
done
expect_exit 2 "$GTRACE" record -q
# GPU PC sampling's settings: each bad one named, and never spliced into others.
expect_one_error 2 "$GTRACE" record --gpu-pc-sampling=period=4 -- true
expect_contains stderr "invalid period '4': expected 5 to 31"
expect_one_error 2 "$GTRACE" record --gpu-pc-sampling=speed=1 -- true
expect_contains stderr "unknown key 'speed'"
expect_one_error 2 "$GTRACE" record --gpu-cubin-max 1,period=5 -- true
expect_contains stderr "invalid cubin size '1,period=5'"
expect_one_error 2 "$GTRACE" record --unwind-threads 99 -- true
expect_contains stderr "invalid unwinding threads '99': expected a number from 0 to 64"
expect_one_error 2 "$GTRACE" record -m 3X -- true
expect_contains stderr "invalid ring size '3X': expected a number of pages or a size such as 8M"
expect_one_error 2 "$GTRACE" record --no-cuda --gpu-pc-sampling -- true
expect_contains stderr 'needs the CUDA agent'

# The default input is ./gtrace.data, which is not there.
expect_one_error 1 "$GTRACE" report
expect_contains stderr 'gtrace\.data'
for cmd in report flame threads diagnose analyze; do
	expect_one_error 1 "$GTRACE" $cmd -i missing.data
	expect_contains stderr "'missing.data'"
done

: >empty.data
expect_one_error 1 "$GTRACE" report -i empty.data
expect_contains stderr 'empty.data'

head -c 4096 /dev/urandom >random.data
for cmd in report flame threads diagnose analyze; do
	expect_one_error 1 "$GTRACE" $cmd -i random.data
	expect_contains stderr 'random.data'
done

echo 'not a trace, just text' >text.data
expect_one_error 1 "$GTRACE" report -i text.data

mkdir dir.data
expect_one_error 1 "$GTRACE" report -i dir.data
