/* SPDX-License-Identifier: MIT */
/*
 * A CUDA program with a known shape, run against the fake driver
 * (libcuda.so.1 from tests/cuda, found through its rpath or
 * LD_LIBRARY_PATH) so that tests know exactly what a profiler must show.
 *
 * usage: fake-app [--fork] [--still-running] [--peer] [--optin] [--two-contexts]
 *                 [--nvtx-early] [--nvtx-more] [--nvtx-domains N] [--pinned] [--exit N]
 *        fake-app --kernels N [--names M]
 *        fake-app --threads N
 *        fake-app --collectives N
 *        fake-app --pc-cubin CUBIN [--launches N]
 *
 * The default run, on one context of device 0 with streams 13 (A) and 14
 * (B), all inside the NVTX push/pop range "epoch":
 *   copy_inputs    2 x cuMemcpyHtoD of 1,000,000 bytes (100 us each, 10 GB/s)
 *   cuMemsetD8Async of 1,000,000 bytes on A (10 us)
 *   2 x the NVTX range "step" around launch_batch: 2 ms of CPU, then
 *                  5 x vector_add (200 us) and 2 x _Z4tinyv (5 us) on A and
 *                  2 x _Z6matmulPfS_S_i (500 us) on B, then 2 ms of CPU
 *   launch_graph   2 ms of CPU, one cuGraphLaunch of 3 x _Z10graph_stepPf
 *                  (5 ms each) on B, 2 ms of CPU
 *   idle           3 ms asleep
 *   wait_for_gpu   cuStreamSynchronize of A and of B (B still runs ~10 ms)
 *   copy_outputs   cuMemcpyDtoHAsync of 2,000,000 bytes on B (200 us, 10 GB/s),
 *                  then cuCtxSynchronize
 * then the NVTX start/end range "checkpoint" around a cuMemcpyDtoD of
 * 4,000,000 bytes (40 us, 100 GB/s). In all: 10 vector_add, 4 _Z4tinyv,
 * 4 matmul and 3 graph kernels (sharing one correlation id); 2 HtoD, 1 DtoH
 * and 1 DtoD copies; 1 memset. The copies without a stream run on the
 * default stream, 7. Sleeping in idle keeps the samples of launch_graph and
 * of wait_for_gpu apart, so each call links to its own stack.
 *   --peer           (needs FAKE_CUDA_DEVICES=2) adds a cuMemcpyPeer of
 *                    5,000,000 bytes from device 0 to 1 (100 us, 50 GB/s)
 *   --optin          adds one _Z8big_tilePf (5 us) on A, 128 threads with
 *                    100 KiB of dynamic shared memory, above the 48 KiB a
 *                    block gets without opting in; then synchronizes A
 *   --two-contexts   adds a second context on device 0, with its own stream
 *                    13, and 2 x _Z4tinyv on it; then destroys it
 *   --nvtx-early     pushes the NVTX range "before init" before cuInit and
 *                    pops it once the streams exist, before the work
 *   --nvtx-more      after "checkpoint", 10 more NVTX ranges on the same thread
 *                    (see more_nvtx): wide-string ones ("wide push été",
 *                    "wide start"), and ranges of two domains, "alpha" and
 *                    "beta", that interleave with each other and with the
 *                    default domain, some named by registered strings; the
 *                    ranges "alpha registered" and "default inner" hold 4 ms
 *                    of CPU each, which they only do if every domain nests
 *                    its ranges apart; "alpha across" and "default across",
 *                    which overlap without nesting, alpha's opening first,
 *                    for 20 ms of CPU; and a wide mark (no range)
 *   --nvtx-domains N after those, N domains "d0", "d1", ... made, none
 *                    destroyed, and one push/pop range "in d<i>" in each
 *   --pinned         copy_outputs copies into a buffer of cuMemAllocHost
 *                    (pinned memory; the HtoD copies read pageable memory),
 *                    allocated before "epoch" and freed at the end
 *   --fork           forks after the work; the child exits normally (its
 *                    inherited exit handlers run) and must exit 0
 *   --still-running  ends with a 10 s kernel "long_kernel" still running
 *                    and exits without synchronizing or cleaning up
 *   --exit N         exits with status N
 *   --threads N      instead: N threads (at most 8) named launcher, started
 *                    together, each on a stream of its own (streams 15
 *                    on) launching 10 x
 *                    _Z4tinyv (5 us) there and 5 x vector_add (200 us) on
 *                    A, alternating (two tiny, one vector_add), then
 *                    synchronizing its stream and destroying it; then
 *                    cuCtxSynchronize
 *   --kernels N      instead: N launches of 100 ns kernels over M (default
 *                    500, at most 1000) names, alternating streams A and B; prints the
 *                    launch loop's time per launch and, once the context
 *                    is destroyed (a profiler has processed every record
 *                    then), the process's CPU time per launch
 *   --collectives N  instead: N steps of 3 ms of CPU (9 ms on the rank that
 *                    $FAKE_APP_SLOW_RANK names, $RANK being this one's), each
 *                    followed by the collective kernel
 *                    ncclDevKernel_AllReduce_Sum_f32_RING_LL on stream A and
 *                    a cuStreamSynchronize; the fake driver ends collective
 *                    kernels on a shared 20 ms grid, so the ranks' collectives
 *                    end together, as NCCL's do. With $FAKE_APP_BARRIER, a
 *                    directory, the $WORLD_SIZE ranks meet there before each
 *                    step (each leaves a file with its arrival time) and
 *                    start it in the same 20 ms, so that their k-th
 *                    collectives are one collective
 *   --pc-cubin CUBIN instead, for PC sampling: loads the cubin file CUBIN
 *                    (pc-app.sm_90.cubin, from pc-app.cu) with
 *                    cuModuleLoadData, from a buffer it frees at once (the
 *                    driver keeps its copy, as a real one does), gets
 *                    pc_hot and pc_cold from it, and launches them N
 *                    (--launches, default 50) times each, alternating, on
 *                    the default stream: pc_hot (256 x 256 threads, 2 ms)
 *                    from launch_hot, pc_cold (256 x 256 threads, 20 us)
 *                    from launch_cold (both called from pc_kernels, each
 *                    between 2 ms of CPU before and after, so that the
 *                    samples nearest to a launch are its function's and
 *                    the GPU keeps up); then
 *                    cuCtxSynchronize, and unloads the module. Every
 *                    pc_hot run wholly in a sampling window of period P has
 *                    floor(522720000 / 2^P) samples (fake.h), pc_cold
 *                    floor(5227200 / 2^P)
 *
 * Theoretical occupancy, by hand, on the fake device (64 warps, 65536
 * registers in 4 sub-partitions of 16384, 32 blocks and 233472 bytes of
 * shared memory per SM; registers allocated per warp in units of 256,
 * shared memory in units of 128 plus 1024 reserved per block). Blocks per
 * SM are the least of four limits:
 *   vector_add  256 threads = 8 warps, 24 regs: 768 regs per warp,
 *               16384 / 768 = 21 warps per sub-partition, 84 per SM:
 *               10 blocks; warps 64 / 8 = 8; smem 233472 / 1024 = 228;
 *               blocks 32. 8 blocks = 64 warps: 1000 permille, warps.
 *   matmul      16 x 16 = 8 warps, 64 regs: 2048 per warp, 8 warps per
 *               sub-partition, 32 per SM: 4 blocks; warps 8; smem
 *               (8192 + 1024) -> 233472 / 9216 = 25; blocks 32.
 *               4 blocks = 32 warps: 500 permille, registers.
 *   graph_step  128 threads = 4 warps, 32 regs: 1024 per warp, 16 per
 *               sub-partition, 64 per SM: 16 blocks; warps 16; smem
 *               (32768 dynamic + 1024) -> 233472 / 33792 = 6; blocks 32.
 *               6 blocks = 24 warps: 375 permille, shared memory.
 *   tiny        32 threads = 1 warp, 16 regs: 512 per warp, 32 per
 *               sub-partition, 128 per SM: 128 blocks; warps 64; smem 228;
 *               blocks 32. 32 blocks = 32 warps: 500 permille, blocks.
 *   big_tile    as graph_step, with 102400 bytes of dynamic shared memory
 *               (opted in: the device allows 227 KiB): (102400 + 1024) ->
 *               233472 / 103424 = 2 blocks = 8 warps: 125 permille,
 *               shared memory. Without the opt-in limit, which only the
 *               driver tells, the launch looks impossible.
 */
