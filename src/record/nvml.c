/* SPDX-License-Identifier: MIT */
#include "record/nvml.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "record/nvml-abi.h"
#include "util/untrusted.h"
#include "util/xalloc.h"

#define DECLARE(member, symbol, params) nvml_return (*member) params;

struct nvml {
	void *lib;
	NVML_FUNCTIONS(DECLARE)
	nvml_return (*reasons) NVML_REASONS_PARAMS;
	bool started;		/* nvmlInit succeeded: shut it down at the end */
	unsigned gpus;
	nvml_device *devices;
	bool *lost;
};

static int fail(struct nvml *nv, int err, char *why, size_t size, const char *what)
{
	snprintf(why, size, "%s", what);
	nvml_close(nv);
	return err;
}

/*
 * The library $GTRACE_NVML names, loaded, or NULL with *err. As root, the
 * file must be root's and writable by no one else, and what is loaded is
 * the file checked (through its descriptor), whatever the path names by
 * then: the environment may be a user's, kept by sudo -E.
 */
static void *load_named(const char *path, int *err)
{
	static const struct untrusted_rules roots = {
		.follow = true, .owned = true, .owner = 0, .not_writable = true,
	};
	char self[64];
	void *lib;
	int fd;

	*err = -ENOENT;
	if (geteuid())
		return dlopen(path, RTLD_NOW | RTLD_LOCAL);
	fd = untrusted_open(path, &roots, NULL);
	if (fd < 0) {
		*err = fd;
		return NULL;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	lib = dlopen(self, RTLD_NOW | RTLD_LOCAL);
	close(fd);
	return lib;
}

int nvml_open(struct nvml **out, char *why, size_t size)
{
	/* Not taken from the environment of a set-user-ID or file-capability gtrace. */
	const char *path = secure_getenv("GTRACE_NVML");
	struct nvml *nv = xcalloc(1, sizeof(*nv));
	unsigned int count = 0;
	char what[256];
	int err = -ENOENT;

	*out = NULL;
	if (path && *path)
		nv->lib = load_named(path, &err);
	else
		nv->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!nv->lib) {
		if (err == -EPERM)
			snprintf(what, sizeof(what),
				 "GTRACE_NVML '%s' refused: as root, only a file of root's that "
				 "others cannot write", path);
		else
			snprintf(what, sizeof(what), "no %s", path && *path ? path : "libnvidia-ml.so.1");
		return fail(nv, err, why, size, what);
	}
#define RESOLVE(member, symbol, params)                                        \
	*(void **)&nv->member = dlsym(nv->lib, #symbol);                       \
	if (!nv->member)                                                       \
		return fail(nv, -ENOSYS, why, size, "NVML lacks " #symbol);
	NVML_FUNCTIONS(RESOLVE)
#undef RESOLVE
	*(void **)&nv->reasons = dlsym(nv->lib, "nvmlDeviceGetCurrentClocksEventReasons");
	if (!nv->reasons)
		*(void **)&nv->reasons = dlsym(nv->lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
	if (nv->init() != NVML_SUCCESS)
		return fail(nv, -EIO, why, size, "NVML failed to start (nvmlInit)");
	nv->started = true;
	if (nv->count(&count) != NVML_SUCCESS || !count)
		return fail(nv, -ENODEV, why, size, "NVML lists no GPU");
	nv->devices = xcalloc(count, sizeof(*nv->devices));
	nv->lost = xcalloc(count, sizeof(*nv->lost));
	for (unsigned int i = 0; i < count; i++)
		if (nv->handle(i, &nv->devices[i]) != NVML_SUCCESS)
			nv->lost[i] = true;
	nv->gpus = count;
	*out = nv;
	return 0;
}

unsigned nvml_gpus(const struct nvml *nv)
{
	return nv->gpus;
}

/* Keeps one reading: a failure leaves the quantity out of this tick. */
static void take(nvml_return ret, enum gpu_quantity q, uint64_t v, uint64_t values[],
		 uint32_t *have, bool *lost)
{
	if (ret == NVML_ERROR_GPU_IS_LOST)
		*lost = true;
	if (ret != NVML_SUCCESS)
		return;
	values[q] = v;
	*have |= 1u << q;
}

int nvml_read(struct nvml *nv, unsigned i, uint64_t values[GPU_QUANTITIES], uint32_t *have)
{
	nvml_device d = nv->devices[i];
	struct nvml_utilization util;
	struct nvml_memory mem;
	unsigned long long reasons;
	unsigned int v;
	bool lost = false;
	nvml_return r;

	*have = 0;
	if (nv->lost[i])
		return -ENODEV;
	r = nv->utilization(d, &util);
	take(r, GPU_SM_UTIL, util.gpu, values, have, &lost);
	take(r, GPU_MEM_UTIL, util.memory, values, have, &lost);
	r = nv->memory(d, &mem);
	take(r, GPU_MEM_USED, mem.used >> 10, values, have, &lost);
	take(r, GPU_MEM_TOTAL, mem.total >> 10, values, have, &lost);
	r = nv->power(d, &v);
	take(r, GPU_POWER, v, values, have, &lost);
	r = nv->temperature(d, NVML_TEMPERATURE_GPU, &v);
	take(r, GPU_TEMP, v, values, have, &lost);
	r = nv->clock(d, NVML_CLOCK_SM, &v);
	take(r, GPU_CLOCK_SM, v, values, have, &lost);
	r = nv->clock(d, NVML_CLOCK_MEM, &v);
	take(r, GPU_CLOCK_MEM, v, values, have, &lost);
	/* Each PCIe figure is measured over 20 ms: the reading thread waits for it. */
	r = nv->pcie(d, NVML_PCIE_UTIL_RX_BYTES, &v);
	take(r, GPU_PCIE_RX, v, values, have, &lost);
	r = nv->pcie(d, NVML_PCIE_UTIL_TX_BYTES, &v);
	take(r, GPU_PCIE_TX, v, values, have, &lost);
	if (nv->reasons) {
		r = nv->reasons(d, &reasons);
		take(r, GPU_THROTTLE, reasons, values, have, &lost);
	}
	if (lost) {
		nv->lost[i] = true;
		*have = 0;
		return -ENODEV;
	}
	return 0;
}

void nvml_close(struct nvml *nv)
{
	if (!nv)
		return;
	if (nv->started)
		nv->shutdown();
	if (nv->lib)
		dlclose(nv->lib);
	free(nv->devices);
	free(nv->lost);
	free(nv);
}
