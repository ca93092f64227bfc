# SPDX-License-Identifier: MIT
# make install puts the binary, the man pages, the target header and
# libraries and the pkg-config file in place, and a program builds against
# gtrace-target with pkg-config alone.
. "$SRCDIR/tests/e2e/lib.sh"
command -v pkg-config >/dev/null || skip tools "pkg-config is not installed"

root=$TESTDIR/root
# ASAN as the build was made, so that make never remakes part of it otherwise.
make -s -C "$SRCDIR" install BUILD="$BUILD" ASAN="${SAN_FLAGS:+1}" DESTDIR="$root" PREFIX=/usr \
	>make.out 2>&1 || { show make.out; fail "make install failed"; }

for f in bin/gtrace include/gtrace/target.h lib/libgtrace-target.a \
	 lib/libgtrace-target.so.0 lib/pkgconfig/gtrace-target.pc \
	 share/man/man1/gtrace.1 share/man/man1/gtrace-record.1 \
	 share/man/man3/gtrace-target.3 share/man/man5/gtrace-format.5; do
	[ -e "$root/usr/$f" ] || fail "make install did not install '/usr/$f'"
done

cat >app.c <<'C'
#include <gtrace/target.h>
#include <stdio.h>

int main(void)
{
	gtrace_lane *lane = gtrace_lane_get("queue", "installed");
	uint64_t now = gtrace_now_ns();

	gtrace_span(lane, "job", now, now + 1000, NULL);
	printf("active %d\n", gtrace_reporting_active());
	return lane ? 0 : 1;
}
C
export PKG_CONFIG_PATH="$root/usr/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$root"
flags=$(pkg-config --cflags --libs gtrace-target) || fail "pkg-config does not know gtrace-target"
# The libraries carry the build's sanitizers, so the program links them too.
${CC:-cc} $SAN_FLAGS app.c -o app $flags 2>cc.out || { show cc.out; fail "cannot build against gtrace-target"; }
LD_LIBRARY_PATH="$root/usr/lib" ./app >app.out || fail "the installed library does not run"
expect_contains app.out '^active 0$'
