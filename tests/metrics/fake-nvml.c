/* SPDX-License-Identifier: MIT */
/*
 * A test double of NVML, built as libnvidia-ml.so.1: the functions
 * src/record/nvml.c calls, on fake GPUs whose readings a test scripts. The
 * recorder loads it through $GTRACE_NVML.
 *
 * FAKE_NVML holds the script, items separated by ';' (white space around
 * items, keys and values is ignored), read at nvmlInit_v2:
 *
 *   gpus=N          the number of GPUs (default 1; 0: nvmlDeviceGetCount_v2
 *                   answers 0)
 *   init=fail       nvmlInit_v2 fails with NVML_ERROR_DRIVER_NOT_LOADED (9);
 *   init=CODE       or with that nvmlReturn_t (0: it succeeds)
 *   KEY=V1,V2,...   the values of one quantity, in NVML's units: the
 *                   first read takes V1, the next V2, and so on; the last
 *                   value repeats. A value 'x' makes that read fail with
 *                   NVML_ERROR_UNKNOWN (999), every read after too when
 *                   it is the last. Numbers are C's
 *                   (0x10 is 16). KEY is one of:
 *                     sm              utilization.gpu, %         (default 0)
 *                     memutil         utilization.memory, %      (0)
 *                     mem_used_mib    memory used, MiB           (0)
 *                     mem_total_mib   memory in all, MiB         (81920)
 *                     power_mw        power draw, mW             (60000)
 *                     temp            temperature, C             (35)
 *                     clock_sm        SM clock, MHz              (1980)
 *                     clock_mem       memory clock, MHz          (2619)
 *                     pcie_rx         PCIe received, KB/s        (0)
 *                     pcie_tx         PCIe sent, KB/s            (0)
 *                     throttle        clock event reasons, mask  (0x1, idle)
 *                   sm and memutil come from one call: an 'x' in either
 *                   fails it; mem_used_mib and mem_total_mib likewise
 *                   (free memory is total minus used).
 *   notsup=F,F,...  functions that answer NVML_ERROR_NOT_SUPPORTED (3), by
 *                   these names: util, mem, power, temp, clock (both),
 *                   clock_sm, clock_mem, pcie (both), pcie_rx, pcie_tx,
 *                   throttle
 *   lost_after=N    a GPU answers N utilization reads; from the next one
 *                   on, every call on it answers NVML_ERROR_GPU_IS_LOST (15)
 *
 * KEY@G=..., notsup@G=... and lost_after@G=... apply to GPU G alone, and
 * win over the items without @ whatever their order; those apply to
 * every GPU. Example: two GPUs, GPU 1 busier and without a power sensor,
 * GPU 0 lost after its third reading:
 *
 *   FAKE_NVML="gpus=2; sm=10,20,30; sm@1=70,80,90; notsup@1=power; lost_after@0=3"
 *
 * A script it cannot read makes nvmlInit_v2 print why on stderr and fail
 * with NVML_ERROR_INVALID_ARGUMENT (2). FAKE_NVML_LOG, when set, names a
 * file to which each nvmlInit_v2 and nvmlShutdown appends a line: the
 * function's name and what it returned ("nvmlInit_v2 0").
 *
 * Its types and functions are declared as gtrace's (src/record/nvml-abi.h),
 * not from NVIDIA's header; one lock keeps the state whole for a
 * reading thread or several.
 * Built with -DFAKE_NVML_OLD_NAMES, it exports the clock event reasons
 * under their name before r535, nvmlDeviceGetCurrentClocksThrottleReasons,
 * instead of nvmlDeviceGetCurrentClocksEventReasons.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/nvml-abi.h"

#define EXPORT __attribute__((visibility("default")))

#define DECLARE(member, symbol, params) EXPORT nvml_return symbol params;
NVML_FUNCTIONS(DECLARE)
#undef DECLARE
EXPORT const char *nvmlErrorString(nvml_return result);
#ifdef FAKE_NVML_OLD_NAMES
#define REASONS_NAME nvmlDeviceGetCurrentClocksThrottleReasons
#else
#define REASONS_NAME nvmlDeviceGetCurrentClocksEventReasons
#endif
EXPORT nvml_return REASONS_NAME NVML_REASONS_PARAMS;

/* The scripted quantities, in the order of the table of keys below. */
enum quantity {
	Q_SM, Q_MEMUTIL, Q_MEM_USED, Q_MEM_TOTAL, Q_POWER, Q_TEMP, Q_CLOCK_SM,
	Q_CLOCK_MEM, Q_PCIE_RX, Q_PCIE_TX, Q_THROTTLE, QUANTITIES
};

