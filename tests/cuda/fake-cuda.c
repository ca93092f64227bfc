/* SPDX-License-Identifier: MIT */
/*
 * A test double of the CUDA driver, built as libcuda.so.1: the driver API
 * a program such as fake-app uses, on fake GPUs that run nothing (see
 * fake.h for the simulated time). It does what the real driver does for a
 * tool:
 *  - cuInit loads $CUDA_INJECTION64_PATH and calls its InitializeInjection,
 *    once per process, then fires the CU_INIT_FINISHED resource callback;
 *    a driver call made inside InitializeInjection fails and is counted
 *    (fakecuda_violations), since the real driver does not allow it; one
 *    made inside CU_INIT_FINISHED fails too (CUDA_ERROR_NOT_INITIALIZED),
 *    as initialization is not over, but is allowed to be tried;
 *  - every traced call fires DRIVER_API enter and exit callbacks on the
 *    calling thread, with the call's correlation id, and leaves a DRIVER
 *    record; calls made from inside a callback are not traced;
 *  - the fake runtime (fake-cudart.c) traces its calls through
 *    fakecuda_runtime_begin/end: RUNTIME_API callbacks and a RUNTIME
 *    record, with correlation ids from the same counter; the driver calls
 *    it makes fire their own callbacks, nested inside;
 *  - the GPU work leaves kernel, memcpy and memset records with the
 *    call's correlation id (all the kernels of a graph launch share it);
 *    work queued by a driver call inside a runtime call carries the
 *    runtime call's id (a choice: which id the real CUPTI gives such
 *    records is for a GPU to confirm); a copy's runtimeCorrelationId is
 *    the runtime call's id too, 0 outside one;
 *  - cuMemFree waits for the context's work first, as the real one does;
 *  - cuStreamWaitEvent holds a stream's later work until the event's
 *    work ends, on any context or device;
 *  - a copy reads or writes pinned memory where its host address is in a
 *    buffer of cuMemAllocHost (malloc'd), pageable elsewhere, as CUPTI says;
 *  - contexts leave DEVICE and CONTEXT records and fire CONTEXT_CREATED
 *    and CONTEXT_DESTROY_STARTING; synchronizing calls leave
 *    SYNCHRONIZATION records and fire the SYNCHRONIZE callbacks;
 *  - cuModuleLoadData takes a real cubin (an ELF image, such as nvcc -cubin
 *    makes): the driver copies it, the application may free its own, and
 *    fires MODULE_LOADED with a CUpti_ModuleResourceData pointing at the
 *    copy (MODULE_UNLOAD_STARTING at cuModuleUnload); cuModuleGetFunction
 *    finds only the kernels of its symbol table (CUDA_ERROR_NOT_FOUND for
 *    others). Any other image is a dummy, such as "fake cubin": no
 *    callback, and every name is a kernel, of FAKE_DUMMY_TEXT_BYTES of
 *    code, whose PC records have cubinCrc 0. Kernels run on the SMs,
 *    which the fake CUPTI's PC sampling sees (fake.h): in
 *    kernel-serialized mode one kernel at a time per context; memsets
 *    run as kernels of the driver's own.
 *
 * FAKE_CUDA_SLOWER=NAME=PCT makes the kernels named NAME run PCT percent
 * longer than their attributes say, for tests of gtrace diff.
 *
 * Devices: FAKE_CUDA_DEVICES (default 1) of "Fake GPU", compute capability
 * 9.0: 132 SMs, 2048 threads (64 warps), 65536 registers, 32 blocks and
 * 228 KiB of shared memory per SM; 48 KiB per block, 227 KiB opted in,
 * 1 KiB reserved per block; 80 GiB of memory.
 */
#include "fake.h"

#include <dlfcn.h>
#include <elf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DRIVER_VERSION 13000
#define DEVICE_NAME "Fake GPU"
#define MAX_DEVICES 8
#define DEVICE_MEMORY (80ull << 30)
#define SMS FAKE_SM_COUNT
#define THREADS_PER_SM 2048
#define MAX_GRAPH_NODES 16
#define DEFAULT_KERNEL_NS 10000

struct CUfunc_st {
	char *name;
	struct fakecuda_function_attrs attrs;
	CUmodule module;
	uint32_t symbol_index;		/* in the cubin's .symtab; dummies count from 1 */
	uint64_t text_bytes;		/* its code */
	struct CUfunc_st *next;		/* in its module */
};

struct CUmod_st {
	struct CUfunc_st *functions;
	CUcontext ctx;
	uint32_t id;
	bool cubin;			/* an ELF image; else a dummy */
	uint8_t *image;			/* the driver's copy */
	size_t size;
	uint64_t crc;			/* as CUPTI computes it, once attached */
	bool have_crc;
	uint32_t dummies;		/* the functions of a dummy so far */
};

struct CUevent_st {
	CUcontext ctx;
	uint32_t id;
	uint64_t at;			/* when the work queued before it ends */
};

struct CUgraphNode_st {
	CUDA_KERNEL_NODE_PARAMS params;
	uint64_t id;
};

struct CUgraph_st {
	uint32_t id;
	unsigned nnodes;
	struct CUgraphNode_st nodes[MAX_GRAPH_NODES];
};

struct CUgraphExec_st {
	struct CUgraph_st graph;	/* a snapshot, as instantiation makes */
};

/* One traced call: of the driver, or of the fake runtime. */
struct call {
	CUpti_CallbackDomain domain;
	CUpti_CallbackId cbid;
	const char *name;
	const void *params;
	const char *symbol;
	CUcontext ctx;
	uint32_t correlation;
	uint64_t start;			/* after the enter callback: work queues from then */
	uint64_t correlation_data;
	CUresult result;
	bool traced;
};

static const struct fake_cupti_hooks *cupti;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static bool initialized;
static unsigned violations;
static uint32_t next_correlation = 1, next_context_id = 1;
static uint32_t next_graph_id = 1, next_event_id = 1, next_module_id = 1;
static uint64_t next_node_id = 1, next_address = 0x7f0000000000ull;
static int64_t next_grid_id = 1;
static bool device_reported[MAX_DEVICES];

/* The page-locked host buffers cuMemAllocHost gave out: a copy from or to
 * one reads or writes pinned memory, one of any other host address
 * pageable, as CUPTI reports them (under lock). */
#define MAX_PINNED 16
static struct pinned {
	const char *base;
	size_t bytes;
} pinned[MAX_PINNED];

static __thread bool injecting;		/* inside InitializeInjection */
static __thread bool finishing_init;	/* inside the CU_INIT_FINISHED callback */
static __thread int in_tool;		/* inside a tool callback */
static __thread CUcontext current;
/* The runtime call under way on this thread (they do not nest), and its id; 0: none. */
static __thread struct call runtime_call;
static __thread uint32_t runtime_correlation;

void fakecuda_attach_cupti(const struct fake_cupti_hooks *hooks)
{
	__atomic_store_n(&cupti, hooks, __ATOMIC_RELEASE);
}

