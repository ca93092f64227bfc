#!/bin/sh
# SPDX-License-Identifier: MIT
# usage: scripts/man-links.sh DIR PAGE...
# In DIR, where PAGE is installed, a link NAME.SECTION -> PAGE for each
# function PAGE's NAME section lists, as libraries install theirs, so that
# 'man gtrace_span' finds gtrace-target(3).
set -e
dir=$1
shift
for page in "$@"; do
	base=${page##*/}
	section=${base##*.}
	sed -n '/^\.SH NAME/,/^\.SH [^N]/p' "$page" | sed -e '/^\./d' -e 's/\\-.*//' |
		tr ',' '\n' | while read -r name; do
			[ -n "$name" ] && [ "$name.$section" != "$base" ] || continue
			ln -sf "$base" "$dir/$name.$section"
		done
done