static const struct {
	const char *key;
	unsigned long long value;	/* when the script gives none */
} quantities[QUANTITIES] = {
	[Q_SM] = { "sm", 0 },
	[Q_MEMUTIL] = { "memutil", 0 },
	[Q_MEM_USED] = { "mem_used_mib", 0 },
	[Q_MEM_TOTAL] = { "mem_total_mib", 81920 },
	[Q_POWER] = { "power_mw", 60000 },
	[Q_TEMP] = { "temp", 35 },
	[Q_CLOCK_SM] = { "clock_sm", 1980 },
	[Q_CLOCK_MEM] = { "clock_mem", 2619 },
	[Q_PCIE_RX] = { "pcie_rx", 0 },
	[Q_PCIE_TX] = { "pcie_tx", 0 },
	[Q_THROTTLE] = { "throttle", 0x1 },
};

/* The names of notsup: each stands for the quantities in its mask. */
static const struct {
	const char *name;
	unsigned mask;
} functions[] = {
	{ "util", 1u << Q_SM | 1u << Q_MEMUTIL },
	{ "mem", 1u << Q_MEM_USED | 1u << Q_MEM_TOTAL },
	{ "power", 1u << Q_POWER },
	{ "temp", 1u << Q_TEMP },
	{ "clock", 1u << Q_CLOCK_SM | 1u << Q_CLOCK_MEM },
	{ "clock_sm", 1u << Q_CLOCK_SM },
	{ "clock_mem", 1u << Q_CLOCK_MEM },
	{ "pcie", 1u << Q_PCIE_RX | 1u << Q_PCIE_TX },
	{ "pcie_rx", 1u << Q_PCIE_RX },
	{ "pcie_tx", 1u << Q_PCIE_TX },
	{ "throttle", 1u << Q_THROTTLE },
};

#define MAX_GPUS 16
#define MAX_VALUES 64
#define FAILS UINT64_MAX	/* the value 'x' */

struct sequence {
	uint64_t values[MAX_VALUES];
	unsigned n;		/* 0: the default value */
	unsigned next;		/* the next read's index (stays at n - 1) */
};

struct gpu {
	struct sequence seq[QUANTITIES];
	unsigned notsup;	/* quantities answering NOT_SUPPORTED */
	long lost_after;	/* -1: never */
	unsigned long util_reads;
	bool lost;		/* from the utilization read after lost_after */
};

/*
 * What the script says for every GPU (scopes[0]) or for GPU g alone
 * (scopes[1 + g]): a GPU takes the first, then the second over it.
 */