static const struct fake_cupti_hooks *tool(void)
{
	return __atomic_load_n(&cupti, __ATOMIC_ACQUIRE);
}

unsigned fakecuda_violations(void)
{
	return __atomic_load_n(&violations, __ATOMIC_RELAXED);
}

/* The time of the GPU timelines: CUPTI's clock once CUPTI is attached. */
static uint64_t now(void)
{
	const struct fake_cupti_hooks *t = tool();
	struct timespec ts;

	if (t)
		return t->now();
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int device_count(void)
{
	const char *env = getenv("FAKE_CUDA_DEVICES");
	int n = env ? atoi(env) : 1;

	return n < 1 ? 1 : n > MAX_DEVICES ? MAX_DEVICES : n;
}

/* A kernel's run time, lengthened when FAKE_CUDA_SLOWER names it. */
static uint64_t kernel_ns(const char *name, uint64_t ns)
{
	const char *env = getenv("FAKE_CUDA_SLOWER"), *eq = env ? strrchr(env, '=') : NULL;

	if (!eq || strlen(name) != (size_t)(eq - env) || strncmp(env, name, (size_t)(eq - env)))
		return ns;
	return ns + ns * strtoull(eq + 1, NULL, 10) / 100;
}

static void fire(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data)
{
	const struct fake_cupti_hooks *t = tool();

	if (!t || in_tool || !t->wants(domain, cbid))
		return;
	in_tool++;
	t->callback(domain, cbid, data);
	in_tool--;
}

static void fire_api(struct call *c, CUpti_ApiCallbackSite site)
{
	CUpti_CallbackData data = {
		.callbackSite = site,
		.functionName = c->name,
		.functionParams = c->params,
		.functionReturnValue = &c->result,
		.symbolName = c->symbol,
		.context = c->ctx,
		.contextUid = c->ctx ? c->ctx->id : 0,
		.correlationData = &c->correlation_data,
		.correlationId = c->correlation,
	};

	fire(c->domain, c->cbid, &data);
}

/* Whether a call must fail: inside InitializeInjection (counted), or before
 * cuInit is over (inside its CU_INIT_FINISHED callback too). */
static bool refused(const char *name)
{
	if (injecting) {
		__atomic_add_fetch(&violations, 1, __ATOMIC_RELAXED);
		fprintf(stderr, "fake cuda: %s called inside InitializeInjection\n", name);
		return true;
	}
	return finishing_init || !__atomic_load_n(&initialized, __ATOMIC_ACQUIRE);
}

/* Starts a traced call of the domain: false when the call must fail. */
static bool begin_in(CUpti_CallbackDomain domain, struct call *c, CUpti_CallbackId cbid,
		     const char *name, const void *params, const char *symbol)
{
	*c = (struct call){ .domain = domain, .cbid = cbid, .name = name, .params = params,
			    .symbol = symbol, .ctx = current };
	if (refused(name))
		return false;
	c->traced = tool() && !in_tool;
	c->correlation = __atomic_fetch_add(&next_correlation, 1, __ATOMIC_RELAXED);
	if (c->traced)
		fire_api(c, CUPTI_API_ENTER);
	c->start = now();
	return true;
}

static bool begin(struct call *c, CUpti_CallbackId cbid, const char *name, const void *params,
		  const char *symbol)
{
	return begin_in(CUPTI_CB_DOMAIN_DRIVER_API, c, cbid, name, params, symbol);
}

static CUresult end(struct call *c, CUresult result)
{
	const struct fake_cupti_hooks *t = tool();

	c->result = result;
	if (c->traced && t) {
		fire_api(c, CUPTI_API_EXIT);
		t->api_record(c->domain == CUPTI_CB_DOMAIN_RUNTIME_API ? CUPTI_ACTIVITY_KIND_RUNTIME :
									  CUPTI_ACTIVITY_KIND_DRIVER,
			      c->cbid, c->start, now(), c->correlation, result);
	}
	return result;
}

#define BEGIN(c, fn, params, symbol) begin(c, CUPTI_DRIVER_TRACE_CBID_##fn, #fn, params, symbol)

bool fakecuda_runtime_begin(CUpti_CallbackId cbid, const char *name, const void *params)
{
	if (!begin_in(CUPTI_CB_DOMAIN_RUNTIME_API, &runtime_call, cbid, name, params, NULL))
		return false;
	runtime_correlation = runtime_call.correlation;
	return true;
}

int fakecuda_runtime_end(int result)
{
	runtime_correlation = 0;
	runtime_call.ctx = current;	/* the call may have made or destroyed it */
	return (int)end(&runtime_call, (CUresult)result);
}

/* The correlation id of the work a call queues: its runtime call's, if any. */
static uint32_t work_correlation(const struct call *c)
{
	return runtime_correlation ? runtime_correlation : c->correlation;
}

static bool collects(CUpti_ActivityKind kind)
{
	const struct fake_cupti_hooks *t = tool();

	return t && t->collects(kind);
}

static void emit(const void *record, size_t size, const char *name, uint64_t ready)
{
	const struct fake_cupti_hooks *t = tool();

	if (t)
		t->record(record, size, name, ready);
}

static CUstream stream_of(CUcontext ctx, CUstream s)
{
	return s ? s : &ctx->null_stream;
}

/* Queues work of the given length on a stream: it starts once the stream
 * is free, never before the call that queues it. A kernel, while CUPTI
 * samples PCs in kernel-serialized mode, also waits for the kernels of
 * every stream of the context. */
static void queue(CUcontext ctx, CUstream s, const struct call *c, uint64_t length, bool kernel,
		  bool collective, uint64_t *start, uint64_t *stop)
{
	const struct fake_cupti_hooks *t = tool();
	bool serial = kernel && t && t->serializes(ctx);

	pthread_mutex_lock(&lock);
	s = stream_of(ctx, s);
	*start = c->start + FAKE_LAUNCH_LATENCY_NS;
	if (*start < s->busy_until)
		*start = s->busy_until;
	if (serial && *start < ctx->kernels_until)
		*start = ctx->kernels_until;
	*stop = *start + length;
	if (collective)
		*stop += FAKE_COLLECTIVE_GRID_NS - 1 - (*stop + FAKE_COLLECTIVE_GRID_NS - 1) %
							   FAKE_COLLECTIVE_GRID_NS;
	s->busy_until = *stop;
	if (ctx->busy_until < *stop)
		ctx->busy_until = *stop;
	if (kernel && ctx->kernels_until < *stop)
		ctx->kernels_until = *stop;
	pthread_mutex_unlock(&lock);
}

/* Tells CUPTI of work on the SMs, for PC sampling. */
static void sm_work(const struct fake_sm_work *w)
{
	const struct fake_cupti_hooks *t = tool();

	if (t)
		t->sm_work(w);
}

/* Waits as the driver's default spin mode does: on the CPU. */
static void spin_until(uint64_t t)
{
	while (now() < t)
		__builtin_ia32_pause();
}

static uint64_t busy_until(const uint64_t *at)
{
	uint64_t t;

	pthread_mutex_lock(&lock);
	t = *at;
	pthread_mutex_unlock(&lock);
	return t;
}

/* ---- initialization and devices ---- */

static void fire_resource(CUpti_CallbackIdResource cbid, CUcontext ctx, CUstream stream)
{
	CUpti_ResourceData data = { .context = ctx, .resourceHandle.stream = stream };

	fire(CUPTI_CB_DOMAIN_RESOURCE, cbid, &data);
}

static void load_injection(void)
{
	const char *path = getenv("CUDA_INJECTION64_PATH");
	int (*initialize)(void);
	void *lib;

	__atomic_store_n(&initialized, true, __ATOMIC_RELEASE);
	if (!path || !*path)
		return;
	/* Like the driver: a library that fails to load is silently ignored. */
	lib = dlopen(path, RTLD_NOW);
	if (!lib)
		return;
	initialize = (int (*)(void))dlsym(lib, "InitializeInjection");
	if (!initialize)
		return;
	injecting = true;
	initialize();
	injecting = false;
}

CUresult CUDAAPI cuInit(unsigned int flags)
{
	static bool finished;

	if (injecting) {
		refused("cuInit");
		return CUDA_ERROR_NOT_INITIALIZED;
	}
	pthread_once(&init_once, load_injection);
	if (!__atomic_exchange_n(&finished, true, __ATOMIC_ACQ_REL)) {
		finishing_init = true;
		fire_resource(CUPTI_CBID_RESOURCE_CU_INIT_FINISHED, NULL, NULL);
		finishing_init = false;
	}
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDriverGetVersion(int *version)
{
	if (!version)
		return CUDA_ERROR_INVALID_VALUE;
	*version = DRIVER_VERSION;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetErrorString(CUresult error, const char **str)
{
	if (!str)
		return CUDA_ERROR_INVALID_VALUE;
	*str = error == CUDA_SUCCESS ? "no error" : "fake driver error";
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetErrorName(CUresult error, const char **str)
{
	if (!str)
		return CUDA_ERROR_INVALID_VALUE;
	*str = error == CUDA_SUCCESS ? "CUDA_SUCCESS" : "CUDA_ERROR_FAKE";
	return CUDA_SUCCESS;
}

static bool valid_device(CUdevice dev)
{
	return dev >= 0 && dev < device_count();
}

CUresult CUDAAPI cuDeviceGetCount(int *count)
{
	if (refused("cuDeviceGetCount"))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	*count = device_count();
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice *dev, int ordinal)
{
	if (refused("cuDeviceGet"))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!dev || !valid_device(ordinal))
		return CUDA_ERROR_INVALID_DEVICE;
	*dev = ordinal;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev)
{
	if (refused("cuDeviceGetName"))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!name || len <= 0 || !valid_device(dev))
		return CUDA_ERROR_INVALID_VALUE;
	snprintf(name, (size_t)len, "%s", DEVICE_NAME);
	return CUDA_SUCCESS;
}

static bool attribute_value(CUdevice_attribute attr, int *value)
{
	switch (attr) {
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = 1024; break;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: *value = 1024; break;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: *value = 1024; break;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: *value = 64; break;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *value = 2147483647; break;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: *value = 65535; break;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *value = 65535; break;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *value = 48 << 10; break;
	case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: *value = 64 << 10; break;
	case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *value = 32; break;
	case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: *value = 65536; break;
	case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *value = FAKE_SM_CLOCK_MHZ * 1000; break;
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = SMS; break;
	case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: *value = 1; break;
	case CU_DEVICE_ATTRIBUTE_ECC_ENABLED: *value = 1; break;
	case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *value = 2619000; break;
	case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: *value = 5120; break;
	case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *value = 50 << 20; break;
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *value = THREADS_PER_SM; break;
	case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: *value = 5; break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = 9; break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = 0; break;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *value = 228 << 10; break;
	case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: *value = 65536; break;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *value = 227 << 10; break;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: *value = 32; break;
	case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: *value = 1 << 10; break;
	default: return false;
	}
	return true;
}

CUresult CUDAAPI cuDeviceGetAttribute(int *value, CUdevice_attribute attr, CUdevice dev)
{
	cuDeviceGetAttribute_params params = { value, attr, dev };
	struct call c;

	if (!BEGIN(&c, cuDeviceGetAttribute, &params, NULL))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!value || !valid_device(dev) || !attribute_value(attr, value))
		return end(&c, CUDA_ERROR_INVALID_VALUE);
	return end(&c, CUDA_SUCCESS);
}

CUresult CUDAAPI cuDeviceTotalMem(size_t *bytes, CUdevice dev)
{
	cuDeviceTotalMem_v2_params params = { bytes, dev };
	struct call c;

	if (!BEGIN(&c, cuDeviceTotalMem_v2, &params, NULL))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!bytes || !valid_device(dev))
		return end(&c, CUDA_ERROR_INVALID_VALUE);
	*bytes = DEVICE_MEMORY;
	return end(&c, CUDA_SUCCESS);
}

