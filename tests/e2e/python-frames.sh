# SPDX-License-Identifier: MIT
# Python frames in the views: each CPython frame named "function
# (file.py:line)" in place of the eval loop's C frame that ran it, right for
# at least 90% of the samples in each C routine of the workload that have
# Python frames (at least 75% of them do: see tests/e2e/pyframes.py), with
# the recursion's depth; threads each with their own Python stack; span
# origins joined to stacks that show the Python caller; --python=off and
# =both.
. "$SRCDIR/tests/e2e/lib.sh"

need_perf_events
need_python3
need_python311
work=$SRCDIR/tests/workloads

# check_frames DATA: the C routines of pywork.py under the right Python lines.
check_frames() {
	run_gtrace flame -i "$1" --folded >"$1.folded"
	python3 "$SRCDIR/tests/e2e/pyframes.py" "$work/pywork.py" \
		'zlib=^\[libz|^deflate|^adler32=compress_work=zlib.compress(' \
		'sha256=^\[libcrypto|^SHA256=hash_work=hashlib.sha256(' \
		'bz2=^\[libbz2|^BZ2_=bzip_work=bz2.compress(' \
		<"$1.folded" >"$1.check" || { show "$1.check"; fail "$1: Python frames above C routines"; }
	# recurse is DEPTH (20) frames deep wherever it shows.
	awk '{ n = gsub(/;recurse \(pywork\.py:[0-9]+\)/, "&"); if (n) { all += $NF; if (n == 20) ok += $NF } }
	     END { exit !(all > 0 && ok >= 0.95 * all) }' "$1.folded" ||
		{ grep recurse "$1.folded" | head -3 >&2; fail "$1: recurse is not 20 frames deep"; }
	# sorted() calls back into Python: the lambda's eval call right under sort_work's.
	expect_contains "$1.folded" ';sort_work \(pywork\.py:[0-9]+\);.*;sort_work\.<locals>\.<lambda> \(pywork\.py:[0-9]+\)'
}

record py.data -- "$py311" "$work/pywork.py" 2
check_frames py.data
# In place of the eval loop by default; beside it with both; gone with off.
expect_not_contains py.data.folded '_PyEval_EvalFrameDefault;<module>'
run_gtrace flame -i py.data --folded --python=both >both.folded
expect_contains both.folded '_PyEval_EvalFrameDefault;<module> \(pywork\.py:[0-9]+\);main \(pywork\.py:[0-9]+\)'
run_gtrace flame -i py.data --folded --python=off >off.folded
expect_contains off.folded '_PyEval_EvalFrameDefault'
expect_not_contains off.folded '\.py:[0-9]+\)'
run_gtrace report -i py.data --no-children --sort pyline >pyline.report
expect_contains pyline.report "pywork\\.py:$(grep -n 'zlib.compress(' "$work/pywork.py" | cut -d: -f1)\$"
# -s srcline: a Python frame's line is its file.py:line too, beside the C lines.
run_gtrace report -i py.data --sort srcline >srcline.report
expect_contains srcline.report " pywork\\.py:$(grep -n 'zlib.compress(' "$work/pywork.py" | cut -d: -f1)\$"

# The other versions with a layout: zlib and SHA-256.
for version in 3.12 3.13; do
	if ! cpython $version; then
		skip_part python$version "no CPython $version: its frames are not checked"
		continue
	fi
	record "py$version.data" -- "$py" "$work/pywork.py"
	run_gtrace flame -i "py$version.data" --folded >"py$version.folded"
	python3 "$SRCDIR/tests/e2e/pyframes.py" "$work/pywork.py" \
		'zlib=^\[libz|^deflate|^adler32=compress_work=zlib.compress(' \
		'sha256=^\[libcrypto|^SHA256=hash_work=hashlib.sha256(' \
		<"py$version.folded" >"py$version.check" ||
		{ show "py$version.check"; fail "CPython $version: Python frames above C routines"; }
done

# Each thread's samples with its own Python stack.
record threads.data -- "$py311" "$work/pythreads.py" 1
run_gtrace flame -i threads.data --folded >threads.folded
python3 "$SRCDIR/tests/e2e/pyframes.py" "$work/pythreads.py" \
	'zlib=^\[libz|^deflate|^adler32=compress_loop=zlib.compress(' \
	'sha256=^\[libcrypto|^SHA256=hash_loop=hashlib.sha256(' \
	<threads.folded >threads.check || { show threads.check; fail "threads: Python frames of the wrong thread"; }
expect_contains threads.folded ';Thread\._bootstrap \(threading\.py:[0-9]+\);.*;compress_loop \(pythreads\.py:'

# Spans queued from Python: at least 90% of their origins join to stacks
# that show the Python caller (a row of the lane work table).
record spans.data -- "$py311" "$work/pyspans.py" "$BUILD/libgtrace-target.so" 200
run_gtrace report -i spans.data >spans.report
expect_contains spans.report '^ +[0-9.]+ +[0-9.]+ +(1[89][0-9]|200) +python3\.11 +pyspans\.py +queue_work \(pyspans\.py:[0-9]+\)$'

# A program that is not Python: the same output in every mode.
record hot.data -- "$WORKLOADS/hot" 0.2
run_gtrace report -i hot.data >hot.on
for mode in off both; do
	run_gtrace report -i hot.data --python=$mode >hot.$mode
	cmp -s hot.on hot.$mode || { diff hot.on hot.$mode >&2; fail "--python=$mode changed a native report"; }
done
