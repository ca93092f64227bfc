/* SPDX-License-Identifier: MIT */
/*
 * A CUDA program that keeps the GPU idle for known causes, for gtrace
 * analyze (tests/e2e/cuda-analyze.sh), run against the fake driver. The
 * fake GPU's timeline is the CPU's clock (fake.h): a kernel starts 2 us
 * after its launch call (FAKE_LAUNCH_LATENCY_NS) once its stream is free.
 *
 * usage: idle-app [--host N] [--sync N] [--tiny N] [--streams N]
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
 *   --streams N  (needs FAKE_CUDA_DEVICES=2) N times: remote (10 ms) on
 *              device 1, an event recorded after it; on device 0, step
 *              (1 ms) on stream A, then stream B made to wait for the event
 *              and step launched on it at once, then cuCtxSynchronize:
 *              device 0 waits about 9 ms with step queued on B, a
 *              dependency, then a few us after the synchronization
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

FRAME static void host_prepare(void)
{
	spin(3000000);
}

FRAME static void after_sync(void)
{
	spin(2000000);
}

static CUfunction kernel(CUmodule module, const char *name, uint64_t ns)
{
	struct fakecuda_function_attrs attrs = { .regs = 16, .duration_ns = ns };
	CUfunction f;

	CHECK(cuModuleGetFunction(&f, module, name));
	CHECK(fakecuda_set_function_attrs(f, &attrs));
	return f;
}

static void launch(CUfunction f, CUstream s)
{
	CHECK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
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
	long host = 0, sync = 0, tiny = 0, streams = 0;
	CUcontext ctx;
	CUmodule module;
	CUstream s;
	CUdevice dev;

	for (int i = 1; i + 1 < argc; i += 2) {
		long *n = !strcmp(argv[i], "--host") ? &host :
			  !strcmp(argv[i], "--sync") ? &sync :
			  !strcmp(argv[i], "--tiny") ? &tiny :
			  !strcmp(argv[i], "--streams") ? &streams : NULL;

		if (!n) {
			fprintf(stderr, "usage: idle-app [--host N] [--sync N] [--tiny N] "
					"[--streams N]\n");
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
	if (streams > 0)
		wait_for_device1(ctx, module, s, streams);
	CHECK(cuCtxSynchronize());
	CHECK(cuStreamDestroy(s));
	CHECK(cuModuleUnload(module));
	CHECK(cuCtxDestroy(ctx));
	return 0;
}
