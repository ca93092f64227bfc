/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_RECORD_NVML_ABI_H
#define GTRACE_RECORD_NVML_ABI_H

/*
 * The part of NVML's API gtrace calls, declared here from NVIDIA's
 * documentation, so that neither gtrace nor its test double
 * (tests/metrics/fake-nvml.c) needs nvml.h: the ABI of these functions and
 * types has been stable since the _v2 names appeared. Where nvml.h is at
 * hand, tests/metrics/nvml-abi-check.c holds all of this against it at
 * build time.
 */

typedef int nvml_return;		/* nvmlReturn_t */
typedef void *nvml_device;		/* nvmlDevice_t */
typedef int nvml_temperature_sensor;	/* nvmlTemperatureSensors_t */
typedef int nvml_clock_type;		/* nvmlClockType_t */
typedef int nvml_pcie_counter;		/* nvmlPcieUtilCounter_t */

/* X(name, value): the constants used, NVIDIA's names and values. */
#define NVML_CONSTANTS(X)                                                      \
	X(NVML_SUCCESS, 0)                                                     \
	X(NVML_ERROR_UNINITIALIZED, 1)                                         \
	X(NVML_ERROR_INVALID_ARGUMENT, 2)                                      \
	X(NVML_ERROR_NOT_SUPPORTED, 3)                                         \
	X(NVML_ERROR_DRIVER_NOT_LOADED, 9)                                     \
	X(NVML_ERROR_GPU_IS_LOST, 15)                                          \
	X(NVML_ERROR_UNKNOWN, 999)                                             \
	X(NVML_TEMPERATURE_GPU, 0)                                             \
	X(NVML_CLOCK_GRAPHICS, 0)                                              \
	X(NVML_CLOCK_SM, 1)                                                    \
	X(NVML_CLOCK_MEM, 2)                                                   \
	X(NVML_PCIE_UTIL_TX_BYTES, 0)                                          \
	X(NVML_PCIE_UTIL_RX_BYTES, 1)

/* The check compares the list with nvml.h's own constants, of the same names. */
#ifndef GTRACE_NVML_ABI_CHECK
#define NVML_CONSTANT(name, value) name = value,
enum { NVML_CONSTANTS(NVML_CONSTANT) };
#undef NVML_CONSTANT
#endif

struct nvml_utilization {	/* nvmlUtilization_t */
	unsigned int gpu;
	unsigned int memory;
};

struct nvml_memory {		/* nvmlMemory_t */
	unsigned long long total;
	unsigned long long free;
	unsigned long long used;
};

/* X(member, symbol, prototype's parameters): every function called, returning nvml_return. */
#define NVML_FUNCTIONS(X)                                                      \
	X(init, nvmlInit_v2, (void))                                           \
	X(shutdown, nvmlShutdown, (void))                                      \
	X(count, nvmlDeviceGetCount_v2, (unsigned int *))                      \
	X(handle, nvmlDeviceGetHandleByIndex_v2, (unsigned int, nvml_device *)) \
	X(utilization, nvmlDeviceGetUtilizationRates,                          \
	  (nvml_device, struct nvml_utilization *))                            \
	X(memory, nvmlDeviceGetMemoryInfo, (nvml_device, struct nvml_memory *)) \
	X(power, nvmlDeviceGetPowerUsage, (nvml_device, unsigned int *))       \
	X(temperature, nvmlDeviceGetTemperature,                               \
	  (nvml_device, nvml_temperature_sensor, unsigned int *))              \
	X(clock, nvmlDeviceGetClockInfo, (nvml_device, nvml_clock_type, unsigned int *)) \
	X(pcie, nvmlDeviceGetPcieThroughput, (nvml_device, nvml_pcie_counter, unsigned int *))

/*
 * The clock event reasons, named nvmlDeviceGetCurrentClocksThrottleReasons
 * before r535 and nvmlDeviceGetCurrentClocksEventReasons since: either.
 */
#define NVML_REASONS_PARAMS (nvml_device, unsigned long long *)

#endif
