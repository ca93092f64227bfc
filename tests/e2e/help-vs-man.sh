# SPDX-License-Identifier: MIT
# The manual keeps up with the program: every command listed by
# gtrace --help has a man page, every option its --help prints is in that
# page and its SYNOPSIS, and every page renders without a groff warning or
# a space before punctuation.
. "$SRCDIR/tests/e2e/lib.sh"

MAN=$SRCDIR/man

# options FILE: the distinct -x and --long-name options mentioned in FILE.
options() {
	{
		grep -oE -- '--[a-z][a-z0-9-]*' "$1"
		grep -oE -- '(^|[][ ,|(])-[a-zA-Z]([], |=)]|$)' "$1" | grep -oE -- '-[a-zA-Z]'
	} | sort -u
}

# man_text PAGE: the page's source with groff's escapes for dashes and
# fonts removed, close enough to the rendered text to search.
man_text() {
	sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\f(..//g' -e 's/\\&//g' "$1"
}

# check_synopsis HELP-FILE PAGE: each option line of HELP-FILE has one of
# its names in PAGE's SYNOPSIS, --help aside.
check_synopsis() {
	sed -n '/^\.SH SYNOPSIS/,/^\.SH DESCRIPTION/p' "$2" >synopsis.src
	man_text synopsis.src >synopsis.txt
	grep -E '^ +-' "$1" | sed -E 's/^ +//; s/  .*//' >option-lines.txt
	while read -r line; do
		found=
		for name in $(echo "$line" | grep -oE -- '--?[a-zA-Z][a-z0-9-]*'); do
			case $name in -h | --help) found=1 ;; esac
			grep -qE -- "(^|[^a-zA-Z0-9-])$name([^a-zA-Z0-9-]|\$)" synopsis.txt && found=1
		done
		[ -n "$found" ] || fail "'$line' from '$(head -n 1 "$1")' is not in the SYNOPSIS of ${2##*/}"
	done <option-lines.txt
}

# check_page HELP-FILE PAGE: every option in HELP-FILE appears in PAGE.
check_page() {
	[ -f "$2" ] || fail "no man page '$2'"
	man_text "$2" >page.txt
	for opt in $(options "$1"); do
		grep -qE -- "(^|[^a-zA-Z0-9-])$opt([^a-zA-Z0-9-]|\$)" page.txt ||
			fail "'$opt' from '$(head -n 1 "$1")' is not in ${2##*/}"
	done
}

run_gtrace --help >help.txt
check_page help.txt "$MAN/gtrace.1"
commands=$(awk '/^commands:/ { on = 1; next } on && NF == 0 { on = 0 } on { print $1 }' help.txt)
[ -n "$commands" ] || { show help.txt; fail "gtrace --help lists no commands"; }
for cmd in $commands; do
	"$GTRACE" "$cmd" --help >cmd-help.txt 2>&1 </dev/null ||
		fail "'gtrace $cmd --help' exited with $?"
	check_page cmd-help.txt "$MAN/gtrace-$cmd.1"
	check_synopsis cmd-help.txt "$MAN/gtrace-$cmd.1"
	man_text "$MAN/gtrace.1" | grep -q "gtrace-$cmd" ||
		fail "gtrace.1 does not point to gtrace-$cmd(1)"
done

# ".B word ," renders "word ,": punctuation after a font change goes in
# the same request, ".BR word ,".
if grep -nE '^\.[BI] [^ "]+ [][,.;:)]+$' "$MAN"/*.[135] >spaced.txt; then
	show spaced.txt
	fail "man pages put a space before punctuation (see above): use .BR or .IR"
fi

if command -v groff >/dev/null 2>&1; then
	for page in "$MAN"/*.[15]; do
		groff -man -Tutf8 -ww -z "$page" >groff.txt 2>&1
		[ -s groff.txt ] && { show groff.txt; fail "groff warns about ${page##*/}"; }
	done
fi
exit 0