static void report_device(CUdevice dev)
{
	CUpti_ActivityDevice5 d = {
		.kind = CUPTI_ACTIVITY_KIND_DEVICE,
		.globalMemoryBandwidth = 3352320000ull,	/* KB/s */
		.globalMemorySize = DEVICE_MEMORY,
		.constantMemorySize = 64 << 10,
		.l2CacheSize = 50 << 20,
		.numThreadsPerWarp = 32,
		.coreClockRate = FAKE_SM_CLOCK_MHZ * 1000,
		.numMemcpyEngines = 5,
		.numMultiprocessors = SMS,
		.maxIPC = 4,
		.maxWarpsPerMultiprocessor = THREADS_PER_SM / 32,
		.maxBlocksPerMultiprocessor = 32,
		.maxSharedMemoryPerMultiprocessor = 228 << 10,
		.maxRegistersPerMultiprocessor = 65536,
		.maxRegistersPerBlock = 65536,
		.maxSharedMemoryPerBlock = 48 << 10,
		.maxThreadsPerBlock = 1024,
		.maxBlockDimX = 1024,
		.maxBlockDimY = 1024,
		.maxBlockDimZ = 64,
		.maxGridDimX = 2147483647,
		.maxGridDimY = 65535,
		.maxGridDimZ = 65535,
		.computeCapabilityMajor = 9,
		.computeCapabilityMinor = 0,
		.id = (uint32_t)dev,
		.eccEnabled = 1,
		.isCudaVisible = 1,
	};
	bool first;

	pthread_mutex_lock(&lock);
	first = !device_reported[dev];
	device_reported[dev] = true;
	pthread_mutex_unlock(&lock);
	if (first && collects(CUPTI_ACTIVITY_KIND_DEVICE))
		emit(&d, sizeof(d), DEVICE_NAME, 0);
}

