/* SPDX-License-Identifier: MIT */
/*
 * The CUDA agent's pure parts: theoretical occupancy against values worked
 * out by hand from the device limits, the names it gives GPU work, which
 * calls wait and which go untraced, and the duty cycle of PC sampling on a
 * simulated clock.
 */
#include <errno.h>
#include <string.h>

#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>

#include "cuda/names.h"
#include "cuda/occupancy.h"
#include "cuda/pcduty.h"
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

/* Launches on the A100 with what each one gets, worked out by hand. */
static void test_occupancy(void)
{
	static const struct {
		int threads, regs;
		size_t smem_static, smem_dynamic;
		int optin;
		uint32_t blocks_per_sm, permille, limiter;
	} launches[] = {
		/*
		 * 256 threads (8 warps) at 32 registers: 8 x 1024 registers per
		 * block, 8 blocks by registers and 8 by warps (64 / 8): the SM
		 * is full.
		 */
		{ 256, 32, 0, 0, 0, 8, 1000, CUDA_OCC_LIMIT_WARPS },
		/* 64 registers: 2048 per warp, 16384 per block: 4 blocks, 32 of 64 warps. */
		{ 256, 64, 0, 0, 0, 4, 500, CUDA_OCC_LIMIT_REGISTERS },
		/*
		 * 48 KiB static + 1 KiB reserved = 50176 bytes per block; 167936 /
		 * 50176: 3 blocks of 4 warps, 12 of 64 warps = 187.5 permille,
		 * rounded up.
		 */
		{ 128, 32, 49152, 0, 0, 3, 188, CUDA_OCC_LIMIT_SHARED_MEMORY },
		/* One-warp blocks: sm_80 runs at most 32 blocks, 32 of 64 warps. */
		{ 32, 16, 0, 0, 0, 32, 500, CUDA_OCC_LIMIT_BLOCKS },
		/* 768 threads (24 warps): 2 blocks fit in 64 warp slots, 48 used. */
		{ 768, 16, 0, 0, 0, 2, 750, CUDA_OCC_LIMIT_WARPS },
		/*
		 * 100 KiB of dynamic shared memory needs the opt-in limit: one
		 * block (102400 + 1024 reserved) of 8 warps fits in 164 KiB.
		 */
		{ 256, 32, 0, 102400, 1, 1, 125, CUDA_OCC_LIMIT_SHARED_MEMORY },
	};

	for (size_t i = 0; i < sizeof(launches) / sizeof(launches[0]); i++) {
		struct cuda_occupancy o = occupancy(launches[i].threads, launches[i].regs,
						    launches[i].smem_static,
						    launches[i].smem_dynamic, launches[i].optin);

		CHECK_EQ_U64(o.blocks_per_sm, launches[i].blocks_per_sm);
		CHECK_EQ_U64(o.permille, launches[i].permille);
		CHECK_EQ_U64(o.limiter, launches[i].limiter);
	}
}

/* Without the opt-in, the launch above could not run: no block fits. */
static void test_no_block_fits(void)
{
	struct cuda_occupancy o = occupancy(256, 32, 0, 102400, 0);

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
	static const struct {
		uint32_t kind;
		const char *name;
	} copies[] = {
		{ 1, "[CUDA memcpy HtoD]" },
		{ 2, "[CUDA memcpy DtoH]" },
		{ 8, "[CUDA memcpy DtoD]" },
		{ 9, "[CUDA memcpy HtoH]" },
		{ 10, "[CUDA memcpy PtoP]" },
		{ 3, "[CUDA memcpy 3]" },
		{ 42, "[CUDA memcpy 42]" },
	};
	char buf[32];

	for (size_t i = 0; i < sizeof(copies) / sizeof(copies[0]); i++)
		CHECK_STREQ(cuda_copy_name(copies[i].kind, buf, sizeof(buf)), copies[i].name);
}

