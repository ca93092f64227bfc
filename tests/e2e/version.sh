# SPDX-License-Identifier: MIT
# --version names the version and what the binary was built with, as the
# build says: linked with libunwind or not, libdw's and zstd's versions
# that configure found, the CUDA agent built or not, the sqlite export
# built in or not, annotate --asm built in or not; --help lists every
# command that has a man page, and each command's --help is its usage.
. "$SRCDIR/tests/e2e/lib.sh"

# config NAME: the value configure wrote for NAME in config.h, unquoted.
config() {
	sed -n "s/^#define $1 \"\\{0,1\\}\\([^\"]*\\)\"\\{0,1\\}\$/\\1/p" "$SRCDIR/config.h"
}

if ldd "$GTRACE" | grep -q 'libunwind'; then
	unwinder='dwarf (libunwind for the frames it needs), frame pointers'
else
	unwinder='dwarf (no libunwind: signal frames end stacks), frame pointers'
fi
if [ -f "$BUILD/libgtrace-cuda.so" ]; then
	cuda="yes (CUPTI $(config CUPTI_VERSION_CONFIG))"
else
	cuda=no
fi
if ldd "$GTRACE" | grep -q 'libsqlite3'; then
	sqlite="yes (libsqlite3 $(config SQLITE_VERSION_CONFIG))"
else
	sqlite=no
fi
if ldd "$GTRACE" | grep -q 'libcapstone'; then
	capstone="yes (libcapstone $(config CAPSTONE_VERSION_CONFIG))"
else
	capstone=no
fi
cat >version.want <<EOF
gtrace $(sed -n 's/^VERSION = //p' "$SRCDIR/config.mk")
unwinder: $unwinder
symbols: libdw $(config LIBDW_VERSION)
compression: zstd $(config ZSTD_VERSION_STRING_CONFIG)
cuda collector: $cuda
sqlite export: $sqlite
annotate --asm: $capstone
EOF
run_gtrace --version >version.txt
diff -u version.want version.txt >&2 || fail "--version is not what the build has"

# The commands --help lists are those with a man page of section 1.
run_gtrace --help >help.txt
awk '/^commands:/ { on = 1; next } on && NF == 0 { on = 0 } on { print $1 }' help.txt |
	sort >commands.txt
for page in "$SRCDIR"/man/gtrace-*.1; do
	page=${page##*/gtrace-}
	echo "${page%.1}"
done | sort >pages.txt
diff -u pages.txt commands.txt >&2 || fail "--help's commands are not those of man/gtrace-*.1"
for cmd in $(cat commands.txt); do
	run_gtrace $cmd --help >cmd-help.txt
	expect_contains cmd-help.txt "^usage: gtrace $cmd "
done