/* ---- contexts ---- */

CUresult CUDAAPI cuCtxCreate(CUcontext *pctx, CUctxCreateParams *create, unsigned int flags,
			     CUdevice dev)
{
	cuCtxCreate_v4_params params = { pctx, create, flags, dev };
	CUpti_ActivityContext3 record = { .kind = CUPTI_ACTIVITY_KIND_CONTEXT };
	CUcontext ctx;
	struct call c;

	if (!BEGIN(&c, cuCtxCreate_v4, &params, NULL))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!pctx || !valid_device(dev))
		return end(&c, CUDA_ERROR_INVALID_VALUE);
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return end(&c, CUDA_ERROR_OUT_OF_MEMORY);
	ctx->id = __atomic_fetch_add(&next_context_id, 1, __ATOMIC_RELAXED);
	ctx->device = dev;
	ctx->null_stream.id = FAKE_NULL_STREAM_ID;
	ctx->null_stream.ctx = ctx;
	ctx->next_stream_id = FAKE_FIRST_STREAM_ID;
	current = ctx;
	*pctx = ctx;
	report_device(dev);
	record.contextId = ctx->id;
	record.deviceId = (uint32_t)dev;
	record.computeApiKind = CUPTI_ACTIVITY_COMPUTE_API_CUDA;
	record.nullStreamId = FAKE_NULL_STREAM_ID;
	record.numMultiprocessors = SMS;
	if (collects(CUPTI_ACTIVITY_KIND_CONTEXT))
		emit(&record, sizeof(record), NULL, 0);
	fire_resource(CUPTI_CBID_RESOURCE_CONTEXT_CREATED, ctx, NULL);
	return end(&c, CUDA_SUCCESS);
}

CUresult CUDAAPI cuCtxDestroy(CUcontext ctx)
{
	cuCtxDestroy_v2_params params = { ctx };
	struct call c;

	if (!BEGIN(&c, cuCtxDestroy_v2, &params, NULL))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!ctx)
		return end(&c, CUDA_ERROR_INVALID_CONTEXT);
	fire_resource(CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, ctx, NULL);
	if (tool())
		tool()->context_destroyed(ctx);
	if (current == ctx)
		current = NULL;
	c.ctx = NULL;
	free(ctx);
	return end(&c, CUDA_SUCCESS);
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx)
{
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	*pctx = current;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx)
{
	current = ctx;
	return CUDA_SUCCESS;
}

static void sync_record(const struct call *c, CUpti_ActivitySynchronizationType type,
			CUcontext ctx, uint32_t stream, uint32_t event, CUresult result)
{
	CUpti_ActivitySynchronization2 r = {
		.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
		.type = type,
		.start = c->start,
		.end = now(),
		.correlationId = work_correlation(c),
		.contextId = ctx ? ctx->id : CUPTI_SYNCHRONIZATION_INVALID_VALUE,
		.streamId = stream,
		.cudaEventId = event,
		.returnValue = result,
	};

	if (c->traced && collects(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION))
		emit(&r, sizeof(r), NULL, 0);
}

static void fire_synchronized(CUpti_CallbackIdSync cbid, CUcontext ctx, CUstream stream)
{
	CUpti_SynchronizeData data = { .context = ctx, .stream = stream };

	fire(CUPTI_CB_DOMAIN_SYNCHRONIZE, cbid, &data);
}

CUresult CUDAAPI cuCtxSynchronize(void)
{
	struct call c;

	if (!BEGIN(&c, cuCtxSynchronize, NULL, NULL))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!c.ctx)
		return end(&c, CUDA_ERROR_INVALID_CONTEXT);
	spin_until(busy_until(&c.ctx->busy_until));
	sync_record(&c, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, c.ctx,
		    CUPTI_SYNCHRONIZATION_INVALID_VALUE, CUPTI_SYNCHRONIZATION_INVALID_VALUE,
		    CUDA_SUCCESS);
	fire_synchronized(CUPTI_CBID_SYNCHRONIZE_CONTEXT_SYNCHRONIZED, c.ctx, NULL);
	return end(&c, CUDA_SUCCESS);
}

/* ---- modules and functions ---- */

/*
 * A cubin is an ELF image, and the driver is given only its address: it
 * works the size out from the headers, as the furthest of the section and
 * program header tables and of the sections' and segments' bytes. (nvcc
 * puts the program headers after the section headers, so that e_shoff +
 * e_shnum * e_shentsize alone would cut them off.) 0: not a 64-bit
 * little-endian ELF image, which makes it a dummy. The magic is read a
 * byte at a time: a dummy string ends before it differs.
 */
static size_t cubin_size(const uint8_t *p)
{
	Elf64_Ehdr eh;
	size_t size;

	if (p[0] != ELFMAG0 || p[1] != ELFMAG1 || p[2] != ELFMAG2 || p[3] != ELFMAG3)
		return 0;
	memcpy(&eh, p, sizeof(eh));
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) ||
	    (eh.e_phnum && eh.e_phentsize != sizeof(Elf64_Phdr)))
		return 0;
	size = sizeof(eh);
	if (eh.e_shoff + (size_t)eh.e_shnum * eh.e_shentsize > size)
		size = eh.e_shoff + (size_t)eh.e_shnum * eh.e_shentsize;
	if (eh.e_phoff + (size_t)eh.e_phnum * eh.e_phentsize > size)
		size = eh.e_phoff + (size_t)eh.e_phnum * eh.e_phentsize;
	for (size_t i = 0; i < eh.e_shnum; i++) {
		Elf64_Shdr sh;

		memcpy(&sh, p + eh.e_shoff + i * sizeof(sh), sizeof(sh));
		if (sh.sh_type != SHT_NOBITS && sh.sh_offset + sh.sh_size > size)
			size = sh.sh_offset + sh.sh_size;
	}
	for (size_t i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;

		memcpy(&ph, p + eh.e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_offset + ph.p_filesz > size)
			size = ph.p_offset + ph.p_filesz;
	}
	return size;
}

/* Section i of a module's cubin, when it lies inside the image. */
static bool cubin_section(CUmodule m, size_t i, Elf64_Shdr *sh)
{
	Elf64_Ehdr eh;

	memcpy(&eh, m->image, sizeof(eh));
	if (i >= eh.e_shnum)
		return false;
	memcpy(sh, m->image + eh.e_shoff + i * sizeof(*sh), sizeof(*sh));
	return sh->sh_type == SHT_NOBITS || sh->sh_offset + sh->sh_size <= m->size;
}

/* The string at offset of a string table section, NULL when out of it. */
static const char *cubin_string(CUmodule m, const Elf64_Shdr *strtab, uint64_t offset)
{
	const char *s = (const char *)m->image + strtab->sh_offset + offset;

	if (offset >= strtab->sh_size || !memchr(s, '\0', strtab->sh_size - offset))
		return NULL;
	return s;
}

