/* SPDX-License-Identifier: MIT */
/*
 * The agent's life: InitializeInjection subscribes to CUPTI once per
 * process; a thread flushes CUPTI's buffers every second; exit flushes
 * them all, running work included. A child forked after that gets no
 * thread and never flushes. Whatever fails, the application runs on as if
 * the agent were not there: cuda.status says what became of collection,
 * cuda.warnings lists the failures it lived with, cuda.clock the clock of
 * the GPU records.
 *
 * CUPTI takes one subscriber per process: gtrace subscribes by name, so
 * that a tool coming later is told who holds it, and names the holder
 * when it comes too late itself. An activity-only client (no subscriber)
 * can still take the activity buffers away; the exit flush finds that out.
 */
#include "cuda/agent.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "contract/lanes.h"
#include "contract/meta.h"
#include "cuda/cupti-api.h"
#include "cuda/names.h"

#define MIN_CUPTI_VERSION 130000	/* CUDA 13.0; diagnose warns below Update 1's 130001 */
#define FLUSH_PERIOD_S 1
#define WARNINGS_MAX 512		/* bytes of cuda.warnings */
#define CLOCK_TRIES 5			/* brackets of CUPTI's clock, the narrowest kept */

gtrace_lane *agent_api_lane, *agent_wait_lane, *agent_nvtx_lane;

static int collecting;			/* relaxed: checked on every callback */
/*
 * The exit handler and the flush thread meet here (seq_cst, Dekker style):
 * the handler raises exiting and waits for flushing to drop, so the thread
 * is out of CUPTI before the buffers it may be completing are freed.
 */
static int exiting, flushing;
static pid_t agent_pid;			/* the process that subscribed */
static CUpti_SubscriberHandle subscriber;
static bool status_clean = true;	/* no error said yet */

static pthread_mutex_t warnings_lock = PTHREAD_MUTEX_INITIALIZER;
static char warnings[WARNINGS_MAX];	/* "; "-joined, "..." once full */
static char last_failure[160];		/* the last warning: the status if all failed */

/*
 * Without our timestamp callback records carry CUPTI's own clock:
 * CLOCK_MONOTONIC is that plus clock_offset, measured again per buffer.
 */
static bool cupti_clock;
static int64_t clock_offset;

/*
 * Calls that queue GPU work, as the API callbacks saw them, and how many of
 * them had been seen when the last buffer came: work queued since then
 * must come out at the exit flush, unless another client took the buffers.
 */
static uint64_t work_queued, work_at_last_buffer;
static uint64_t start_ns, last_buffer_ns;

static uint64_t counters[CUDA_COUNTERS];
static uint64_t published[CUDA_COUNTERS];
static pthread_mutex_t publish_lock = PTHREAD_MUTEX_INITIALIZER;

static __thread uint32_t my_tid __attribute__((tls_model("initial-exec")));

uint32_t agent_tid(void)
{
	if (!my_tid)
		my_tid = (uint32_t)syscall(SYS_gettid);
	return my_tid;
}

bool agent_collecting(void)
{
	return __atomic_load_n(&collecting, __ATOMIC_RELAXED);
}

void agent_count(enum cuda_counter c, uint64_t n)
{
	__atomic_add_fetch(&counters[c], n, __ATOMIC_RELAXED);
}

uint64_t agent_counter(enum cuda_counter c)
{
	return __atomic_load_n(&counters[c], __ATOMIC_RELAXED);
}

void agent_publish_counters(void)
{
	pthread_mutex_lock(&publish_lock);
	for (int i = 0; i < CUDA_COUNTERS; i++) {
		uint64_t v = agent_counter(i);

		if (v != published[i]) {
			gtrace_counter_set(cuda_counters[i].name, v);
			published[i] = v;
		}
	}
	pthread_mutex_unlock(&publish_lock);
}

void agent_status(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	gtrace_meta_set(META_CUDA_STATUS, buf);
}

