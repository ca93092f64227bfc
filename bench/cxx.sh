#!/bin/bash
# SPDX-License-Identifier: MIT
#
# gtrace on a large C++ program from Debian (issue 24): clang++ 14
# (libLLVM-14.so.1, 110 MB, and libclang-cpp.so.14, built without frame
# pointers, named by their dynamic symbol tables: Debian ships no .symtab
# for them) compiling a generated file of template-heavy code at -O2,
# beside perf record in one run:
#
#   attached    the recorder's own CPU (GNU time on the recorder alone,
#               user + system) attached with -p for RUN_SECONDS (5) to
#               the compiler once it runs, and per sample; perf with -g
#               and with --call-graph dwarf
#   launched    the wall time of `record -- clang++ ...` from start to the
#               recorder's exit, the median of REPEAT (3) interleaved
#               rounds, beside the compiler alone
#   stacks      of the compiler's samples, the share whose innermost frame
#               has a name and the share whose stack reaches main: whole
#               stacks (the compiler's run deeper than gtrace's default
#               16 KiB copy of the stack, so gtrace also with the most
#               perf_event_open copies, --call-graph dwarf,65528)
#
# usage: bench/cxx.sh   (RUN_SECONDS=5 FUNCS=60 REPEAT=3 FREQ=999 CXX=clang++ BUILD=build)

. "$(dirname "$0")/lib.sh"
need_perf

CXX=${CXX:-clang++}
RUN=${RUN_SECONDS:-5}
FUNCS=${FUNCS:-60}
REPEAT=${REPEAT:-3}
FREQ=${FREQ:-999}
[ -x /usr/bin/time ] || { echo "bench: needs GNU time in /usr/bin/time (package time)" >&2; exit 1; }
if ! command -v "$CXX" >/dev/null; then
	say "apt-get install -y clang"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q clang >"$WORK/apt.log" 2>&1 ||
		{ tail -5 "$WORK/apt.log" >&2; echo "bench: cannot install clang" >&2; exit 1; }
fi

# The source: FUNCS instances of a template that sorts, maps and matches
# regular expressions, so that the compiler's stacks run deep through
# its front end, optimizer and code generator.
{
	printf '#include <%s>\n' algorithm map regex sstream string unordered_map vector
	cat <<'EOF'
template <int N> struct work {
	static std::string run(const std::vector<std::string> &in)
	{
		std::map<std::string, int> m;
		std::unordered_map<int, std::string> u;
		std::regex re("([a-z]+)([0-9]{" + std::to_string(N % 7 + 1) + "})");
		for (const auto &s : in) {
			std::smatch sm;
			if (std::regex_search(s, sm, re))
				m[sm[1]] += N;
			u[(int)s.size() * N] = s;
		}
		std::ostringstream os;
		for (auto &kv : m)
			os << kv.first << kv.second;
		std::vector<std::string> v(in);
		std::sort(v.begin(), v.end(), [](auto &a, auto &b) { return a.size() * N < b.size(); });
		return os.str() + v.front() + u.begin()->second;
	}
};
EOF
	for i in $(seq "$FUNCS"); do
		echo "std::string f$i(const std::vector<std::string> &in) { return work<$i>::run(in); }"
	done
} >"$WORK/big.cpp"
compile="$CXX -O2 -std=c++17 -c $WORK/big.cpp -o $WORK/big.o"
echo "$("$CXX" --version | head -1), $FUNCS instances, $FREQ Hz, $(nproc) CPUs"

# attach NAME CMD...: starts the compiler (clang++ compiles in its own
# process), then runs CMD (PID replaced by its pid) under GNU time; the
# compiler ends with it.
attach() {
	local name=$1 pid
	shift
	# shellcheck disable=SC2086 # the command line, split into words
	$compile &
	pid=$!
	time_attached "$name" "$pid" "$@"
}

# perf_stacks FILE: "samples leaf-named whole" over the compiler's samples.
perf_stacks() {
	"$PERF" script -i "$1" -F comm,ip,sym 2>/dev/null | awk '
		/^[^ \t]/ { if (mine) { all++; named += leaf; whole += start }
			mine = ($1 == "clang" || $1 == "clang++"); first = 1; start = 0; next }
		mine && NF && first { leaf = ($NF != "[unknown]" && NF > 1); first = 0 }
		mine && $NF == "main" { start = 1 }
		END { if (mine) { all++; named += leaf; whole += start }
			print all + 0, named + 0, whole + 0 }'
}

