/* SPDX-License-Identifier: MIT */
#include "cuda/names.h"

#include <stdio.h>
#include <string.h>

#include <cupti_activity.h>
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>

#include "contract/attrs.h"
#include "contract/spans.h"

_Static_assert((int)CUDA_COPY_HTOD == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD &&
	       (int)CUDA_COPY_DTOA == CUPTI_ACTIVITY_MEMCPY_KIND_DTOA &&
	       (int)CUDA_COPY_PTOP == CUPTI_ACTIVITY_MEMCPY_KIND_PTOP,
	       "copy.kind holds CUPTI's kinds");
_Static_assert((int)CUDA_MEMORY_PAGEABLE == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE &&
	       (int)CUDA_MEMORY_PINNED == CUPTI_ACTIVITY_MEMORY_KIND_PINNED &&
	       (int)CUDA_MEMORY_MANAGED_STATIC == CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC,
	       "copy.src and copy.dst hold CUPTI's memory kinds");

const char *cuda_copy_name(uint32_t kind, char *buf, size_t size)
{
	if (kind < CUDA_COPY_KINDS)
		return cuda_copy_spans[kind];
	snprintf(buf, size, CUDA_COPY_SPAN_PREFIX "%u]", (unsigned)kind);
	return buf;
}

/* name is prefix, then nothing or a version suffix ("_v2", "_ptsz"). */
static bool is_function(const char *name, const char *prefix)
{
	size_t n = strlen(prefix);

	return !strncmp(name, prefix, n) && (name[n] == '\0' || name[n] == '_');
}

enum cuda_wait cuda_api_waits(const char *name)
{
	static const char *const syncs[] = {
		"cudaDeviceSynchronize", "cudaThreadSynchronize", "cudaStreamSynchronize",
		"cudaEventSynchronize", "cuCtxSynchronize", "cuStreamSynchronize",
		"cuEventSynchronize",
	};
	static const char *const frees[] = {
		"cudaFree", "cudaFreeHost", "cudaFreeArray", "cudaFreeMipmappedArray",
		"cuMemFree", "cuMemFreeHost", "cuArrayDestroy",
	};

	if (!name)
		return CUDA_WAIT_NONE;
	for (size_t i = 0; i < sizeof(syncs) / sizeof(syncs[0]); i++)
		if (is_function(name, syncs[i]))
			return CUDA_WAIT_EXPLICIT;
	for (size_t i = 0; i < sizeof(frees) / sizeof(frees[0]); i++)
		if (is_function(name, frees[i]))
			return CUDA_WAIT_IMPLICIT;
	/* cudaMemcpy, cudaMemcpy2D, cudaMemcpyToSymbol, cuMemcpyHtoD_v2, cuMemcpyPeer... */
	if ((!strncmp(name, "cudaMemcpy", 10) || !strncmp(name, "cuMemcpy", 8)) &&
	    !strstr(name, "Async"))
		return CUDA_WAIT_EXPLICIT;
	return CUDA_WAIT_NONE;
}

#define RUNTIME(fn) { CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_##fn, #fn }
#define DRIVER(fn) { CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_##fn, #fn }

/* Every versioned id of each function, as cupti_*_cbid.h of CUDA 13.0 lists them. */
static const struct cuda_api_call filtered[] = {
	/* The current device and how many there are. */
	RUNTIME(cudaGetDevice_v3020),
	RUNTIME(cudaGetDeviceCount_v3020),
	RUNTIME(cudaDeviceGetAttribute_v5000),
	RUNTIME(cudaDriverGetVersion_v3020),
	RUNTIME(cudaRuntimeGetVersion_v3020),
	DRIVER(cuDeviceGet),
	DRIVER(cuDeviceGetCount),
	DRIVER(cuDeviceGetAttribute),
	DRIVER(cuDriverGetVersion),
	/* The thread's context, read or set again before every call. */
	DRIVER(cuCtxGetCurrent),
	DRIVER(cuCtxSetCurrent),
	DRIVER(cuCtxGetDevice),
	DRIVER(cuCtxGetDevice_v2),
	DRIVER(cuDevicePrimaryCtxGetState),
	/* The sticky error state, checked after every launch. */
	RUNTIME(cudaGetLastError_v3020),
	RUNTIME(cudaPeekAtLastError_v3020),
	/* Stream capture state, checked by frameworks before launches. */
	RUNTIME(cudaStreamIsCapturing_v10000),
	RUNTIME(cudaStreamIsCapturing_ptsz_v10000),
	RUNTIME(cudaStreamGetCaptureInfo_v10010),
	RUNTIME(cudaStreamGetCaptureInfo_ptsz_v10010),
	RUNTIME(cudaStreamGetCaptureInfo_v2_v11030),
	RUNTIME(cudaStreamGetCaptureInfo_v2_ptsz_v11030),
	RUNTIME(cudaStreamGetCaptureInfo_v12030),
	RUNTIME(cudaStreamGetCaptureInfo_ptsz_v12030),
	DRIVER(cuStreamIsCapturing),
	DRIVER(cuStreamIsCapturing_ptsz),
	DRIVER(cuStreamGetCaptureInfo),
	DRIVER(cuStreamGetCaptureInfo_ptsz),
	DRIVER(cuStreamGetCaptureInfo_v2),
	DRIVER(cuStreamGetCaptureInfo_v2_ptsz),
	DRIVER(cuStreamGetCaptureInfo_v3),
	DRIVER(cuStreamGetCaptureInfo_v3_ptsz),
	/* Attributes of functions, kernels and pointers. */
	RUNTIME(cudaFuncGetAttributes_v3020),
	RUNTIME(cudaPointerGetAttributes_v4000),
	DRIVER(cuFuncGetAttribute),
	DRIVER(cuKernelGetAttribute),
	DRIVER(cuPointerGetAttribute),
	DRIVER(cuPointerGetAttributes),
	/* Entry points, looked up by the runtime and by libraries. */
	DRIVER(cuGetProcAddress),
	DRIVER(cuGetProcAddress_v2),
};

const struct cuda_api_call *cuda_api_filtered(size_t *n)
{
	*n = sizeof(filtered) / sizeof(filtered[0]);
	return filtered;
}

bool cuda_api_queues_work(const char *name)
{
	static const char *const prefixes[] = {
		"cuLaunch", "cudaLaunch", "cuGraphLaunch", "cudaGraphLaunch",
		"cuMemcpy", "cudaMemcpy", "cuMemset", "cudaMemset",
	};

	/* A host function runs on the CPU: CUPTI has no record of it. */
	if (!name || strstr(name, "HostFunc"))
		return false;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}