struct scope {
	bool has_seq[QUANTITIES];
	struct sequence seq[QUANTITIES];
	bool has_notsup;
	unsigned notsup;
	bool has_lost;
	long lost_after;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned started;	/* nvmlInit_v2 calls not yet shut down */
static unsigned gpu_count;
static struct gpu gpus[MAX_GPUS];

static void log_call(const char *name, nvml_return ret)
{
	const char *path = getenv("FAKE_NVML_LOG");
	FILE *f;

	if (!path || !*path || !(f = fopen(path, "a")))
		return;
	fprintf(f, "%s %d\n", name, ret);
	fclose(f);
}

static int bad(const char *item, const char *why)
{
	fprintf(stderr, "fake-nvml: FAKE_NVML item '%s': %s\n", item, why);
	return -EINVAL;
}

static bool number(const char *s, unsigned long long *out)
{
	char *end;

	if (!*s || *s == '-')
		return false;
	errno = 0;
	*out = strtoull(s, &end, 0);
	return !errno && !*end;
}

/* V1,V2,...: into seq. */
static int parse_values(const char *item, char *list, struct sequence *seq)
{
	char *save = NULL;

	seq->n = 0;
	for (char *v = strtok_r(list, ",", &save); v; v = strtok_r(NULL, ",", &save)) {
		unsigned long long value;

		if (seq->n == MAX_VALUES)
			return bad(item, "more than 64 values");
		if (!strcmp(v, "x"))
			value = FAILS;
		else if (!number(v, &value) || value == FAILS)
			return bad(item, "not a number or 'x'");
		seq->values[seq->n++] = value;
	}
	return seq->n ? 0 : bad(item, "no value");
}

static int parse_notsup(const char *item, char *list, unsigned *mask)
{
	char *save = NULL;

	*mask = 0;
	for (char *f = strtok_r(list, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
		size_t i;

		for (i = 0; i < sizeof(functions) / sizeof(functions[0]); i++)
			if (!strcmp(f, functions[i].name))
				break;
		if (i == sizeof(functions) / sizeof(functions[0]))
			return bad(item, "not a function's name");
		*mask |= functions[i].mask;
	}
	return 0;
}

static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = 0;
	return s;
}

static int parse_item(char *item, struct scope *scopes, nvml_return *init)
{
	char copy[512], *key, *value, *at;
	struct scope *scope = &scopes[0];
	unsigned long long n;
	size_t q;

	snprintf(copy, sizeof(copy), "%s", item);
	value = strchr(item, '=');
	if (!value)
		return bad(copy, "no '='");
	*value++ = 0;
	key = trim(item);
	value = trim(value);
	if (!strcmp(key, "gpus")) {
		if (!number(value, &n) || n > MAX_GPUS)
			return bad(copy, "not a number of GPUs from 0 to 16");
		gpu_count = (unsigned)n;
		return 0;
	}
	if (!strcmp(key, "init")) {
		if (!strcmp(value, "fail"))
			*init = NVML_ERROR_DRIVER_NOT_LOADED;
		else if (number(value, &n) && n <= 999)
			*init = (nvml_return)n;
		else
			return bad(copy, "neither 'fail' nor a return code");
		return 0;
	}
	at = strchr(key, '@');
	if (at) {
		*at++ = 0;
		if (!number(at, &n) || n >= MAX_GPUS)
			return bad(copy, "not a GPU from 0 to 15 after '@'");
		scope = &scopes[1 + n];
	}
	if (!strcmp(key, "notsup")) {
		scope->has_notsup = true;
		return parse_notsup(copy, value, &scope->notsup);
	}
	if (!strcmp(key, "lost_after")) {
		if (!number(value, &n) || n > LONG_MAX)
			return bad(copy, "not a number of reads");
		scope->has_lost = true;
		scope->lost_after = (long)n;
		return 0;
	}
	for (q = 0; q < QUANTITIES; q++)
		if (!strcmp(key, quantities[q].key))
			break;
	if (q == QUANTITIES)
		return bad(copy, "unknown key");
	scope->has_seq[q] = true;
	return parse_values(copy, value, &scope->seq[q]);
}

static void apply(const struct scope *scope, struct gpu *g)
{
	for (size_t q = 0; q < QUANTITIES; q++)
		if (scope->has_seq[q])
			g->seq[q] = scope->seq[q];
	if (scope->has_notsup)
		g->notsup = scope->notsup;
	if (scope->has_lost)
		g->lost_after = scope->lost_after;
}

/* Reads FAKE_NVML into gpus[]; returns what nvmlInit_v2 answers. */
static nvml_return parse_script(void)
{
	static struct scope scopes[1 + MAX_GPUS];
	const char *env = getenv("FAKE_NVML");
	nvml_return init = NVML_SUCCESS;
	char *script, *save = NULL;
	int err = 0;

	memset(scopes, 0, sizeof(scopes));
	gpu_count = 1;
	script = strdup(env ? env : "");
	if (!script)
		return NVML_ERROR_UNKNOWN;
	for (char *item = strtok_r(script, ";", &save); item && !err;
	     item = strtok_r(NULL, ";", &save))
		if (*trim(item))
			err = parse_item(item, scopes, &init);
	free(script);
	if (err)
		return NVML_ERROR_INVALID_ARGUMENT;
	memset(gpus, 0, sizeof(gpus));
	for (unsigned i = 0; i < MAX_GPUS; i++) {
		gpus[i].lost_after = -1;
		apply(&scopes[0], &gpus[i]);
		apply(&scopes[1 + i], &gpus[i]);
	}
	return init;
}

nvml_return nvmlInit_v2(void)
{
	nvml_return ret;

	pthread_mutex_lock(&lock);
	ret = started ? NVML_SUCCESS : parse_script();
	if (ret == NVML_SUCCESS)
		started++;
	pthread_mutex_unlock(&lock);
	log_call("nvmlInit_v2", ret);
	return ret;
}

nvml_return nvmlShutdown(void)
{
	nvml_return ret = NVML_SUCCESS;

	pthread_mutex_lock(&lock);
	if (started)
		started--;
	else
		ret = NVML_ERROR_UNINITIALIZED;
	pthread_mutex_unlock(&lock);
	log_call("nvmlShutdown", ret);
	return ret;
}

const char *nvmlErrorString(nvml_return result)
{
	switch (result) {
	case NVML_SUCCESS: return "Success";
	case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
	case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
	case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
	case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
	case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
	default: return "Unknown Error";
	}
}

nvml_return nvmlDeviceGetCount_v2(unsigned int *count)
{
	nvml_return ret = NVML_SUCCESS;

	pthread_mutex_lock(&lock);
	if (!started)
		ret = NVML_ERROR_UNINITIALIZED;
	else if (!count)
		ret = NVML_ERROR_INVALID_ARGUMENT;
	else
		*count = gpu_count;
	pthread_mutex_unlock(&lock);
	return ret;
}

nvml_return nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvml_device *device)
{
	nvml_return ret = NVML_SUCCESS;

	pthread_mutex_lock(&lock);
	if (!started)
		ret = NVML_ERROR_UNINITIALIZED;
	else if (index >= gpu_count || !device)
		ret = NVML_ERROR_INVALID_ARGUMENT;
	else
		*device = &gpus[index];
	pthread_mutex_unlock(&lock);
	return ret;
}

