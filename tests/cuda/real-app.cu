/* SPDX-License-Identifier: MIT */
/*
 * A real CUDA program for gtrace's CUDA collector, built with nvcc:
 * kernels on two streams, host-device copies, NVTX ranges and a CUDA
 * graph. On a GPU, scripts/gpu-smoke.sh records it and checks the report;
 * on a machine without one, tests/e2e/cuda-real-nogpu.sh checks that it
 * still runs to its own end under gtrace record.
 *
 * usage: real-app [ITERATIONS]     (default 4)
 *        real-app MODE [COUNT]    one behaviour for scripts/gpu-smoke.sh
 *
 * Each iteration, inside the NVTX range "iteration", and in the NVTX domain
 * "gtrace-smoke" the range "launches", which opens before "iteration" and
 * closes inside it, around the launches: launch_batch queues
 * scale<<<...>>> on stream 1 and add<<<...>>> on stream 2, 8 launches
 * each, and one busy<<<1, 1>>> of about 20 ms on stream 1; launch_graph
 * launches a graph of 3 scale kernels captured from stream 1; after 3 ms
 * asleep, wait_for_gpu synchronizes both streams (busy still runs). Every
 * launching function, here and in the modes, spends 2 ms of CPU before and
 * after its launches: on a real GPU a launch takes microseconds, so the
 * samples nearest to it must be its own (build without sibling calls, so
 * that the last burn stays under it). Before the loop: 2 HtoD copies of
 * 4 MiB; after: 1 DtoH copy of 4 MiB and the NVTX start/end range "verify"
 * around checking the result.
 *
 * The modes, each a separate run:
 *   occupancy  COUNT launches of tile<<<...>>>, whose 48 KiB of shared
 *              memory limit its blocks per SM; prints the occupancy the
 *              runtime computes ("expected-occupancy tile 25.0%")
 *   gap        COUNT launches of nap<<<1, 32>>> onto an idle GPU, each
 *              after 1 ms of CPU and followed by a synchronization
 *   copies     COUNT DtoH copies of 4 MiB, COUNT cudaMemset and COUNT
 *              cudaMemsetAsync of 4 MiB, after the cudaMemset that
 *              clears the buffer
 *   driver     COUNT rounds: 8 scale kernels by cuLaunchKernel from
 *              launch_driver, 8 add kernels by cuLaunchKernelEx from
 *              launch_driver_ex, then cuStreamSynchronize; driver entry
 *              points are looked up by name in the global scope, so a
 *              preloaded library that defines them (another CUPTI
 *              client) sees the calls, as with a program linked to them
 *   threads    4 threads named launcher-0..3, each launching COUNT scale
 *              kernels on its own stream from launch_from_thread
 *   reset      COUNT scale kernels, cudaDeviceReset, then COUNT add
 *              kernels on the new context
 *   running    busy<<<1, 1>>> for about COUNT seconds, then exit without
 *              waiting for it
 *   launches   COUNT tiny kernels launched back to back and synchronized;
 *              prints the seconds the loop took ("elapsed-s 0.123")
 *   hostbound  COUNT times: host_prepare (3 ms of CPU), then busy<<<1, 1>>>
 *              of about 1 ms: the GPU waits about 2 ms for each launch,
 *              the launching thread in host_prepare: host idle
 *   syncbound  COUNT times: busy<<<1, 1>>> of about 1 ms,
 *              cudaDeviceSynchronize, then after_sync (2 ms of CPU): the
 *              GPU drains under the call, then waits for the next launch:
 *              synchronization idle
 *   (both launch busy once and synchronize first: the first launch loads
 *   the kernel)
 *
 * Exit status: 0 when the result is right, 1 when it is wrong, 2 when a
 * CUDA call fails (no GPU or no driver: the error is printed).
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N (1 << 20)
#define LAUNCHES 8
#define GRAPH_KERNELS 3
#define BUSY_CYCLES 40000000ll	/* about 20 ms at 2 GHz: still running at wait_for_gpu */
#define TILE_FLOATS 12288	/* 48 KiB of shared memory per block */
#define TILE_THREADS 128
#define LAUNCHER_THREADS 4

