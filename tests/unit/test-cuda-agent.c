/* SPDX-License-Identifier: MIT */
/*
 * The CUDA agent's pure parts: theoretical occupancy against values worked
 * out by hand from the device limits, and the names it gives GPU work.
 */
#include <errno.h>

#include "cuda/names.h"
#include "cuda/occupancy.h"
#include "test.h"

/* An A100 (sm_80) as the driver describes it. */
static const struct cuda_device_limits a100 = {
	.cc_major = 8,
	.cc_minor = 0,
	.sms = 108,
	.warp_size = 32,
	.max_threads_per_block = 1024,
	.max_threads_per_sm = 2048,		/* 64 warps */
	.regs_per_block = 65536,
	.regs_per_sm = 65536,
	.smem_per_block = 49152,
	.smem_per_sm = 167936,			/* 164 KiB */
	.smem_per_block_optin = 166912,		/* 163 KiB */
	.smem_reserved_per_block = 1024,
};

static struct cuda_occupancy occupancy(int threads, int regs, size_t smem_static,
				       size_t smem_dynamic, int optin)
{
	struct cuda_launch_shape k = {
		.block_threads = threads,
		.regs_per_thread = regs,
		.smem_static = smem_static,
		.smem_dynamic = smem_dynamic,
		.smem_optin = optin,
		.carveout = -1,
	};
	struct cuda_occupancy o = { 0 };

	CHECK(cuda_occupancy(&a100, &k, &o) == 0);
	return o;
}

/*
 * 256 threads (8 warps) at 32 registers: 8 x 1024 registers per block, 8
 * blocks by registers and 8 by warps (64 / 8): the SM is full.
 */
static void test_full_sm(void)
{
	struct cuda_occupancy o = occupancy(256, 32, 0, 0, 0);

	CHECK_EQ_U64(o.blocks_per_sm, 8);
	CHECK_EQ_U64(o.permille, 1000);
	CHECK_EQ_U64(o.limiter, CUDA_OCC_LIMIT_WARPS);
}

/* 64 registers: 2048 per warp, 16384 per block: 4 blocks, 32 of 64 warps. */
static void test_register_bound(void)
{
	struct cuda_occupancy o = occupancy(256, 64, 0, 0, 0);

	CHECK_EQ_U64(o.blocks_per_sm, 4);
	CHECK_EQ_U64(o.permille, 500);
	CHECK_EQ_U64(o.limiter, CUDA_OCC_LIMIT_REGISTERS);
}

/*
 * 48 KiB static + 1 KiB reserved = 50176 bytes per block; 167936 / 50176:
 * 3 blocks of 4 warps, 12 of 64 warps = 187.5 permille, rounded up.
 */
static void test_shared_memory_bound(void)
{
	struct cuda_occupancy o = occupancy(128, 32, 49152, 0, 0);

	CHECK_EQ_U64(o.blocks_per_sm, 3);
	CHECK_EQ_U64(o.permille, 188);
	CHECK_EQ_U64(o.limiter, CUDA_OCC_LIMIT_SHARED_MEMORY);
}

/* One-warp blocks: sm_80 runs at most 32 blocks, 32 of 64 warps. */
static void test_block_bound(void)
{
	struct cuda_occupancy o = occupancy(32, 16, 0, 0, 0);

	CHECK_EQ_U64(o.blocks_per_sm, 32);
	CHECK_EQ_U64(o.permille, 500);
	CHECK_EQ_U64(o.limiter, CUDA_OCC_LIMIT_BLOCKS);
}

/* 768 threads (24 warps): 2 blocks fit in 64 warp slots, 48 used. */
static void test_warp_bound(void)
{
	struct cuda_occupancy o = occupancy(768, 16, 0, 0, 0);

	CHECK_EQ_U64(o.blocks_per_sm, 2);
	CHECK_EQ_U64(o.permille, 750);
	CHECK_EQ_U64(o.limiter, CUDA_OCC_LIMIT_WARPS);
}

