/* SPDX-License-Identifier: MIT */
/*
 * libcleanup.so, for the cleanup workload: a frame that runs a cleanup.
 * Built with -fexceptions, its unwind entry names a personality routine
 * through the GOT, as every C++ frame with a destructor to run does.
 */
#include "workload.h"

void with_cleanup(void (*fn)(double), double seconds);

static FRAME void release(double *seconds)
{
	workload_sink += (uint64_t)*seconds;
}

FRAME void with_cleanup(void (*fn)(double), double seconds)
{
	double held __attribute__((cleanup(release))) = seconds;

	fn(held);
}
