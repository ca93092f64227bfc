/* SPDX-License-Identifier: MIT */
/*
 * CUPTI's callbacks, on the threads that make the calls. At API enter the
 * call's correlation id is tied to (tid, now) for the GPU records that come
 * later; at exit the call becomes a span on the "CUDA API" lane, and a call
 * that waits for the GPU also one on the "CPU wait" lane. A driver call
 * made inside a runtime call of the same thread gets no span of its own:
 * the runtime call's covers it, and only its origin is kept, for the GPU
 * records that may name it. This is the hot path of every launch: two
 * clock reads, a table store, a span.
 */
#include "cuda/agent.h"

#include <stdio.h>

#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>

#include "contract/attrs.h"
#include "contract/meta.h"
#include "cuda/cupti-api.h"
#include "cuda/names.h"

#define CLASS_SLOTS 1024		/* per domain, above the ids CUDA 13 has */

/*
 * What each call is, by callback id, learnt from its name on first use
 * (name lookups are too slow for every launch); 0 while unknown.
 */
enum { CLASS_KNOWN = 0x80, CLASS_QUEUES_WORK = 0x40, CLASS_WAIT = 0x03 };
static uint8_t class_by_cbid[CUDA_API_DOMAINS - 1][CLASS_SLOTS];

static uint8_t call_class(int domain, CUpti_CallbackId cbid, const char *name)
{
	uint8_t *slot = cbid < CLASS_SLOTS ? &class_by_cbid[domain - 1][cbid] : NULL;
	uint8_t c = slot ? __atomic_load_n(slot, __ATOMIC_RELAXED) : 0;

	if (!c) {
		c = CLASS_KNOWN | (uint8_t)cuda_api_waits(name) |
		    (cuda_api_queues_work(name) ? CLASS_QUEUES_WORK : 0);
		if (slot)
			__atomic_store_n(slot, c, __ATOMIC_RELAXED);
	}
	return c;
}

/*
 * The stream a stream synchronize waits for, by CUPTI's id; false for other
 * calls. All four take the stream as their first parameter.
 */
static bool waited_stream(int domain, CUpti_CallbackId cbid, const CUpti_CallbackData *d,
			  uint32_t *id)
{
	uint8_t per_thread;

	if (domain == CUDA_API_RUNTIME && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020)
		per_thread = 0;
	else if (domain == CUDA_API_RUNTIME &&
		 cbid == CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000)
		per_thread = 1;
	else if (domain == CUDA_API_DRIVER && cbid == CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize)
		per_thread = 0;
	else if (domain == CUDA_API_DRIVER && cbid == CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz)
		per_thread = 1;
	else
		return false;
	return d->functionParams &&
	       cupti.cuptiGetStreamIdEx(d->context, *(const CUstream *)d->functionParams,
					per_thread, id) == CUPTI_SUCCESS;
}

static void api_enter(int domain, CUpti_CallbackId cbid, const CUpti_CallbackData *d)
{
	uint64_t now = gtrace_now_ns();

	origins_put(d->correlationId, agent_tid(), now);
	if (d->correlationData)
		*d->correlationData = now;
	/*
	 * What finished before the reset, out before the reset forgets it.
	 * Not forced: work still running would come out with no end, while
	 * the reset waits for it and the context's destruction flushes it.
	 */
	if (domain == CUDA_API_RUNTIME && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020)
		agent_flush();
}

/* Runtime calls of this thread under way: the driver calls they make are their work. */
static _Thread_local unsigned runtime_calls_open;
/* Set while the agent itself queries the driver: those calls are not the program's. */
static _Thread_local bool agent_in_driver;

static void api_exit(int domain, CUpti_CallbackId cbid, const CUpti_CallbackData *d,
		     enum cuda_wait wait)
{
	uint64_t end = gtrace_now_ns();
	gtrace_origin o = { .tid = agent_tid() };
	const char *name = d->functionName ? d->functionName : "[unknown CUDA call]";
	gtrace_attr a[] = {
		{ .key = CUDA_ATTR_CORRELATION, .value = d->correlationId },
		{ .key = CUDA_ATTR_API_DOMAIN, .value = (uint64_t)domain },
	};
	uint32_t stream;

