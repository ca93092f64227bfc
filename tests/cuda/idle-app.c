/* SPDX-License-Identifier: MIT */
/*
 * A CUDA program that keeps the GPU idle for known causes, for gtrace
 * analyze (tests/e2e/cuda-analyze.sh), run against the fake driver. The
 * fake GPU's timeline is the CPU's clock (fake.h): a kernel starts 2 us
 * after its launch call (FAKE_LAUNCH_LATENCY_NS) once its stream is free.
 *
 * usage: idle-app [--host N] [--sync N] [--tiny N] [--queue N] [--streams N]
 *                 [--sync-copy N] [--pageable N] [--alloc N] [--tiny-copy N]
 *                 [--occupancy N] [--clean N]
 *
 * The phases given, in this order, on one stream of device 0:
 *   --host N   N times: host_prepare (3 ms of CPU), then launch step (1 ms):
 *              from the second launch on, the GPU waits 2 ms for each, the
 *              thread in host_prepare: (N - 1) x 2 ms of host idle
 *   --sync N   N times: launch step (1 ms), cuCtxSynchronize, then
 *              after_sync (2 ms of CPU): the GPU drains under the call and
 *              waits 2 ms for the next launch: 2 ms of synchronization idle
 *              before each launch after the first, and before a --tiny
 *              phase's first
 *   --tiny N   N launches of tiny (100 ns) back to back: the GPU waits for
 *              each launch call, launch overhead
 *   --queue N  N launches of queued (10 ms) back to back, then
 *              cuCtxSynchronize: the stream's queue holds N at once (the
 *              last launch comes long before the first kernel ends), then
 *              drains by one every 10 ms
 *   --streams N  (needs FAKE_CUDA_DEVICES=2) N times: remote (10 ms) on
 *              device 1, an event recorded after it; on device 0, step
 *              (1 ms) on stream A, then stream B made to wait for the event
 *              and step launched on it at once, then cuCtxSynchronize:
 *              device 0 waits about 9 ms with step queued on B, a
 *              dependency, then a few us after the synchronization
 * then, for analyze's findings, each made by one function:
 *   --sync-copy N  sync_copies: N cuMemcpyHtoD of COPY_BYTES, each blocking
 *              the CPU COPY_BYTES / FAKE_HTOD_BYTES_PER_NS after the launch
 *              latency
 *   --pageable N   pageable_copies: N cuMemcpyHtoDAsync of COPY_BYTES from
 *              calloc'd (pageable) memory, each COPY_BYTES /
 *              FAKE_HTOD_BYTES_PER_NS on the GPU, AROUND_NS of CPU before
 *              and after each
 *   --alloc N  alloc_loop: N cuMemAlloc and cuMemFree, AROUND_NS before and
 *              after each
 *   --tiny-copy N  tiny_copies: N cuMemcpyHtoDAsync of TINY_BYTES from pinned
 *              memory, AROUND_TINY_NS before and after each
 *   --occupancy N  wide_kernels: N launches of wide (1 ms), whose 168
 *              registers a thread let an SM hold one block of 256 threads:
 *              12.5% of its 2048, limited by registers
 *   --clean N  clean_work: N pinned asynchronous copies of COPY_BYTES and
 *              launches of step (1 ms) back to back, on buffers allocated
 *              once: nothing for a finding
 * then cuCtxSynchronize.
 */
#include <cuda.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define APP_NAME "idle-app"
#include "app.h"
#include "fake.h"

#define CHECK(call) APP_CHECK(call, CUDA_SUCCESS)

/* The copies of --sync-copy, --pageable and --clean, and those of --tiny-copy. */
#define COPY_BYTES (4u << 20)
#define TINY_BYTES 4096u
/*
 * The CPU work around each call of --pageable, --alloc and --tiny-copy: a
 * call that returns at once links to the sample nearest in time, which
 * falls in its loop when the loop runs on the CPU a sampling period or
 * more around it.
 */
#define AROUND_NS 1000000
#define AROUND_TINY_NS 200000

FRAME static void host_prepare(void)
{
	spin(3000000);
}

FRAME static void after_sync(void)
{
	spin(2000000);
}

