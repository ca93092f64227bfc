/* SPDX-License-Identifier: MIT */
/*
 * Another CUPTI client in the program gtrace records, as a framework
 * profiler would be: preload it (LD_PRELOAD) into a CUDA program. It uses
 * the CUPTI named by OTHER_CLIENT_CUPTI (default libcupti.so.13, found as
 * the program would find it), and does what OTHER_CLIENT_MODE says:
 *
 *   subscribe-first    subscribes as "kineto" when loaded, before cuInit
 *                      (torch.profiler started before the first CUDA call)
 *   subscribe-later    subscribes as "kineto" at the program's first
 *                      cuStreamSynchronize, once gtrace holds CUPTI
 *   activity-takeover  after the program's second cuStreamSynchronize,
 *                      flushes what CUPTI holds (to gtrace), then registers
 *                      its own buffer callbacks and enables kernel records,
 *                      as an activity-only client does (cupti-python,
 *                      nvFuser): later work is its own
 *
 * The result of its subscription goes to the file OTHER_CLIENT_OUT when
 * set: "<CUPTI result number> <holder's name>", the name as CUPTI gave it.
 * Preload it into the CUDA program alone (sh -c 'LD_PRELOAD=... exec
 * PROGRAM'): it acts in whatever process loads it, before that process
 * has loaded libcuda, as in a program linked to the static CUDA runtime,
 * which opens the driver at its first call. cuStreamSynchronize is
 * interposed: it works with programs that call the driver by symbol, like
 * fake-app and real-app's driver mode.
 */
#include <cuda.h>
#include <cupti.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUFFER_BYTES (1u << 20)

static CUptiResult (*subscribe_v2)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *,
				   CUpti_SubscriberParams *);
static CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc,
					 CUpti_BuffersCallbackCompleteFunc);
static CUptiResult (*activity_enable)(CUpti_ActivityKind);
static CUptiResult (*flush_all)(uint32_t);
static const char *mode = "";

static void CUPTIAPI ignore(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
			    const void *data)
{
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = malloc(BUFFER_BYTES);
	*size = *buffer ? BUFFER_BYTES : 0;
	*max_records = 0;
}

/* Buffers handed out before the takeover are the earlier client's: left alone. */
static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
				      size_t size, size_t valid)
{
}

static void subscribe(void)
{
	char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN] = "";
	CUpti_SubscriberParams params = {
		.structSize = CUpti_SubscriberParams_STRUCT_SIZE,
		.subscriberName = "kineto",
		.oldSubscriberName = holder,
		.oldSubscriberSize = sizeof(holder),
	};
	CUpti_SubscriberHandle subscriber;
	CUptiResult r = subscribe_v2(&subscriber, ignore, NULL, &params);
	const char *path = getenv("OTHER_CLIENT_OUT");
	FILE *out;

	if (!path || !(out = fopen(path, "w")))
		return;
	fprintf(out, "%d %s\n", (int)r, holder);
	fclose(out);
}

static void take_over(void)
{
	if (flush_all(0) != CUPTI_SUCCESS ||
	    register_callbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS ||
	    activity_enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS)
		fprintf(stderr, "other client: the takeover failed\n");
}

__attribute__((constructor)) static void at_load(void)
{
	const char *env = getenv("OTHER_CLIENT_MODE");
	const char *path = getenv("OTHER_CLIENT_CUPTI");
	void *cupti;

	if (!env)
		return;
	cupti = dlopen(path && *path ? path : "libcupti.so.13", RTLD_NOW);
	if (!cupti) {
		fprintf(stderr, "other client: %s\n", dlerror());
		return;
	}
	subscribe_v2 = dlsym(cupti, "cuptiSubscribe_v2");
	register_callbacks = dlsym(cupti, "cuptiActivityRegisterCallbacks");
	activity_enable = dlsym(cupti, "cuptiActivityEnable");
	flush_all = dlsym(cupti, "cuptiActivityFlushAll");
	if (!subscribe_v2 || !register_callbacks || !activity_enable || !flush_all) {
		fprintf(stderr, "other client: CUPTI lacks a function\n");
		return;
	}
	mode = env;
	if (!strcmp(mode, "subscribe-first"))
		subscribe();
}

CUresult CUDAAPI cuStreamSynchronize(CUstream stream)
{
	static CUresult (*next)(CUstream);
	static unsigned calls;
	unsigned call = __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
	CUresult r;

	if (!next)
		next = (CUresult (*)(CUstream))dlsym(RTLD_NEXT, "cuStreamSynchronize");
	if (call == 1 && !strcmp(mode, "subscribe-later"))
		subscribe();
	r = next ? next(stream) : CUDA_ERROR_NOT_INITIALIZED;
	if (call == 2 && !strcmp(mode, "activity-takeover"))
		take_over();
	return r;
}
