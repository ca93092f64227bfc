/* SPDX-License-Identifier: MIT */
/*
 * A test double of the CUDA runtime, built as libcudart.so.13: the few
 * runtime functions a simple program needs, done through the fake driver
 * (libcuda.so.1) as the real runtime does its work through the real one.
 *  - Every function here is a traced runtime call: RUNTIME_API enter and
 *    exit callbacks on the calling thread with a correlation id of its
 *    own, and a RUNTIME record (fakecuda_runtime_begin/end, fake.h).
 *  - The driver calls it makes fire DRIVER_API callbacks nested inside,
 *    and the GPU work they queue carries the runtime call's correlation
 *    id.
 *  - The first call initializes the driver (cuInit, which loads the
 *    injected tool, before the call's own callbacks, since a tool is not
 *    there to hear them before) and creates the context of device 0, the
 *    runtime's primary context, inside the call, as the runtime does
 *    lazily; so does the first call after cudaDeviceReset.
 *  - Kernels are the host functions the program hands to
 *    fakecudart_register_function (what nvcc's registration code does);
 *    each is loaded from a module on its first launch, inside the launch,
 *    as lazy module loading does.
 *  - cudaFree waits for the device (the driver's cuMemFree does);
 *    cudaDeviceReset waits for it, then destroys the context, which fires
 *    CONTEXT_DESTROY_STARTING.
 *  - Errors are kept per thread for cudaGetLastError, which clears them.
 * Only device 0 and the legacy default stream semantics are modelled.
 */
#include "fake.h"

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdlib.h>

#define MAX_FUNCTIONS 64