static CUfunction kernel_regs(CUmodule module, const char *name, uint64_t ns, uint16_t regs)
{
	struct fakecuda_function_attrs attrs = { .regs = regs, .duration_ns = ns };
	CUfunction f;

	CHECK(cuModuleGetFunction(&f, module, name));
	CHECK(fakecuda_set_function_attrs(f, &attrs));
	return f;
}

static CUfunction kernel(CUmodule module, const char *name, uint64_t ns)
{
	return kernel_regs(module, name, ns, 16);
}

static void launch_block(CUfunction f, CUstream s, unsigned threads)
{
	CHECK(cuLaunchKernel(f, 1, 1, 1, threads, 1, 1, 0, s, NULL, NULL));
}

static void launch(CUfunction f, CUstream s)
{
	launch_block(f, s, 32);
}

FRAME static void host_bound(CUfunction step, CUstream s, long n)
{
	for (long i = 0; i < n; i++) {
		host_prepare();
		launch(step, s);
	}
}

FRAME static void sync_bound(CUfunction step, CUstream s, long n)
{
	for (long i = 0; i < n; i++) {
		launch(step, s);
		CHECK(cuCtxSynchronize());
		after_sync();
	}
}

FRAME static void tiny_kernels(CUfunction tiny, CUstream s, long n)
{
	for (long i = 0; i < n; i++)
		launch(tiny, s);
}

FRAME static void queue_up(CUfunction queued, CUstream s, long n)
{
	for (long i = 0; i < n; i++)
		launch(queued, s);
	CHECK(cuCtxSynchronize());
}

FRAME static void sync_copies(CUdeviceptr dev, const void *host, long n)
{
	for (long i = 0; i < n; i++)
		CHECK(cuMemcpyHtoD(dev, host, COPY_BYTES));
}

FRAME static void pageable_copies(CUdeviceptr dev, const void *host, CUstream s, long n)
{
	for (long i = 0; i < n; i++) {
		spin(AROUND_NS);
		CHECK(cuMemcpyHtoDAsync(dev, host, COPY_BYTES, s));
		spin(AROUND_NS);
	}
}

FRAME static void alloc_loop(long n)
{
	for (long i = 0; i < n; i++) {
		CUdeviceptr p;

		spin(AROUND_NS);
		CHECK(cuMemAlloc(&p, COPY_BYTES));
		spin(AROUND_NS);
		CHECK(cuMemFree(p));
		spin(AROUND_NS);
	}
}

FRAME static void tiny_copies(CUdeviceptr dev, CUstream s, long n)
{
	void *pinned;

	spin(AROUND_NS);
	CHECK(cuMemAllocHost(&pinned, TINY_BYTES));
	for (long i = 0; i < n; i++) {
		spin(AROUND_TINY_NS);
		CHECK(cuMemcpyHtoDAsync(dev, pinned, TINY_BYTES, s));
		spin(AROUND_TINY_NS);
	}
	CHECK(cuStreamSynchronize(s));
	CHECK(cuMemFreeHost(pinned));
}

FRAME static void wide_kernels(CUfunction wide, CUstream s, long n)
{
	for (long i = 0; i < n; i++)
		launch_block(wide, s, 256);
}

FRAME static void clean_work(CUfunction step, CUdeviceptr dev, CUstream s, long n)
{
	void *pinned;

	CHECK(cuMemAllocHost(&pinned, COPY_BYTES));
	for (long i = 0; i < n; i++) {
		CHECK(cuMemcpyHtoDAsync(dev, pinned, COPY_BYTES, s));
		launch(step, s);
	}
	CHECK(cuStreamSynchronize(s));
	CHECK(cuMemFreeHost(pinned));
}

