/* SPDX-License-Identifier: MIT */
/*
 * Kernel regions on the fake driver: a program that reports the regions of
 * its kernels through libgtrace-target while the CUDA agent records them.
 * kr-app launches attn_fwd (24 blocks of 3 groups of 32 threads, 10 ms on
 * the fake GPU) N times on one stream, each followed by a synchronize,
 * and fills a kernel-regions buffer as the kernel's 72 leaders would,
 * their regions load (10%), compute (80%) and store (10%) inside the
 * kernel's run; then hands it to gtrace_kr_submit. The fake GPU runs on
 * gtrace's clock (the agent's timestamp callback), so the clock offset is
 * 0 and the error the launch call's length.
 *
 * The kernel's run starts 2 us after the launch call queued it
 * (FAKE_LAUNCH_LATENCY_NS; the stream is idle) and lasts 10 ms: the
 * regions fall in [call return + 3 us, call start + 10 ms], which that
 * holds as long as the call takes less than the run (a first launch under
 * ASan took 1.9 ms); a longer one is said and ends the program.
 *
 * usage: kr-app [--launches N]   (default 10)
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gtrace/target.h>

#include "fake.h"
#include "kr-encode.h"

#define BLOCKS 24
#define GROUPS 3
#define KERNEL_NS 10000000
#define CAPACITY (BLOCKS * GROUPS * 8)

#define CHECK(call)                                                              \
	do {                                                                     \
		CUresult status_ = (call);                                       \
		if (status_ != CUDA_SUCCESS) {                                   \
			fprintf(stderr, "kr-app: %s failed with %d\n", #call,    \
				(int)status_);                                   \
			exit(2);                                                 \
		}                                                                \
	} while (0)

static const char *const region_names[] = { "load", "compute", "store" };

/* The leaders' markers of one run that spans [lo, hi]. */
static void fill(uint64_t *buf, uint64_t lo, uint64_t hi)
{
	struct launch l = launch_1d(BLOCKS, GROUPS);
	uint64_t tenth = (hi - lo) / 10;

	for (uint32_t b = 0; b < BLOCKS; b++) {
		for (unsigned g = 0; g < GROUPS; g++) {
			struct leader k = leader_1d(buf, &l, b, g);
			uint64_t skew = (b * GROUPS + g) * 100;

			begin(&k, 0, lo + skew);
			end(&k, 0, lo + tenth);
			begin(&k, 1, lo + tenth + skew);
			end(&k, 1, lo + 9 * tenth);
			begin(&k, 2, lo + 9 * tenth + skew);
			end(&k, 2, hi - skew);
			finish(&k, hi);
		}
	}
}

int main(int argc, char **argv)
{
	struct fakecuda_function_attrs attrs = { .regs = 64, .duration_ns = KERNEL_NS };
	uint64_t *buf = buffer_new(CAPACITY);
	long launches = 10;
	CUfunction attn;
	CUmodule module;
	CUstream stream;
	CUcontext ctx;
	CUdevice dev;

	if (argc == 3 && !strcmp(argv[1], "--launches"))
		launches = atol(argv[2]);
	else if (argc != 1)
		return 2;
	CHECK(cuInit(0));
	CHECK(cuDeviceGet(&dev, 0));
	CHECK(cuCtxCreate(&ctx, NULL, 0, dev));
	CHECK(cuModuleLoadData(&module, "fake cubin"));
	CHECK(cuModuleGetFunction(&attn, module, "attn_fwd"));
	CHECK(fakecuda_set_function_attrs(attn, &attrs));
	CHECK(cuStreamCreate(&stream, 0));
	for (long i = 0; i < launches; i++) {
		uint64_t before = gtrace_now_ns(), after;

		CHECK(cuLaunchKernel(attn, BLOCKS, 1, 1, 32 * GROUPS, 1, 1, 0, stream, NULL,
				     NULL));
		after = gtrace_now_ns();
		CHECK(cuStreamSynchronize(stream));
		if (after - before >= KERNEL_NS / 2) {
			fprintf(stderr, "kr-app: a launch took %llu ns: no room for the regions\n",
				(unsigned long long)(after - before));
			return 3;
		}
		fill(buf, after + FAKE_LAUNCH_LATENCY_NS + 1000,
		     before + FAKE_LAUNCH_LATENCY_NS + KERNEL_NS);
		if (gtrace_kr_submit(buf, buffer_words(buf), "attn_fwd", region_names, 3, 0,
				     after - before)) {
			fprintf(stderr, "kr-app: gtrace_kr_submit failed\n");
			return 1;
		}
		memset(buf + GTRACE_KR_HDR_CLAIMED, 0,
		       (buffer_words(buf) - GTRACE_KR_HDR_CLAIMED) * sizeof(*buf));
	}
	CHECK(cuStreamDestroy(stream));
	CHECK(cuModuleUnload(module));
	CHECK(cuCtxDestroy(ctx));
	gtrace_flush(2000);
	free(buf);
	return 0;
}