/* Adds to cuda.warnings, which ends in "..." once full. */
static void warn(const char *text)
{
	static bool full;
	size_t len;

	pthread_mutex_lock(&warnings_lock);
	if (!full) {
		len = strlen(warnings);
		full = len + strlen("; ") + strlen(text) + strlen("; ...") >= sizeof(warnings);
		snprintf(warnings + len, sizeof(warnings) - len, "%s%s", len ? "; " : "",
			 full ? "..." : text);
		gtrace_meta_set(META_CUDA_WARNINGS, warnings);
	}
	pthread_mutex_unlock(&warnings_lock);
}

void agent_call_failed(const char *what, CUptiResult r)
{
	char buf[32];

	snprintf(last_failure, sizeof(last_failure), "%s: %s", what,
		 cupti_result_string(r, buf, sizeof(buf)));
	warn(last_failure);
}

/* A failed call that ends collection: the status. */
static void cupti_error(const char *what, CUptiResult r)
{
	char buf[32];

	agent_status(CUDA_STATUS_CUPTI_ERROR ": %s: %s", what,
		     cupti_result_string(r, buf, sizeof(buf)));
	status_clean = false;
}

/* CLOCK_MONOTONIC minus CUPTI's clock, from the narrowest of a few brackets. */
static int measure_clock_offset(void)
{
	uint64_t narrowest = UINT64_MAX;
	int64_t offset = 0;

	for (int i = 0; i < CLOCK_TRIES; i++) {
		uint64_t before = gtrace_now_ns(), cupti_ns, after;

		if (cupti.cuptiGetTimestamp(&cupti_ns) != CUPTI_SUCCESS)
			return -EIO;
		after = gtrace_now_ns();
		if (after - before < narrowest) {
			narrowest = after - before;
			offset = (int64_t)(before + narrowest / 2 - cupti_ns);
		}
	}
	__atomic_store_n(&clock_offset, offset, __ATOMIC_RELAXED);
	return 0;
}

uint64_t agent_gpu_ns(uint64_t cupti_ns)
{
	if (!cupti_ns || !cupti_clock)
		return cupti_ns;	/* 0 stays "no timestamp" */
	return cupti_ns + (uint64_t)__atomic_load_n(&clock_offset, __ATOMIC_RELAXED);
}

void agent_work_queued(void)
{
	__atomic_add_fetch(&work_queued, 1, __ATOMIC_RELAXED);
}

void agent_buffer_arrived(void)
{
	uint64_t queued = __atomic_load_n(&work_queued, __ATOMIC_RELAXED);
	uint64_t seen = __atomic_load_n(&work_at_last_buffer, __ATOMIC_RELAXED);

	/* Buffers complete on several threads at once: the count only grows. */
	while (seen < queued && !__atomic_compare_exchange_n(&work_at_last_buffer, &seen, queued,
							     true, __ATOMIC_RELAXED,
							     __ATOMIC_RELAXED))
		;
	__atomic_store_n(&last_buffer_ns, gtrace_now_ns(), __ATOMIC_RELAXED);
	/* The clocks may have been stepped since: a failed refresh keeps the last offset. */
	if (cupti_clock)
		measure_clock_offset();
}

void agent_stop(const char *status)
{
	__atomic_store_n(&collecting, 0, __ATOMIC_RELAXED);
	gtrace_meta_set(META_CUDA_STATUS, status);
	status_clean = false;
}

uint64_t agent_forced_flush(void)
{
	uint64_t incomplete;

	if (!agent_collecting())
		return 0;
	/* Complete buffers first: what the forced flush adds without an end is still running. */
	cupti.cuptiActivityFlushAll(0);
	activity_forced_begin();
	cupti.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	incomplete = activity_forced_end();
	agent_count(CUDA_CNT_FLUSHES, 1);
	agent_publish_counters();
	return incomplete;
}

void agent_flush(void)
{
	cupti.cuptiActivityFlushAll(0);
	agent_count(CUDA_CNT_FLUSHES, 1);
	agent_publish_counters();
}

