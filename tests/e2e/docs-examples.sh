# SPDX-License-Identifier: MIT
# Every console example of README.md and the man pages (a "$ " line of a
# ```console block or of an .EX block), taken from the documents so that a
# changed example is tested as it reads, runs here as written: in document
# order, in a directory with stand-ins for the programs the examples name
# (./myprog, ./bench, ./server, ./app, a Makefile) and the recordings they
# read before making them (gtrace.data, base.data, build.data), with gtrace
# first on PATH. Each must exit 0 (diff --fail: 0 or 3, its regression; a
# pipe into grep: 1 too, nothing matched). Skipped, with the reason, are
# only those that need a GPU, Slurm or torchrun, and the rest of a block
# after one that needs a GPU (they use what it would have made). A pid the author's machine had is the pid of
# a stand-in. The target library's examples build against a staged
# install, through pkg-config as README's DESTDIR recipe says.
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events
command -v pkg-config >/dev/null || skip tools "pkg-config is not installed"

# examples DOC: "BLOCK<TAB>LINE<TAB>COMMAND" for each example of DOC, its
# groff escapes undone for a man page.
examples() {
	case $1 in
	*.md)
		awk '/^```console/ { on = 1; block++; next } /^```/ { on = 0 }
		     on && /^\$ / { printf "%d\t%d\t%s\n", block, NR, substr($0, 3) }' "$1" ;;
	*)
		awk '/^\.EX/ { on = 1; block++; next } /^\.EE/ { on = 0 }
		     on && /^\$ / { printf "%d\t%d\t%s\n", block, NR, substr($0, 3) }' "$1" |
			sed -e 's/\\-/-/g' -e "s/\\\\(aq/'/g" -e 's/\\e/\\/g' -e 's/\\&//g' ;;
	esac
}

# code_block DOC: the first .EX block of DOC that is code, not a command.
code_block() {
	awk '/^\.EX/ { on = 1; next } /^\.EE/ { if (on) exit } on' "$1" |
		sed -e 's/\\-/-/g' -e 's/\\e/\\/g'
}

# lacks COMMAND: the requirement (tests/requirements) COMMAND needs and
# this machine lacks, or nothing. A GPU is taken to be missing: the
# examples' programs (train.py, ./app built with nvcc) are not here, and
# the stand-ins' recordings have no GPU work (flame --weight gpu-idle).
lacks() {
	case $1 in
	srun*) echo slurm ;;
	torchrun*) echo torchrun ;;
	*--gpu* | *gpu-idle* | nvcc* | *train.py*) echo gpu ;;
	*"--format sqlite"*) "$GTRACE" --version | grep -q '^sqlite export: yes' || echo sqlite-export ;;
	*annotate*--asm*) "$GTRACE" --version | grep -q '^annotate --asm: yes' || echo capstone ;;
	mpirun*) command -v mpirun >/dev/null 2>&1 && [ -x "$WORKLOADS/mpi-unbalanced" ] ||
		echo mpi ;;
	esac
}

# The staged install the library's examples build against.
make -s -C "$SRCDIR" install BUILD="$BUILD" ASAN="${SAN_FLAGS:+1}" DESTDIR="$TESTDIR/root" \
	>install.out 2>&1 || { show install.out; fail "make install failed"; }
prefix=$(sed -n 's/^PREFIX = //p' "$SRCDIR/config.mk")
export PKG_CONFIG_PATH="$TESTDIR/root$prefix/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$TESTDIR/root"
export LD_LIBRARY_PATH="$TESTDIR/root$prefix/lib"
export CFLAGS="$SAN_FLAGS"
# Open MPI as root and with more ranks than cores, as README says to ask.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none

# The stand-ins: programs that take whatever arguments the examples give.
mkdir sandbox
cd sandbox || exit 1
standin() {
	printf '#!/bin/sh\nexec %s\n' "$2" >"$1"
	chmod +x "$1"
}
# 3.5 s: export's example keeps 2.5s to 3s of it; named worker, as the
# thread that examples select by name.
cp "$WORKLOADS/lanes" worker
standin myprog "./worker --threads 2 --lanes 4 --run-ms 3500 --rate 2000"
standin bench "'$WORKLOADS/regress' 0.5"
cp "$WORKLOADS/sleeper" server
[ -x "$WORKLOADS/mpi-unbalanced" ] && standin app "'$WORKLOADS/mpi-unbalanced' 4 5"
: >input.txt
printf 'int one(void) { return 1; }\n' >one.c
printf 'int two(void) { return 2; }\n' >two.c
printf 'all: one.o two.o\n' >Makefile
PATH=$(dirname "$GTRACE"):$PATH
export PATH
mkdir run-before
for made in gtrace.data:./myprog base.data:./bench build.data:make run-before/gtrace.0.data:./bench; do
	gtrace record -q -o "${made%%:*}" -- ${made#*:} >/dev/null 2>"$TESTDIR/stderr" ||
		{ show "$TESTDIR/stderr"; fail "cannot record the stand-in ${made#*:}"; }
	rm -f ./*.o
done
cp gtrace.data myprog.data
ran=0
skipped=0
for doc in "$SRCDIR/README.md" "$SRCDIR"/man/*.[135]; do
	name=${doc##*/}
	# Each document reads the recording of ./myprog that it was written for.
	cp myprog.data gtrace.data
	case $name in gtrace-target.3) code_block "$doc" >app.c ;; esac
	examples "$doc" >examples.txt
	skip_block=
	while IFS="$(printf '\t')" read -r block line cmd; do
		need=$(lacks "$cmd")
		if [ -n "$need" ]; then
			skip_part "$need" "$name:$line: $cmd"
			skipped=$((skipped + 1))
			# The block's later lines use what the GPU example would have made.
			[ "$need" = gpu ] && skip_block=$block
			continue
		fi
		if [ "$skip_block" = "$block" ]; then
			skip_part gpu "$name:$line: $cmd (uses what the example before it made)"
			skipped=$((skipped + 1))
			continue
		fi
		# A process to attach to for 2 s: ./server, or ./worker for the pid
		# of the author's; the author's pid and tids that a view selects:
		# gtrace.data's.
		stand_pid=
		case $cmd in
		*'$(pidof server)'*)
			./server 150 &
			stand_pid=$! ;;
		*"-p 4242"*)
			./worker --threads 2 --run-ms 2000 >/dev/null &
			stand_pid=$!
			cmd=$(echo "$cmd" | sed "s/-p 4242/-p $stand_pid/") ;;
		*4242* | *4243* | *4250*)
			gtrace threads >threads.txt 2>/dev/null
			pid=$(awk '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ { print $1; exit }' threads.txt)
			tid=$(awk '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ { tid = $2; if ($1 != $2) exit }
				   END { print tid }' threads.txt)
			cmd=$(echo "$cmd" | sed -e "s/4242/$pid/g" -e "s/4243/$tid/g" -e "s/4250/$tid/g") ;;
		esac
		timeout 120 sh -c "$cmd" >example.out 2>example.err </dev/null
		status=$?
		[ -z "$stand_pid" ] || { kill $stand_pid 2>/dev/null; wait $stand_pid 2>/dev/null; }
		ok=0
		case $status:$cmd in
		0:*) ok=1 ;;
		3:*"diff --fail"*) ok=1 ;;
		1:*"| grep "*) ok=1 ;;
		esac
		if [ $ok -eq 0 ]; then
			show example.err
			fail "$name:$line: '$cmd' exited with $status"
		fi
		ran=$((ran + 1))
	done <examples.txt
done
echo "ran $ran examples, skipped $skipped"
at_least "examples run" $ran 30
exit 0
