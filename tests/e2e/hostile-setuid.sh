# SPDX-License-Identifier: MIT
# A command the kernel will not let its user watch once exec'd (set-user-ID
# to another user, or not readable by its user) records no samples: gtrace
# says why, on stderr and in the recording's meta, which diagnose shows.
# Root recording a set-user-ID-root program is not told anything.
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events
[ "$(id -u)" -eq 0 ] || skip root "making another user's set-user-ID program needs root"

# nobody reaches the programs and writes its recordings in TESTDIR.
chmod 711 "$TESTDIR"
mkdir out
chmod 1777 out
cp "$WORKLOADS/hot" hot-setuid
chmod 4755 hot-setuid
cp "$WORKLOADS/hot" hot-xonly
chmod 711 hot-xonly
cp /usr/bin/id id-setuid 2>/dev/null && chmod 4755 id-setuid ||
	skip setuid "no /usr/bin/id to tell whether set-user-ID works here"
[ "$(as_unprivileged ./id-setuid -u)" = 0 ] ||
	skip setuid "set-user-ID programs do not gain their rights here (a nosuid mount?)"

# unwatched PROGRAM WHY: nobody's recording of PROGRAM warns WHY, diagnose too.
unwatched() {
	as_unprivileged "$GTRACE" record -o "out/$1.data" -- "./$1" 0.3 \
		>/dev/null 2>stderr </dev/null
	status=$?
	if [ $status -eq 1 ] && is_perf_refusal stderr; then
		skip perf-events-user "an ordinary user may not record here: $(cat stderr)"
	fi
	[ $status -eq 0 ] || { show stderr; fail "recording $1 exited with $status"; }
	expect_contains stderr "^gtrace: recorded 0 samples "
	expect_contains stderr "^gtrace: warning: the kernel stopped sampling '\\./$1' at its exec: $2"
	run_gtrace diagnose -i "out/$1.data" >diag.txt
	expect_contains diag.txt "^sampling-stopped: +at its exec: $2"
}
unwatched hot-setuid "it is set-user-ID, so not this user's to watch \\(AT_SECURE\\)"
unwatched hot-xonly "this user may not read it"

# Its own program, or root's set-user-ID-root one: sampled, and no word.
as_unprivileged "$GTRACE" record -o out/hot.data -- "$WORKLOADS/hot" 0.3 \
	>/dev/null 2>stderr </dev/null || { show stderr; fail "recording hot as nobody failed"; }
expect_not_contains stderr 'stopped sampling'
run_gtrace record -o root.data -- ./hot-setuid 0.3
expect_not_contains "$TESTDIR/stderr" 'stopped sampling'
expect_not_contains "$TESTDIR/stderr" 'recorded 0 samples'
