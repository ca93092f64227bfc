# SPDX-License-Identifier: MIT
# Output names under launchers, their variables simulated: torchrun's,
# Slurm's and Open MPI's give each rank its file and its meta; torchrun's
# win under srun; %r outside a job is an error naming the variables, and
# with a rank that is no number, naming the variable and its value.
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events
need_python3
unset RANK LOCAL_RANK WORLD_SIZE OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_LOCAL_RANK \
	OMPI_COMM_WORLD_SIZE PMI_RANK PMI_SIZE PMIX_RANK SLURM_PROCID SLURM_LOCALID SLURM_NTASKS \
	MV2_COMM_WORLD_RANK

# meta FILE KEY: a meta value from diagnose's JSON, or "-".
meta() {
	run_gtrace diagnose -i "$1" --format json >"$1.json"
	python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["meta"].get(sys.argv[2], "-"))' "$1.json" "$2"
}

RANK=3 LOCAL_RANK=1 WORLD_SIZE=8 run_gtrace record -q -o 'torch.%r.%l.data' -- true
[ -s torch.3.1.data ] || fail "torchrun's rank 3, local 1 wrote no torch.3.1.data"
[ "$(meta torch.3.1.data world-size)" = 8 ] || fail "torchrun's world size was not kept"
[ "$(meta torch.3.1.data rank-from)" = RANK ] || fail "the rank's variable was not kept"

SLURM_PROCID=5 SLURM_LOCALID=0 SLURM_NTASKS=6 run_gtrace record -q -o 'slurm.%r.%h.data' -- true
host=$(hostname | cut -d. -f1)
[ -s "slurm.5.$host.data" ] || fail "Slurm's rank 5 on $host wrote no slurm.5.$host.data"
[ "$(meta "slurm.5.$host.data" rank)" = 5 ] || fail "Slurm's rank was not kept"

OMPI_COMM_WORLD_RANK=2 OMPI_COMM_WORLD_SIZE=4 run_gtrace record -q -o 'ompi.%r.data' -- true
[ "$(meta ompi.2.data rank-from)" = OMPI_COMM_WORLD_RANK ] || fail "Open MPI's rank was not used"

# torchrun under srun: the worker's own rank.
RANK=7 SLURM_PROCID=0 run_gtrace record -q -o 'both.%r.data' -- true
[ -s both.7.data ] || fail "torchrun's RANK did not win over SLURM_PROCID"

# The ranks' directory, missing, is made (0755, the umask's bits less),
# deeper ones too; one that cannot be made, or a file in its way, is an
# error that names the path.
(umask 022 && OMPI_COMM_WORLD_RANK=0 run_gtrace record -q -o 'job/gtrace.%r.data' -- true)
[ -s job/gtrace.0.data ] || fail "-o job/gtrace.%r.data on a fresh directory wrote nothing"
[ "$(stat -c %a job)" = 755 ] || fail "job/ was made with mode $(stat -c %a job), not 755"
OMPI_COMM_WORLD_RANK=1 run_gtrace record -q -o 'job/gtrace.%r.data' -- true
[ -s job/gtrace.1.data ] || fail "a second rank into the made job/ wrote nothing"
RANK=2 run_gtrace record -q -o "$TESTDIR/deep/er/r.%r.data" -- true
[ -s deep/er/r.2.data ] || fail "-o DIR/DIR/r.%r.data made no directories"
: >plain
RANK=0 expect_exit 1 "$GTRACE" record -o 'plain/r.%r.data' -- true
expect_contains "$TESTDIR/stderr" "^gtrace: cannot create 'plain/r.0.data': Not a directory\$"
RANK=0 expect_exit 1 "$GTRACE" record -o /proc/no-such/r.%r.data -- true
expect_contains "$TESTDIR/stderr" "^gtrace: cannot create the directory of '/proc/no-such/r.0.data': "

# Outside a job: no recording, a message with the variables.
expect_exit 2 "$GTRACE" record -o 'none.%r.data' -- true
expect_contains "$TESTDIR/stderr" "^gtrace: no rank for the output name 'none.%r.data': none of RANK, OMPI_COMM_WORLD_RANK, .*SLURM_PROCID"
[ ! -e none..data ] && [ ! -e 'none.%r.data' ] || fail "a recording was left without a rank"
# A rank that is no number: the variable that holds it, and what it holds.
expect_exit 2 env RANK=first "$GTRACE" record -o 'word.%r.data' -- true
expect_contains "$TESTDIR/stderr" "^gtrace: no rank for the output name 'word.%r.data': RANK is 'first', not a whole number$"
expect_exit 2 "$GTRACE" record -o 'bad.%q.data' -- true
expect_contains "$TESTDIR/stderr" "^gtrace: unknown '%q' in the output name"
# Without a rank, the recording says none.
record plain.data -- true
[ "$(meta plain.data rank)" = - ] || fail "a recording outside a job has a rank"
exit 0
