# SPDX-License-Identifier: MIT
# --version names the version and the optional features built in; --help
# lists every command.
. "$SRCDIR/tests/e2e/lib.sh"

run_gtrace --version >version.txt
expect_contains version.txt '^gtrace [0-9]+\.[0-9]+'
expect_contains version.txt 'unwinder'
expect_contains version.txt 'cuda'

run_gtrace --help >help.txt
for cmd in record report flame threads diagnose; do
	expect_contains help.txt "^ +$cmd "
	run_gtrace $cmd --help >cmd-help.txt
	expect_contains cmd-help.txt "$cmd"
done
