# SPDX-License-Identifier: MIT
# The names of the recording's contract are spelled once, in src/contract/:
# at most 10 are spelled as literals both in a folder that writes a
# recording and in one that reads it (scripts/contract-literals.sh, where a
# typo in either spelling would be a silent empty row).
. "$SRCDIR/tests/e2e/lib.sh"

expect_count_at_most 10 \
	"names spelled on both sides of the recording's contract (at most 10): put them in src/contract/" \
	scripts/contract-literals.sh
