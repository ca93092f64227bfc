# SPDX-License-Identifier: MIT
# An MPI job of four ranks on this machine, each rank recorded on its own
# with -o gtrace.%r.data: four recordings that know their rank, read back
# as one by report --ranks, which names rank 2, the one that computes three
# times longer while the others wait in MPI_Allreduce, as the straggler.
# Four ranks on fewer CPUs wait mostly asleep: the straggler must show
# without their samples in MPI_Allreduce.
. "$SRCDIR/tests/e2e/lib.sh"

command -v mpirun >/dev/null 2>&1 ||
	skip mpi "no mpirun (Open MPI; scripts/install-deps.sh installs it)"
[ -x "$WORKLOADS/mpi-unbalanced" ] ||
	skip mpi "no $WORKLOADS/mpi-unbalanced: it is built only where mpicc is"
need_perf_events

# Open MPI runs as root only when told twice; ranks on one machine need
# shared memory only, and no single-copy mechanism that a container forbids.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none

# run/ as the README's example has it: not made beforehand.
mpirun --oversubscribe -np 4 "$GTRACE" record -q -F 499 -o run/gtrace.%r.data -- \
	"$WORKLOADS/mpi-unbalanced" 10 20 >mpirun.out 2>&1 </dev/null
status=$?
if [ $status -ne 0 ]; then
	show mpirun.out
	fail "mpirun of 4 recorders exited with $status"
fi
expect_contains mpirun.out '^mpi-unbalanced: 4 ranks, 10 steps, rank 2 slow$'
[ "$(ls run | wc -l)" -eq 4 ] || { ls run >&2; fail "not 4 recordings in run/"; }
for rank in 0 1 2 3; do
	[ -s run/gtrace.$rank.data ] || fail "no run/gtrace.$rank.data"
	run_gtrace diagnose -i run/gtrace.$rank.data --format json >diag.$rank.json
	python3 - "$rank" diag.$rank.json <<'EOF' || fail "rank $rank's meta is wrong"
import json, sys
meta = json.load(open(sys.argv[2]))["meta"]
want = {"rank": sys.argv[1], "world-size": "4", "rank-from": "OMPI_COMM_WORLD_RANK"}
bad = {k: meta.get(k) for k in want if meta.get(k) != want[k]}
if bad:
    sys.exit("meta %s, expected %s" % (bad, want))
EOF
done

run_gtrace report --ranks -i run/ >ranks.txt
[ "$(awk '$1 ~ /^[0-9]+$/' ranks.txt | wc -l)" -eq 4 ] || { show ranks.txt; fail "not 4 rows"; }
[ "$(awk '$NF == "straggler" { print $1 }' ranks.txt)" = 2 ] ||
	{ show ranks.txt; fail "rank 2's row is not marked as the straggler's"; }
expect_contains ranks.txt '^# Straggler: rank 2, [0-9.]+ s on a CPU outside collective calls'

run_gtrace report --ranks -i run/ --format json >ranks.json
python3 - ranks.json <<'EOF' || { show ranks.json; fail "report --ranks --format json is wrong"; }
import json, sys
doc = json.load(open(sys.argv[1]))
ranks = doc["ranks"]
if [r["rank"] for r in ranks] != [0, 1, 2, 3]:
    sys.exit("ranks %s" % [r["rank"] for r in ranks])
if doc["straggler"] != {"rank": 2, "basis": "cpu"}:
    sys.exit("straggler %s" % doc["straggler"])
for r in ranks:
    if r["world_size"] != 4 or r["wall_s"] <= 0 or r["samples"] <= 0:
        sys.exit("row %s" % r)
EOF