/* Finds kernel name in a cubin: a FUNC symbol whose code is .text.<name>. */
static bool cubin_function(CUmodule m, const char *name, uint32_t *index, uint64_t *text_bytes)
{
	Elf64_Shdr shstrtab, symtab, strtab, text;
	Elf64_Ehdr eh;

	memcpy(&eh, m->image, sizeof(eh));
	if (!cubin_section(m, eh.e_shstrndx, &shstrtab))
		return false;
	for (size_t i = 0; cubin_section(m, i, &symtab); i++) {
		if (symtab.sh_type != SHT_SYMTAB || !cubin_section(m, symtab.sh_link, &strtab))
			continue;
		for (size_t k = 0; k < symtab.sh_size / sizeof(Elf64_Sym); k++) {
			const char *symbol, *section;
			Elf64_Sym sym;

			memcpy(&sym, m->image + symtab.sh_offset + k * sizeof(sym), sizeof(sym));
			symbol = cubin_string(m, &strtab, sym.st_name);
			if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || !symbol || strcmp(symbol, name))
				continue;
			if (!cubin_section(m, sym.st_shndx, &text))
				return false;
			section = cubin_string(m, &shstrtab, text.sh_name);
			if (!section || strncmp(section, ".text.", 6) || strcmp(section + 6, name))
				return false;
			*index = (uint32_t)k;
			*text_bytes = text.sh_size;
			return true;
		}
	}
	return false;
}

/* The CRC PC records carry for the module's code, once CUPTI is there to
 * compute it (at the load, as CUPTI does, or at the first launch after it
 * attached). 0 before, and for a dummy: no CRC of a cubin is 0, and the
 * real cuptiGetCubinCrc gives no stable value for bytes that are not one. */
static uint64_t module_crc(CUmodule m)
{
	const struct fake_cupti_hooks *t = tool();
	uint64_t crc;
	bool have;

	pthread_mutex_lock(&lock);
	have = m->have_crc;
	crc = m->crc;
	pthread_mutex_unlock(&lock);
	if (have || !t)
		return crc;
	/* Outside the lock: CUPTI may load its library for it. */
	crc = t->cubin_crc(m->image, m->size);
	pthread_mutex_lock(&lock);
	m->crc = crc;
	m->have_crc = true;
	pthread_mutex_unlock(&lock);
	return crc;
}

static void fire_module(CUpti_CallbackIdResource cbid, CUmodule m)
{
	CUpti_ModuleResourceData module = {
		.moduleId = m->id,
		.cubinSize = m->size,
		.pCubin = (const char *)m->image,
	};
	CUpti_ResourceData data = { .context = m->ctx, .resourceDescriptor = &module };

	fire(CUPTI_CB_DOMAIN_RESOURCE, cbid, &data);
}

CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image)
{
	cuModuleLoadData_params params = { module, image };
	size_t size;
	CUmodule m;
	struct call c;

	if (!BEGIN(&c, cuModuleLoadData, &params, NULL))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!module || !image || !c.ctx)
		return end(&c, CUDA_ERROR_INVALID_VALUE);
	size = cubin_size(image);
	m = calloc(1, sizeof(*m));
	if (!m)
		return end(&c, CUDA_ERROR_OUT_OF_MEMORY);
	m->cubin = size != 0;
	m->size = m->cubin ? size : strlen(image);
	m->image = malloc(m->size + 1);
	if (!m->image) {
		free(m);
		return end(&c, CUDA_ERROR_OUT_OF_MEMORY);
	}
	memcpy(m->image, image, m->size);
	m->image[m->size] = '\0';
	m->ctx = c.ctx;
	m->id = __atomic_fetch_add(&next_module_id, 1, __ATOMIC_RELAXED);
	m->have_crc = !m->cubin;
	*module = m;
	if (m->cubin) {
		module_crc(m);
		fire_module(CUPTI_CBID_RESOURCE_MODULE_LOADED, m);
	}
	return end(&c, CUDA_SUCCESS);
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction *fn, CUmodule module, const char *name)
{
	cuModuleGetFunction_params params = { fn, module, name };
	uint32_t index = 0;
	uint64_t text_bytes = FAKE_DUMMY_TEXT_BYTES;
	CUfunction f;
	struct call c;

	if (!BEGIN(&c, cuModuleGetFunction, &params, NULL))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!fn || !module || !name)
		return end(&c, CUDA_ERROR_INVALID_VALUE);
	if (module->cubin && !cubin_function(module, name, &index, &text_bytes))
		return end(&c, CUDA_ERROR_NOT_FOUND);
	f = calloc(1, sizeof(*f));
	if (!f || !(f->name = strdup(name))) {
		free(f);
		return end(&c, CUDA_ERROR_OUT_OF_MEMORY);
	}
	f->attrs = (struct fakecuda_function_attrs){ .regs = 32, .duration_ns = DEFAULT_KERNEL_NS };
	f->module = module;
	f->text_bytes = text_bytes;
	f->symbol_index = module->cubin ? index : ++module->dummies;
	f->next = module->functions;
	module->functions = f;
	*fn = f;
	return end(&c, CUDA_SUCCESS);
}

CUresult CUDAAPI cuModuleUnload(CUmodule module)
{
	cuModuleUnload_params params = { module };
	struct call c;

	if (!BEGIN(&c, cuModuleUnload, &params, NULL))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!module)
		return end(&c, CUDA_ERROR_INVALID_VALUE);
	if (module->cubin)
		fire_module(CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING, module);
	while (module->functions) {
		CUfunction f = module->functions;

		module->functions = f->next;
		free(f->name);
		free(f);
	}
	free(module->image);
	free(module);
	return end(&c, CUDA_SUCCESS);
}

CUresult fakecuda_set_function_attrs(CUfunction f, const struct fakecuda_function_attrs *attrs)
{
	if (!f || !attrs)
		return CUDA_ERROR_INVALID_VALUE;
	f->attrs = *attrs;
	return CUDA_SUCCESS;
}

/* ---- streams and events ---- */

CUresult CUDAAPI cuStreamCreate(CUstream *stream, unsigned int flags)
{
	cuStreamCreate_params params = { stream, flags };
	CUstream s;
	struct call c;

	if (!BEGIN(&c, cuStreamCreate, &params, NULL))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!stream || !c.ctx)
		return end(&c, CUDA_ERROR_INVALID_VALUE);
	s = calloc(1, sizeof(*s));
	if (!s)
		return end(&c, CUDA_ERROR_OUT_OF_MEMORY);
	s->id = __atomic_fetch_add(&c.ctx->next_stream_id, 1, __ATOMIC_RELAXED);
	s->ctx = c.ctx;
	*stream = s;
	fire_resource(CUPTI_CBID_RESOURCE_STREAM_CREATED, c.ctx, s);
	return end(&c, CUDA_SUCCESS);
}

