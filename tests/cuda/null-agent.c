/* SPDX-License-Identifier: MIT */
/*
 * A CUDA injection that does nothing with what it collects: the baseline
 * of bench/cuda-launch.sh. It asks CUPTI ($GTRACE_CUPTI) for what gtrace's
 * agent asks (the API, resource, NVTX and state callbacks; the same
 * activity kinds; its clock and thread ids), then ignores the callbacks
 * and walks each buffer without looking at a record. The difference from
 * a run under gtrace record is the agent's own cost, CUPTI's (here the
 * fake's) left out.
 */
#include <cupti.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>

#define BUFFER_BYTES (8u << 20)

int InitializeInjection(void);

static struct {
	__typeof__(cuptiSubscribe) *subscribe;
	__typeof__(cuptiEnableDomain) *enable_domain;
	__typeof__(cuptiActivityRegisterTimestampCallback) *register_timestamp;
	__typeof__(cuptiSetThreadIdType) *set_thread_id_type;
	__typeof__(cuptiActivityRegisterCallbacks) *register_callbacks;
	__typeof__(cuptiActivityEnable) *enable;
	__typeof__(cuptiActivityGetNextRecord) *next_record;
	__typeof__(cuptiActivityFlushAll) *flush_all;
} api;

static void CUPTIAPI ignore(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
			    const void *data)
{
}

static uint64_t CUPTIAPI timestamp(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void CUPTIAPI requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = malloc(BUFFER_BYTES);
	*size = *buffer ? BUFFER_BYTES : 0;
	*max_records = 0;
}

static void CUPTIAPI completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
			       size_t valid)
{
	CUpti_Activity *record = NULL;

	if (buffer)
		while (api.next_record(buffer, valid, &record) == CUPTI_SUCCESS)
			;
	free(buffer);
}

static void flush_at_exit(void)
{
	api.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

int InitializeInjection(void)
{
	static const CUpti_ActivityKind kinds[] = {
		CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
		CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET,
		CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_OVERHEAD,
		CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONTEXT,
	};
	static const CUpti_CallbackDomain domains[] = {
		CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_CB_DOMAIN_RESOURCE,
		CUPTI_CB_DOMAIN_NVTX, CUPTI_CB_DOMAIN_STATE,
	};
	const char *path = getenv("GTRACE_CUPTI");
	CUpti_SubscriberHandle subscriber;
	void *lib = dlopen(path ? path : "libcupti.so.13", RTLD_NOW);

	if (!lib)
		return 0;
	api.subscribe = (__typeof__(api.subscribe))dlsym(lib, "cuptiSubscribe");
	api.enable_domain = (__typeof__(api.enable_domain))dlsym(lib, "cuptiEnableDomain");
	api.register_timestamp = (__typeof__(api.register_timestamp))dlsym(
		lib, "cuptiActivityRegisterTimestampCallback");
	api.set_thread_id_type = (__typeof__(api.set_thread_id_type))dlsym(lib,
									   "cuptiSetThreadIdType");
	api.register_callbacks = (__typeof__(api.register_callbacks))dlsym(
		lib, "cuptiActivityRegisterCallbacks");
	api.enable = (__typeof__(api.enable))dlsym(lib, "cuptiActivityEnable");
	api.next_record = (__typeof__(api.next_record))dlsym(lib, "cuptiActivityGetNextRecord");
	api.flush_all = (__typeof__(api.flush_all))dlsym(lib, "cuptiActivityFlushAll");
	if (!api.subscribe || !api.enable_domain || !api.register_timestamp ||
	    !api.set_thread_id_type || !api.register_callbacks || !api.enable ||
	    !api.next_record || !api.flush_all)
		return 0;
	if (api.subscribe(&subscriber, ignore, NULL) != CUPTI_SUCCESS)
		return 0;
	for (size_t i = 0; i < sizeof(domains) / sizeof(domains[0]); i++)
		api.enable_domain(1, subscriber, domains[i]);
	api.register_timestamp(timestamp);
	api.set_thread_id_type(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
	api.register_callbacks(requested, completed);
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		api.enable(kinds[i]);
	atexit(flush_at_exit);
	return 1;
}
