/* SPDX-License-Identifier: MIT */
/*
 * What the agent knows of each device: its limits, for occupancy, and the
 * facts diagnose shows. Two sources, whichever comes first: the driver
 * and CUPTI's DEVICE records, which lack the opt-in and reserved shared
 * memory. The driver is asked at CU_INIT_FINISHED, where it may still
 * refuse (initialization is not over), and again at each context's
 * creation until it has answered; never inside InitializeInjection. A
 * device's limits are written once and then only read, by any thread.
 */
#include "cuda/agent.h"

#include <dlfcn.h>
#include <stdio.h>

#include <cuda.h>

#include "contract/meta.h"

#define MAX_DEVICES 64

enum { SLOT_EMPTY, SLOT_WRITING, SLOT_READY };

struct device_slot {
	int state;			/* acquire/release */
	struct cuda_device_limits limits;
};

static struct device_slot devices[MAX_DEVICES];

/* The driver functions the agent calls, found in the process, never loaded. */
static struct {
	__typeof__(cuDriverGetVersion) *get_version;
	__typeof__(cuDeviceGetCount) *get_count;
	__typeof__(cuDeviceGet) *get;
	__typeof__(cuDeviceGetAttribute) *get_attribute;
	__typeof__(cuDeviceGetName) *get_name;
	__typeof__(cuDeviceTotalMem) *total_mem;
} drv;

static void publish_meta(uint32_t id, const char *name, const struct cuda_device_limits *l,
			 uint64_t mem_bytes)
{
	char key[32], value[384];

	snprintf(key, sizeof(key), META_CUDA_DEVICE_PREFIX "%u", (unsigned)id);
	snprintf(value, sizeof(value), "%s, sm %d.%d, %d SMs, %llu MiB", name, l->cc_major,
		 l->cc_minor, l->sms, (unsigned long long)(mem_bytes >> 20));
	gtrace_meta_set(key, value);
}

/* The SMs' clock: with the SM count and the PC sampling period, samples become time. */
static void publish_clock(uint32_t id, int khz)
{
	char key[48], value[32];

	if (khz <= 0)
		return;
	snprintf(key, sizeof(key), META_CUDA_DEVICE_PREFIX "%u" META_CUDA_DEVICE_CLOCK_SUFFIX,
		 (unsigned)id);
	snprintf(value, sizeof(value), "%d", khz);
	gtrace_meta_set(key, value);
}

