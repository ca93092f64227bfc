# SPDX-License-Identifier: MIT
# gtrace export --format chrome, opened in speedscope's web app (its npm
# package's build) in headless Chromium (Debian's), by
# tests/browser/speedscope.mjs, which prints the profiles of speedscope's
# selector and the rows of each one's Sandwich table: what a person sees.
# The threads workload: each thread a profile named after it, the
# CPU-bound gamma's with its functions, each one's time its samples
# times the period (not the time it slept). The CUDA test doubles: each GPU
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

# seen.py: speedscope's times ("15.00ms", "20.00µs", two decimals) against
# what gtrace says, a line on stdout a difference.
cat >seen.py <<'PY'
import json, sys

UNITS = {"s": 1e3, "ms": 1, "\u00b5s": 1e-3, "ns": 1e-6}


def ms(shown):
    number = shown.rstrip("\u00b5mns")
    return float(number) * UNITS[shown[len(number):]]


def lines(path, word):
    for line in open(path, encoding="utf-8"):
        if line.startswith(word + " "):
            yield line[len(word) + 1:].rstrip("\n").split("\t")


def threads(seen, threads_txt, export):
    """Each thread's profile weighs its samples times the period: a
    sample at most two, the time to the thread's next one."""
    period = 1e3 / float(json.load(open(export))["metadata"]["frequency"])
    samples = {}
    for line in open(threads_txt):
        words = line.split()
        if not words:
            break
        if words[0].isdigit() and words[1].isdigit():
            samples[words[1]] = int(words[3])
    for name, total in lines(seen, "profile"):
        tid = name.rsplit("(tid ", 1)[1].rstrip(")")
        want = samples.get(tid, 0) * period
        if not want / 2 - 0.01 <= ms(total) <= 2 * want + 0.01:
            print("%s: %s, %d samples of %.3f ms" % (name, total, samples.get(tid, 0), period))


def kernels(seen, gpu_json, streams):
    """The streams' frames but copies and memsets: report --gpu's kernels,
    speedscope's time of each (summed over streams) its GPU time."""
    want = {r["name"]: r["total_ms"] for r in json.load(open(gpu_json))["kernels"]["rows"]}
    streams = set(open(streams, encoding="utf-8").read().splitlines())
    got = {}
    for profile, name, total in lines(seen, "frame"):
        if profile in streams and not name.startswith("[CUDA "):
            got[name] = got.get(name, 0) + ms(total)
    if sorted(got) != sorted(want):
        print("speedscope's kernels %s, report --gpu's %s" % (sorted(got), sorted(want)))
        return
    for name, total in sorted(want.items()):
        if abs(got[name] - total) > 0.005 + total / 200:
            print("%s: %.3f ms in speedscope, %.3f ms in report --gpu" % (name, got[name], total))


globals()[sys.argv[1]](*sys.argv[2:])
PY

# check_seen WHAT ARGS...: python3 seen.py WHAT ARGS finds no difference.
check_seen() {
	python3 seen.py "$@" >"$1.off" || fail "seen.py $* failed"
	[ ! -s "$1.off" ] || { show "$1.off"; fail_seen "$2" "speedscope's $1 are not gtrace's"; }
}

# The threads workload: gamma spins on the CPU in spin_gamma, under thread_gamma.
record threads.data -- "$WORKLOADS/threads" 0.5
run_gtrace threads -i threads.data >threads.txt
pid=$(thread_column threads.txt threads 1)
run_gtrace export -i threads.data --format chrome -o threads.json
speedscope threads.json
for name in threads alpha beta gamma; do
	tid=$(thread_column threads.txt "$name" 2)
	grep -q "^profile threads (pid $pid), $name (tid $tid)	" threads.seen ||
		fail_seen threads.seen "no profile of thread $name (tid $tid)"
done
gamma="threads (pid $pid), gamma (tid $(thread_column threads.txt gamma 2))"
frames threads.seen "$gamma" | cut -f1 >gamma.frames
for name in spin_gamma thread_gamma; do
	grep -qxF "$name" gamma.frames || fail_seen threads.seen "thread gamma's profile has no frame $name"
done
check_seen threads threads.seen threads.txt threads.json

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
awk -F '\t' '$1 ~ /^profile .*, GPU[0-9]+ stream [0-9]+ \(tid [0-9]+\)$/ { sub(/^profile /, "", $1); print $1 }' \
	app.seen >streams
[ "$(wc -l <streams)" -eq 3 ] || fail_seen app.seen "not a profile for each of the 3 GPU streams"
while read -r stream; do
	frames app.seen "$stream" >frames.one
	[ -s frames.one ] || fail_seen app.seen "the profile '$stream' has no frame"
	dup=$(cut -f1 frames.one | sort | uniq -d | head -1)
	[ -z "$dup" ] || fail_seen app.seen "'$dup' is more than one frame of '$stream'"
done <streams
# The kernels' names and GPU time, as report --gpu has them.
run_gtrace report -i app.data --gpu --format json >app.gpu.json
check_seen kernels app.seen app.gpu.json streams
exit 0