static void test_waiting_calls(void)
{
	static const struct {
		const char *name;
		enum cuda_wait waits;
	} calls[] = {
		{ "cudaDeviceSynchronize", CUDA_WAIT_EXPLICIT },
		{ "cudaStreamSynchronize", CUDA_WAIT_EXPLICIT },
		{ "cudaEventSynchronize", CUDA_WAIT_EXPLICIT },
		{ "cuCtxSynchronize", CUDA_WAIT_EXPLICIT },
		{ "cuStreamSynchronize_ptsz", CUDA_WAIT_EXPLICIT },
		{ "cudaMemcpy", CUDA_WAIT_EXPLICIT },
		{ "cudaMemcpy_v3020", CUDA_WAIT_EXPLICIT },
		{ "cuMemcpyHtoD_v2", CUDA_WAIT_EXPLICIT },
		{ "cuMemcpyDtoH_v2", CUDA_WAIT_EXPLICIT },
		{ "cudaMemcpyPeer", CUDA_WAIT_EXPLICIT },
		{ "cudaFree", CUDA_WAIT_IMPLICIT },
		{ "cudaFreeHost", CUDA_WAIT_IMPLICIT },
		{ "cudaFreeArray", CUDA_WAIT_IMPLICIT },
		{ "cuMemFree_v2", CUDA_WAIT_IMPLICIT },
		{ "cuMemFreeHost", CUDA_WAIT_IMPLICIT },
		{ "cuArrayDestroy", CUDA_WAIT_IMPLICIT },
		{ "cudaFreeAsync", CUDA_WAIT_NONE },
		{ "cudaFreeAsync_ptsz", CUDA_WAIT_NONE },
		{ "cuMemFreeAsync", CUDA_WAIT_NONE },
		{ "cudaMalloc", CUDA_WAIT_NONE },
		{ "cudaMemcpyAsync", CUDA_WAIT_NONE },
		{ "cuMemcpyHtoDAsync_v2", CUDA_WAIT_NONE },
		{ "cudaLaunchKernel", CUDA_WAIT_NONE },
		{ "cudaStreamSynchronizeX", CUDA_WAIT_NONE },
		{ "cudaMemsetAsync", CUDA_WAIT_NONE },
		{ NULL, CUDA_WAIT_NONE },
	};

	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		if (cuda_api_waits(calls[i].name) != calls[i].waits)
			printf("  %s\n", calls[i].name ? calls[i].name : "(null)");
		CHECK(cuda_api_waits(calls[i].name) == calls[i].waits);
	}
}

static const struct cuda_api_call *filtered_call(const char *name)
{
	const struct cuda_api_call *calls;
	size_t n, len = strlen(name);

	calls = cuda_api_filtered(&n);
	for (size_t i = 0; i < n; i++)
		if (!strncmp(calls[i].name, name, len) &&
		    (!calls[i].name[len] || calls[i].name[len] == '_'))
			return &calls[i];
	return NULL;
}

/* The hot queries and every versioned id of them; nothing that queues work or waits. */
static void test_filtered_calls(void)
{
	static const char *const wanted[] = {
		"cudaGetDevice_v3020", "cudaGetLastError_v3020", "cudaPeekAtLastError_v3020",
		"cudaGetDeviceCount_v3020", "cudaDeviceGetAttribute_v5000",
		"cudaStreamIsCapturing_v10000", "cudaStreamIsCapturing_ptsz_v10000",
		"cudaStreamGetCaptureInfo_v12030", "cudaStreamGetCaptureInfo_v2_v11030",
		"cudaFuncGetAttributes_v3020", "cudaPointerGetAttributes_v4000",
		"cuCtxGetCurrent", "cuCtxSetCurrent", "cuCtxGetDevice", "cuCtxGetDevice_v2",
		"cuKernelGetAttribute", "cuDevicePrimaryCtxGetState", "cuGetProcAddress",
		"cuGetProcAddress_v2", "cuDeviceGetAttribute", "cuFuncGetAttribute",
		"cuStreamIsCapturing", "cuStreamIsCapturing_ptsz", "cuPointerGetAttribute",
		"cuPointerGetAttributes", "cuDriverGetVersion",
	};
	static const char *const traced[] = {
		"cudaLaunchKernel", "cudaMemcpy", "cudaMalloc", "cudaFree", "cudaSetDevice",
		"cudaStreamSynchronize", "cudaDeviceReset", "cuLaunchKernel", "cuMemAlloc",
		"cuCtxCreate", "cuCtxSynchronize",
	};
	const struct cuda_api_call *calls;
	size_t n;

	calls = cuda_api_filtered(&n);
	for (size_t i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++) {
		bool found = false;

		for (size_t j = 0; j < n; j++)
			found |= !strcmp(calls[j].name, wanted[i]);
		if (!found)
			printf("  not filtered: %s\n", wanted[i]);
		CHECK(found);
	}
	for (size_t i = 0; i < sizeof(traced) / sizeof(traced[0]); i++)
		CHECK(!filtered_call(traced[i]));
	CHECK(filtered_call("cudaGetDevice")->cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020);
	CHECK(filtered_call("cuCtxGetCurrent")->cbid == CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent);
	for (size_t i = 0; i < n; i++) {
		bool runtime = !strncmp(calls[i].name, "cuda", 4);

		CHECK(calls[i].domain == (runtime ? CUPTI_CB_DOMAIN_RUNTIME_API :
						    CUPTI_CB_DOMAIN_DRIVER_API));
		CHECK(cuda_api_waits(calls[i].name) == CUDA_WAIT_NONE);
		CHECK(!strstr(calls[i].name, "Launch") && !strstr(calls[i].name, "Memcpy"));
		for (size_t j = 0; j < i; j++)
			CHECK(calls[j].domain != calls[i].domain || calls[j].cbid != calls[i].cbid);
	}
}

