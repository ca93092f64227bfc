# SPDX-License-Identifier: MIT
# make demo builds everything plain make builds (the CUDA agent too, where
# configure found CUPTI) before it records: what each would make in a
# fresh build directory, from make -n.
. "$SRCDIR/tests/e2e/lib.sh"

# outputs TARGET: the files make TARGET would link or compile into fresh/.
outputs() {
	make -n -C "$SRCDIR" "$1" BUILD="$TESTDIR/fresh" 2>make.err |
		grep -oE -- "-o $TESTDIR/fresh/[^ ]+" | sed 's/^-o //' | sort -u
}

outputs all >all.txt
outputs demo >demo.txt
[ -s all.txt ] || { show make.err; fail "make -n all would build nothing"; }
comm -23 all.txt demo.txt >missing.txt
[ -s missing.txt ] && { show missing.txt; fail "make demo does not build what make does (see above)"; }
[ ! -e fresh ] || fail "make -n built something"
exit 0
