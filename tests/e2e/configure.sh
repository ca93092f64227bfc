# SPDX-License-Identifier: MIT
# ./configure takes an option's value as autoconf's scripts do, after '='
# or as the next word (--prefix=/x, --prefix /x), and says what is wrong
# in one line otherwise. It runs here, writing config.mk into $TESTDIR.
. "$SRCDIR/tests/e2e/lib.sh"

# configured VAR: VAR's value in the config.mk the last configure wrote.
configured() {
	sed -n "s/^$1 = //p" config.mk
}

for form in "--prefix=/opt/gt" "--prefix /opt/gt"; do
	rm -f config.mk
	# shellcheck disable=SC2086 # the form's words are the arguments
	expect_exit 0 sh "$SRCDIR/configure" $form --without-cuda
	[ "$(configured PREFIX)" = "/opt/gt" ] ||
		{ show config.mk; fail "'configure $form' did not install under /opt/gt"; }
	[ "$(configured HAVE_CUPTI)" = 0 ] || fail "'configure $form --without-cuda' built CUPTI"
done

# The directory after --with-cuda is the toolkit looked in (none there).
expect_exit 1 sh "$SRCDIR/configure" --with-cuda /no/cuda/here --prefix /opt/gt
expect_contains stderr "^configure: no usable CUPTI under '/no/cuda/here'\$"

for bad in "--prefix" "--prefix relative/dir" "--prefix= " "--bogus"; do
	# shellcheck disable=SC2086
	expect_exit 2 sh "$SRCDIR/configure" $bad
	expect_contains stderr "^configure: "
done
exit 0