CUresult CUDAAPI cuStreamDestroy(CUstream stream)
{
	cuStreamDestroy_v2_params params = { stream };
	struct call c;

	if (!BEGIN(&c, cuStreamDestroy_v2, &params, NULL))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!stream)
		return end(&c, CUDA_ERROR_INVALID_HANDLE);
	fire_resource(CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING, stream->ctx, stream);
	free(stream);
	return end(&c, CUDA_SUCCESS);
}

CUresult CUDAAPI cuStreamSynchronize(CUstream stream)
{
	cuStreamSynchronize_params params = { stream };
	CUstream s;
	struct call c;

	if (!BEGIN(&c, cuStreamSynchronize, &params, NULL))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!c.ctx)
		return end(&c, CUDA_ERROR_INVALID_CONTEXT);
	s = stream_of(c.ctx, stream);
	spin_until(busy_until(&s->busy_until));
	sync_record(&c, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, c.ctx, s->id,
		    CUPTI_SYNCHRONIZATION_INVALID_VALUE, CUDA_SUCCESS);
	fire_synchronized(CUPTI_CBID_SYNCHRONIZE_STREAM_SYNCHRONIZED, c.ctx, stream);
	return end(&c, CUDA_SUCCESS);
}

CUresult CUDAAPI cuEventCreate(CUevent *event, unsigned int flags)
{
	cuEventCreate_params params = { event, flags };
	struct call c;

	if (!BEGIN(&c, cuEventCreate, &params, NULL))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!event || !c.ctx)
		return end(&c, CUDA_ERROR_INVALID_VALUE);
	*event = calloc(1, sizeof(**event));
	if (!*event)
		return end(&c, CUDA_ERROR_OUT_OF_MEMORY);
	(*event)->ctx = c.ctx;
	(*event)->id = __atomic_fetch_add(&next_event_id, 1, __ATOMIC_RELAXED);
	return end(&c, CUDA_SUCCESS);
}

CUresult CUDAAPI cuEventRecord(CUevent event, CUstream stream)
{
	cuEventRecord_params params = { event, stream };
	struct call c;

	if (!BEGIN(&c, cuEventRecord, &params, NULL))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!event)
		return end(&c, CUDA_ERROR_INVALID_HANDLE);
	event->at = busy_until(&stream_of(event->ctx, stream)->busy_until);
	return end(&c, CUDA_SUCCESS);
}

CUresult CUDAAPI cuEventSynchronize(CUevent event)
{
	cuEventSynchronize_params params = { event };
	struct call c;

	if (!BEGIN(&c, cuEventSynchronize, &params, NULL))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!event)
		return end(&c, CUDA_ERROR_INVALID_HANDLE);
	spin_until(event->at);
	sync_record(&c, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, event->ctx,
		    CUPTI_SYNCHRONIZATION_INVALID_VALUE, event->id, CUDA_SUCCESS);
	return end(&c, CUDA_SUCCESS);
}

/* The stream's work queued after this starts once the event's has ended. */
CUresult CUDAAPI cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int flags)
{
	cuStreamWaitEvent_params params = { stream, event, flags };
	struct call c;
	CUstream s;

	if (!BEGIN(&c, cuStreamWaitEvent, &params, NULL))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!event || !c.ctx)
		return end(&c, CUDA_ERROR_INVALID_HANDLE);
	pthread_mutex_lock(&lock);
	s = stream_of(c.ctx, stream);
	if (s->busy_until < event->at)
		s->busy_until = event->at;
	pthread_mutex_unlock(&lock);
	return end(&c, CUDA_SUCCESS);
}

CUresult CUDAAPI cuEventDestroy(CUevent event)
{
	cuEventDestroy_v2_params params = { event };
	struct call c;

	if (!BEGIN(&c, cuEventDestroy_v2, &params, NULL))
		return CUDA_ERROR_NOT_INITIALIZED;
	free(event);
	return end(&c, event ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE);
}

/* ---- memory ---- */

CUresult CUDAAPI cuMemAlloc(CUdeviceptr *ptr, size_t bytes)
{
	cuMemAlloc_v2_params params = { ptr, bytes };
	struct call c;

	if (!BEGIN(&c, cuMemAlloc_v2, &params, NULL))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!ptr || !bytes || !c.ctx)
		return end(&c, CUDA_ERROR_INVALID_VALUE);
	/* Nothing is stored: the fake GPU has no memory behind its addresses. */
	*ptr = __atomic_fetch_add(&next_address, (bytes + 0xfff) & ~0xfffull, __ATOMIC_RELAXED);
	return end(&c, CUDA_SUCCESS);
}

CUresult CUDAAPI cuMemFree(CUdeviceptr ptr)
{
	cuMemFree_v2_params params = { ptr };
	struct call c;

	if (!BEGIN(&c, cuMemFree_v2, &params, NULL))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!c.ctx)
		return end(&c, CUDA_ERROR_INVALID_CONTEXT);
	spin_until(busy_until(&c.ctx->busy_until));
	return end(&c, CUDA_SUCCESS);
}

CUresult CUDAAPI cuMemAllocHost(void **ptr, size_t bytes)
{
	cuMemAllocHost_v2_params params = { ptr, bytes };
	struct call c;
	int slot = -1;

	if (!BEGIN(&c, cuMemAllocHost_v2, &params, NULL))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!ptr || !bytes || !c.ctx)
		return end(&c, CUDA_ERROR_INVALID_VALUE);
	pthread_mutex_lock(&lock);
	for (int i = 0; i < MAX_PINNED && slot < 0; i++)
		if (!pinned[i].base)
			slot = i;
	if (slot >= 0 && (*ptr = malloc(bytes)))
		pinned[slot] = (struct pinned){ *ptr, bytes };
	pthread_mutex_unlock(&lock);
	return end(&c, slot >= 0 && *ptr ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY);
}

CUresult CUDAAPI cuMemFreeHost(void *ptr)
{
	cuMemFreeHost_params params = { ptr };
	struct call c;
	bool found = false;

	if (!BEGIN(&c, cuMemFreeHost, &params, NULL))
		return CUDA_ERROR_NOT_INITIALIZED;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < MAX_PINNED && !found; i++) {
		if (ptr && pinned[i].base == ptr) {
			pinned[i] = (struct pinned){ 0 };
			found = true;
		}
	}
	pthread_mutex_unlock(&lock);
	free(found ? ptr : NULL);
	return end(&c, found ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE);
}

/* The kind of the host memory at host. */
static uint8_t host_memory(const void *host)
{
	const char *at = host;
	uint8_t kind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;

	pthread_mutex_lock(&lock);
	for (int i = 0; i < MAX_PINNED; i++)
		if (pinned[i].base && at >= pinned[i].base && at < pinned[i].base + pinned[i].bytes)
			kind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
	pthread_mutex_unlock(&lock);
	return kind;
}

/* A copy of bytes of the given kind on stream, host the host side of one
 * to or from the host; a synchronous one (async false) returns once it has
 * ended, as the driver's do. */
