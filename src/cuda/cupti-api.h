/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_CUDA_CUPTI_API_H
#define GTRACE_CUDA_CUPTI_API_H

/*
 * The agent's one way to CUPTI: every function it calls, resolved with
 * dlsym from the libcupti it loads at run time (never linked), into one
 * table. Each pointer has the type of the header's prototype.
 */

#include <stddef.h>
#include <stdint.h>

#include <cupti.h>
#include <cupti_pcsampling.h>

/*
 * Every CUPTI function the agent uses, one per line: tests read these
 * lines to check the names against the installed libcupti (nm -D).
 */
#define CUPTI_FUNCTIONS(X)			\
	X(cuptiGetVersion)			\
	X(cuptiGetResultString)			\
	X(cuptiSubscribe_v2)			\
	X(cuptiUnsubscribe)			\
	X(cuptiEnableDomain)			\
	X(cuptiEnableCallback)			\
	X(cuptiActivityRegisterTimestampCallback) \
	X(cuptiSetThreadIdType)			\
	X(cuptiActivityRegisterCallbacks)	\
	X(cuptiActivityEnable)			\
	X(cuptiActivityGetNextRecord)		\
	X(cuptiActivityGetNumDroppedRecords)	\
	X(cuptiActivityFlushAll)		\
	X(cuptiGetStreamIdEx)			\
	X(cuptiGetTimestamp)			\
	X(cuptiGetDeviceId)			\
	X(cuptiPCSamplingEnable)		\
	X(cuptiPCSamplingDisable)		\
	X(cuptiPCSamplingSetConfigurationAttribute) \
	X(cuptiPCSamplingGetNumStallReasons)	\
	X(cuptiPCSamplingGetStallReasons)	\
	X(cuptiPCSamplingStart)			\
	X(cuptiPCSamplingStop)			\
	X(cuptiPCSamplingGetData)		\
	X(cuptiGetCubinCrc)

/*
 * The NVTX loader's entry point in CUPTI's own copy, NULL if it lacks one.
 * No header declares it (nvtx3 has only the pointer's type), so it is
 * resolved apart from CUPTI_FUNCTIONS, whose names the headers type.
 */
typedef int cupti_nvtx_init_fn(const void *(*get_export_table)(uint32_t id));

#define CUPTI_API_FIELD(name) __typeof__(name) *name;
struct cupti_api {
	CUPTI_FUNCTIONS(CUPTI_API_FIELD)
	cupti_nvtx_init_fn *InitializeInjectionNvtx2;
};
#undef CUPTI_API_FIELD

extern struct cupti_api cupti;

/* The names in CUPTI_FUNCTIONS, ended by NULL. */
extern const char *const cupti_function_names[];

/*
 * Finds the CUPTI at path already loaded in the process (or one with its
 * SONAME), else loads it, and fills the table from that one copy, NVTX's
 * entry point included. Returns 0, or -ENOENT with the reason in why:
 * dlopen's error, or "missing <function>".
 */
int cupti_api_load(const char *path, char *why, size_t size);

/* CUPTI's words for result r, or its number when it has none. */
const char *cupti_result_string(CUptiResult r, char *buf, size_t size);

#endif
