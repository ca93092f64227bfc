# SPDX-License-Identifier: MIT
# shellcheck shell=sh
#
# Helpers for the CUDA end-to-end tests (tests/e2e/cuda-*.sh), sourced after
# tests/e2e/lib.sh. The tests record tests/cuda/fake-app, a CUDA program
# bound to the fake driver, with the real gtrace record and agent; the fake
# CUPTI stands in for the real one through GTRACE_CUPTI.

CUDA_DIR=$BUILD/tests/cuda

# need_cuda_fakes: skips unless the agent and the test doubles are built,
# then points the program at the fake driver and the agent at the fake
# CUPTI, with no fault or CUDA tool set up from outside.
need_cuda_fakes() {
	grep -q '^HAVE_CUPTI = 1' "$SRCDIR/config.mk" 2>/dev/null ||
		skip cuda "configure found no CUPTI (HAVE_CUPTI=0): the CUDA agent is not built"
	[ -f "$BUILD/libgtrace-cuda.so" ] || fail "the CUDA agent is not built ($BUILD/libgtrace-cuda.so): run make tests"
	for file in libcupti.so.13 libcuda.so.1 fake-app; do
		[ -e "$CUDA_DIR/$file" ] || fail "the CUDA test doubles are not built ($CUDA_DIR/$file): run make tests"
	done
	LD_LIBRARY_PATH=$CUDA_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	GTRACE_CUPTI=$CUDA_DIR/libcupti.so.13
	export LD_LIBRARY_PATH GTRACE_CUPTI
	unset FAKE_CUPTI_FAULTS FAKE_CUPTI_VERSION FAKE_CUDA_DEVICES GTRACE_CUDA_AGENT \
		CUDA_INJECTION64_PATH NVTX_INJECTION64_PATH
}

# lane_spans FILE KIND NAME: from gtrace threads output, the Spans column of
# the lane of that kind and name; -1 when there is none.
lane_spans() {
	awk -v kind="$2" -v name="$3" '
		$2 ~ /^0xfff/ && $3 == kind {
			lane = $4
			for (i = 5; i <= NF - 4; i++)
				lane = lane " " $i
			if (lane == name) { print $(NF - 3); found = 1; exit }
		}
		END { if (!found) print -1 }' "$1"
}

# expect_lane FILE KIND NAME SPANS: threads lists that lane with SPANS spans.
expect_lane() {
	got=$(lane_spans "$1" "$2" "$3")
	if [ "$got" != "$4" ]; then
		show "$1"
		fail "lane $2 '$3' has $got spans, expected $4"
	fi
}

# cuda_counter FILE NAME: a cuda.* counter of gtrace diagnose output; 0 when
# it is not listed (counters that stayed 0 are not).
cuda_counter() {
	awk -v name="$2" '$1 == name && $2 ~ /^[0-9]+$/ { print $2; found = 1; exit }
		END { if (!found) print 0 }' "$1"
}

# expect_counter FILE NAME VALUE: diagnose shows the counter NAME at VALUE.
expect_counter() {
	got=$(cuda_counter "$1" "$2")
	if [ "$got" != "$3" ]; then
		show "$1"
		fail "$2 is $got, expected $3"
	fi
}

# expect_row FILE END ERE: the line of FILE that ends with END (a fixed
# string: kernel and copy names hold regex characters) matches ERE.
expect_row() {
	row=$(awk -v end="$2" 'length($0) >= length(end) &&
		substr($0, length($0) - length(end) + 1) == end { print; exit }' "$1")
	if [ -z "$row" ]; then
		show "$1"
		fail "'$1' has no line ending with '$2'"
	fi
	if ! printf '%s\n' "$row" | grep -Eq -- "$3"; then
		show "$1"
		fail "the line of '$2' does not match '$3': $row"
	fi
}

# origins_total FILE OUTCOME [LANES]: from diagnose's "origins by lane"
# table, the spans of all lanes (of the lanes whose name matches the ERE
# LANES) with that origin outcome (linked, none, bad_tid, ...); -1 when
# there is no such table or column.
origins_total() {
	awk -v want="$2" -v lanes="${3:-}" '/^origins by lane:/ { on = 1; next }
		on && $1 == "PID" { for (i = 1; i <= NF; i++) if ($i == want) col = i; next }
		on && !/^ / { on = 0 }
		on && col && $2 ~ /^0xfff/ {
			name = $9
			for (i = 10; i <= NF; i++)
				name = name " " $i
			if (name ~ lanes)
				n += $col
		}
		END { print col ? n + 0 : -1 }' "$1"
}

# expect_origins FILE SPANS MIN-LINKED [LANES]: diagnose's origins of the
# lanes (matching the ERE LANES): SPANS spans, each with an origin on a
# thread of the program that had samples, at least MIN-LINKED of them
# linked to one and the rest too far from any (a thread kept off its CPU
# for milliseconds, on a loaded machine).
expect_origins() {
	linked=$(origins_total "$1" linked "${4:-}")
	far=$(origins_total "$1" too_far "${4:-}")
	for outcome in none bad_tid no_thread no_stack; do
		[ "$(origins_total "$1" $outcome "${4:-}")" -eq 0 ] ||
			{ show "$1"; fail "lane spans${4:+ of '$4'} with origin outcome $outcome"; }
	done
	[ $((linked + far)) -eq "$2" ] && [ "$linked" -ge "$3" ] ||
		{ show "$1"; fail "$linked linked and $far too far of the lane spans${4:+ of '$4'}, expected $2, at least $3 linked"; }
}
