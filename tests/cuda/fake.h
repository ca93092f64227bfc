/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_TESTS_CUDA_FAKE_H
#define GTRACE_TESTS_CUDA_FAKE_H

/*
 * Test doubles of the CUDA driver (fake-cuda.c: libcuda.so.1) and of CUPTI
 * (fake-cupti.c: libcupti.so.13), built against the real CUDA headers so
 * that handles, callback data and activity records have the real layouts.
 * The agent under test is the production code: it cannot tell them from
 * the real libraries, except that no GPU is needed.
 *
 * The fake GPU runs nothing. Each stream has a simulated timeline: work
 * queued on it starts when the stream is free (never before the call that
 * queued it) and lasts a known time; synchronizing calls spin until the
 * timeline has passed. Times come from CUPTI's clock, which is the
 * timestamp callback the agent registers, as with the real CUPTI.
 *
 * As the real driver and CUPTI do, the fake libcupti finds the driver in
 * the process; it hands over the hooks below, through which the driver
 * fires callbacks and emits activity records.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda.h>
#include <cupti.h>
#include <cupti_pcsampling.h>

/* The stream ids the fake gives, per context as the driver's are: recent
 * drivers number the legacy default stream 7 and created streams from 13 on. */
#define FAKE_NULL_STREAM_ID 7
#define FAKE_FIRST_STREAM_ID 13

/* The fake's handles. CUPTI's id getters read them directly. */
struct CUstream_st {
	uint32_t id;
	CUcontext ctx;
	uint64_t busy_until;	/* end of the last work queued, CUPTI time */
};

struct CUctx_st {
	uint32_t id;
	int device;
	struct CUstream_st null_stream;	/* the legacy default stream */
	uint32_t next_stream_id;
	uint64_t busy_until;		/* end of the last work queued on any stream */
	uint64_t kernels_until;		/* end of the last kernel queued on any stream */
};

/*
 * Work that ran on the SMs of a context, as the fake driver tells the fake
 * CUPTI for PC sampling: a kernel of a module, or (user false) a kernel of
 * the driver's own, as a memset is on a real GPU, whose samples CUPTI only
 * counts (nonUsrKernelsTotalSamples).
 */
struct fake_sm_work {
	CUcontext ctx;
	bool user;
	const char *function;		/* its name; NULL for the driver's own */
	uint32_t function_index;	/* its symbol's index in the module's .symtab */
	uint64_t text_bytes;		/* the size of its code, .text.<name> */
	uint64_t cubin_crc;		/* of its module, as PC records carry it */
	uint32_t correlation;		/* as its kernel record has it */
	uint64_t start, end;		/* on CUPTI's clock */
};

/* What the fake CUPTI offers the fake driver once it is loaded. */
struct fake_cupti_hooks {
	/* The clock of records: the registered timestamp callback, else CLOCK_REALTIME. */
	uint64_t (*now)(void);
	/* Whether the subscriber wants this callback. */
	bool (*wants)(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);
	/* Calls the subscriber on the calling thread. */
	void (*callback)(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data);
	/* Whether records of this kind are collected. */
	bool (*collects)(CUpti_ActivityKind kind);
	/* A DRIVER or RUNTIME record of a call made by the calling thread. */
	void (*api_record)(CUpti_ActivityKind kind, CUpti_CallbackId cbid, uint64_t start,
			   uint64_t end, uint32_t correlation, uint32_t result);
	/*
	 * Any other record (copied). name, for kernel and device records, is
	 * copied to CUPTI's own storage. The record is delivered once the
	 * clock has passed ready (0: at once), as GPU work is.
	 */
	void (*record)(const void *record, size_t size, const char *name, uint64_t ready);
	/* PC sampling. What PC records carry as the CRC of a module's image
	 * (computed once, when the module is loaded, as CUPTI does). */
	uint64_t (*cubin_crc)(const void *cubin, size_t size);
	/* Whether kernels on ctx run one at a time (kernel-serialized sampling). */
	bool (*serializes)(CUcontext ctx);
	/* Work queued on the SMs; samples come from the part that runs in a window. */
	void (*sm_work)(const struct fake_sm_work *work);
	/* ctx goes, after CONTEXT_DESTROY_STARTING: its sampling is torn down. */
	void (*context_destroyed)(CUcontext ctx);
};

/* The traced driver functions of the fake, by their exported names (the
 * CUPTI callback id is CUPTI_DRIVER_TRACE_CBID_<name>). */
