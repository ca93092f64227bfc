/* SPDX-License-Identifier: MIT */
/*
 * GPU PC sampling (gtrace record --gpu-pc-sampling), per context: CUPTI's
 * PC sampling API enabled when the context is created, switched on and off
 * in duty-cycled windows (pcduty.h) at the launches of the application's
 * threads, and drained there: in kernel-serialized mode every bucket names
 * its launch by correlation id. Buckets go to the recorder as posted
 * messages, stall reasons and function names as interned strings; the
 * code images they point into go once each, from the MODULE_LOADED
 * callback, so that the recording maps offsets to lines offline.
 *
 * Start, Stop and GetData are called at launch boundaries, on the thread
 * that launched, as NVIDIA's samples do: never from a thread of ours,
 * which would race the application's own use of the context.
 */
#include "cuda/agent.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract/attrs.h"
#include "contract/lanes.h"
#include "contract/meta.h"
#include "contract/pcopts.h"
#include "contract/wire.h"
#include "cuda/cupti-api.h"
#include "cuda/pcduty.h"
#include "target/agent-api.h"

#define PC_CONTEXTS 64			/* contexts sampled at once */
#define PC_RECORDS 2048			/* PCs one GetData call may bring */
#define PC_DRAIN_CALLS 1024		/* GetData calls per drain, against a loop */
#define PC_CUBINS_SENT 4096		/* images one process remembers sending */
/* Scratch for PCs with all their stall reasons; CUPTI's default is 1 MiB. */
#define PC_SCRATCH_BYTES (4u << 20)
/*
 * The suffix of the reasons that count again, among a reason's samples,
 * those taken on a cycle when the warp issued nothing: a subset, not more
 * samples.
 */
#define NOT_ISSUED "_not_issued"

struct pc_context {
	CUcontext ctx;
	uint32_t device;
	pthread_mutex_t lock;		/* the launching threads and the exit */
	struct pc_duty duty;
	gtrace_lane *lane;		/* the windows, one lane per device */
	CUpti_PCSamplingData data;	/* what GetData fills */
	CUpti_PCSamplingData flushed;	/* configured: where CUPTI puts what it flushes itself */
	uint32_t *stall_ids;		/* string ids by the device's stall reason index */
	bool *stall_not_issued;		/* by index: counts a subset of another reason's */
	uint32_t stall_slots;
	uint64_t window_pairs, window_samples;
	uint32_t batched;
	struct wire_pc_sample batch[WIRE_PC_SAMPLES_PER_PACKET];
};

static struct pc_opts opts = PC_OPTS_DEFAULT;
static int sampling;			/* relaxed: read at every launch */
static pthread_mutex_t contexts_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pc_context *contexts[PC_CONTEXTS];

static pthread_mutex_t cubins_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t cubins_sent[PC_CUBINS_SENT];
static size_t ncubins_sent;
static uint64_t cubin_bytes;
/* Held while the parts of one image are posted: the recorder takes one image at a time. */
static pthread_mutex_t cubin_post_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * The function names CUPTI handed, each pointer once: CUPTI may hand one
 * again in any later record ("shared across all the records"), so they
 * are freed only at the exit (pcs_release). Open addressing; NULL: empty.
 * Not util/hashmap: it aborts when out of memory, which an agent inside
 * someone else's program must not.
 */
static pthread_mutex_t fn_names_lock = PTHREAD_MUTEX_INITIALIZER;
static char **fn_names;
static size_t fn_slots, fn_used;

/*
 * Locks: contexts_lock before a context's lock, that before fn_names_lock;
 * the target library's (target/internal.h) after any of these.
 */

static void __attribute__((format(printf, 1, 2))) pc_status(const char *fmt, ...);

static void pc_status(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	gtrace_meta_set(META_CUDA_PC_STATUS, buf);
}

