#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Records the bundled demo workload and shows what gtrace makes of it.
# Run by `make demo`; usage: scripts/demo.sh [BUILD-DIR]

set -eu

build=${1:-build}
gtrace=$build/gtrace
data=$build/demo.data

# show CMD...: prints the command, then runs it.
show() {
	printf '\n$ %s\n' "$*"
	"$@"
}

show "$gtrace" record -o "$data" -- "$build/workloads/demo" 2
show "$gtrace" report -i "$data" -n 15
show "$gtrace" threads -i "$data"
show "$gtrace" flame -i "$data" --svg "$build/demo.svg"
echo "(a flame graph: open $build/demo.svg in a web browser)"