static CUresult copy(struct call *c, CUpti_ActivityMemcpyKind kind, const void *host, size_t bytes,
		     CUstream stream, bool async)
{
	uint64_t rate = kind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD ? FAKE_HTOD_BYTES_PER_NS :
			kind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH ? FAKE_DTOH_BYTES_PER_NS :
								  FAKE_DTOD_BYTES_PER_NS;
	CUpti_ActivityMemcpy6 r = {
		.kind = CUPTI_ACTIVITY_KIND_MEMCPY,
		.copyKind = (uint8_t)kind,
		.srcKind = kind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD ? host_memory(host) :
								     CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
		.dstKind = kind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH ? host_memory(host) :
								     CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
		.flags = async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0,
		.bytes = bytes,
		.correlationId = work_correlation(c),
		.runtimeCorrelationId = runtime_correlation,
		.copyCount = 1,
	};

	if (!c->ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	queue(c->ctx, stream, c, bytes / rate, false, false, &r.start, &r.end);
	r.deviceId = (uint32_t)c->ctx->device;
	r.contextId = c->ctx->id;
	r.streamId = stream_of(c->ctx, stream)->id;
	if (c->traced && collects(CUPTI_ACTIVITY_KIND_MEMCPY))
		emit(&r, sizeof(r), NULL, r.end);
	if (!async)
		spin_until(r.end);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t bytes)
{
	cuMemcpyHtoD_v2_params params = { dst, src, bytes };
	struct call c;

	if (!BEGIN(&c, cuMemcpyHtoD_v2, &params, NULL))
		return CUDA_ERROR_NOT_INITIALIZED;
	return end(&c, copy(&c, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, src, bytes, NULL, false));
}

CUresult CUDAAPI cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t bytes)
{
	cuMemcpyDtoH_v2_params params = { dst, src, bytes };
	struct call c;

	if (!BEGIN(&c, cuMemcpyDtoH_v2, &params, NULL))
		return CUDA_ERROR_NOT_INITIALIZED;
	return end(&c, copy(&c, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, dst, bytes, NULL, false));
}

CUresult CUDAAPI cuMemcpyDtoD(CUdeviceptr dst, CUdeviceptr src, size_t bytes)
{
	cuMemcpyDtoD_v2_params params = { dst, src, bytes };
	struct call c;

	if (!BEGIN(&c, cuMemcpyDtoD_v2, &params, NULL))
		return CUDA_ERROR_NOT_INITIALIZED;
	return end(&c, copy(&c, CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, NULL, bytes, NULL, false));
}

CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t bytes, CUstream stream)
{
	cuMemcpyHtoDAsync_v2_params params = { dst, src, bytes, stream };
	struct call c;

	if (!BEGIN(&c, cuMemcpyHtoDAsync_v2, &params, NULL))
		return CUDA_ERROR_NOT_INITIALIZED;
	return end(&c, copy(&c, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, src, bytes, stream, true));
}

CUresult CUDAAPI cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t bytes, CUstream stream)
{
	cuMemcpyDtoHAsync_v2_params params = { dst, src, bytes, stream };
	struct call c;

	if (!BEGIN(&c, cuMemcpyDtoHAsync_v2, &params, NULL))
		return CUDA_ERROR_NOT_INITIALIZED;
	return end(&c, copy(&c, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, dst, bytes, stream, true));
}

CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream)
{
	cuMemcpyDtoDAsync_v2_params params = { dst, src, bytes, stream };
	struct call c;

	if (!BEGIN(&c, cuMemcpyDtoDAsync_v2, &params, NULL))
		return CUDA_ERROR_NOT_INITIALIZED;
	return end(&c, copy(&c, CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, NULL, bytes, stream, true));
}

CUresult CUDAAPI cuMemcpyPeer(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src,
			      CUcontext src_ctx, size_t bytes)
{
	cuMemcpyPeer_params params = { dst, dst_ctx, src, src_ctx, bytes };
	CUpti_ActivityMemcpyPtoP4 r = {
		.kind = CUPTI_ACTIVITY_KIND_MEMCPY2,
		.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP,
		.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
		.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
		.bytes = bytes,
	};
	struct call c;

	if (!BEGIN(&c, cuMemcpyPeer, &params, NULL))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!dst_ctx || !src_ctx)
		return end(&c, CUDA_ERROR_INVALID_CONTEXT);
	queue(src_ctx, NULL, &c, bytes / FAKE_PEER_BYTES_PER_NS, false, false, &r.start, &r.end);
	r.deviceId = (uint32_t)src_ctx->device;
	r.contextId = src_ctx->id;
	r.streamId = FAKE_NULL_STREAM_ID;
	r.srcDeviceId = (uint32_t)src_ctx->device;
	r.srcContextId = src_ctx->id;
	r.dstDeviceId = (uint32_t)dst_ctx->device;
	r.dstContextId = dst_ctx->id;
	r.correlationId = work_correlation(&c);
	if (c.traced && collects(CUPTI_ACTIVITY_KIND_MEMCPY2))
		emit(&r, sizeof(r), NULL, r.end);
	spin_until(r.end);
	return end(&c, CUDA_SUCCESS);
}