/* --streams: device 0's stream b waits for device 1's work, with step queued on it. */
FRAME static void wait_for_device1(CUcontext ctx, CUmodule module, CUstream a, long n)
{
	CUfunction step = kernel(module, "step", 1000000), remote;
	CUcontext ctx1;
	CUmodule module1;
	CUstream b, s1;
	CUdevice dev1;
	CUevent done;

	CHECK(cuStreamCreate(&b, 0));
	CHECK(cuDeviceGet(&dev1, 1));
	CHECK(cuCtxCreate(&ctx1, NULL, 0, dev1));
	CHECK(cuModuleLoadData(&module1, "fake cubin"));
	remote = kernel(module1, "remote", 10000000);
	CHECK(cuStreamCreate(&s1, 0));
	CHECK(cuEventCreate(&done, 0));
	for (long i = 0; i < n; i++) {
		CHECK(cuCtxSetCurrent(ctx1));
		launch(remote, s1);
		CHECK(cuEventRecord(done, s1));
		CHECK(cuCtxSetCurrent(ctx));
		launch(step, a);
		CHECK(cuStreamWaitEvent(b, done, 0));
		launch(step, b);
		CHECK(cuCtxSynchronize());
	}
	CHECK(cuCtxSetCurrent(ctx1));
	CHECK(cuEventDestroy(done));
	CHECK(cuStreamDestroy(s1));
	CHECK(cuModuleUnload(module1));
	CHECK(cuCtxDestroy(ctx1));
	CHECK(cuCtxSetCurrent(ctx));
	CHECK(cuStreamDestroy(b));
}

int main(int argc, char **argv)
{
	long host = 0, sync = 0, tiny = 0, queue = 0, streams = 0, sync_copy = 0, pageable = 0;
	long alloc = 0, tiny_copy = 0, occupancy = 0, clean = 0;
	CUdeviceptr buffer = 0;
	char *pageable_buffer;
	CUcontext ctx;
	CUmodule module;
	CUstream s;
	CUdevice dev;

	for (int i = 1; i + 1 < argc; i += 2) {
		long *n = !strcmp(argv[i], "--host") ? &host :
			  !strcmp(argv[i], "--sync") ? &sync :
			  !strcmp(argv[i], "--tiny") ? &tiny :
			  !strcmp(argv[i], "--queue") ? &queue :
			  !strcmp(argv[i], "--streams") ? &streams :
			  !strcmp(argv[i], "--sync-copy") ? &sync_copy :
			  !strcmp(argv[i], "--pageable") ? &pageable :
			  !strcmp(argv[i], "--alloc") ? &alloc :
			  !strcmp(argv[i], "--tiny-copy") ? &tiny_copy :
			  !strcmp(argv[i], "--occupancy") ? &occupancy :
			  !strcmp(argv[i], "--clean") ? &clean : NULL;

		if (!n) {
			fprintf(stderr, "usage: idle-app [--host N] [--sync N] [--tiny N] "
					"[--queue N] [--streams N] [--sync-copy N] [--pageable N] [--alloc N] "
					"[--tiny-copy N] [--occupancy N] [--clean N]\n");
			return 2;
		}
		*n = atol(argv[i + 1]);
	}
	CHECK(cuInit(0));
	CHECK(cuDeviceGet(&dev, 0));
	CHECK(cuCtxCreate(&ctx, NULL, 0, dev));
	CHECK(cuModuleLoadData(&module, "fake cubin"));
	CHECK(cuStreamCreate(&s, 0));
	host_bound(kernel(module, "step", 1000000), s, host);
	sync_bound(kernel(module, "step", 1000000), s, sync);
	tiny_kernels(kernel(module, "tiny", 100), s, tiny);
	if (queue > 0)
		queue_up(kernel(module, "queued", 10000000), s, queue);
	if (streams > 0)
		wait_for_device1(ctx, module, s, streams);
	pageable_buffer = calloc(1, COPY_BYTES);
	if (!pageable_buffer)
		return 1;
	if (sync_copy > 0 || pageable > 0 || tiny_copy > 0 || clean > 0)
		CHECK(cuMemAlloc(&buffer, COPY_BYTES));
	sync_copies(buffer, pageable_buffer, sync_copy);
	pageable_copies(buffer, pageable_buffer, s, pageable);
	alloc_loop(alloc);
	if (tiny_copy > 0)
		tiny_copies(buffer, s, tiny_copy);
	wide_kernels(kernel_regs(module, "wide", 1000000, 168), s, occupancy);
	if (clean > 0)
		clean_work(kernel(module, "step", 1000000), buffer, s, clean);
	CHECK(cuCtxSynchronize());
	if (buffer)
		CHECK(cuMemFree(buffer));
	free(pageable_buffer);
	CHECK(cuStreamDestroy(s));
	CHECK(cuModuleUnload(module));
	CHECK(cuCtxDestroy(ctx));
	return 0;
}