# gtrace_stacks FILE: the same from the folded stacks (innermost last).
gtrace_stacks() {
	"$GTRACE" flame -i "$1" --folded 2>/dev/null | awk '
		/^clang/ { n = $NF; all += n; sub(/ [0-9]+$/, "")
			k = split($0, f, ";"); if (f[k] !~ /@0x[0-9a-f]+$/) named += n
			if (/;main;/) whole += n }
		END { print all + 0, named + 0, whole + 0 }'
}

# shares "ALL NAMED WHOLE": the two shares in %.
shares() {
	echo "$1" | awk '{ printf "%.2f %.2f", $1 ? 100 * $2 / $1 : 0, $1 ? 100 * $3 / $1 : 0 }'
}

echo
echo "attached for $RUN s:"
printf '%-12s %9s %12s %12s %10s %8s\n' recorder samples recorder-s us/sample leaf-named whole
row() {
	read -r named whole <<<"$(shares "$3")"
	printf '%-12s %9s %12.3f %12.2f %9s%% %7s%%\n' "$1" "$2" "$(cpu_of "$1")" \
		"$(awk -v c="$(cpu_of "$1")" -v n="$2" 'BEGIN { print n ? c * 1e6 / n : 0 }')" \
		"$named" "$whole"
}
say "$GTRACE record -q -F $FREQ -p PID --duration $RUN"
attach gtrace "$GTRACE" record -q -F "$FREQ" -o "$WORK/attach.gtrace" -p PID --duration "$RUN"
row gtrace "$(gtrace_samples "$WORK/attach.gtrace")" "$(gtrace_stacks "$WORK/attach.gtrace")"
say "$GTRACE record -q -F $FREQ --call-graph dwarf,65528 -p PID --duration $RUN"
attach gtrace-64k "$GTRACE" record -q -F "$FREQ" --call-graph dwarf,65528 -o "$WORK/attach64.gtrace" \
	-p PID --duration "$RUN"
row gtrace-64k "$(gtrace_samples "$WORK/attach64.gtrace")" "$(gtrace_stacks "$WORK/attach64.gtrace")"
say "$PERF record -q -F $FREQ -g -p PID -- sleep $RUN"
attach perf-g "$PERF" record -q -F "$FREQ" -g -o "$WORK/attach.perf" -p PID -- sleep "$RUN"
row perf-g "$(perf_samples "$WORK/attach.perf")" "$(perf_stacks "$WORK/attach.perf")"
say "$PERF record -q -F $FREQ --call-graph dwarf -p PID -- sleep $RUN"
attach perf-dwarf "$PERF" record -q -F "$FREQ" --call-graph dwarf -o "$WORK/attach.dwarf" \
	-p PID -- sleep "$RUN"
row perf-dwarf "$(perf_samples "$WORK/attach.dwarf")" "$(perf_stacks "$WORK/attach.dwarf")"

# command_of SETUP OUT: the launched compiler under that set-up, writing to OUT.
command_of() {
	case $1 in
	none) echo "$compile" ;;
	perf-g) echo "$PERF record -q -F $FREQ -g -o $2 -- $compile" ;;
	gtrace) echo "$GTRACE record -q -F $FREQ -o $2 -- $compile" ;;
	esac
}

echo
echo "launched, median of $REPEAT rounds:"
time_rounds none perf-g gtrace
printf '%-12s %9s %10s %8s\n' setup wall-s leaf-named whole
for setup in none perf-g gtrace; do
	wall=$(round_wall "$setup")
	case $setup in
	none) named=- whole=- ;;
	perf-g) read -r named whole <<<"$(shares "$(perf_stacks "$WORK/perf-g.1.data")")" ;;
	gtrace) read -r named whole <<<"$(shares "$(gtrace_stacks "$WORK/gtrace.1.data")")" ;;
	esac
	printf '%-12s %9.2f %10s %8s\n' "$setup" "$wall" "$named" "$whole"
done