#define CHECK(call)                                                                  \
	do {                                                                         \
		cudaError_t err_ = (call);                                           \
		if (err_ != cudaSuccess) {                                           \
			fprintf(stderr, "real-app: %s: %s\n", #call,                 \
				cudaGetErrorString(err_));                           \
			exit(2);                                                     \
		}                                                                    \
	} while (0)

#define CHECK_CU(call)                                                               \
	do {                                                                         \
		CUresult err_ = (call);                                              \
		if (err_ != CUDA_SUCCESS) {                                          \
			fprintf(stderr, "real-app: %s: CUresult %d\n", #call,        \
				(int)err_);                                          \
			exit(2);                                                     \
		}                                                                    \
	} while (0)

__global__ void scale(float *x, float factor, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] *= factor;
}

__global__ void add(float *y, const float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		y[i] += x[i];
}

__global__ void busy(long long cycles)
{
	long long start = clock64();

	while (clock64() - start < cycles)
		;
}

__global__ void tile(float *x, int n)
{
	__shared__ float buf[TILE_FLOATS];
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	for (int k = threadIdx.x; k < TILE_FLOATS; k += blockDim.x)
		buf[k] = (float)k;
	__syncthreads();
	if (i < n)
		x[i] += buf[(i * 7) % TILE_FLOATS] * 0.0f;
}

__global__ void nap(void)
{
}

static volatile unsigned long long sink;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* CPU work, so that the functions around the launches get sampled. */
__attribute__((noinline)) static void burn(double seconds)
{
	double end = now_s() + seconds;
	unsigned long long x = sink;

	while (now_s() < end)
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
}

__attribute__((noinline)) static void idle(long ns)
{
	struct timespec ts = { 0, ns };

	nanosleep(&ts, NULL);
}

__attribute__((noinline)) static void launch_batch(float *x, float *y, cudaStream_t s1,
						   cudaStream_t s2)
{
	burn(0.002);
	for (int i = 0; i < LAUNCHES; i++) {
		scale<<<N / 256, 256, 0, s1>>>(x, 1.0f, N);
		add<<<N / 256, 256, 0, s2>>>(y, x, N);
	}
	busy<<<1, 1, 0, s1>>>(BUSY_CYCLES);
	CHECK(cudaGetLastError());
	burn(0.002);
}

__attribute__((noinline)) static void launch_graph(cudaGraphExec_t exec, cudaStream_t s)
{
	burn(0.002);
	CHECK(cudaGraphLaunch(exec, s));
	burn(0.002);
}

__attribute__((noinline)) static cudaGraphExec_t capture_graph(float *x, cudaStream_t s)
{
	cudaGraph_t graph;
	cudaGraphExec_t exec;

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	for (int i = 0; i < GRAPH_KERNELS; i++)
		scale<<<N / 256, 256, 0, s>>>(x, 1.0f, N);
	CHECK(cudaStreamEndCapture(s, &graph));
	CHECK(cudaGraphInstantiate(&exec, graph, 0));
	CHECK(cudaGraphDestroy(graph));
	return exec;
}

__attribute__((noinline)) static void wait_for_gpu(cudaStream_t s1, cudaStream_t s2)
{
	CHECK(cudaStreamSynchronize(s1));
	CHECK(cudaStreamSynchronize(s2));
}

/* Modes: one behaviour each, for scripts/gpu-smoke.sh. */

static float *device_floats(void)
{
	float *x;

	CHECK(cudaMalloc(&x, N * sizeof(float)));
	CHECK(cudaMemset(x, 0, N * sizeof(float)));
	return x;
}