#include <cuda.h>
#include <nvtx3/nvToolsExt.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define APP_NAME "fake-app"
#include "app.h"
#include "fake.h"

#define CHECK(call) APP_CHECK(call, CUDA_SUCCESS)

struct kernel {
	const char *name;
	unsigned grid[3], block[3], dynamic_smem;
	struct fakecuda_function_attrs attrs;
	CUfunction f;
};

static struct kernel vector_add = {
	"vector_add", { 4096, 1, 1 }, { 256, 1, 1 }, 0, { .regs = 24, .duration_ns = 200000 }, NULL
};
static struct kernel matmul = {
	"_Z6matmulPfS_S_i", { 64, 64, 1 }, { 16, 16, 1 }, 0,
	{ .regs = 64, .static_smem = 8192, .local_per_thread = 16, .duration_ns = 500000 }, NULL
};
static struct kernel graph_step = {
	"_Z10graph_stepPf", { 1024, 1, 1 }, { 128, 1, 1 }, 32768,
	{ .regs = 32, .duration_ns = 5000000 }, NULL
};
static struct kernel tiny = {
	"_Z4tinyv", { 1, 1, 1 }, { 32, 1, 1 }, 0, { .regs = 16, .duration_ns = 5000 }, NULL
};
static struct kernel big_tile = {
	"_Z8big_tilePf", { 1024, 1, 1 }, { 128, 1, 1 }, 102400,
	{ .regs = 32, .duration_ns = 5000, .smem_optin = true }, NULL
};
static struct kernel long_kernel = {
	"long_kernel", { 1, 1, 1 }, { 32, 1, 1 }, 0,
	{ .regs = 16, .duration_ns = 10000000000ull }, NULL
};
/* The kernels of pc-app.cu, from its cubin (--pc-cubin). */
#define PC_N (1 << 16)
#define PC_HOT_ITERATIONS 4096
static struct kernel pc_hot = {
	"pc_hot", { PC_N / 256, 1, 1 }, { 256, 1, 1 }, 0,
	{ .regs = 32, .duration_ns = 2000000 }, NULL
};
static struct kernel pc_cold = {
	"pc_cold", { PC_N / 256, 1, 1 }, { 256, 1, 1 }, 0,
	{ .regs = 16, .duration_ns = 20000 }, NULL
};

