/* SPDX-License-Identifier: MIT */
/*
 * demo [SECONDS]: the workload behind `make demo`. The main thread parses
 * made-up records (parse_records -> checksum_line), then a "solver" thread
 * relaxes a grid (solve_grid -> relax_row) while main waits for it, asleep.
 * Each phase takes about half of SECONDS (default 1).
 */
#include <pthread.h>

#include "workload.h"

#define GRID 256

static double grid[GRID][GRID];
static double phase_seconds;

static FRAME uint64_t checksum_line(uint64_t seed, int len)
{
	for (int i = 0; i < len; i++)
		seed = workload_mix(seed + i);
	return seed;
}

static FRAME void parse_records(void)
{
	double deadline = workload_now() + phase_seconds;
	uint64_t acc = 0;

	for (int line = 0; workload_now() < deadline; line++) {
		acc = checksum_line(acc, 2000 + line % 1000);
		acc += line;
	}
	workload_sink = acc;
}

static FRAME double relax_row(int r)
{
	double change = 0;

	for (int c = 1; c < GRID - 1; c++) {
		double v = (grid[r - 1][c] + grid[r + 1][c] + grid[r][c - 1] + grid[r][c + 1]) / 4;

		change += v > grid[r][c] ? v - grid[r][c] : grid[r][c] - v;
		grid[r][c] = v;
	}
	return change;
}

static FRAME void *solve_grid(void *arg)
{
	double deadline = workload_now() + phase_seconds;

	pthread_setname_np(pthread_self(), "solver");
	for (int c = 0; c < GRID; c++)
		grid[0][c] = 100;
	while (workload_now() < deadline)
		for (int r = 1; r < GRID - 1; r++)
			workload_sink += (uint64_t)relax_row(r);
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t solver;

	phase_seconds = workload_arg(argc, argv, 1, 1) / 2;
	parse_records();
	if (pthread_create(&solver, NULL, solve_grid, NULL)) {
		perror("pthread_create");
		return 1;
	}
	pthread_join(solver, NULL);
	return 0;
}
