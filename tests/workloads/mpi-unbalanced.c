/* SPDX-License-Identifier: MIT */
/*
 * mpi-unbalanced [STEPS [MS]]: an MPI job with one slow rank. Each of
 * STEPS (default 20) steps runs compute_step, MS (default 20) ms of
 * burn_leaf on every rank but SLOW_RANK, three times as long there, then
 * an MPI_Allreduce of a few doubles: every other rank waits in it for the
 * slow one. Run it with mpirun -np 4 or more.
 */
#include <mpi.h>

#include "workload.h"

#define SLOW_RANK 2
#define SLOW_FACTOR 3
#define VALUES 4

static FRAME uint64_t burn_leaf(uint64_t seed)
{
	for (int i = 0; i < 10000; i++)
		seed = workload_mix(seed + i);
	return seed;
}

/* Work for ms of wall-clock time, however many ranks share the CPUs. */
static FRAME uint64_t compute_step(double ms, uint64_t seed)
{
	double deadline = workload_now() + ms / 1e3;

	while (workload_now() < deadline)
		seed = burn_leaf(seed);
	return seed;
}

static FRAME void exchange(double *values)
{
	MPI_Allreduce(MPI_IN_PLACE, values, VALUES, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
	int steps, rank, size;
	double ms, values[VALUES] = {0};
	uint64_t seed = 1;

	MPI_Init(&argc, &argv);
	steps = (int)workload_arg(argc, argv, 1, 20);
	ms = workload_arg(argc, argv, 2, 20);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (int step = 0; step < steps; step++) {
		seed = compute_step(rank == SLOW_RANK ? SLOW_FACTOR * ms : ms, seed + (uint64_t)rank);
		values[0] = (double)(seed & 0xff);
		exchange(values);
	}
	workload_sink = seed;
	if (!rank)
		printf("mpi-unbalanced: %d ranks, %d steps, rank %d slow\n", size, steps, SLOW_RANK);
	MPI_Finalize();
	return 0;
}