/* Time off the CPU: no sample falls in it, so the calls on either side
 * of it link to their own stacks. */
FRAME static void idle(long ns)
{
	struct timespec ts = { 0, ns };

	nanosleep(&ts, NULL);
}

/* CPU work, so that the functions around the calls get sampled. */
FRAME static void burn(uint64_t ns)
{
	spin(ns);
}

static void load(CUmodule module, struct kernel *k)
{
	CHECK(cuModuleGetFunction(&k->f, module, k->name));
	CHECK(fakecuda_set_function_attrs(k->f, &k->attrs));
}

static void launch_with(const struct kernel *k, CUstream stream, void **args)
{
	CHECK(cuLaunchKernel(k->f, k->grid[0], k->grid[1], k->grid[2], k->block[0], k->block[1],
			     k->block[2], k->dynamic_smem, stream, args, NULL));
}

static void launch(const struct kernel *k, CUstream stream)
{
	launch_with(k, stream, NULL);
}

FRAME static void copy_inputs(CUdeviceptr dst, const void *src)
{
	CHECK(cuMemcpyHtoD(dst, src, 1000000));
	CHECK(cuMemcpyHtoD(dst + 1000000, src, 1000000));
}

FRAME static void launch_batch(CUstream a, CUstream b)
{
	burn(2000000);
	for (int i = 0; i < 5; i++)
		launch(&vector_add, a);
	for (int i = 0; i < 2; i++) {
		launch(&tiny, a);
		launch(&matmul, b);
	}
	burn(2000000);
}

