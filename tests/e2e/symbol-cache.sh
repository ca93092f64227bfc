# SPDX-License-Identifier: MIT
# The recorder's cache (gtrace-record(1), FILES): made private where
# GTRACE_CACHE_DIR says, else under XDG_CACHE_HOME, else HOME's .cache, and
# none made when the variable is empty. The kernel's symbols go there at
# the first recording that names kernel frames, and the next recordings
# name them from that copy: a copy whose names this test changed gives the
# changed names. A directory gtrace did not make, or one another user owns,
# is not used, and recording goes on as without one.
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events

cache=$TESTDIR/cache
export GTRACE_CACHE_DIR="$cache"
record cold.data -e cpu-clock -- "$WORKLOADS/syscalls" 0.3
[ "$(stat -c %a "$cache")" = 700 ] || fail "the cache $cache is not mode 700: $(stat -c %a "$cache")"
run_gtrace diagnose -i cold.data >cold.diag
if grep -Eq '^kernel-frames: +kept, named from /proc/kallsyms' cold.diag; then
	set -- "$cache"/kallsyms-*
	[ -f "$1" ] && [ $# -eq 1 ] || { ls -la "$cache"; fail "no copy of /proc/kallsyms in the cache"; }
	[ "$(stat -c %a "$1")" = 600 ] || fail "the kallsyms copy is not mode 600"
	# Names the kernel never had: only the copy can give them.
	awk '{ $3 = $3 "_from_cache"; print }' "$1" >renamed
	cat renamed >"$1"
	record warm.data -e cpu-clock -- "$WORKLOADS/syscalls" 0.3
	run_gtrace script -i warm.data >warm.script
	expect_contains warm.script '_from_cache \(\[kernel\.kallsyms\]\)'
	awk '/\[kernel\.kallsyms\]/ && !/_from_cache / { print; exit 1 }' warm.script ||
		fail "a kernel frame of the second recording was not named from the cache"
else
	# Nothing to keep where the kernel's frames are not named.
	[ -z "$(ls "$cache" | grep '^kallsyms-')" ] ||
		{ ls -la "$cache"; fail "the cache holds kernel symbols the kernel hid"; }
fi

# Empty: no cache made, not even the default one.
export GTRACE_CACHE_DIR= HOME="$TESTDIR/home"
unset XDG_CACHE_HOME
record none.data -e cpu-clock -- "$WORKLOADS/syscalls" 0.1
[ ! -e "$TESTDIR/home" ] || fail "GTRACE_CACHE_DIR= made $(find "$TESTDIR/home")"
unset GTRACE_CACHE_DIR
record home.data -e cpu-clock -- "$WORKLOADS/syscalls" 0.1
[ -d "$TESTDIR/home/.cache/gtrace" ] || fail "no cache in HOME's .cache/gtrace"
export XDG_CACHE_HOME="$TESTDIR/xdg"
record xdg.data -e cpu-clock -- "$WORKLOADS/syscalls" 0.1
[ -d "$TESTDIR/xdg/gtrace" ] || fail "no cache in XDG_CACHE_HOME's gtrace"

# A directory gtrace did not make (no CACHEDIR.TAG): not written to.
mkdir -m 700 plain
export GTRACE_CACHE_DIR="$TESTDIR/plain"
record plain.data -e cpu-clock -- "$WORKLOADS/syscalls" 0.1
[ -z "$(ls plain)" ] || fail "gtrace wrote into a directory it did not make: $(ls plain)"
[ -f "$TESTDIR/xdg/gtrace/CACHEDIR.TAG" ] || fail "the cache gtrace made has no CACHEDIR.TAG"

# Another user's cache: as root, not read, not written, no error.
if [ "$(id -u)" -eq 0 ]; then
	mkdir -m 700 theirs
	chown 65534:65534 theirs
	export GTRACE_CACHE_DIR="$TESTDIR/theirs"
	record theirs.data -e cpu-clock -- "$WORKLOADS/syscalls" 0.1
	[ -z "$(ls theirs)" ] || fail "gtrace wrote into another user's cache: $(ls theirs)"
	expect_lines "$TESTDIR/stderr" 0
fi