static int run_occupancy(int count)
{
	float *x = device_floats();
	cudaDeviceProp prop;
	int blocks;

	CHECK(cudaGetDeviceProperties(&prop, 0));
	CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, tile, TILE_THREADS, 0));
	for (int i = 0; i < count; i++)
		tile<<<N / TILE_THREADS, TILE_THREADS>>>(x, N);
	CHECK(cudaDeviceSynchronize());
	printf("expected-occupancy tile %.1f%%\n",
	       100.0 * blocks * (TILE_THREADS / 32) / (prop.maxThreadsPerMultiProcessor / 32));
	CHECK(cudaFree(x));
	return 0;
}

static int run_gap(int count)
{
	/* The first launch loads the kernel (lazy module loading): not idle. */
	for (int i = 0; i <= count; i++) {
		burn(0.001);
		nap<<<1, 32>>>();
		CHECK(cudaDeviceSynchronize());
	}
	return 0;
}

static int run_copies(int count)
{
	float *x = device_floats();
	float *host = (float *)malloc(N * sizeof(float));

	if (!host)
		return 2;
	for (int i = 0; i < count; i++)
		CHECK(cudaMemcpy(host, x, N * sizeof(float), cudaMemcpyDeviceToHost));
	for (int i = 0; i < count; i++)
		CHECK(cudaMemset(x, 0, N * sizeof(float)));
	for (int i = 0; i < count; i++)
		CHECK(cudaMemsetAsync(x, 0, N * sizeof(float), 0));
	CHECK(cudaDeviceSynchronize());
	CHECK(cudaFree(x));
	free(host);
	return 0;
}

/*
 * A driver entry point as a program linked to libcuda would call it: the
 * global scope puts a preloaded definition before libcuda's own.
 */
static void *driver_entry(const char *name)
{
	void *entry;

	if (!dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD) ||
	    !(entry = dlsym(RTLD_DEFAULT, name))) {
		fprintf(stderr, "real-app: no driver entry point '%s'\n", name);
		exit(2);
	}
	return entry;
}

static decltype(&cuLaunchKernel) launch_kernel;
static decltype(&cuLaunchKernelEx) launch_kernel_ex;
static decltype(&cuStreamSynchronize) stream_synchronize;

__attribute__((noinline)) static void launch_driver(CUfunction f, CUstream s, float *x)
{
	float factor = 1.0f;
	int n = N;
	void *args[] = { &x, &factor, &n };

	burn(0.002);
	for (int i = 0; i < LAUNCHES; i++)
		CHECK_CU(launch_kernel(f, N / 256, 1, 1, 256, 1, 1, 0, s, args, NULL));
	burn(0.002);
}

__attribute__((noinline)) static void launch_driver_ex(CUfunction f, CUstream s, float *y,
						       const float *x)
{
	int n = N;
	void *args[] = { &y, &x, &n };
	CUlaunchConfig config = {};

	config.gridDimX = N / 256;
	config.gridDimY = 1;
	config.gridDimZ = 1;
	config.blockDimX = 256;
	config.blockDimY = 1;
	config.blockDimZ = 1;
	config.hStream = s;
	burn(0.002);
	for (int i = 0; i < LAUNCHES; i++)
		CHECK_CU(launch_kernel_ex(&config, f, args, NULL));
	burn(0.002);
}

static int run_driver(int count)
{
	float *x = device_floats(), *y = device_floats();
	cudaFunction_t scale_fn, add_fn;
	cudaStream_t s;

	CHECK(cudaStreamCreate(&s));
	CHECK(cudaGetFuncBySymbol(&scale_fn, (const void *)scale));
	CHECK(cudaGetFuncBySymbol(&add_fn, (const void *)add));
	launch_kernel = (decltype(launch_kernel))driver_entry("cuLaunchKernel");
	launch_kernel_ex = (decltype(launch_kernel_ex))driver_entry("cuLaunchKernelEx");
	stream_synchronize = (decltype(stream_synchronize))driver_entry("cuStreamSynchronize");
	for (int i = 0; i < count; i++) {
		launch_driver((CUfunction)scale_fn, s, x);
		launch_driver_ex((CUfunction)add_fn, s, y, x);
		CHECK_CU(stream_synchronize(s));
	}
	CHECK(cudaStreamDestroy(s));
	CHECK(cudaFree(x));
	CHECK(cudaFree(y));
	return 0;
}