#define FAKE_DRIVER_FUNCTIONS(X) \
	X(cuDeviceGetAttribute) X(cuDeviceTotalMem_v2) X(cuCtxCreate_v4) X(cuCtxDestroy_v2) \
	X(cuCtxSynchronize) X(cuModuleLoadData) X(cuModuleGetFunction) X(cuModuleUnload) \
	X(cuStreamCreate) X(cuStreamDestroy_v2) X(cuStreamSynchronize) X(cuEventCreate) \
	X(cuEventRecord) X(cuEventSynchronize) X(cuStreamWaitEvent) X(cuEventDestroy_v2) \
	X(cuMemAlloc_v2) X(cuMemFree_v2) X(cuMemAllocHost_v2) X(cuMemFreeHost) X(cuMemcpyHtoD_v2) \
	X(cuMemcpyDtoH_v2) X(cuMemcpyDtoD_v2) \
	X(cuMemcpyHtoDAsync_v2) X(cuMemcpyDtoHAsync_v2) X(cuMemcpyDtoDAsync_v2) \
	X(cuMemcpyPeer) X(cuMemsetD8_v2) X(cuMemsetD8Async) X(cuLaunchKernel) \
	X(cuGraphCreate) X(cuGraphAddKernelNode_v2) X(cuGraphInstantiateWithFlags) \
	X(cuGraphLaunch) X(cuGraphExecDestroy) X(cuGraphDestroy)

/* Exported by the fake driver: the fake CUPTI attaches itself. */
void fakecuda_attach_cupti(const struct fake_cupti_hooks *hooks);

/*
 * Exported by the fake driver for the fake runtime (fake-cudart.c): the
 * runtime call the calling thread starts, traced in the RUNTIME_API domain
 * with a correlation id of its own, and ends with result. The driver calls
 * made in between fire their own callbacks, nested in the runtime call's;
 * the GPU records of the work they queue carry the runtime call's id.
 * Runtime calls do not nest. begin is false when the call must fail (the
 * driver is not initialized).
 */
bool fakecuda_runtime_begin(CUpti_CallbackId cbid, const char *name, const void *params);
int fakecuda_runtime_end(int result);

/* Test hooks of the fake driver, for fake-app. */

/* What a kernel declares (nvcc would put it in the cubin) and how long it runs. */
struct fakecuda_function_attrs {
	uint16_t regs;			/* registers per thread */
	int32_t static_smem;		/* bytes */
	uint32_t local_per_thread;	/* bytes */
	uint64_t duration_ns;
	bool smem_optin;		/* dynamic shared memory above 48 KiB allowed */
};
CUresult fakecuda_set_function_attrs(CUfunction f, const struct fakecuda_function_attrs *attrs);

/*
 * A test hook of the fake runtime, for fake-rt-app: host is the program's
 * handle of a kernel named name (what nvcc's registration code passes to
 * the runtime), which cudaLaunchKernel then launches. Returns 0, or -1
 * when the table is full or an argument is NULL.
 */
int fakecudart_register_function(const void *host, const char *name,
				 const struct fakecuda_function_attrs *attrs);

/* Driver calls made inside InitializeInjection, which the real driver forbids. */
unsigned fakecuda_violations(void);

/* The simulated copy and memset rates, bytes per nanosecond. */
#define FAKE_HTOD_BYTES_PER_NS 10
#define FAKE_DTOH_BYTES_PER_NS 10
#define FAKE_DTOD_BYTES_PER_NS 100
#define FAKE_PEER_BYTES_PER_NS 50
#define FAKE_MEMSET_BYTES_PER_NS 100
/* From a launch call to its work starting on an idle stream. */
#define FAKE_LAUNCH_LATENCY_NS 2000
/*
 * A kernel whose name starts with "nccl" ends on the next multiple of this
 * of the GPU clock, as the collective kernels of the ranks of a job end
 * together, each waiting for the last: those of processes on one machine
 * end at the same time.
 */
#define FAKE_COLLECTIVE_GRID_NS 20000000ull

/*
 * PC sampling. The fake device's SMs and their clock (its
 * CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT and _CLOCK_RATE): with a period
 * of P, the SMs together take FAKE_SM_COUNT * FAKE_SM_CLOCK_MHZ / 1000 /
 * 2^P samples per nanosecond of work, so that a kernel run of d ns wholly
 * inside a sampling window yields
 *     floor(d * FAKE_SM_CLOCK_MHZ * FAKE_SM_COUNT / 1000 / 2^P)
 * samples (pc_hot of fake-app --pc-cubin, 2 ms at P = 10: 510468).
 */
#define FAKE_SM_COUNT 132
#define FAKE_SM_CLOCK_MHZ 1980
/* SASS instructions are 16 bytes (Volta and later): PC offsets step by it. */
#define FAKE_SASS_INSTRUCTION_BYTES 16
/* The code of a function of a module loaded from a dummy image (not an ELF). */
#define FAKE_DUMMY_TEXT_BYTES 1024
/* The share of a function's samples that FAKE_CUPTI_PC_HOT offsets get. */
#define FAKE_PC_HOT_PERCENT 80

/* Exported by the fake CUPTI, the entry point of the NVTX loader. */
int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t id));

#endif
