#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Regenerates the fuzzers' seed corpus in tests/fuzz/corpus/ from the format
# unit test, which knows how to write small valid, cut and damaged traces.
#
# usage: sh scripts/gen-fuzz-corpus.sh [BUILD]   (default build; runs make first)
set -e
cd "$(dirname "$0")/.."
BUILD=${1:-build}
make --no-print-directory BUILD="$BUILD" "$BUILD/tests/test-format"
for dir in reader tables; do
	rm -f "tests/fuzz/corpus/$dir"/*
	mkdir -p "tests/fuzz/corpus/$dir"
done
"$BUILD/tests/test-format" --write-corpus tests/fuzz/corpus
ls -l tests/fuzz/corpus/reader tests/fuzz/corpus/tables