struct launcher {
	pthread_t thread;
	int index, count;
	int status;
};

__attribute__((noinline)) static void launch_from_thread(float *x, cudaStream_t s, int count)
{
	burn(0.002);
	for (int i = 0; i < count; i++)
		scale<<<N / 256, 256, 0, s>>>(x, 1.0f, N);
	CHECK(cudaGetLastError());
	burn(0.002);
}

static void *launcher_main(void *arg)
{
	struct launcher *l = (struct launcher *)arg;
	char name[16];
	cudaStream_t s;
	float *x;

	snprintf(name, sizeof(name), "launcher-%d", l->index);
	pthread_setname_np(pthread_self(), name);
	CHECK(cudaSetDevice(0));
	CHECK(cudaStreamCreate(&s));
	x = device_floats();
	launch_from_thread(x, s, l->count);
	CHECK(cudaStreamSynchronize(s));
	CHECK(cudaFree(x));
	CHECK(cudaStreamDestroy(s));
	l->status = 0;
	return NULL;
}

static int run_threads(int count)
{
	struct launcher launchers[LAUNCHER_THREADS];
	int status = 0;

	CHECK(cudaSetDevice(0));
	for (int i = 0; i < LAUNCHER_THREADS; i++) {
		launchers[i] = (struct launcher){ .index = i, .count = count, .status = 2 };
		if (pthread_create(&launchers[i].thread, NULL, launcher_main, &launchers[i]))
			return 2;
	}
	for (int i = 0; i < LAUNCHER_THREADS; i++) {
		pthread_join(launchers[i].thread, NULL);
		status |= launchers[i].status;
	}
	return status;
}

static int run_reset(int count)
{
	float *x = device_floats(), *y;

	for (int i = 0; i < count; i++)
		scale<<<N / 256, 256>>>(x, 1.0f, N);
	CHECK(cudaDeviceSynchronize());
	CHECK(cudaDeviceReset());
	x = device_floats();
	y = device_floats();
	for (int i = 0; i < count; i++)
		add<<<N / 256, 256>>>(y, x, N);
	CHECK(cudaDeviceSynchronize());
	CHECK(cudaFree(x));
	CHECK(cudaFree(y));
	return 0;
}

static int run_running(int count)
{
	int khz;

	CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
	busy<<<1, 1>>>((long long)count * khz * 1000);
	CHECK(cudaGetLastError());
	return 0;
}

static int run_launches(int count)
{
	double start;

	nap<<<1, 32>>>();
	CHECK(cudaDeviceSynchronize());
	start = now_s();
	for (int i = 0; i < count; i++)
		nap<<<1, 32>>>();
	CHECK(cudaDeviceSynchronize());
	printf("elapsed-s %.6f\n", now_s() - start);
	return 0;
}

__attribute__((noinline)) static void host_prepare(void)
{
	burn(0.003);
}

__attribute__((noinline)) static void after_sync(void)
{
	burn(0.002);
}

/* busy's cycles for about 1 ms (the clock rate in kHz), after a first launch that loads it. */
static long long busy_ms(void)
{
	int khz;

	CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
	busy<<<1, 1>>>(khz);
	CHECK(cudaDeviceSynchronize());
	return khz;
}

static int run_hostbound(int count)
{
	long long cycles = busy_ms();

	for (int i = 0; i < count; i++) {
		host_prepare();
		busy<<<1, 1>>>(cycles);
		CHECK(cudaGetLastError());
	}
	CHECK(cudaDeviceSynchronize());
	return 0;
}