struct function {
	const void *host;		/* the program's handle: its host stub */
	const char *name;
	struct fakecuda_function_attrs attrs;
	CUfunction f;			/* NULL until loaded into the current context */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static struct function functions[MAX_FUNCTIONS];
static unsigned nfunctions;
static CUcontext primary;		/* NULL before the first call and after a reset */
static CUmodule module;
static __thread cudaError_t last_error;

static void init_driver(void)
{
	cuInit(0);
}

/*
 * BEGIN(cudaMalloc, v3020, &params) starts the runtime call of that
 * callback id, once the driver, and the tool it loads, are initialized.
 */
#define BEGIN(fn, version, params)                                                  \
	(pthread_once(&init_once, init_driver),                                      \
	 fakecuda_runtime_begin(CUPTI_RUNTIME_TRACE_CBID_##fn##_##version, #fn, params))

/* Ends the call: the error, if any, is the thread's last one. */
static cudaError_t end(cudaError_t result)
{
	if (result != cudaSuccess)
		last_error = result;
	return (cudaError_t)fakecuda_runtime_end(result);
}

static cudaError_t from_driver(CUresult r)
{
	switch (r) {
	case CUDA_SUCCESS: return cudaSuccess;
	case CUDA_ERROR_INVALID_VALUE: return cudaErrorInvalidValue;
	case CUDA_ERROR_OUT_OF_MEMORY: return cudaErrorMemoryAllocation;
	case CUDA_ERROR_NOT_INITIALIZED: return cudaErrorInitializationError;
	case CUDA_ERROR_INVALID_CONTEXT: return cudaErrorDeviceUninitialized;
	default: return cudaErrorUnknown;
	}
}

/* Inside a call: the primary context, made on first use and current on this thread. */
static CUresult context(void)
{
	CUresult r = CUDA_SUCCESS;
	CUdevice dev;

	pthread_mutex_lock(&lock);
	if (!primary) {
		r = cuDeviceGet(&dev, 0);
		if (r == CUDA_SUCCESS)
			r = cuCtxCreate(&primary, NULL, 0, dev);
		if (r == CUDA_SUCCESS)
			r = cuModuleLoadData(&module, "fake fatbin");
	}
	if (r == CUDA_SUCCESS)
		r = cuCtxSetCurrent(primary);
	pthread_mutex_unlock(&lock);
	return r;
}

#define TRY(call)                                   \
	do {                                        \
		CUresult r_ = (call);               \
		if (r_ != CUDA_SUCCESS)             \
			return end(from_driver(r_)); \
	} while (0)

int fakecudart_register_function(const void *host, const char *name,
				 const struct fakecuda_function_attrs *attrs)
{
	int ok = 0;

	pthread_mutex_lock(&lock);
	if (host && name && attrs && nfunctions < MAX_FUNCTIONS) {
		functions[nfunctions++] = (struct function){ host, name, *attrs, NULL };
		ok = 1;
	}
	pthread_mutex_unlock(&lock);
	return ok ? 0 : -1;
}

/* The kernel of a host stub, loaded on its first launch in this context. */
static CUresult function_of(const void *host, CUfunction *f)
{
	CUresult r = CUDA_ERROR_INVALID_VALUE;

	pthread_mutex_lock(&lock);
	for (unsigned i = 0; i < nfunctions; i++) {
		if (functions[i].host != host)
			continue;
		r = CUDA_SUCCESS;
		if (!functions[i].f) {
			r = cuModuleGetFunction(&functions[i].f, module, functions[i].name);
			if (r == CUDA_SUCCESS)
				r = fakecuda_set_function_attrs(functions[i].f, &functions[i].attrs);
		}
		*f = functions[i].f;
		break;
	}
	pthread_mutex_unlock(&lock);
	return r;
}

cudaError_t CUDARTAPI cudaMalloc(void **ptr, size_t size)
{
	cudaMalloc_v3020_params params = { ptr, size };
	CUdeviceptr p;

	if (!BEGIN(cudaMalloc, v3020, &params))
		return cudaErrorInitializationError;
	TRY(context());
	if (!ptr)
		return end(cudaErrorInvalidValue);
	TRY(cuMemAlloc(&p, size));
	*ptr = (void *)(uintptr_t)p;
	return end(cudaSuccess);
}

cudaError_t CUDARTAPI cudaFree(void *ptr)
{
	cudaFree_v3020_params params = { ptr };

	if (!BEGIN(cudaFree, v3020, &params))
		return cudaErrorInitializationError;
	TRY(context());
	if (ptr)
		TRY(cuMemFree((CUdeviceptr)(uintptr_t)ptr));
	return end(cudaSuccess);
}

cudaError_t CUDARTAPI cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
	cudaMemcpy_v3020_params params = { dst, src, count, kind };

	if (!BEGIN(cudaMemcpy, v3020, &params))
		return cudaErrorInitializationError;
	TRY(context());
	switch (kind) {
	case cudaMemcpyHostToDevice:
		TRY(cuMemcpyHtoD((CUdeviceptr)(uintptr_t)dst, src, count));
		break;
	case cudaMemcpyDeviceToHost:
		TRY(cuMemcpyDtoH(dst, (CUdeviceptr)(uintptr_t)src, count));
		break;
	case cudaMemcpyDeviceToDevice:
		TRY(cuMemcpyDtoD((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, count));
		break;
	default:
		return end(cudaErrorInvalidMemcpyDirection);
	}
	return end(cudaSuccess);
}

cudaError_t CUDARTAPI cudaMemcpyAsync(void *dst, const void *src, size_t count,
				      enum cudaMemcpyKind kind, cudaStream_t stream)
{
	cudaMemcpyAsync_v3020_params params = { dst, src, count, kind, stream };

	if (!BEGIN(cudaMemcpyAsync, v3020, &params))
		return cudaErrorInitializationError;
	TRY(context());
	switch (kind) {
	case cudaMemcpyHostToDevice:
		TRY(cuMemcpyHtoDAsync((CUdeviceptr)(uintptr_t)dst, src, count, stream));
		break;
	case cudaMemcpyDeviceToHost:
		TRY(cuMemcpyDtoHAsync(dst, (CUdeviceptr)(uintptr_t)src, count, stream));
		break;
	case cudaMemcpyDeviceToDevice:
		TRY(cuMemcpyDtoDAsync((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src,
				      count, stream));
		break;
	default:
		return end(cudaErrorInvalidMemcpyDirection);
	}
	return end(cudaSuccess);
}

cudaError_t CUDARTAPI cudaMemsetAsync(void *ptr, int value, size_t count, cudaStream_t stream)
{
	cudaMemsetAsync_v3020_params params = { ptr, value, count, stream };

	if (!BEGIN(cudaMemsetAsync, v3020, &params))
		return cudaErrorInitializationError;
	TRY(context());
	TRY(cuMemsetD8Async((CUdeviceptr)(uintptr_t)ptr, (unsigned char)value, count, stream));
	return end(cudaSuccess);
}

cudaError_t CUDARTAPI cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
				       size_t smem, cudaStream_t stream)
{
	cudaLaunchKernel_v7000_params params = { func, grid, block, args, smem, stream };
	CUfunction f = NULL;

	if (!BEGIN(cudaLaunchKernel, v7000, &params))
		return cudaErrorInitializationError;
	TRY(context());
	if (function_of(func, &f) != CUDA_SUCCESS)
		return end(cudaErrorInvalidDeviceFunction);
	TRY(cuLaunchKernel(f, grid.x, grid.y, grid.z, block.x, block.y, block.z, (unsigned)smem,
			   stream, args, NULL));
	return end(cudaSuccess);
}

cudaError_t CUDARTAPI cudaStreamCreate(cudaStream_t *stream)
{
	cudaStreamCreate_v3020_params params = { stream };

	if (!BEGIN(cudaStreamCreate, v3020, &params))
		return cudaErrorInitializationError;
	TRY(context());
	TRY(cuStreamCreate(stream, 0));
	return end(cudaSuccess);
}

cudaError_t CUDARTAPI cudaStreamSynchronize(cudaStream_t stream)
{
	cudaStreamSynchronize_v3020_params params = { stream };

	if (!BEGIN(cudaStreamSynchronize, v3020, &params))
		return cudaErrorInitializationError;
	TRY(context());
	TRY(cuStreamSynchronize(stream));
	return end(cudaSuccess);
}

cudaError_t CUDARTAPI cudaDeviceSynchronize(void)
{
	if (!BEGIN(cudaDeviceSynchronize, v3020, NULL))
		return cudaErrorInitializationError;
	TRY(context());
	TRY(cuCtxSynchronize());
	return end(cudaSuccess);
}

cudaError_t CUDARTAPI cudaDeviceReset(void)
{
	if (!BEGIN(cudaDeviceReset, v3020, NULL))
		return cudaErrorInitializationError;
	pthread_mutex_lock(&lock);
	if (primary) {
		cuCtxSetCurrent(primary);
		cuCtxSynchronize();
		cuModuleUnload(module);
		cuCtxDestroy(primary);
		primary = NULL;
		module = NULL;
		for (unsigned i = 0; i < nfunctions; i++)
			functions[i].f = NULL;
	}
	pthread_mutex_unlock(&lock);
	return end(cudaSuccess);
}

cudaError_t CUDARTAPI cudaGetDevice(int *device)
{
	cudaGetDevice_v3020_params params = { device };

	if (!BEGIN(cudaGetDevice, v3020, &params))
		return cudaErrorInitializationError;
	if (!device)
		return end(cudaErrorInvalidValue);
	*device = 0;
	return end(cudaSuccess);
}

cudaError_t CUDARTAPI cudaGetLastError(void)
{
	cudaError_t e = last_error;

	if (!BEGIN(cudaGetLastError, v3020, NULL))
		return cudaErrorInitializationError;
	last_error = cudaSuccess;
	fakecuda_runtime_end(e);
	return e;
}