FRAME static CUgraphExec build_graph(void)
{
	CUDA_KERNEL_NODE_PARAMS params = {
		.func = graph_step.f,
		.gridDimX = graph_step.grid[0], .gridDimY = graph_step.grid[1],
		.gridDimZ = graph_step.grid[2],
		.blockDimX = graph_step.block[0], .blockDimY = graph_step.block[1],
		.blockDimZ = graph_step.block[2],
		.sharedMemBytes = graph_step.dynamic_smem,
	};
	CUgraphNode nodes[3];
	CUgraphExec exec;
	CUgraph graph;

	CHECK(cuGraphCreate(&graph, 0));
	for (int i = 0; i < 3; i++)
		CHECK(cuGraphAddKernelNode(&nodes[i], graph, i ? &nodes[i - 1] : NULL, i ? 1 : 0,
					   &params));
	CHECK(cuGraphInstantiate(&exec, graph, 0));
	CHECK(cuGraphDestroy(graph));
	return exec;
}

FRAME static void launch_graph(CUgraphExec exec, CUstream stream)
{
	burn(2000000);
	CHECK(cuGraphLaunch(exec, stream));
	burn(2000000);
}

FRAME static void wait_for_gpu(CUstream a, CUstream b)
{
	CHECK(cuStreamSynchronize(a));
	CHECK(cuStreamSynchronize(b));
}

FRAME static void copy_outputs(void *dst, CUdeviceptr src, CUstream stream)
{
	CHECK(cuMemcpyDtoHAsync(dst, src, 2000000, stream));
	CHECK(cuCtxSynchronize());
}

FRAME static void copy_to_peer(CUcontext ctx)
{
	CUcontext peer;
	CUdeviceptr src, dst;
	CUdevice dev;

	CHECK(cuDeviceGet(&dev, 1));
	CHECK(cuCtxCreate(&peer, NULL, 0, dev));
	CHECK(cuMemAlloc(&dst, 5000000));
	CHECK(cuCtxSetCurrent(ctx));
	CHECK(cuMemAlloc(&src, 5000000));
	CHECK(cuMemcpyPeer(dst, peer, src, ctx, 5000000));
	CHECK(cuCtxDestroy(peer));
	CHECK(cuCtxSetCurrent(ctx));
}

FRAME static void launch_optin(CUmodule module, CUstream stream)
{
	load(module, &big_tile);
	launch(&big_tile, stream);
	CHECK(cuStreamSynchronize(stream));
}

/* A second context on the device: its first stream has the id of the first's. */
FRAME static void second_context(CUcontext ctx, CUdevice dev)
{
	struct kernel k = tiny;
	CUcontext other;
	CUmodule module;
	CUstream s;

	CHECK(cuCtxCreate(&other, NULL, 0, dev));
	CHECK(cuModuleLoadData(&module, "fake cubin"));
	CHECK(cuStreamCreate(&s, 0));
	load(module, &k);
	launch(&k, s);
	launch(&k, s);
	CHECK(cuStreamSynchronize(s));
	CHECK(cuStreamDestroy(s));
	CHECK(cuModuleUnload(module));
	CHECK(cuCtxDestroy(other));
	CHECK(cuCtxSetCurrent(ctx));
}

/* The child of --fork: it inherited a CUDA process and only exits, its
 * inherited exit handlers included; one that hangs is stopped by SIGALRM. */
FRAME static void forked_child(void)
{
	alarm(10);
	burn(5000000);
	exit(0);
}

static void fork_and_wait(void)
{
	int status;
	pid_t pid = fork();

	if (pid < 0) {
		perror("fake-app: fork");
		exit(2);
	}
	if (pid == 0)
		forked_child();
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "fake-app: the forked child did not exit cleanly (status %#x)\n",
			status);
		exit(3);
	}
}

static struct kernel all_reduce = {
	"ncclDevKernel_AllReduce_Sum_f32_RING_LL", { 32, 1, 1 }, { 512, 1, 1 }, 0,
	{ .regs = 96, .duration_ns = 100000 }, NULL
};

/* The compute step of a rank before each collective. */
FRAME static void compute_step(uint64_t ns)
{
	burn(ns);
}

/*
 * The ranks of --collectives meet in $FAKE_APP_BARRIER before step STEP,
 * as NCCL's ranks wait for each other in each collective: each writes its
 * arrival time to a file named STEP.RANK, waits for the $WORLD_SIZE ranks'
 * files of the step, and sleeps until the same moment as the others: a few
 * ms into the grid period after the last arrival. A rank that a loaded
 * machine kept off its CPU so holds the others back, rather than running
 * its collectives a grid period behind theirs from then on.
 */
