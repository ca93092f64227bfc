/* SPDX-License-Identifier: MIT */
/*
 * Holds gtrace's declarations of NVML (src/record/nvml-abi.h), which the
 * recorder and its test double share, against NVIDIA's nvml.h: sizes and
 * member offsets of the structures, the values of the constants, and the
 * prototype of every function called. Compiled, never run: a mismatch
 * fails the build (tests/metrics/metrics.mk compiles it where nvml.h is).
 */
#include <nvml.h>
#include <stddef.h>

#define GTRACE_NVML_ABI_CHECK
#include "record/nvml-abi.h"

#define SAME_SIZE(ours, theirs)                                                \
	_Static_assert(sizeof(ours) == sizeof(theirs), #ours " is not the size of " #theirs);
#define SAME_OFFSET(ours, theirs, member)                                      \
	_Static_assert(offsetof(ours, member) == offsetof(theirs, member),     \
		       #ours "." #member " is not where " #theirs " has it");

SAME_SIZE(nvml_return, nvmlReturn_t)
SAME_SIZE(nvml_device, nvmlDevice_t)
SAME_SIZE(nvml_temperature_sensor, nvmlTemperatureSensors_t)
SAME_SIZE(nvml_clock_type, nvmlClockType_t)
SAME_SIZE(nvml_pcie_counter, nvmlPcieUtilCounter_t)

SAME_SIZE(struct nvml_utilization, nvmlUtilization_t)
SAME_OFFSET(struct nvml_utilization, nvmlUtilization_t, gpu)
SAME_OFFSET(struct nvml_utilization, nvmlUtilization_t, memory)
SAME_SIZE(struct nvml_memory, nvmlMemory_t)
SAME_OFFSET(struct nvml_memory, nvmlMemory_t, total)
SAME_OFFSET(struct nvml_memory, nvmlMemory_t, free)
SAME_OFFSET(struct nvml_memory, nvmlMemory_t, used)

/* The names are nvml.h's own: each must have the value gtrace gives it. */
#define SAME_VALUE(name, value) _Static_assert(name == value, #name " is not " #value);
NVML_CONSTANTS(SAME_VALUE)

/*
 * Each function as gtrace calls it, its parameters written in NVIDIA's
 * types (gtrace's are the same sizes, checked above), must be the type of
 * nvml.h's function: a parameter missing, added, moved or of another type
 * fails.
 */
#define nvml_device nvmlDevice_t
#define nvml_temperature_sensor nvmlTemperatureSensors_t
#define nvml_clock_type nvmlClockType_t
#define nvml_pcie_counter nvmlPcieUtilCounter_t
#define nvml_utilization nvmlUtilization_st
#define nvml_memory nvmlMemory_st
#define SAME_PROTOTYPE(member, symbol, params)                                 \
	_Static_assert(_Generic(&symbol, nvmlReturn_t (*) params: 1, default: 0), \
		       #symbol " is not declared as nvml.h declares it");
NVML_FUNCTIONS(SAME_PROTOTYPE)
SAME_PROTOTYPE(reasons, nvmlDeviceGetCurrentClocksEventReasons, NVML_REASONS_PARAMS)
SAME_PROTOTYPE(reasons, nvmlDeviceGetCurrentClocksThrottleReasons, NVML_REASONS_PARAMS)
