# SPDX-License-Identifier: MIT
# make install puts the binary, the man pages, the target header and
# libraries and the pkg-config file in place, and a program builds against
# gtrace-target with pkg-config alone; it installs the CUDA agent where the
# installed gtrace finds and injects it.
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

# Each function of the API has its page under its own name, as a library's
# do: 'man gtrace_span' opens gtrace-target(3).
functions=$(sed -nE 's/^(GTRACE_TARGET_API|static inline) [^(]*[ *](gtrace_[a-z_]+)\(.*/\2/p' \
	"$SRCDIR/include/gtrace/target.h")
[ "$(echo "$functions" | wc -l)" -ge 12 ] || fail "found only '$functions' in target.h"
for fn in $functions gtrace_kr_init gtrace_kr_collect; do
	page=$root/usr/share/man/man3/$fn.3
	[ -f "$page" ] || fail "make install put no page under '$fn' in man3"
	grep -q '^\.TH GTRACE' "$page" || fail "man3/$fn.3 is not a gtrace page"
done
[ "$(readlink "$root/usr/share/man/man3/gtrace_span.3")" = gtrace-target.3 ] ||
	fail "man3/gtrace_span.3 does not lead to gtrace-target.3"

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

# The CUDA agent: make install with the prefix configure was given puts it
# where the installed gtrace looks for it, and that gtrace injects it. A
# private mount namespace stands the staged files in for the prefix's.
if ! grep -q '^HAVE_CUPTI = 1' "$SRCDIR/config.mk"; then
	skip_part cuda "configure found no CUPTI: the CUDA agent is not built, not installed"
	exit 0
fi
[ "$(id -u)" -eq 0 ] ||
	{ skip_part root "standing a staged install in for the prefix needs a mount namespace"; exit 0; }
command -v unshare >/dev/null 2>&1 || { skip_part tools "unshare (util-linux) is not installed"; exit 0; }
perf_events || { skip_part perf-events "$(sed -n '1s/^gtrace: //p' probe.out)"; exit 0; }
. "$SRCDIR/tests/cuda/lib.sh"
need_cuda_fakes
prefix=$(sed -n 's/^PREFIX = //p' "$SRCDIR/config.mk")
staged=$TESTDIR/staged
make -s -C "$SRCDIR" install BUILD="$BUILD" ASAN="${SAN_FLAGS:+1}" DESTDIR="$staged" \
	>make-cuda.out 2>&1 || { show make-cuda.out; fail "make install failed"; }
[ -f "$staged$prefix/lib/gtrace/libgtrace-cuda.so" ] ||
	fail "make install did not install '$prefix/lib/gtrace/libgtrace-cuda.so'"
# Over the prefix's lib/gtrace, or its lib/ where there is none yet.
if [ -d "$prefix/lib/gtrace" ]; then
	over=$prefix/lib/gtrace
elif [ -d "$prefix/lib" ] && [ "$prefix" != /usr ] && [ "$prefix" != / ]; then
	over=$prefix/lib
else
	skip_part root "no '$prefix/lib' to stand the staged one in for"
	exit 0
fi
unshare -m sh -c 'mount --bind "$1" "$2" && exec "$3" record -q -o cuda.data -- "$4"' sh \
	"$staged$over" "$over" "$staged$prefix/bin/gtrace" "$CUDA_DIR/fake-app" \
	>record.out 2>&1 || { show record.out; fail "the installed gtrace could not record fake-app"; }
run_gtrace diagnose -i cuda.data >cuda.diag
expect_contains cuda.diag "^cuda\\.injection: +$prefix/lib/gtrace/libgtrace-cuda\\.so\$"
expect_contains cuda.diag '^cuda\.status: +active$'
expect_counter cuda.diag cuda.records.kernel 21