/* The GPU of a handle, with the lock held; NULL with *ret set if none. */
static struct gpu *begin(nvml_device device, const void *out, nvml_return *ret)
{
	struct gpu *g = device;

	pthread_mutex_lock(&lock);
	*ret = NVML_SUCCESS;
	if (!started)
		*ret = NVML_ERROR_UNINITIALIZED;
	else if (!out || g < gpus || g >= gpus + gpu_count)
		*ret = NVML_ERROR_INVALID_ARGUMENT;
	else if (g->lost)
		*ret = NVML_ERROR_GPU_IS_LOST;
	return *ret == NVML_SUCCESS ? g : NULL;
}

static nvml_return end(nvml_return ret)
{
	pthread_mutex_unlock(&lock);
	return ret;
}

/* The next value of quantity q of g; FAILS for an 'x'. */
static uint64_t next(struct gpu *g, enum quantity q)
{
	struct sequence *s = &g->seq[q];
	uint64_t v;

	if (!s->n)
		return quantities[q].value;
	v = s->values[s->next];
	if (s->next + 1 < s->n)
		s->next++;
	return v;
}

/*
 * The values of quantities a and b (b may be a again) of g, read together
 * by one call: NOT_SUPPORTED if either is, UNKNOWN if either read an 'x'.
 */