static void test_work_queuing_calls(void)
{
	static const struct {
		const char *name;
		bool queues;
	} calls[] = {
		{ "cuLaunchKernel", true },
		{ "cuLaunchKernelEx_ptsz", true },
		{ "cudaLaunchKernel_v7000", true },
		{ "cuGraphLaunch", true },
		{ "cudaGraphLaunch_ptsz_v10000", true },
		{ "cuMemcpyHtoD_v2", true },
		{ "cudaMemcpyAsync_v3020", true },
		{ "cuMemsetD8Async", true },
		{ "cudaMemset_v3020", true },
		{ "cuLaunchHostFunc", false },
		{ "cudaLaunchHostFunc_v10000", false },
		{ "cuStreamSynchronize", false },
		{ "cuMemAlloc_v2", false },
		{ "cudaGetDevice", false },
		{ NULL, false },
	};

	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		if (cuda_api_queues_work(calls[i].name) != calls[i].queues)
			printf("  %s\n", calls[i].name ? calls[i].name : "(null)");
		CHECK(cuda_api_queues_work(calls[i].name) == calls[i].queues);
	}
}

#define MS (1000ull * 1000)
#define SEC (1000 * MS)

/*
 * Windows of 50 ms, the gap after each set by what it brought: at 100
 * pairs a second, a window of 1000 pairs buys 10 s in all, one of 3 pairs
 * no rest. Launches are the only moments the agent may act.
 */
static void test_pc_duty(void)
{
	struct pc_duty d;
	uint64_t t = 5 * SEC;

	pc_duty_init(&d, 100);
	CHECK(pc_duty_tick(&d, t) == PC_DUTY_START);
	CHECK(d.open);
	CHECK(pc_duty_tick(&d, t + 49 * MS) == PC_DUTY_NONE);
	CHECK(pc_duty_tick(&d, t + 50 * MS) == PC_DUTY_STOP);
	CHECK(!d.open);
	pc_duty_closed(&d, t + 52 * MS, 1000);
	CHECK_EQ_U64(d.next_ns, t + 10 * SEC);
	CHECK(pc_duty_tick(&d, t + 10 * SEC - 1) == PC_DUTY_NONE);
	CHECK(pc_duty_tick(&d, t + 10 * SEC) == PC_DUTY_START);

	/* A window with little in it: the next one opens at the next launch. */
	t += 10 * SEC;
	CHECK(pc_duty_tick(&d, t + 60 * MS) == PC_DUTY_STOP);
	pc_duty_closed(&d, t + 60 * MS, 3);
	CHECK_EQ_U64(d.next_ns, t + 60 * MS);
	CHECK(pc_duty_tick(&d, t + 61 * MS) == PC_DUTY_START);

	/* A flood is capped: a window at least every PC_GAP_MAX_NS. */
	CHECK(pc_duty_tick(&d, t + 200 * MS) == PC_DUTY_STOP);
	pc_duty_closed(&d, t + 200 * MS, 100000000);
	CHECK_EQ_U64(d.next_ns, t + 200 * MS + PC_GAP_MAX_NS);

	/* A refused start: another try a window later. */
	pc_duty_init(&d, 100);
	CHECK(pc_duty_tick(&d, SEC) == PC_DUTY_START);
	pc_duty_failed(&d, SEC);
	CHECK(!d.open);
	CHECK(pc_duty_tick(&d, SEC + PC_WINDOW_NS - 1) == PC_DUTY_NONE);
	CHECK(pc_duty_tick(&d, SEC + PC_WINDOW_NS) == PC_DUTY_START);

	/* rate 0: one window, never closed by the clock. */
	pc_duty_init(&d, 0);
	CHECK(pc_duty_tick(&d, SEC) == PC_DUTY_START);
	CHECK(pc_duty_tick(&d, 1000 * SEC) == PC_DUTY_NONE);
	CHECK(d.open);
}

/*
 * Over a simulated minute of launches every millisecond, each window
 * bringing 4 pairs per ms open: the pairs kept come to about the rate,
 * give or take the one window that the minute cuts short.
 */
static void test_pc_duty_rate(void)
{
	static const unsigned rates[] = { 10, 100, 1000 };

	for (size_t r = 0; r < sizeof(rates) / sizeof(rates[0]); r++) {
		struct pc_duty d;
		uint64_t kept = 0, minute = 60 * SEC;
		double per_sec;

		pc_duty_init(&d, rates[r]);
		for (uint64_t t = 0; t < minute; t += MS) {
			enum pc_duty_action a = pc_duty_tick(&d, t);

			if (a == PC_DUTY_STOP) {
				uint64_t pairs = 4 * ((t - d.opened_ns) / MS);

				kept += pairs;
				pc_duty_closed(&d, t, pairs);
			}
		}
		per_sec = (double)kept / 60;
		printf("  rate %u: %.1f pairs a second kept\n", rates[r], per_sec);
		CHECK(per_sec > rates[r] * 0.8 && per_sec < rates[r] * 1.2 + 4.0 * 50 / 60);
	}
}

int main(void)
{
	RUN(test_occupancy);
	RUN(test_no_block_fits);
	RUN(test_incomplete_limits);
	RUN(test_copy_names);
	RUN(test_waiting_calls);
	RUN(test_filtered_calls);
	RUN(test_work_queuing_calls);
	RUN(test_pc_duty);
	RUN(test_pc_duty_rate);
	return test_summary();
}
