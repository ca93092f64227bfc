#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Counts the names of the recording's contract that are spelled as string
# literals on both sides of it: once in a folder that writes a recording
# (src/cuda, src/record, src/target, src/unwind, src/symbols) and again in
# one that reads it (src/analysis, src/cmd, src/model). Such a name belongs
# in src/contract/, spelled once, so that a typo is a compile error and not
# a silent empty row.
#
# A name is a literal with a dot, hyphen or underscore inside
# ("cuda.pc.status", "start-ns", "sum_ns") or a bracketed name
# ("[CUDA memset]"); format strings, words and sentences are not names.
# Comments are left out; src/contract/ itself is on neither side.
#
# usage: sh scripts/contract-literals.sh [-v]
#   prints the count; -v first lists each name with its files on both sides
set -eu
cd "$(dirname "$0")/.."
verbose=${1:-}

writers="src/cuda src/record src/target src/unwind src/symbols"
readers="src/analysis src/cmd src/model"

# names SIDE DIR...: "NAME<TAB>SIDE<TAB>FILE" for each name literal in the
# .c and .h files under DIR.
names() {
	side=$1
	shift
	# shellcheck disable=SC2016 # awk's program
	find "$@" -name '*.[ch]' | sort | xargs awk -v side="$side" '
	function flush() {
		if (lit ~ /^\[[A-Za-z][A-Za-z0-9_ .-]*\]$/ ||
		    lit ~ /^[a-z][a-z0-9]*([._-][a-z0-9]+)+$/)
			printf "%s\t%s\t%s\n", lit, side, FILENAME
	}
	FNR == 1 { state = "code" }
	{
		line = $0
		for (i = 1; i <= length(line); i++) {
			c = substr(line, i, 1)
			two = substr(line, i, 2)
			if (state == "block") {
				if (two == "*/") { state = "code"; i++ }
			} else if (state == "string") {
				if (c == "\\") { lit = lit substr(line, i, 2); i++ }
				else if (c == "\"") { flush(); state = "code" }
				else lit = lit c
			} else if (state == "char") {
				if (c == "\\") i++
				else if (c == "'\''") state = "code"
			} else if (two == "/*") {
				state = "block"; i++
			} else if (two == "//") {
				break
			} else if (c == "\"") {
				state = "string"; lit = ""
			} else if (c == "'\''") {
				state = "char"
			}
		}
		if (state != "block")
			state = "code"
	}'
}

# shellcheck disable=SC2086 # the folder lists split into words
{
	names w $writers
	names r $readers
} | awk -F '\t' -v verbose="$verbose" '
	{
		file = $3
		sub(/^src\//, "", file)
		if (index(" " files[$1, $2] " ", " " file " ") == 0)
			files[$1, $2] = files[$1, $2] (files[$1, $2] == "" ? "" : " ") file
	}
	END {
		n = 0
		for (key in files) {
			split(key, k, SUBSEP)
			if (k[2] == "w" && ((k[1], "r") in files))
				both[++n] = k[1]
		}
		# Sorted, so that two runs compare with diff.
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && both[j - 1] > both[j]; j--) {
				t = both[j]; both[j] = both[j - 1]; both[j - 1] = t
			}
		if (verbose == "-v")
			for (i = 1; i <= n; i++)
				printf "%s: %s | %s\n", both[i], files[both[i], "w"], files[both[i], "r"]
		print n
	}'