static void start_together(const char *dir, const char *rank, long step)
{
	const char *world = getenv("WORLD_SIZE");
	long ranks = world ? atol(world) : 1;
	char path[4096], mine[4096];
	uint64_t last = 0, start;
	FILE *f;

	/* Written, then renamed whole: a reader never sees half a time. */
	snprintf(path, sizeof(path), "%s/%ld.%s.tmp", dir, step, rank ? rank : "0");
	snprintf(mine, sizeof(mine), "%s/%ld.%s", dir, step, rank ? rank : "0");
	f = fopen(path, "w");
	if (!f || fprintf(f, "%llu\n", (unsigned long long)now_ns()) < 0 || fclose(f) ||
	    rename(path, mine)) {
		perror(path);
		exit(2);
	}
	for (long r = 0; r < ranks; r++) {
		unsigned long long t;

		snprintf(path, sizeof(path), "%s/%ld.%ld", dir, step, r);
		while (!(f = fopen(path, "r")))
			idle(1000000);
		if (fscanf(f, "%llu", &t) == 1 && t > last)
			last = t;
		fclose(f);
	}
	start = (last / FAKE_COLLECTIVE_GRID_NS + 2) * FAKE_COLLECTIVE_GRID_NS + 2000000;
	for (uint64_t now = now_ns(); now < start; now = now_ns())
		idle((long)(start - now));
}

/* --collectives: a training loop's shape, one collective a step. */
FRAME static void collective_steps(CUmodule module, CUstream a, long n)
{
	const char *rank = getenv("RANK"), *slow = getenv("FAKE_APP_SLOW_RANK");
	uint64_t step = rank && slow && !strcmp(rank, slow) ? 9000000 : 3000000;

	load(module, &all_reduce);
	for (long i = 0; i < n; i++) {
		if (getenv("FAKE_APP_BARRIER"))
			start_together(getenv("FAKE_APP_BARRIER"), rank, i);
		compute_step(step);
		launch(&all_reduce, a);
		CHECK(cuStreamSynchronize(a));
	}
}

#define MAX_LAUNCHERS 8

struct launcher {
	CUcontext ctx;
	CUstream shared, own;
	pthread_barrier_t *go;
	pthread_t thread;
};

FRAME static void *launcher(void *arg)
{
	struct launcher *l = arg;

	pthread_setname_np(pthread_self(), "launcher");
	CHECK(cuCtxSetCurrent(l->ctx));
	pthread_barrier_wait(l->go);
	for (int i = 0; i < 15; i++)
		launch(i % 3 == 2 ? &vector_add : &tiny, i % 3 == 2 ? l->shared : l->own);
	CHECK(cuStreamSynchronize(l->own));
	CHECK(cuStreamDestroy(l->own));
	return NULL;
}

/* --threads: n threads launching at once, on their own streams and on a. */
static void launch_from_threads(CUcontext ctx, CUstream a, long n)
{
	struct launcher ls[MAX_LAUNCHERS];
	pthread_barrier_t go;

	pthread_barrier_init(&go, NULL, (unsigned)n + 1);
	for (long i = 0; i < n; i++) {
		ls[i] = (struct launcher){ .ctx = ctx, .shared = a, .go = &go };
		CHECK(cuStreamCreate(&ls[i].own, 0));
		if (pthread_create(&ls[i].thread, NULL, launcher, &ls[i])) {
			fprintf(stderr, "fake-app: cannot start a thread\n");
			exit(2);
		}
	}
	pthread_barrier_wait(&go);
	for (long i = 0; i < n; i++)
		pthread_join(ls[i].thread, NULL);
	pthread_barrier_destroy(&go);
	CHECK(cuCtxSynchronize());
}

