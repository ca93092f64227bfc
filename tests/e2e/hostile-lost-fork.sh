# SPDX-License-Identifier: MIT
# A recorder that falls behind loses FORK records: stopped (SIGSTOP) while
# tests/hostile/lost-forks fills its ring and then forks 4 children, it
# never hears of them. Their first samples bring them in from /proc, once
# each: diagnose counts 5 processes, 4 of them found unannounced, and
# their samples unwind through their maps (few failed.no-map) and name
# child_spin. Every step waits on a file, none on time.
. "$SRCDIR/tests/e2e/lib.sh"

tool=$BUILD/tests/hostile/lost-forks
[ -x "$tool" ] || fail "the hostile tools are not built ($tool): run make tests"
need_perf_events
mkfifo go spin || fail "cannot make the FIFOs"

# The recorder runs beside this script, which stops and resumes it; the
# whole goes under the ceilings.
cat >drive.sh <<'EOF'
. "$SRCDIR/tests/e2e/lib.sh"
"$GTRACE" record -q --call-graph fp -m 16 -o lost.data -- "$BUILD/tests/hostile/lost-forks" "$TESTDIR" 4 &
recorder=$!
wait_for pid
kill -STOP $recorder
tries=0
until [ "$(sed 's/.*) //' /proc/$recorder/stat | cut -d' ' -f1)" = T ]; do
	tries=$((tries + 1))
	[ $tries -le 400 ] || fail "the recorder did not stop"
	sleep 0.05
done
echo >go
wait_for forked
kill -CONT $recorder
echo >spin
wait $recorder
EOF
bounded 300 60 sh drive.sh
status=$bounded_status
[ -s children ] && kill -9 $(cat children) 2>/dev/null
if [ "$status" -ne 0 ]; then
	show "$TESTDIR/stderr"
	fail "the recording exited with $status"
fi

run_gtrace diagnose -i lost.data >lost.diag
run_gtrace diagnose -i lost.data --format json >lost.json
run_gtrace report -i lost.data --no-children >lost.report
# 5 but for a sanitizer's own process at exit.
expect_contains lost.diag '^processes: +[56] \(4 unannounced, found in /proc; 0 not found\)$'
expect_contains lost.report ' child_spin$'
python3 - <<'PY' || { show lost.diag; fail "the children's samples did not unwind (see above)"; }
import json
c = json.load(open("lost.json"))["counters"]
assert c["lost"] > 0, "nothing was lost: the ring did not fill"
samples = sum(v for k, v in c.items() if k.startswith("unwind."))
no_map = c.get("unwind.failed.no-map", 0)
print(f"{no_map} of {samples} samples failed.no-map")
assert samples >= 100 and no_map * 20 <= samples, "more than 5% failed.no-map"
PY
