/* SPDX-License-Identifier: MIT */
/*
 * renamer [MS]: names its thread "before" with prctl(PR_SET_NAME) and
 * spins in spin_before for MS milliseconds (default 300), then renames it
 * "after" and spins in spin_after as long; meanwhile two threads spin
 * under names a hostile program would choose: one with a terminal title
 * escape and a screen clear, one with a newline and a ';'.
 */
#include <pthread.h>
#include <sys/prctl.h>

#include "workload.h"

#define ESCAPE_NAME "\x1b]0;PWN\a\x1b[2J"
#define NEWLINE_NAME "fake\nline;x"

static double spin_ms;

static FRAME uint64_t spin_for(double ms)
{
	double end = workload_now() + ms / 1e3;
	uint64_t acc = 0;

	while (workload_now() < end)
		for (int i = 0; i < 10000; i++)
			acc = workload_mix(acc + i);
	return acc;
}

static FRAME uint64_t spin_before(void)
{
	return spin_for(spin_ms);
}

static FRAME uint64_t spin_after(void)
{
	return spin_for(spin_ms);
}

static void *named_spinner(void *name)
{
	prctl(PR_SET_NAME, name);
	workload_sink = spin_for(spin_ms);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t escape, newline;

	spin_ms = workload_arg(argc, argv, 1, 300);
	if (pthread_create(&escape, NULL, named_spinner, ESCAPE_NAME) ||
	    pthread_create(&newline, NULL, named_spinner, NEWLINE_NAME)) {
		fprintf(stderr, "renamer: cannot start a thread\n");
		return 1;
	}
	prctl(PR_SET_NAME, "before");
	workload_sink = spin_before();
	prctl(PR_SET_NAME, "after");
	workload_sink = spin_after();
	pthread_join(escape, NULL);
	pthread_join(newline, NULL);
	return 0;
}