/*
 * 100 KiB of dynamic shared memory needs the opt-in limit: one block
 * (102400 + 1024 reserved) of 8 warps fits in 164 KiB. Without the opt-in
 * the launch could not run: no block fits.
 */
static void test_optin_shared_memory(void)
{
	struct cuda_occupancy o = occupancy(256, 32, 0, 102400, 1);

	CHECK_EQ_U64(o.blocks_per_sm, 1);
	CHECK_EQ_U64(o.permille, 125);
	CHECK_EQ_U64(o.limiter, CUDA_OCC_LIMIT_SHARED_MEMORY);

	o = occupancy(256, 32, 0, 102400, 0);
	CHECK_EQ_U64(o.blocks_per_sm, 0);
	CHECK_EQ_U64(o.permille, 0);
}

static void test_incomplete_limits(void)
{
	struct cuda_device_limits d = a100;
	struct cuda_launch_shape k = { .block_threads = 128, .carveout = -1 };
	struct cuda_occupancy o;

	d.warp_size = 0;
	CHECK(cuda_occupancy(&d, &k, &o) == -EINVAL);
	d = a100;
	d.cc_major = 99;	/* unknown to the calculator */
	CHECK(cuda_occupancy(&d, &k, &o) == -EINVAL);
	k.block_threads = 0;
	CHECK(cuda_occupancy(&a100, &k, &o) == -EINVAL);
}

static void test_copy_names(void)
{
	char buf[32];

	CHECK_STREQ(cuda_copy_name(1, buf, sizeof(buf)), "[CUDA memcpy HtoD]");
	CHECK_STREQ(cuda_copy_name(2, buf, sizeof(buf)), "[CUDA memcpy DtoH]");
	CHECK_STREQ(cuda_copy_name(8, buf, sizeof(buf)), "[CUDA memcpy DtoD]");
	CHECK_STREQ(cuda_copy_name(9, buf, sizeof(buf)), "[CUDA memcpy HtoH]");
	CHECK_STREQ(cuda_copy_name(10, buf, sizeof(buf)), "[CUDA memcpy PtoP]");
	CHECK_STREQ(cuda_copy_name(3, buf, sizeof(buf)), "[CUDA memcpy 3]");
	CHECK_STREQ(cuda_copy_name(42, buf, sizeof(buf)), "[CUDA memcpy 42]");
}

static void test_waiting_calls(void)
{
	CHECK(cuda_api_waits("cudaDeviceSynchronize"));
	CHECK(cuda_api_waits("cudaStreamSynchronize"));
	CHECK(cuda_api_waits("cudaEventSynchronize"));
	CHECK(cuda_api_waits("cuCtxSynchronize"));
	CHECK(cuda_api_waits("cuStreamSynchronize_ptsz"));
	CHECK(cuda_api_waits("cudaMemcpy"));
	CHECK(cuda_api_waits("cudaMemcpy_v3020"));
	CHECK(cuda_api_waits("cuMemcpyHtoD_v2"));
	CHECK(cuda_api_waits("cuMemcpyDtoH_v2"));
	CHECK(cuda_api_waits("cudaMemcpyPeer"));
	CHECK(!cuda_api_waits("cudaMemcpyAsync"));
	CHECK(!cuda_api_waits("cuMemcpyHtoDAsync_v2"));
	CHECK(!cuda_api_waits("cudaLaunchKernel"));
	CHECK(!cuda_api_waits("cudaStreamSynchronizeX"));
	CHECK(!cuda_api_waits("cudaMemsetAsync"));
	CHECK(!cuda_api_waits(NULL));
}

int main(void)
{
	RUN(test_full_sm);
	RUN(test_register_bound);
	RUN(test_shared_memory_bound);
	RUN(test_block_bound);
	RUN(test_warp_bound);
	RUN(test_optin_shared_memory);
	RUN(test_incomplete_limits);
	RUN(test_copy_names);
	RUN(test_waiting_calls);
	return test_summary();
}