void pcs_init(void)
{
	const char *env = getenv(PC_OPTS_ENV);
	char buf[128], why[128];

	if (!env)
		return;
	if (pc_opts_parse(&opts, env, why, sizeof(why))) {
		pc_status(STATUS_OFF ": %s", why);
		return;
	}
	snprintf(buf, sizeof(buf), "%u", opts.period);
	gtrace_meta_set(META_CUDA_PC_PERIOD, buf);
	gtrace_meta_set(META_CUDA_PC_MODE, opts.continuous ? "continuous" : "kernel-serialized");
	snprintf(buf, sizeof(buf), "%u", opts.rate);
	gtrace_meta_set(META_CUDA_PC_RATE, buf);
	pc_status("%s", STATUS_ON ": waiting for a CUDA context");
	__atomic_store_n(&sampling, 1, __ATOMIC_RELAXED);
}

static bool pc_wanted(void)
{
	return __atomic_load_n(&sampling, __ATOMIC_RELAXED);
}

/* What to change when the driver refuses, in one sentence. */
static void refused(const char *what, CUptiResult r)
{
	char buf[32], status[512];

	if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
		pc_status(STATUS_REFUSED ": %s: insufficient privileges: GPU performance counters "
			  "are restricted to administrators; run as root, or load the nvidia "
			  "module with NVreg_RestrictProfilingToAdminUsers=0", what);
	else if (r == CUPTI_ERROR_NOT_SUPPORTED)
		pc_status(STATUS_REFUSED ": %s: this GPU or driver does not support PC sampling "
			  "(compute capability 7.0 or later is needed)", what);
	else if (r == CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES)
		pc_status(STATUS_REFUSED ": %s: the hypervisor does not allow profiling this "
			  "virtual GPU", what);
	else if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
		pc_status(STATUS_REFUSED ": %s: another CUPTI client samples PCs on this context",
			  what);
	else {
		snprintf(status, sizeof(status), STATUS_REFUSED ": %s: %s", what,
			 cupti_result_string(r, buf, sizeof(buf)));
		gtrace_meta_set(META_CUDA_PC_STATUS, status);
	}
	agent_count(CUDA_CNT_PC_REFUSED, 1);
}

static CUptiResult set_attributes(CUcontext ctx, CUpti_PCSamplingConfigurationInfo *info,
				  size_t n)
{
	CUpti_PCSamplingConfigurationInfoParams p = {
		.size = CUpti_PCSamplingConfigurationInfoParamsSize,
		.ctx = ctx,
		.numAttributes = n,
		.pPCSamplingConfigurationInfo = info,
	};

	return cupti.cuptiPCSamplingSetConfigurationAttribute(&p);
}