static int many_launches(CUmodule module, CUstream a, CUstream b, long n, long names)
{
	struct kernel *kernels = calloc((size_t)names, sizeof(*kernels));
	char (*labels)[48] = calloc((size_t)names, sizeof(*labels));
	uint64_t start, elapsed;

	if (!kernels || !labels) {
		fprintf(stderr, "fake-app: out of memory\n");
		return 2;
	}
	for (long i = 0; i < names; i++) {
		/* kernelNNN(float*, int), mangled: three digits, so names <= 1000. */
		snprintf(labels[i], sizeof(labels[i]), "_Z9kernel%03ldPfi", i);
		kernels[i] = (struct kernel){ labels[i], { 256, 1, 1 }, { 128, 1, 1 }, 0,
					      { .regs = 32, .duration_ns = 100 }, NULL };
		load(module, &kernels[i]);
	}
	start = now_ns();
	for (long i = 0; i < n; i++)
		launch(&kernels[i % names], i % 2 ? b : a);
	elapsed = now_ns() - start;
	CHECK(cuCtxSynchronize());
	printf("fake-app: %ld launches in %llu ns: %.1f ns per launch\n", n,
	       (unsigned long long)elapsed, (double)elapsed / (double)n);
	free(kernels);
	free(labels);
	return 0;
}

/*
 * pc_hot(out, in, n, iterations), as pc-app.cu's launch_hot, between 2 ms
 * of CPU before and after: the samples nearest to the launch are its own.
 */
FRAME static void launch_hot(CUdeviceptr out, CUdeviceptr in)
{
	int n = PC_N, iterations = PC_HOT_ITERATIONS;
	void *args[] = { &out, &in, &n, &iterations };

	burn(2000000);
	launch_with(&pc_hot, NULL, args);
	burn(2000000);
}

/* pc_cold(out, n), as pc-app.cu's launch_cold, between 2 ms of CPU. */
FRAME static void launch_cold(CUdeviceptr out)
{
	int n = PC_N;
	void *args[] = { &out, &n };

	burn(2000000);
	launch_with(&pc_cold, NULL, args);
	burn(2000000);
}

/* Reads a file whole; exits when it cannot. */
static void *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	long size;
	void *data;

	if (!f || fseek(f, 0, SEEK_END) || (size = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET)) {
		perror(path);
		exit(2);
	}
	/* A NUL after it: the driver takes an image that is not an ELF for a string. */
	data = calloc(1, (size_t)size + 1);
	if (!data || fread(data, 1, (size_t)size, f) != (size_t)size) {
		fprintf(stderr, "fake-app: cannot read %s\n", path);
		exit(2);
	}
	fclose(f);
	return data;
}

/* --pc-cubin: the kernels of a real cubin, for PC sampling. */
FRAME static void pc_kernels(const char *cubin, long launches)
{
	void *image = read_file(cubin);
	CUdeviceptr in, out;
	CUmodule module;

	CHECK(cuModuleLoadData(&module, image));
	free(image);
	load(module, &pc_hot);
	load(module, &pc_cold);
	CHECK(cuMemAlloc(&in, PC_N * sizeof(float)));
	CHECK(cuMemAlloc(&out, PC_N * sizeof(float)));
	for (long r = 0; r < launches; r++) {
		launch_hot(out, in);
		launch_cold(out);
	}
	CHECK(cuCtxSynchronize());
	CHECK(cuModuleUnload(module));
}