static CUresult memset_bytes(struct call *c, unsigned char value, size_t bytes, CUstream stream,
			     bool async)
{
	CUpti_ActivityMemset4 r = {
		.kind = CUPTI_ACTIVITY_KIND_MEMSET,
		.value = value,
		.bytes = bytes,
		.correlationId = work_correlation(c),
		.flags = async ? CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC : 0,
		.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
	};

	if (!c->ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	queue(c->ctx, stream, c, bytes / FAKE_MEMSET_BYTES_PER_NS, false, false, &r.start, &r.end);
	r.deviceId = (uint32_t)c->ctx->device;
	r.contextId = c->ctx->id;
	r.streamId = stream_of(c->ctx, stream)->id;
	if (c->traced && collects(CUPTI_ACTIVITY_KIND_MEMSET))
		emit(&r, sizeof(r), NULL, r.end);
	/* A kernel of the driver's own on a real GPU: sampled, never attributed. */
	sm_work(&(struct fake_sm_work){ .ctx = c->ctx, .correlation = r.correlationId,
					.start = r.start, .end = r.end });
	if (!async)
		spin_until(r.end);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemsetD8(CUdeviceptr dst, unsigned char value, size_t bytes)
{
	cuMemsetD8_v2_params params = { dst, value, bytes };
	struct call c;

	if (!BEGIN(&c, cuMemsetD8_v2, &params, NULL))
		return CUDA_ERROR_NOT_INITIALIZED;
	return end(&c, memset_bytes(&c, value, bytes, NULL, false));
}

CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t bytes,
				 CUstream stream)
{
	cuMemsetD8Async_params params = { dst, value, bytes, stream };
	struct call c;

	if (!BEGIN(&c, cuMemsetD8Async, &params, NULL))
		return CUDA_ERROR_NOT_INITIALIZED;
	return end(&c, memset_bytes(&c, value, bytes, stream, true));
}

/* ---- kernels and graphs ---- */

static void kernel_record(const struct call *c, const CUDA_KERNEL_NODE_PARAMS *k, CUstream stream,
			  uint32_t graph_id, uint64_t node_id)
{
	const struct fakecuda_function_attrs *a = &k->func->attrs;
	CUpti_ActivityKernel10 r = {
		.kind = collects(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) ?
				CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL :
				CUPTI_ACTIVITY_KIND_KERNEL,
		.registersPerThread = a->regs,
		.gridX = (int32_t)k->gridDimX,
		.gridY = (int32_t)k->gridDimY,
		.gridZ = (int32_t)k->gridDimZ,
		.blockX = (int32_t)k->blockDimX,
		.blockY = (int32_t)k->blockDimY,
		.blockZ = (int32_t)k->blockDimZ,
		.staticSharedMemory = a->static_smem,
		.dynamicSharedMemory = (int32_t)k->sharedMemBytes,
		.localMemoryPerThread = a->local_per_thread,
		.correlationId = work_correlation(c),
		.launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR,
		.graphNodeId = node_id,
		.shmemLimitConfig = a->smem_optin ? CUPTI_FUNC_SHMEM_LIMIT_OPTIN :
						    CUPTI_FUNC_SHMEM_LIMIT_DEFAULT,
		.graphId = graph_id,
	};
	uint64_t local_total = (uint64_t)a->local_per_thread * SMS * THREADS_PER_SM;

	queue(c->ctx, stream, c, kernel_ns(k->func->name, a->duration_ns), true,
	      !strncmp(k->func->name, "nccl", 4), &r.start, &r.end);
	r.completed = r.end;
	r.deviceId = (uint32_t)c->ctx->device;
	r.contextId = c->ctx->id;
	r.streamId = stream_of(c->ctx, stream)->id;
	r.gridId = __atomic_fetch_add(&next_grid_id, 1, __ATOMIC_RELAXED);
	r.localMemoryTotal = (uint32_t)local_total;
	r.localMemoryTotal_v2 = local_total;
	if (c->traced && (collects(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) ||
			  collects(CUPTI_ACTIVITY_KIND_KERNEL)))
		emit(&r, sizeof(r), k->func->name, r.end);
	/* Sampled whether traced or not: the SMs run it either way. */
	sm_work(&(struct fake_sm_work){
		.ctx = c->ctx,
		.user = true,
		.function = k->func->name,
		.function_index = k->func->symbol_index,
		.text_bytes = k->func->text_bytes,
		.cubin_crc = module_crc(k->func->module),
		.correlation = r.correlationId,
		.start = r.start,
		.end = r.end,
	});
}

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
				unsigned int bx, unsigned int by, unsigned int bz,
				unsigned int smem, CUstream stream, void **args, void **extra)
{
	cuLaunchKernel_params params = { f, gx, gy, gz, bx, by, bz, smem, stream, args, extra };
	CUDA_KERNEL_NODE_PARAMS k = { f, gx, gy, gz, bx, by, bz, smem, args, extra, NULL, NULL };
	struct call c;

	if (!BEGIN(&c, cuLaunchKernel, &params, f ? f->name : NULL))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!f || !c.ctx || !gx || !gy || !gz || !bx || !by || !bz || bx * by * bz > 1024)
		return end(&c, CUDA_ERROR_INVALID_VALUE);
	kernel_record(&c, &k, stream, 0, 0);
	return end(&c, CUDA_SUCCESS);
}

CUresult CUDAAPI cuGraphCreate(CUgraph *graph, unsigned int flags)
{
	cuGraphCreate_params params = { graph, flags };
	struct call c;

	if (!BEGIN(&c, cuGraphCreate, &params, NULL))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!graph)
		return end(&c, CUDA_ERROR_INVALID_VALUE);
	*graph = calloc(1, sizeof(**graph));
	if (!*graph)
		return end(&c, CUDA_ERROR_OUT_OF_MEMORY);
	(*graph)->id = __atomic_fetch_add(&next_graph_id, 1, __ATOMIC_RELAXED);
	return end(&c, CUDA_SUCCESS);
}

/* Nodes run in the order added; dependencies are taken as given. */
CUresult CUDAAPI cuGraphAddKernelNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps,
				      size_t ndeps, const CUDA_KERNEL_NODE_PARAMS *kernel)
{
	cuGraphAddKernelNode_v2_params params = { node, graph, deps, ndeps, kernel };
	struct CUgraphNode_st *n;
	struct call c;

	if (!BEGIN(&c, cuGraphAddKernelNode_v2, &params, NULL))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!node || !graph || !kernel || !kernel->func || graph->nnodes == MAX_GRAPH_NODES)
		return end(&c, CUDA_ERROR_INVALID_VALUE);
	n = &graph->nodes[graph->nnodes++];
	n->params = *kernel;
	n->id = __atomic_fetch_add(&next_node_id, 1, __ATOMIC_RELAXED);
	*node = n;
	return end(&c, CUDA_SUCCESS);
}

CUresult CUDAAPI cuGraphInstantiate(CUgraphExec *exec, CUgraph graph, unsigned long long flags)
{
	cuGraphInstantiateWithFlags_params params = { exec, graph, flags };
	struct call c;

	if (!BEGIN(&c, cuGraphInstantiateWithFlags, &params, NULL))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!exec || !graph)
		return end(&c, CUDA_ERROR_INVALID_VALUE);
	*exec = malloc(sizeof(**exec));
	if (!*exec)
		return end(&c, CUDA_ERROR_OUT_OF_MEMORY);
	(*exec)->graph = *graph;
	return end(&c, CUDA_SUCCESS);
}

CUresult CUDAAPI cuGraphLaunch(CUgraphExec exec, CUstream stream)
{
	cuGraphLaunch_params params = { exec, stream };
	struct call c;

	if (!BEGIN(&c, cuGraphLaunch, &params, NULL))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!exec || !c.ctx)
		return end(&c, CUDA_ERROR_INVALID_VALUE);
	/* One call, one correlation id, for every kernel of the graph. */
	for (unsigned i = 0; i < exec->graph.nnodes; i++)
		kernel_record(&c, &exec->graph.nodes[i].params, stream, exec->graph.id,
			      exec->graph.nodes[i].id);
	return end(&c, CUDA_SUCCESS);
}

CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec exec)
{
	cuGraphExecDestroy_params params = { exec };
	struct call c;

	if (!BEGIN(&c, cuGraphExecDestroy, &params, NULL))
		return CUDA_ERROR_NOT_INITIALIZED;
	free(exec);
	return end(&c, CUDA_SUCCESS);
}

CUresult CUDAAPI cuGraphDestroy(CUgraph graph)
{
	cuGraphDestroy_params params = { graph };
	struct call c;

	if (!BEGIN(&c, cuGraphDestroy, &params, NULL))
		return CUDA_ERROR_NOT_INITIALIZED;
	free(graph);
	return end(&c, CUDA_SUCCESS);
}
