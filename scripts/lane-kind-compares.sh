#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Counts the lane-kind compares in the views (src/analysis, src/cmd): each
# lane kind a view spells, by its constant from src/contract/lanes.h
# (CUDA_LANE_KIND, ...) or as a literal ("cuda", ...) given to strcmp,
# strncmp or model_string_id. A view spells a kind only to compare it: on
# the text, or by the string id model_string_id looks up. The model
# classifies each lane once at load (model_lane_class, src/model/lanes.c),
# so that the views ask it instead: the count to keep is 0.
#
# Comments are left out; the kinds are read from src/contract/lanes.h.
#
# usage: sh scripts/lane-kind-compares.sh [-v]
#   prints the count; -v first lists each compare as FILE:LINE: CODE
set -eu
cd "$(dirname "$0")/.."
verbose=${1:-}

# "NAME VALUE" of each #define NAME "VALUE" whose name ends in _LANE_KIND.
kinds=$(sed -n 's/^#define \([A-Z_]*_LANE_KIND\)[[:space:]]*"\([^"]*\)".*/\1 \2/p' \
	src/contract/lanes.h)
[ -n "$kinds" ] || { echo "lane-kind-compares.sh: no lane kinds in src/contract/lanes.h" >&2; exit 1; }

# shellcheck disable=SC2016 # awk's program
find src/analysis src/cmd -name '*.[ch]' | sort | xargs awk -v kinds="$kinds" -v verbose="$verbose" '
	BEGIN {
		n = split(kinds, k, /[ \n]/)
		for (i = 1; i < n; i += 2) {
			names = names (names == "" ? "" : "|") k[i]
			values = values (values == "" ? "" : "|") k[i + 1]
		}
		constant = "(^|[^A-Za-z0-9_])(" names ")([^A-Za-z0-9_]|$)"
		call = "(strn?cmp|model_string_id)[(][^)]*"
		literal = "\"(" values ")\""
	}
	FNR == 1 { block = 0 }
	{
		# The line without its comments; strings kept.
		code = ""
		instr = 0
		line = $0
		for (i = 1; i <= length(line); i++) {
			c = substr(line, i, 1)
			two = substr(line, i, 2)
			if (block) {
				if (two == "*/") { block = 0; i++ }
				continue
			}
			if (instr) {
				if (c == "\\") { code = code two; i++; continue }
				if (c == "\"") instr = 0
			} else if (two == "/*") {
				block = 1; i++; continue
			} else if (two == "//") {
				break
			} else if (c == "\"") {
				instr = 1
			}
			code = code c
		}
		# Each compare on the line: the constants, then the literals compared.
		hits = 0
		rest = code
		while (match(rest, constant)) {
			hits++
			rest = substr(rest, RSTART + RLENGTH - 1)
		}
		rest = code
		while (match(rest, call)) {
			hits += substr(rest, RSTART, RLENGTH) ~ literal
			rest = substr(rest, RSTART + RLENGTH)
		}
		if (hits && verbose == "-v")
			printf "%s:%d: %s\n", FILENAME, FNR, code
		count += hits
	}
	END { print count + 0 }'