/* Buffers reach the recorder within about a second, even from a process killed later. */
static void *flush_main(void *arg)
{
	struct timespec period = { .tv_sec = FLUSH_PERIOD_S };

	for (;;) {
		while (nanosleep(&period, NULL))
			;
		__atomic_store_n(&flushing, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&exiting, __ATOMIC_SEQ_CST) || !agent_collecting()) {
			__atomic_store_n(&flushing, 0, __ATOMIC_SEQ_CST);
			return NULL;
		}
		/* No lock of ours is held: buffer completion may run right here. */
		agent_flush();
		__atomic_store_n(&flushing, 0, __ATOMIC_SEQ_CST);
	}
}

/* Whether the flush thread left CUPTI within a bounded wait: exit must not hang. */
static bool flush_thread_out(void)
{
	struct timespec tick = { .tv_nsec = 1000 * 1000 };

	__atomic_store_n(&exiting, 1, __ATOMIC_SEQ_CST);
	for (int waited_ms = 0; __atomic_load_n(&flushing, __ATOMIC_SEQ_CST); waited_ms++) {
		if (waited_ms == 2000)
			return false;
		nanosleep(&tick, NULL);
	}
	return true;
}

static void start_flush_thread(void)
{
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t t;

	/* The application's signals are for its own threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (!pthread_create(&t, &attr, flush_main, NULL))
		pthread_setname_np(t, "gtrace-cupti");
	else
		warn("no flush thread: buffers flushed at exit only");
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/*
 * The exit flush brought no buffer, yet work was queued after the last
 * one: CUPTI hands the buffers to another client, which registered its
 * own buffer callbacks (cupti-python, nvFuser) after gtrace.
 */
static void check_taken_over(uint64_t queued_before_flush)
{
	uint64_t seen = __atomic_load_n(&work_at_last_buffer, __ATOMIC_RELAXED);
	uint64_t last = __atomic_load_n(&last_buffer_ns, __ATOMIC_RELAXED);
	char since[64] = "from cuInit on";

	if (!status_clean || seen >= queued_before_flush)
		return;
	if (last)
		snprintf(since, sizeof(since), "after %.3f s from cuInit",
			 (double)(last - start_ns) / 1e9);
	agent_status(CUDA_STATUS_TAKEN_OVER ": another CUPTI client took the activity buffers; "
		     "%llu launches, copies and memsets queued %s were not recorded",
		     (unsigned long long)(queued_before_flush - seen), since);
}

static void at_exit(void)
{
	char buf[96];
	uint64_t incomplete, queued;
	bool quiet;

	if (!agent_collecting() || getpid() != agent_pid)
		return;
	quiet = flush_thread_out();
	pcs_finish();
	queued = __atomic_load_n(&work_queued, __ATOMIC_RELAXED);
	incomplete = agent_forced_flush();
	if (incomplete)
		snprintf(buf, sizeof(buf), "incomplete: %llu records still running at exit",
			 (unsigned long long)incomplete);
	gtrace_meta_set(META_CUDA_FLUSH, incomplete ? buf : "clean");
	check_taken_over(queued);
	/* Later buffers (the runtime's own teardown) are not waited for. */
	__atomic_store_n(&collecting, 0, __ATOMIC_RELAXED);
	agent_publish_counters();
	/* A flush thread stuck in CUPTI may still hand back buffers: leave them be. */
	if (quiet) {
		activity_release_pool();
		pcs_release();
	}
}

/* CUDA cannot be used in a child forked after cuInit: nothing to collect or flush. */
static void in_child(void)
{
	__atomic_store_n(&collecting, 0, __ATOMIC_RELAXED);
	my_tid = 0;
}

static bool enable_kinds(void)
{
	static const struct {
		CUpti_ActivityKind kind;
		const char *name;
	} kinds[] = {
		{ CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL" },
		{ CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY" },
		{ CUPTI_ACTIVITY_KIND_MEMCPY2, "MEMCPY2" },
		{ CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET" },
		{ CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "SYNCHRONIZATION" },
		{ CUPTI_ACTIVITY_KIND_OVERHEAD, "OVERHEAD" },
		{ CUPTI_ACTIVITY_KIND_DEVICE, "DEVICE" },
		{ CUPTI_ACTIVITY_KIND_CONTEXT, "CONTEXT" },
	};
	bool any = false;
	char what[64];

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		CUptiResult r = cupti.cuptiActivityEnable(kinds[i].kind);

		if (r == CUPTI_SUCCESS) {
			any = true;
		} else {
			snprintf(what, sizeof(what), "cuptiActivityEnable(%s)", kinds[i].name);
			agent_call_failed(what, r);
		}
	}
	return any;
}

/* Unless GTRACE_CUDA_API=all (gtrace record --cuda-api=all), the hot queries go untraced. */
static void filter_calls(void)
{
	const char *mode = getenv("GTRACE_CUDA_API");
	const struct cuda_api_call *calls;
	char what[96];
	size_t n;

	if (mode && !strcmp(mode, "all"))
		return;
	calls = cuda_api_filtered(&n);
	for (size_t i = 0; i < n; i++) {
		CUptiResult r = cupti.cuptiEnableCallback(0, subscriber, calls[i].domain,
							  calls[i].cbid);

		if (r != CUPTI_SUCCESS) {
			snprintf(what, sizeof(what), "cuptiEnableCallback(0, %s)", calls[i].name);
			agent_call_failed(what, r);
			return;
		}
	}
}

static void enable_domains(void)
{
	static const struct {
		CUpti_CallbackDomain domain;
		const char *name;
	} domains[] = {
		{ CUPTI_CB_DOMAIN_RUNTIME_API, "RUNTIME_API" },
		{ CUPTI_CB_DOMAIN_DRIVER_API, "DRIVER_API" },
		{ CUPTI_CB_DOMAIN_RESOURCE, "RESOURCE" },
		{ CUPTI_CB_DOMAIN_NVTX, "NVTX" },
		{ CUPTI_CB_DOMAIN_STATE, "STATE" },	/* fatal errors */
	};
	char what[64];

	for (size_t i = 0; i < sizeof(domains) / sizeof(domains[0]); i++) {
		CUptiResult r = cupti.cuptiEnableDomain(1, subscriber, domains[i].domain);

		if (r != CUPTI_SUCCESS) {
			snprintf(what, sizeof(what), "cuptiEnableDomain(%s)", domains[i].name);
			agent_call_failed(what, r);
		}
	}
	filter_calls();
}

/* A failure once subscribed: let go, so the application runs untouched. */
static void give_up(const char *what, CUptiResult r)
{
	__atomic_store_n(&collecting, 0, __ATOMIC_RELAXED);
	cupti_error(what, r);
	cupti.cuptiUnsubscribe(subscriber);
}

/* As "gtrace", so that a tool subscribing later is told who holds CUPTI. */
static bool subscribe(void)
{
	char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN] = "";
	CUpti_SubscriberParams params = {
		.structSize = CUpti_SubscriberParams_STRUCT_SIZE,
		.subscriberName = "gtrace",
		.oldSubscriberName = holder,
		.oldSubscriberSize = sizeof(holder),
	};
	CUptiResult r = cupti.cuptiSubscribe_v2(&subscriber, agent_callback, NULL, &params);

	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED && *holder)
		agent_status(CUDA_STATUS_SUBSCRIBER_CONFLICT ": '%s' holds the CUPTI subscription",
			     holder);
	else if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
		agent_status(CUDA_STATUS_SUBSCRIBER_CONFLICT ": another CUPTI client (nsys, ncu, "
			     "a framework profiler) holds the subscription");
	else if (r != CUPTI_SUCCESS)
		cupti_error("cuptiSubscribe_v2", r);
	return r == CUPTI_SUCCESS;
}

/*
 * Records in our clock (CLOCK_MONOTONIC), else in CUPTI's converted: some
 * setups refuse the callback (WSL2, some subscribers).
 */
static bool choose_clock(void)
{
	CUptiResult r = cupti.cuptiActivityRegisterTimestampCallback(gtrace_now_ns);
	char buf[32], clock[128];

	if (r == CUPTI_SUCCESS) {
		gtrace_meta_set(META_CUDA_CLOCK, "callback");
		return true;
	}
	cupti_clock = true;
	if (measure_clock_offset()) {
		give_up("cuptiActivityRegisterTimestampCallback and cuptiGetTimestamp", r);
		return false;
	}
	snprintf(clock, sizeof(clock), "cupti+offset: cuptiActivityRegisterTimestampCallback: %s",
		 cupti_result_string(r, buf, sizeof(buf)));
	gtrace_meta_set(META_CUDA_CLOCK, clock);
	return true;
}

static void start(void)
{
	const char *path = getenv("GTRACE_CUPTI");
	uint32_t version = 0;
	char why[512];
	CUptiResult r;

	agent_pid = getpid();
	/* The lanes first: they connect to the recorder, which hears the status. */
	agent_api_lane = gtrace_lane_get(CUDA_API_LANE_KIND, "CUDA API");
	agent_wait_lane = gtrace_lane_get(CUDA_WAIT_LANE_KIND, "CPU wait");
	agent_nvtx_lane = gtrace_lane_get(NVTX_LANE_KIND, NVTX_LANE_NAME);
	if (!path || !*path)
		path = CUPTI_LIB_PATH;
	if (cupti_api_load(path, why, sizeof(why))) {
		agent_status(CUDA_STATUS_CUPTI_UNAVAILABLE ": %s", why);
		return;
	}
	r = cupti.cuptiGetVersion(&version);
	if (r != CUPTI_SUCCESS) {
		cupti_error("cuptiGetVersion", r);
		return;
	}
	snprintf(why, sizeof(why), "%u", (unsigned)version);
	gtrace_meta_set(META_CUDA_CUPTI_VERSION, why);
	if (version < MIN_CUPTI_VERSION) {
		agent_status(CUDA_STATUS_CUPTI_TOO_OLD ": %u < %u", (unsigned)version,
			     MIN_CUPTI_VERSION);
		return;
	}
	if (origins_init()) {
		agent_status(CUDA_STATUS_CUPTI_ERROR ": no memory for the correlation table");
		return;
	}
	start_ns = gtrace_now_ns();
	if (!subscribe())
		return;
	/* Before any kind is enabled: records carry our clock and kernel tids. */
	if (!choose_clock())
		return;
	r = cupti.cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
	if (r != CUPTI_SUCCESS)
		agent_call_failed("cuptiSetThreadIdType", r);
	r = cupti.cuptiActivityRegisterCallbacks(activity_buffer_requested,
						 activity_buffer_completed);
	if (r != CUPTI_SUCCESS) {
		give_up("cuptiActivityRegisterCallbacks", r);
		return;
	}
	__atomic_store_n(&collecting, 1, __ATOMIC_RELAXED);
	if (!enable_kinds()) {
		__atomic_store_n(&collecting, 0, __ATOMIC_RELAXED);
		agent_status(CUDA_STATUS_CUPTI_ERROR ": %s", last_failure);
		cupti.cuptiUnsubscribe(subscriber);
		return;
	}
	pcs_init();
	enable_domains();
	atexit(at_exit);
	pthread_atfork(NULL, NULL, in_child);
	start_flush_thread();
	if (status_clean)
		agent_status(CUDA_STATUS_ACTIVE);
}

/*
 * Called by the CUDA driver during cuInit (CUDA_INJECTION64_PATH), once or
 * more. Makes no driver call. Returns 1 whatever happened: the agent never
 * stands in the application's way, and reports its failures itself.
 */
__attribute__((visibility("default"))) int InitializeInjection(void);

int InitializeInjection(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, start);
	return 1;
}

/*
 * Called by the NVTX loader at the application's first NVTX call, when
 * NVTX_INJECTION64_PATH names the agent (gtrace record sets it so). Starts
 * the agent if cuInit has not yet, so that ranges opened before it are
 * seen, then hands NVTX to the very CUPTI the agent subscribed to: one
 * loaded by path could be a second copy, deaf to that subscription.
 * Returns 0, NVTX then doing nothing, when the agent has no CUPTI.
 */
__attribute__((visibility("default"))) int
InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t id));

int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t id))
{
	InitializeInjection();
	if (!cupti.InitializeInjectionNvtx2)
		return 0;
	return cupti.InitializeInjectionNvtx2(get_export_table);
}