static nvml_return read_pair(struct gpu *g, enum quantity a, enum quantity b, uint64_t *va,
			     uint64_t *vb)
{
	if (g->notsup & (1u << a | 1u << b))
		return NVML_ERROR_NOT_SUPPORTED;
	*va = next(g, a);
	*vb = b == a ? *va : next(g, b);
	return *va == FAILS || *vb == FAILS ? NVML_ERROR_UNKNOWN : NVML_SUCCESS;
}

static nvml_return read_one(nvml_device device, enum quantity q, unsigned int *out)
{
	nvml_return ret;
	struct gpu *g = begin(device, out, &ret);
	uint64_t v;

	if (g && (ret = read_pair(g, q, q, &v, &v)) == NVML_SUCCESS)
		*out = (unsigned int)v;
	return end(ret);
}

nvml_return nvmlDeviceGetUtilizationRates(nvml_device device,
					  struct nvml_utilization *utilization)
{
	nvml_return ret;
	struct gpu *g = begin(device, utilization, &ret);
	uint64_t sm, mem;

	if (g && g->lost_after >= 0 && g->util_reads >= (unsigned long)g->lost_after) {
		g->lost = true;
		ret = NVML_ERROR_GPU_IS_LOST;
	} else if (g && (ret = read_pair(g, Q_SM, Q_MEMUTIL, &sm, &mem)) == NVML_SUCCESS) {
		utilization->gpu = (unsigned int)sm;
		utilization->memory = (unsigned int)mem;
		g->util_reads++;
	}
	return end(ret);
}

nvml_return nvmlDeviceGetMemoryInfo(nvml_device device, struct nvml_memory *memory)
{
	nvml_return ret;
	struct gpu *g = begin(device, memory, &ret);
	uint64_t used, total;

	if (g && (ret = read_pair(g, Q_MEM_USED, Q_MEM_TOTAL, &used, &total)) == NVML_SUCCESS) {
		memory->used = used << 20;
		memory->total = total << 20;
		memory->free = total > used ? (total - used) << 20 : 0;
	}
	return end(ret);
}

nvml_return nvmlDeviceGetPowerUsage(nvml_device device, unsigned int *power)
{
	return read_one(device, Q_POWER, power);
}

nvml_return nvmlDeviceGetTemperature(nvml_device device, nvml_temperature_sensor sensor,
				     unsigned int *temp)
{
	if (sensor != NVML_TEMPERATURE_GPU)
		return NVML_ERROR_INVALID_ARGUMENT;
	return read_one(device, Q_TEMP, temp);
}

nvml_return nvmlDeviceGetClockInfo(nvml_device device, nvml_clock_type type, unsigned int *clock)
{
	switch (type) {
	case NVML_CLOCK_GRAPHICS:
	case NVML_CLOCK_SM:
		return read_one(device, Q_CLOCK_SM, clock);
	case NVML_CLOCK_MEM:
		return read_one(device, Q_CLOCK_MEM, clock);
	default:
		return NVML_ERROR_INVALID_ARGUMENT;
	}
}

nvml_return nvmlDeviceGetPcieThroughput(nvml_device device, nvml_pcie_counter counter,
					unsigned int *value)
{
	switch (counter) {
	case NVML_PCIE_UTIL_RX_BYTES:
		return read_one(device, Q_PCIE_RX, value);
	case NVML_PCIE_UTIL_TX_BYTES:
		return read_one(device, Q_PCIE_TX, value);
	default:
		return NVML_ERROR_INVALID_ARGUMENT;
	}
}

nvml_return REASONS_NAME(nvml_device device, unsigned long long *reasons)
{
	nvml_return ret;
	struct gpu *g = begin(device, reasons, &ret);
	uint64_t v;

	if (g && (ret = read_pair(g, Q_THROTTLE, Q_THROTTLE, &v, &v)) == NVML_SUCCESS)
		*reasons = v;
	return end(ret);
}