/* All threads' CPU time, the profiler's included. */
static void print_cpu_time(long launches)
{
	struct rusage ru;
	double ns;

	getrusage(RUSAGE_SELF, &ru);
	ns = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 +
	     (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3;
	printf("fake-app: process CPU time %.0f ns: %.1f ns per launch\n", ns, ns / (double)launches);
}

/* A push of an NVTX event with these attributes in domain. */
static void push_in(nvtxDomainHandle_t domain, int type, nvtxMessageValue_t message)
{
	nvtxEventAttributes_t a = {
		.version = NVTX_VERSION,
		.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE,
		.messageType = type,
		.message = message,
	};

	nvtxDomainRangePushEx(domain, &a);
}

/* The ranges of --nvtx-more, in push order (innermost first when nested). */
FRAME static void more_nvtx(void)
{
	nvtxDomainHandle_t alpha = nvtxDomainCreateA("alpha");
	nvtxDomainHandle_t beta = nvtxDomainCreateW(L"beta");
	nvtxStringHandle_t alpha_registered = nvtxDomainRegisterStringA(alpha, "alpha registered");
	nvtxStringHandle_t beta_registered = nvtxDomainRegisterStringW(beta, L"beta registered");
	nvtxEventAttributes_t start = {
		.version = NVTX_VERSION,
		.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE,
		.messageType = NVTX_MESSAGE_TYPE_UNICODE,
		.message.unicode = L"beta start",
	};
	nvtxRangeId_t id;

	nvtxMarkW(L"wide mark");
	nvtxRangePushW(L"wide push \u00e9t\u00e9");
	nvtxRangePop();
	id = nvtxRangeStartW(L"wide start");
	nvtxRangeEnd(id);

	/* Each pop closes the latest range of its own domain, not the latest one. */
	push_in(alpha, NVTX_MESSAGE_TYPE_ASCII, (nvtxMessageValue_t){ .ascii = "alpha outer" });
	push_in(beta, NVTX_MESSAGE_TYPE_REGISTERED,
		(nvtxMessageValue_t){ .registered = beta_registered });
	push_in(alpha, NVTX_MESSAGE_TYPE_REGISTERED,
		(nvtxMessageValue_t){ .registered = alpha_registered });
	nvtxDomainRangePop(beta);		/* beta registered */
	burn(4000000);
	nvtxDomainRangePop(alpha);		/* alpha registered */
	push_in(beta, NVTX_MESSAGE_TYPE_UNICODE, (nvtxMessageValue_t){ .unicode = L"beta wide" });
	nvtxRangePushA("default inner");
	nvtxDomainRangePop(beta);		/* beta wide */
	burn(4000000);
	nvtxRangePop();				/* default inner */
	nvtxDomainRangePop(alpha);		/* alpha outer */

	/* Two domains' ranges that overlap, neither inside the other. */
	push_in(alpha, NVTX_MESSAGE_TYPE_ASCII, (nvtxMessageValue_t){ .ascii = "alpha across" });
	nvtxRangePushA("default across");
	burn(20000000);		/* so that flame has their samples on a busy machine */
	nvtxDomainRangePop(alpha);		/* alpha across */
	nvtxRangePop();				/* default across */

	id = nvtxDomainRangeStartEx(beta, &start);
	nvtxDomainRangeEnd(beta, id);
	nvtxDomainDestroy(alpha);
	nvtxDomainDestroy(beta);
}

/* The ranges of --nvtx-domains. */
static void many_domains(long n)
{
	for (long i = 0; i < n; i++) {
		char name[32], range[32];
		nvtxDomainHandle_t domain;

		snprintf(name, sizeof(name), "d%ld", i);
		snprintf(range, sizeof(range), "in d%ld", i);
		domain = nvtxDomainCreateA(name);
		push_in(domain, NVTX_MESSAGE_TYPE_ASCII, (nvtxMessageValue_t){ .ascii = range });
		nvtxDomainRangePop(domain);
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: fake-app [--fork] [--still-running] [--peer] [--optin] "
			"[--two-contexts]\n"
			"                [--nvtx-early] [--nvtx-more] [--nvtx-domains N] [--pinned]\n"
			"                [--exit N]\n"
			"       fake-app --kernels N [--names M]\n"
			"       fake-app --threads N\n"
			"       fake-app --collectives N\n"
			"       fake-app --pc-cubin CUBIN [--launches N]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	bool fork_child = false, still_running = false, peer = false, optin = false;
	bool two_contexts = false, pinned = false;
	bool nvtx_early = false, nvtx_more = false;
	long kernels = 0, names = 500, launches = 50, collectives = 0, threads = 0;
	long nvtx_domains = 0;
	const char *pc_cubin = NULL;
	int exit_status = 0;
	static char host[4000000];
	void *outputs = host;
	CUcontext ctx;
	CUmodule module;
	CUstream a, b;
	CUdeviceptr in, out, scratch;
	CUgraphExec exec;
	CUdevice dev;
	nvtxRangeId_t range;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--fork"))
			fork_child = true;
		else if (!strcmp(argv[i], "--still-running"))
			still_running = true;
		else if (!strcmp(argv[i], "--peer"))
			peer = true;
		else if (!strcmp(argv[i], "--optin"))
			optin = true;
		else if (!strcmp(argv[i], "--two-contexts"))
			two_contexts = true;
		else if (!strcmp(argv[i], "--nvtx-early"))
			nvtx_early = true;
		else if (!strcmp(argv[i], "--nvtx-more"))
			nvtx_more = true;
		else if (!strcmp(argv[i], "--nvtx-domains") && i + 1 < argc)
			nvtx_domains = atol(argv[++i]);
		else if (!strcmp(argv[i], "--pinned"))
			pinned = true;
		else if (!strcmp(argv[i], "--exit") && i + 1 < argc)
			exit_status = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--kernels") && i + 1 < argc)
			kernels = atol(argv[++i]);
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			threads = atol(argv[++i]);
		else if (!strcmp(argv[i], "--collectives") && i + 1 < argc)
			collectives = atol(argv[++i]);
		else if (!strcmp(argv[i], "--names") && i + 1 < argc)
			names = atol(argv[++i]);
		else if (!strcmp(argv[i], "--pc-cubin") && i + 1 < argc)
			pc_cubin = argv[++i];
		else if (!strcmp(argv[i], "--launches") && i + 1 < argc)
			launches = atol(argv[++i]);
		else
			usage();
	}
	if (names < 1 || names > 1000 || launches < 0 || threads < 0 || threads > MAX_LAUNCHERS)
		usage();

	if (nvtx_early)
		nvtxRangePushA("before init");
	CHECK(cuInit(0));
	CHECK(cuDeviceGet(&dev, 0));
	CHECK(cuCtxCreate(&ctx, NULL, 0, dev));
	CHECK(cuModuleLoadData(&module, "fake cubin"));
	CHECK(cuStreamCreate(&a, 0));
	CHECK(cuStreamCreate(&b, 0));
	if (nvtx_early)
		nvtxRangePop();
	if (collectives > 0) {
		collective_steps(module, a, collectives);
		goto out;
	}
	if (kernels > 0) {
		exit_status = many_launches(module, a, b, kernels, names);
		goto out;
	}
	if (pc_cubin) {
		pc_kernels(pc_cubin, launches);
		goto out;
	}
	if (threads > 0) {
		load(module, &vector_add);
		load(module, &tiny);
		launch_from_threads(ctx, a, threads);
		goto out;
	}
	load(module, &vector_add);
	load(module, &matmul);
	load(module, &graph_step);
	load(module, &tiny);
	load(module, &long_kernel);
	CHECK(cuMemAlloc(&in, 2000000));
	CHECK(cuMemAlloc(&out, 2000000));
	CHECK(cuMemAlloc(&scratch, 4000000));
	exec = build_graph();
	if (pinned)
		CHECK(cuMemAllocHost(&outputs, 2000000));

	nvtxRangePushA("epoch");
	copy_inputs(in, host);
	CHECK(cuMemsetD8Async(out, 0, 1000000, a));
	for (int step = 0; step < 2; step++) {
		nvtxRangePushA("step");
		launch_batch(a, b);
		nvtxRangePop();
	}
	launch_graph(exec, b);
	idle(3000000);
	wait_for_gpu(a, b);
	copy_outputs(outputs, out, b);
	nvtxRangePop();

	range = nvtxRangeStartA("checkpoint");
	CHECK(cuMemcpyDtoD(scratch, in, 4000000));
	nvtxRangeEnd(range);
	if (nvtx_more)
		more_nvtx();
	many_domains(nvtx_domains);

	if (peer)
		copy_to_peer(ctx);
	if (optin)
		launch_optin(module, a);
	if (two_contexts)
		second_context(ctx, dev);
	if (fork_child)
		fork_and_wait();
	if (still_running) {
		launch(&long_kernel, a);
		burn(1000000);		/* so that it has started by the exit */
		return exit_status;
	}
	CHECK(cuGraphExecDestroy(exec));
	if (pinned)
		CHECK(cuMemFreeHost(outputs));
out:
	CHECK(cuStreamDestroy(a));
	CHECK(cuStreamDestroy(b));
	CHECK(cuModuleUnload(module));
	CHECK(cuCtxDestroy(ctx));
	if (kernels > 0)
		print_cpu_time(kernels);
	if (fakecuda_violations()) {
		fprintf(stderr, "fake-app: %u driver calls inside InitializeInjection\n",
			fakecuda_violations());
		return 4;
	}
	return exit_status;
}