static int run_syncbound(int count)
{
	long long cycles = busy_ms();

	for (int i = 0; i < count; i++) {
		busy<<<1, 1>>>(cycles);
		CHECK(cudaGetLastError());
		CHECK(cudaDeviceSynchronize());
		after_sync();
	}
	return 0;
}

static const struct mode {
	const char *name;
	int (*run)(int count);
	int count;
} modes[] = {
	{ "occupancy", run_occupancy, 4 },
	{ "gap", run_gap, 20 },
	{ "copies", run_copies, 3 },
	{ "driver", run_driver, 4 },
	{ "threads", run_threads, 50 },
	{ "reset", run_reset, 10 },
	{ "running", run_running, 2 },
	{ "launches", run_launches, 100000 },
	{ "hostbound", run_hostbound, 20 },
	{ "syncbound", run_syncbound, 20 },
};

static int run_mode(int argc, char **argv)
{
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (strcmp(argv[1], modes[i].name))
			continue;
		CHECK(cudaSetDevice(0));
		return modes[i].run(argc > 2 ? atoi(argv[2]) : modes[i].count);
	}
	fprintf(stderr, "real-app: unknown mode '%s'\n", argv[1]);
	return 2;
}

int main(int argc, char **argv)
{
	int iterations = argc > 1 ? atoi(argv[1]) : 4;
	float *host, *x, *y;
	cudaStream_t s1, s2;
	cudaGraphExec_t exec;
	nvtxRangeId_t verify;
	nvtxDomainHandle_t smoke;
	nvtxEventAttributes_t launches;
	int wrong = 0;

	if (argc > 1 && (argv[1][0] < '0' || argv[1][0] > '9'))
		return run_mode(argc, argv);
	host = (float *)malloc(N * sizeof(float));
	if (!host)
		return 2;
	for (int i = 0; i < N; i++)
		host[i] = 1.0f;
	CHECK(cudaSetDevice(0));
	CHECK(cudaStreamCreate(&s1));
	CHECK(cudaStreamCreate(&s2));
	CHECK(cudaMalloc(&x, N * sizeof(float)));
	CHECK(cudaMalloc(&y, N * sizeof(float)));
	CHECK(cudaMemcpy(x, host, N * sizeof(float), cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(y, host, N * sizeof(float), cudaMemcpyHostToDevice));
	exec = capture_graph(x, s1);

	smoke = nvtxDomainCreateA("gtrace-smoke");
	memset(&launches, 0, sizeof(launches));
	launches.version = NVTX_VERSION;
	launches.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	launches.messageType = NVTX_MESSAGE_TYPE_ASCII;
	launches.message.ascii = "launches";
	for (int it = 0; it < iterations; it++) {
		/* Two domains' ranges that overlap without nesting. */
		nvtxDomainRangePushEx(smoke, &launches);
		nvtxRangePushA("iteration");
		launch_batch(x, y, s1, s2);
		launch_graph(exec, s1);
		nvtxDomainRangePop(smoke);
		idle(3000000);
		wait_for_gpu(s1, s2);
		nvtxRangePop();
	}
	nvtxDomainDestroy(smoke);

	CHECK(cudaMemcpy(host, y, N * sizeof(float), cudaMemcpyDeviceToHost));
	verify = nvtxRangeStartA("verify");
	/* y starts at 1 and gains x (1) once per add launch. */
	for (int i = 0; i < N; i++)
		wrong += host[i] != 1.0f + (float)(iterations * LAUNCHES);
	nvtxRangeEnd(verify);

	CHECK(cudaGraphExecDestroy(exec));
	CHECK(cudaFree(x));
	CHECK(cudaFree(y));
	CHECK(cudaStreamDestroy(s1));
	CHECK(cudaStreamDestroy(s2));
	free(host);
	if (wrong) {
		fprintf(stderr, "real-app: %d wrong results\n", wrong);
		return 1;
	}
	return 0;
}