/* The first complete description of a device wins; later ones are ignored. */
static bool publish(uint32_t id, const struct cuda_device_limits *l, const char *name,
		    uint64_t mem_bytes)
{
	int expected = SLOT_EMPTY;

	if (id >= MAX_DEVICES ||
	    !__atomic_compare_exchange_n(&devices[id].state, &expected, SLOT_WRITING, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return false;
	devices[id].limits = *l;
	__atomic_store_n(&devices[id].state, SLOT_READY, __ATOMIC_RELEASE);
	publish_meta(id, name, l, mem_bytes);
	return true;
}

const struct cuda_device_limits *devices_limits(uint32_t id)
{
	if (id >= MAX_DEVICES || __atomic_load_n(&devices[id].state, __ATOMIC_ACQUIRE) != SLOT_READY)
		return NULL;
	return &devices[id].limits;
}

void devices_from_record(const CUpti_ActivityDevice5 *d)
{
	struct cuda_device_limits l = {
		.cc_major = (int)d->computeCapabilityMajor,
		.cc_minor = (int)d->computeCapabilityMinor,
		.sms = (int)d->numMultiprocessors,
		.warp_size = (int)d->numThreadsPerWarp,
		.max_threads_per_block = (int)d->maxThreadsPerBlock,
		.max_threads_per_sm = (int)(d->maxWarpsPerMultiprocessor * d->numThreadsPerWarp),
		.regs_per_block = (int)d->maxRegistersPerBlock,
		.regs_per_sm = (int)d->maxRegistersPerMultiprocessor,
		.smem_per_block = d->maxSharedMemoryPerBlock,
		.smem_per_sm = d->maxSharedMemoryPerMultiprocessor,
	};

	publish(d->id, &l, d->name ? d->name : "unknown device", d->globalMemorySize);
}

static void *driver_symbol(void *lib, const char *name)
{
	void *p = lib ? dlsym(lib, name) : NULL;

	return p ? p : dlsym(RTLD_DEFAULT, name);
}

static bool find_driver(void)
{
	/* The application loaded it, maybe RTLD_LOCAL: look it up by name first. */
	void *lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);

	drv.get_version = (__typeof__(drv.get_version))driver_symbol(lib, "cuDriverGetVersion");
	drv.get_count = (__typeof__(drv.get_count))driver_symbol(lib, "cuDeviceGetCount");
	drv.get = (__typeof__(drv.get))driver_symbol(lib, "cuDeviceGet");
	drv.get_attribute = (__typeof__(drv.get_attribute))driver_symbol(lib, "cuDeviceGetAttribute");
	drv.get_name = (__typeof__(drv.get_name))driver_symbol(lib, "cuDeviceGetName");
	drv.total_mem = (__typeof__(drv.total_mem))driver_symbol(lib, "cuDeviceTotalMem_v2");
	if (lib)
		dlclose(lib);	/* NOLOAD took a reference; the application holds its own */
	return drv.get_count && drv.get && drv.get_attribute;
}

static int attribute(CUdevice dev, CUdevice_attribute a)
{
	int v = 0;

	return drv.get_attribute(&v, a, dev) == CUDA_SUCCESS ? v : 0;
}

/* Whether the device's limits are known, from the driver or before. */
static bool query_limits(int ordinal, CUdevice dev)
{
	struct cuda_device_limits l = {
		.cc_major = attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
		.cc_minor = attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR),
		.sms = attribute(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
		.warp_size = attribute(dev, CU_DEVICE_ATTRIBUTE_WARP_SIZE),
		.max_threads_per_block = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK),
		.max_threads_per_sm =
			attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR),
		.regs_per_block = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK),
		.regs_per_sm = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR),
		.smem_per_block =
			(size_t)attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK),
		.smem_per_sm = (size_t)attribute(
			dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR),
		.smem_per_block_optin = (size_t)attribute(
			dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN),
		.smem_reserved_per_block = (size_t)attribute(
			dev, CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK),
	};
	char name[256] = "unknown device";
	size_t mem = 0;

	/* Incomplete answers: asked again at the next context, or the DEVICE record. */
	if (!l.cc_major || !l.sms || !l.warp_size || !l.max_threads_per_sm || !l.regs_per_sm ||
	    !l.smem_per_sm)
		return devices_limits((uint32_t)ordinal) != NULL;
	if (drv.get_name && drv.get_name(name, (int)sizeof(name), dev) != CUDA_SUCCESS)
		snprintf(name, sizeof(name), "unknown device");
	name[sizeof(name) - 1] = '\0';
	if (drv.total_mem && drv.total_mem(&mem, dev) != CUDA_SUCCESS)
		mem = 0;
	if (publish((uint32_t)ordinal, &l, name, mem))
		publish_clock((uint32_t)ordinal, attribute(dev, CU_DEVICE_ATTRIBUTE_CLOCK_RATE));
	return true;
}

static bool query_device(int ordinal)
{
	CUdevice dev = 0;

	return drv.get(&dev, ordinal) == CUDA_SUCCESS && query_limits(ordinal, dev);
}

void devices_query_driver(void)
{
	static int queried;		/* once every device's limits were read */
	bool all = true;
	char buf[32];
	int count = 0, version = 0;

	if (__atomic_load_n(&queried, __ATOMIC_ACQUIRE) || !find_driver() ||
	    drv.get_count(&count) != CUDA_SUCCESS)
		return;
	for (int i = 0; i < count && i < MAX_DEVICES; i++)
		all &= query_device(i);
	if (!all || __atomic_exchange_n(&queried, 1, __ATOMIC_ACQ_REL))
		return;
	if (drv.get_version && drv.get_version(&version) == CUDA_SUCCESS) {
		snprintf(buf, sizeof(buf), "%d.%d", version / 1000, version % 1000 / 10);
		gtrace_meta_set(META_CUDA_DRIVER_VERSION, buf);
	}
}
