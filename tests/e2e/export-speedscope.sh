# SPDX-License-Identifier: MIT
# gtrace export --format chrome, opened in speedscope's web app (its npm
# package's build) in headless Chromium (Debian's), by
# tests/browser/speedscope.mjs, which prints the profiles of speedscope's
# selector and the rows of each one's Sandwich table: what a person sees.
# The threads workload: each thread a profile named after it, the
# CPU-bound gamma's with its functions. The CUDA test doubles: each GPU
# stream a profile, its kernels by name, each kernel one frame (not one
# per launch), its time report --gpu's. A failure keeps speedscope.png,
# the last view, in the test's folder.
. "$SRCDIR/tests/e2e/lib.sh"

BROWSER=$SRCDIR/tests/browser
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
export CHROMIUM
[ -x "$CHROMIUM" ] || skip browser "no $CHROMIUM (Debian's chromium): speedscope runs in it"
command -v node >/dev/null 2>&1 || skip browser "no node (nodejs): it drives the browser"
for package in speedscope playwright-core; do
	[ -d "$BROWSER/node_modules/$package" ] ||
		skip browser "no $package in tests/browser/node_modules (scripts/install-deps.sh runs npm ci there)"
done
need_perf_events
need_python3

# speedscope NAME.json: what speedscope shows of it, into NAME.seen.
speedscope() {
	node "$BROWSER/speedscope.mjs" "$1" speedscope.png >"${1%.json}.seen" 2>stderr ||
		{ show stderr; fail "speedscope did not open '$1' (its last view: $TESTDIR/speedscope.png)"; }
}

# frames SEEN PROFILE: "NAME<TAB>TOTAL" of each row of PROFILE's Sandwich table.
frames() {
	awk -F '\t' -v p="$2" '$1 == "frame " p { print $2 "\t" $3 }' "$1"
}

# fail_seen SEEN MESSAGE: fails, showing what speedscope showed.
fail_seen() {
	show "$1"
	fail "$2 (speedscope's last view: $TESTDIR/speedscope.png)"
}

# The threads workload: gamma spins on the CPU in spin_gamma, under thread_gamma.
record threads.data -- "$WORKLOADS/threads" 0.5
run_gtrace threads -i threads.data >threads.txt
pid=$(thread_column threads.txt threads 1)
run_gtrace export -i threads.data --format chrome -o threads.json
speedscope threads.json
for name in threads alpha beta gamma; do
	tid=$(thread_column threads.txt "$name" 2)
	grep -qxF "profile threads (pid $pid), $name (tid $tid)" threads.seen ||
		fail_seen threads.seen "no profile of thread $name (tid $tid)"
done
gamma="threads (pid $pid), gamma (tid $(thread_column threads.txt gamma 2))"
frames threads.seen "$gamma" | cut -f1 >gamma.frames
for name in spin_gamma thread_gamma; do
	grep -qxF "$name" gamma.frames || fail_seen threads.seen "thread gamma's profile has no frame $name"
done

# The CUDA test doubles: kernels on three streams of GPU 0.
grep -q '^HAVE_CUPTI = 1' "$SRCDIR/config.mk" 2>/dev/null || {
	skip_part cuda "configure found no CUPTI: no GPU stream to open"
	exit 0
}
(
	. "$SRCDIR/tests/cuda/lib.sh"
	need_cuda_fakes
	record app.data -- "$CUDA_DIR/fake-app"
) || exit 1
run_gtrace export -i app.data --format chrome -o app.json
speedscope app.json
# Each stream's profile, and its frames: one a name.
grep '^profile .*, GPU[0-9]* stream [0-9]* (tid [0-9]*)$' app.seen | sed 's/^profile //' >streams
[ "$(wc -l <streams)" -eq 3 ] || fail_seen app.seen "not a profile for each of the 3 GPU streams"
: >stream.frames
while read -r stream; do
	frames app.seen "$stream" >frames.one
	[ -s frames.one ] || fail_seen app.seen "the profile '$stream' has no frame"
	dup=$(cut -f1 frames.one | sort | uniq -d | head -1)
	[ -z "$dup" ] || fail_seen app.seen "'$dup' is more than one frame of '$stream'"
	cat frames.one >>stream.frames
done <streams
# The kernels' names and GPU time, as report --gpu has them: speedscope
# sums each frame's time (ms, us or ns, two decimals); the copies and the
# memset are the others.
run_gtrace report -i app.data --gpu --format json >app.gpu.json
python3 - app.gpu.json stream.frames >kernels.off <<'PY' ||
import json, sys
want = {r["name"]: r["total_ms"] for r in json.load(open(sys.argv[1]))["kernels"]["rows"]}
unit = {"s": 1e3, "ms": 1, "\u00b5s": 1e-3, "ns": 1e-6}
seen = {}
for line in open(sys.argv[2], encoding="utf-8"):
    name, total = line.rstrip("\n").split("\t")
    if not name.startswith("[CUDA "):
        number = total.rstrip("\u00b5mns")
        seen[name] = seen.get(name, 0) + float(number) * unit[total[len(number):]]
if sorted(seen) != sorted(want):
    sys.exit("speedscope's kernels %s, report --gpu's %s" % (sorted(seen), sorted(want)))
for name, ms in sorted(want.items()):
    if abs(seen[name] - ms) > 0.005 + ms / 200:
        sys.exit("%s: %.3f ms in speedscope, %.3f ms in report --gpu" % (name, seen[name], ms))
PY
	{ show kernels.off; fail_seen app.seen "the GPU streams' frames are not report --gpu's kernels"; }
exit 0
