/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_RECORD_NVML_ABI_H
#define GTRACE_RECORD_NVML_ABI_H

/*
 * The part of NVML's API gtrace calls, declared here from NVIDIA's
 * documentation, so that neither gtrace nor its test double
 * (tests/metrics/fake-nvml.c) needs nvml.h: the ABI of these functions and
 * types has been stable since the _v2 names appeared.
 */

typedef int nvml_return;	/* nvmlReturn_t */
typedef void *nvml_device;	/* nvmlDevice_t */

enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_UNINITIALIZED = 1,
	NVML_ERROR_INVALID_ARGUMENT = 2,
	NVML_ERROR_NOT_SUPPORTED = 3,
	NVML_ERROR_DRIVER_NOT_LOADED = 9,
	NVML_ERROR_GPU_IS_LOST = 15,
	NVML_ERROR_UNKNOWN = 999,
	NVML_TEMPERATURE_GPU = 0,
	NVML_CLOCK_GRAPHICS = 0,
	NVML_CLOCK_SM = 1,
	NVML_CLOCK_MEM = 2,
	NVML_PCIE_UTIL_TX_BYTES = 0,
	NVML_PCIE_UTIL_RX_BYTES = 1,
};

struct nvml_utilization {	/* nvmlUtilization_t */
	unsigned int gpu;
	unsigned int memory;
};

struct nvml_memory {		/* nvmlMemory_t */
	unsigned long long total;
	unsigned long long free;
	unsigned long long used;
};

#endif