/* The device's stall reasons, as string ids by index. */
static CUptiResult read_stall_reasons(struct pc_context *c, uint32_t **indexes, size_t *n)
{
	CUpti_PCSamplingGetNumStallReasonsParams np = {
		.size = CUpti_PCSamplingGetNumStallReasonsParamsSize,
		.ctx = c->ctx,
		.numStallReasons = n,
	};
	CUpti_PCSamplingGetStallReasonsParams rp = {
		.size = CUpti_PCSamplingGetStallReasonsParamsSize,
		.ctx = c->ctx,
	};
	CUptiResult r = cupti.cuptiPCSamplingGetNumStallReasons(&np);
	char **names;

	if (r != CUPTI_SUCCESS)
		return r;
	*indexes = calloc(*n + 1, sizeof(**indexes));
	names = calloc(*n + 1, sizeof(*names));
	for (size_t i = 0; names && i < *n; i++)
		if (!(names[i] = calloc(1, CUPTI_STALL_REASON_STRING_SIZE)))
			break;
	if (!*indexes || !names || (*n && !names[*n - 1])) {
		r = CUPTI_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	rp.numStallReasons = *n;
	rp.stallReasonIndex = *indexes;
	rp.stallReasons = names;
	r = cupti.cuptiPCSamplingGetStallReasons(&rp);
	for (size_t i = 0; r == CUPTI_SUCCESS && i < *n; i++)
		if ((*indexes)[i] >= c->stall_slots)
			c->stall_slots = (*indexes)[i] + 1;
	if (r == CUPTI_SUCCESS) {
		c->stall_ids = calloc(c->stall_slots + 1, sizeof(*c->stall_ids));
		c->stall_not_issued = calloc(c->stall_slots + 1, sizeof(*c->stall_not_issued));
		if (!c->stall_ids || !c->stall_not_issued)
			r = CUPTI_ERROR_OUT_OF_MEMORY;
	}
	for (size_t i = 0; r == CUPTI_SUCCESS && i < *n; i++) {
		const struct tgt_string *s;
		size_t len;

		names[i][CUPTI_STALL_REASON_STRING_SIZE - 1] = '\0';
		s = tgt_intern(names[i]);
		len = strlen(names[i]);
		c->stall_ids[(*indexes)[i]] = s ? s->id : 0;
		c->stall_not_issued[(*indexes)[i]] =
			len > strlen(NOT_ISSUED) &&
			!strcmp(names[i] + len - strlen(NOT_ISSUED), NOT_ISSUED);
	}
out:
	for (size_t i = 0; names && i < *n; i++)
		free(names[i]);
	free(names);
	return r;
}

/* A buffer of PC records, each with room for every stall reason. */
static bool make_buffer(CUpti_PCSamplingData *d, size_t nstall)
{
	d->size = sizeof(*d);
	d->collectNumPcs = PC_RECORDS;
	d->pPcData = calloc(PC_RECORDS, sizeof(*d->pPcData));
	if (!d->pPcData)
		return false;
	for (size_t i = 0; i < PC_RECORDS; i++) {
		d->pPcData[i].size = sizeof(d->pPcData[i]);
		d->pPcData[i].stallReason = calloc(nstall + 1, sizeof(CUpti_PCSamplingStallReason));
		if (!d->pPcData[i].stallReason)
			return false;
	}
	return true;
}

static void free_buffer(CUpti_PCSamplingData *d)
{
	for (size_t i = 0; d->pPcData && i < PC_RECORDS; i++)
		free(d->pPcData[i].stallReason);
	free(d->pPcData);
}

static void free_context(struct pc_context *c)
{
	free_buffer(&c->data);
	free_buffer(&c->flushed);
	free(c->stall_ids);
	free(c->stall_not_issued);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static CUptiResult configure(struct pc_context *c)
{
	uint32_t *indexes = NULL;
	size_t nstall = 0;
	CUptiResult r = read_stall_reasons(c, &indexes, &nstall);
	CUpti_PCSamplingConfigurationInfo info[7] = { 0 };

	if (r != CUPTI_SUCCESS) {
		free(indexes);
		return r;
	}
	/* GetData into the configured buffer is refused on some versions: two. */
	if (!make_buffer(&c->data, nstall) || !make_buffer(&c->flushed, nstall)) {
		free(indexes);
		return CUPTI_ERROR_OUT_OF_MEMORY;
	}
	info[0].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
	info[0].attributeData.samplingPeriodData.samplingPeriod = opts.period;
	info[1].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
	info[1].attributeData.collectionModeData.collectionMode =
		opts.continuous ? CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS
				: CUPTI_PC_SAMPLING_COLLECTION_MODE_KERNEL_SERIALIZED;
	info[2].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON;
	info[2].attributeData.stallReasonData.stallReasonCount = nstall;
	info[2].attributeData.stallReasonData.pStallReasonIndex = indexes;
	info[3].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SCRATCH_BUFFER_SIZE;
	info[3].attributeData.scratchBufferSizeData.scratchBufferSize = PC_SCRATCH_BYTES;
	info[4].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL;
	info[4].attributeData.enableStartStopControlData.enableStartStopControl = 1;
	info[5].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_OUTPUT_DATA_FORMAT;
	info[5].attributeData.outputDataFormatData.outputDataFormat =
		CUPTI_PC_SAMPLING_OUTPUT_DATA_FORMAT_PARSED;
	info[6].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
	info[6].attributeData.samplingDataBufferData.samplingDataBuffer = &c->flushed;
	r = set_attributes(c->ctx, info, 7);
	free(indexes);
	return r;
}

/* Hands the batch to the io thread; what it cannot take is counted. */
static void send_batch(struct pc_context *c)
{
	size_t len = c->batched * sizeof(c->batch[0]);

	if (c->batched && tgt_post(WIRE_PC_SAMPLES, c->batched, c->batch, len))
		agent_count(CUDA_CNT_PC_UNSENT, c->batched);
	c->batched = 0;
}

/* One PC record: a bucket per stall reason with samples. */
static void take_record(struct pc_context *c, const CUpti_PCSamplingPCData *pc)
{
	const struct tgt_string *fn = pc->functionName ? tgt_intern(pc->functionName) : NULL;

	for (size_t k = 0; k < pc->stallReasonCount; k++) {
		const CUpti_PCSamplingStallReason *s = &pc->stallReason[k];
		uint32_t stall = s->pcSamplingStallReasonIndex < c->stall_slots
			? c->stall_ids[s->pcSamplingStallReasonIndex] : 0;
		struct wire_pc_sample *row;

		if (!s->samples)
			continue;
		if (!fn || !stall) {
			agent_count(CUDA_CNT_PC_UNSENT, 1);
			continue;
		}
		if (c->batched == WIRE_PC_SAMPLES_PER_PACKET)
			send_batch(c);
		row = &c->batch[c->batched++];
		*row = (struct wire_pc_sample){
			.cubin_crc = pc->cubinCrc,
			.pc = pc->pcOffset,
			.correlation = pc->correlationId,
			.function = fn->id,
			.stall = stall,
			.count = s->samples,
		};
		c->window_pairs++;
		agent_count(CUDA_CNT_PC_PAIRS, 1);
		if (!c->stall_not_issued[s->pcSamplingStallReasonIndex]) {
			c->window_samples += s->samples;
			agent_count(CUDA_CNT_PC_SAMPLES, s->samples);
		}
	}
}

static size_t name_slot(char *const *tab, size_t slots, const char *p)
{
	size_t i = (size_t)(((uintptr_t)p >> 4) * 0x9e3779b97f4a7c15ull) & (slots - 1);

	while (tab[i] && tab[i] != p)
		i = (i + 1) & (slots - 1);
	return i;
}

/* Keeps a name CUPTI handed, to free at the exit; without memory, it is never freed. */
static void keep_name(char *fn)
{
	size_t i;

	pthread_mutex_lock(&fn_names_lock);
	if (2 * (fn_used + 1) > fn_slots) {
		size_t slots = fn_slots ? 2 * fn_slots : 256;
		char **tab = calloc(slots, sizeof(*tab));

		if (!tab) {
			pthread_mutex_unlock(&fn_names_lock);
			return;
		}
		for (i = 0; i < fn_slots; i++)
			if (fn_names[i])
				tab[name_slot(tab, slots, fn_names[i])] = fn_names[i];
		free(fn_names);
		fn_names = tab;
		fn_slots = slots;
	}
	i = name_slot(fn_names, fn_slots, fn);
	if (!fn_names[i]) {
		fn_names[i] = fn;
		fn_used++;
	}
	pthread_mutex_unlock(&fn_names_lock);
}

/* The records of d, emptied; their function names kept (keep_name). */
static void take_buffer(struct pc_context *c, CUpti_PCSamplingData *d)
{
	size_t n = d->totalNumPcs < PC_RECORDS ? d->totalNumPcs : PC_RECORDS;
	char *kept = NULL;

	for (size_t i = 0; i < n; i++) {
		char *fn = d->pPcData[i].functionName;

		take_record(c, &d->pPcData[i]);
		d->pPcData[i].functionName = NULL;
		if (fn && fn != kept)
			keep_name(fn);
		kept = fn;
	}
	d->totalNumPcs = 0;
}

/* Under c->lock: everything CUPTI holds for the context, to the recorder. */
static void drain(struct pc_context *c)
{
	CUpti_PCSamplingGetDataParams p = {
		.size = CUpti_PCSamplingGetDataParamsSize,
		.ctx = c->ctx,
		.pcSamplingData = &c->data,
	};
	char what[64];

	for (int call = 0; call < PC_DRAIN_CALLS; call++) {
		uint64_t t0 = gtrace_now_ns();
		CUptiResult r = cupti.cuptiPCSamplingGetData(&p);

		agent_count(CUDA_CNT_PC_GETDATA, 1);
		/* A full hardware buffer comes as an error, with what it held before. */
		if (r == CUPTI_ERROR_OUT_OF_MEMORY && c->data.hardwareBufferFull) {
			agent_count(CUDA_CNT_PC_BUFFER_FULL, 1);
		} else if (r != CUPTI_SUCCESS) {
			snprintf(what, sizeof(what), "cuptiPCSamplingGetData(GPU%u)", c->device);
			agent_call_failed(what, r);
			break;
		}
		agent_count(CUDA_CNT_PC_DROPPED, c->data.droppedSamples);
		take_buffer(c, &c->data);
		agent_count(CUDA_CNT_PC_GETDATA_NS, gtrace_now_ns() - t0);
		if (!c->data.remainingNumPcs)
			break;
	}
	/* What CUPTI flushed by itself (a module unloaded in continuous mode). */
	take_buffer(c, &c->flushed);
	send_batch(c);
}

/* Under c->lock: a window closes, or opens. */
static void switch_window(struct pc_context *c, enum pc_duty_action a, uint64_t now)
{
	CUpti_PCSamplingStartParams start = {
		.size = CUpti_PCSamplingStartParamsSize,
		.ctx = c->ctx,
	};
	CUpti_PCSamplingStopParams stop = {
		.size = CUpti_PCSamplingStopParamsSize,
		.ctx = c->ctx,
	};
	gtrace_attr attrs[3];
	CUptiResult r;

	if (a == PC_DUTY_START) {
		r = cupti.cuptiPCSamplingStart(&start);
		if (r != CUPTI_SUCCESS) {
			agent_count(CUDA_CNT_PC_WINDOWS_FAILED, 1);
			pc_duty_failed(&c->duty, now);
			return;
		}
		c->window_pairs = c->window_samples = 0;
		return;
	}
	r = cupti.cuptiPCSamplingStop(&stop);
	if (r != CUPTI_SUCCESS)
		agent_call_failed("cuptiPCSamplingStop", r);
	drain(c);
	now = gtrace_now_ns();
	attrs[0] = (gtrace_attr){ .key = CUDA_ATTR_PAIRS, .value = c->window_pairs };
	attrs[1] = (gtrace_attr){ .key = CUDA_ATTR_SAMPLES, .value = c->window_samples };
	attrs[2] = (gtrace_attr){ .key = CUDA_ATTR_DEVICE, .value = c->device };
	gtrace_span_attrs(c->lane, "PC sampling", c->duty.opened_ns, now, NULL, attrs, 3);
	agent_count(CUDA_CNT_PC_WINDOWS, 1);
	pc_duty_closed(&c->duty, now, c->window_pairs);
}

static struct pc_context *find_context(CUcontext ctx, size_t *slot)
{
	for (size_t i = 0; i < PC_CONTEXTS; i++) {
		if (contexts[i] && contexts[i]->ctx == ctx) {
			*slot = i;
			return contexts[i];
		}
	}
	return NULL;
}

void pcs_context_created(CUcontext ctx)
{
	CUpti_PCSamplingEnableParams enable = {
		.size = CUpti_PCSamplingEnableParamsSize,
		.ctx = ctx,
	};
	CUpti_PCSamplingDisableParams disable = {
		.size = CUpti_PCSamplingDisableParamsSize,
		.ctx = ctx,
	};
	struct pc_context *c;
	char name[64];
	CUptiResult r;
	size_t slot;

	if (!pc_wanted() || !ctx)
		return;
	c = calloc(1, sizeof(*c));
	if (!c) {
		pc_status(STATUS_OFF ": %s", "no memory for a context's buffers");
		return;
	}
	c->ctx = ctx;
	pthread_mutex_init(&c->lock, NULL);
	pc_duty_init(&c->duty, opts.rate);
	cupti.cuptiGetDeviceId(ctx, &c->device);
	snprintf(name, sizeof(name), CUDA_DEVICE_LANE_PREFIX "%u PC sampling", c->device);
	c->lane = gtrace_lane_get(CUDA_PC_LANE_KIND, name);
	r = cupti.cuptiPCSamplingEnable(&enable);
	if (r != CUPTI_SUCCESS) {
		refused("cuptiPCSamplingEnable", r);
		free_context(c);
		return;
	}
	r = configure(c);
	if (r != CUPTI_SUCCESS) {
		refused("configuring PC sampling", r);
		goto disable;
	}
	pthread_mutex_lock(&contexts_lock);
	slot = PC_CONTEXTS;
	for (size_t i = 0; i < PC_CONTEXTS && slot == PC_CONTEXTS; i++)
		if (!contexts[i])
			slot = i;
	if (slot < PC_CONTEXTS)
		contexts[slot] = c;
	pthread_mutex_unlock(&contexts_lock);
	if (slot == PC_CONTEXTS) {
		agent_count(CUDA_CNT_PC_REFUSED, 1);
		goto disable;
	}
	pc_status(STATUS_ON ": %s, a sample every 2^%u cycles",
		  opts.continuous ? "continuous" : "kernel-serialized", opts.period);
	return;
disable:
	/* CUPTI may hold c->flushed, its configured buffer: it lets go before c is freed. */
	cupti.cuptiPCSamplingDisable(&disable);
	free_context(c);
}

/* Under contexts_lock or from the one thread that owns c now. */
static void finish_context(struct pc_context *c)
{
	CUpti_PCSamplingDisableParams disable = {
		.size = CUpti_PCSamplingDisableParamsSize,
		.ctx = c->ctx,
	};

	pthread_mutex_lock(&c->lock);
	if (c->duty.open)
		switch_window(c, PC_DUTY_STOP, gtrace_now_ns());
	else
		drain(c);
	/* Disable hands what is left to the configured buffer. */
	cupti.cuptiPCSamplingDisable(&disable);
	take_buffer(c, &c->flushed);
	send_batch(c);
	pthread_mutex_unlock(&c->lock);
}

void pcs_context_destroying(CUcontext ctx)
{
	struct pc_context *c;
	size_t slot;

	pthread_mutex_lock(&contexts_lock);
	/* After pcs_finish, the contexts are finished already. */
	c = pc_wanted() ? find_context(ctx, &slot) : NULL;
	if (c)
		contexts[slot] = NULL;
	pthread_mutex_unlock(&contexts_lock);
	if (!c)
		return;
	finish_context(c);
	free_context(c);
}

void pcs_launched(CUcontext ctx)
{
	struct pc_context *c;
	enum pc_duty_action a;
	uint64_t now;
	size_t slot;

	if (!pc_wanted())
		return;
	pthread_mutex_lock(&contexts_lock);
	/* Again under the lock: pcs_finish may have finished every context meanwhile. */
	c = pc_wanted() ? find_context(ctx, &slot) : NULL;
	if (c)
		pthread_mutex_lock(&c->lock);
	pthread_mutex_unlock(&contexts_lock);
	if (!c)
		return;
	now = gtrace_now_ns();
	a = pc_duty_tick(&c->duty, now);
	if (a != PC_DUTY_NONE)
		switch_window(c, a, now);
	else if (c->duty.open && !opts.continuous)
		drain(c);	/* the kernels before this launch, each under its own id */
	pthread_mutex_unlock(&c->lock);
}

void pcs_finish(void)
{
	pthread_mutex_lock(&contexts_lock);
	/*
	 * Off for good, under the lock: until the exit stops the callbacks, a
	 * launch or a context destroyed on another thread finds none to start,
	 * drain or disable again.
	 */
	__atomic_store_n(&sampling, 0, __ATOMIC_RELAXED);
	for (size_t i = 0; i < PC_CONTEXTS; i++)
		if (contexts[i])
			finish_context(contexts[i]);
	pthread_mutex_unlock(&contexts_lock);
}

void pcs_release(void)
{
	pthread_mutex_lock(&fn_names_lock);
	for (size_t i = 0; i < fn_slots; i++)
		free(fn_names[i]);
	free(fn_names);
	fn_names = NULL;
	fn_slots = fn_used = 0;
	pthread_mutex_unlock(&fn_names_lock);
}

/* Whether crc was sent already; else remembers it. */
static bool sent_before(uint64_t crc, size_t size)
{
	bool seen = false;

	pthread_mutex_lock(&cubins_lock);
	for (size_t i = 0; i < ncubins_sent && !seen; i++)
		seen = cubins_sent[i] == crc;
	if (!seen && ncubins_sent < PC_CUBINS_SENT && cubin_bytes + size <= opts.cubin_max) {
		cubins_sent[ncubins_sent++] = crc;
		cubin_bytes += size;
	} else if (!seen) {
		agent_count(CUDA_CNT_PC_CUBINS_OVER_CAP, 1);
		seen = true;
	}
	pthread_mutex_unlock(&cubins_lock);
	return seen;
}

void pcs_module_loaded(const CUpti_ModuleResourceData *m)
{
	CUpti_GetCubinCrcParams crc = {
		.size = CUpti_GetCubinCrcParamsSize,
		.cubinSize = m ? m->cubinSize : 0,
		.cubin = m ? m->pCubin : NULL,
	};
	struct wire_cubin part;
	uint8_t *msg;

	if (!pc_wanted() || !m || !m->pCubin || !m->cubinSize)
		return;
	if (cupti.cuptiGetCubinCrc(&crc) != CUPTI_SUCCESS) {
		agent_count(CUDA_CNT_PC_CUBINS_UNSENT, 1);
		return;
	}
	if (sent_before(crc.cubinCrc, m->cubinSize))
		return;
	msg = malloc(sizeof(part) + WIRE_CUBIN_PART);
	if (!msg) {
		agent_count(CUDA_CNT_PC_CUBINS_UNSENT, 1);
		return;
	}
	part.crc = crc.cubinCrc;
	part.size = m->cubinSize;
	/* Another thread's module may load meanwhile: its parts must not come between. */
	pthread_mutex_lock(&cubin_post_lock);
	for (part.offset = 0; part.offset < part.size; part.offset += WIRE_CUBIN_PART) {
		size_t len = part.size - part.offset < WIRE_CUBIN_PART ? part.size - part.offset
								       : WIRE_CUBIN_PART;

		memcpy(msg, &part, sizeof(part));
		memcpy(msg + sizeof(part), m->pCubin + part.offset, len);
		/* A part that cannot go leaves the image incomplete: the recorder drops it. */
		if (tgt_post(WIRE_CUBIN, 1, msg, sizeof(part) + len)) {
			agent_count(CUDA_CNT_PC_CUBINS_UNSENT, 1);
			break;
		}
	}
	pthread_mutex_unlock(&cubin_post_lock);
	if (part.offset >= part.size)
		agent_count(CUDA_CNT_PC_CUBINS, 1);
	free(msg);
}