	if (domain == CUDA_API_DRIVER && runtime_calls_open)
		return;
	if (d->correlationData && *d->correlationData) {
		o.ts_ns = *d->correlationData;
	} else if (!origins_get(d->correlationId, &o)) {
		return;		/* its enter was not seen: no start to show */
	}
	gtrace_span_attrs(agent_api_lane, name, o.ts_ns, end, &o, a, 2);
	if (wait == CUDA_WAIT_NONE)
		return;
	/* The wait span: the correlation, then the stream or that the wait is implicit. */
	if (wait == CUDA_WAIT_IMPLICIT) {
		a[1].key = CUDA_ATTR_IMPLICIT;
		a[1].value = 1;
		gtrace_span_attrs(agent_wait_lane, name, o.ts_ns, end, &o, a, 2);
	} else if (waited_stream(domain, cbid, d, &stream)) {
		a[1].key = CUDA_ATTR_STREAM;
		a[1].value = stream;
		gtrace_span_attrs(agent_wait_lane, name, o.ts_ns, end, &o, a, 2);
	} else {
		gtrace_span_attrs(agent_wait_lane, name, o.ts_ns, end, &o, a, 1);
	}
}

/* Whether the call succeeded: a failed launch queued nothing. */
static bool succeeded(const CUpti_CallbackData *d)
{
	return d->functionReturnValue && !*(const int *)d->functionReturnValue;
}

static void api_call(int domain, CUpti_CallbackId cbid, const CUpti_CallbackData *d)
{
	uint8_t c;

	if (agent_in_driver)
		return;
	if (d->callbackSite == CUPTI_API_ENTER) {
		api_enter(domain, cbid, d);
		runtime_calls_open += domain == CUDA_API_RUNTIME;
	} else if (d->callbackSite == CUPTI_API_EXIT) {
		runtime_calls_open -= domain == CUDA_API_RUNTIME && runtime_calls_open;
		c = call_class(domain, cbid, d->functionName);
		/* Counted once: a runtime call's driver calls are that call's work. */
		if ((c & CLASS_QUEUES_WORK) && (domain == CUDA_API_RUNTIME || !runtime_calls_open) &&
		    succeeded(d)) {
			agent_work_queued();
			pcs_launched(d->context);
		}
		api_exit(domain, cbid, d, (enum cuda_wait)(c & CLASS_WAIT));
	}
}

static void resource(CUpti_CallbackId cbid, const CUpti_ResourceData *d)
{
	switch (cbid) {
	case CUPTI_CBID_RESOURCE_CU_INIT_FINISHED:
	case CUPTI_CBID_RESOURCE_CONTEXT_CREATED:
		/* Driver calls are allowed from here on, not inside InitializeInjection. */
		agent_in_driver = true;
		devices_query_driver();
		agent_in_driver = false;
		if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED)
			pcs_context_created(d->context);
		break;
	case CUPTI_CBID_RESOURCE_MODULE_LOADED:
		pcs_module_loaded(d->resourceDescriptor);
		break;
	case CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING:
		pcs_context_destroying(d->context);
		agent_forced_flush();
		break;
	default:
		break;
	}
}

static void state(CUpti_CallbackId cbid, const CUpti_StateData *d)
{
	char status[512];

	if (cbid != CUPTI_CBID_STATE_FATAL_ERROR)
		return;
	snprintf(status, sizeof(status), CUDA_STATUS_CUPTI_ERROR ": fatal error: %s",
		 d && d->notification.message ? d->notification.message : "no message");
	agent_stop(status);
}

void CUPTIAPI agent_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
			     const void *data)
{
	if (!agent_collecting() || !data)
		return;
	switch (domain) {
	case CUPTI_CB_DOMAIN_RUNTIME_API:
		api_call(CUDA_API_RUNTIME, cbid, data);
		break;
	case CUPTI_CB_DOMAIN_DRIVER_API:
		api_call(CUDA_API_DRIVER, cbid, data);
		break;
	case CUPTI_CB_DOMAIN_RESOURCE:
		resource(cbid, data);
		break;
	case CUPTI_CB_DOMAIN_NVTX:
		nvtx_callback(cbid, data);
		break;
	case CUPTI_CB_DOMAIN_STATE:
		state(cbid, data);
		break;
	default:
		break;
	}
}
