/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_RECORD_NVML_H
#define GTRACE_RECORD_NVML_H

/*
 * GPU metrics through NVML, loaded at run time: libnvidia-ml.so.1 comes
 * with the driver, not with the toolkit, so gtrace neither links it nor
 * needs its header. $GTRACE_NVML names another file to load (the tests'
 * double): as root, only a file of root's that others cannot write; not
 * at all for a gtrace set-user-ID or with file capabilities.
 */

#include <stddef.h>
#include <stdint.h>

/* What NVML is asked for each GPU, in the units the series store. */
enum gpu_quantity {
	GPU_SM_UTIL,		/* % */
	GPU_MEM_UTIL,		/* % */
	GPU_MEM_USED,		/* KiB */
	GPU_MEM_TOTAL,		/* KiB */
	GPU_POWER,		/* mW */
	GPU_TEMP,		/* C */
	GPU_CLOCK_SM,		/* MHz */
	GPU_CLOCK_MEM,		/* MHz */
	GPU_PCIE_RX,		/* KiB/s */
	GPU_PCIE_TX,		/* KiB/s */
	GPU_THROTTLE,		/* NVML's clock event reasons, a mask */
	GPU_QUANTITIES
};

struct nvml;

/*
 * Loads and starts NVML. Returns 0, or -ENOENT (no library), -EPERM (the
 * library of $GTRACE_NVML refused), -ENOSYS (a function it needs is
 * missing), -ENODEV (no GPU) or -EIO (NVML refused to start), with why, a
 * phrase such as "no libnvidia-ml.so.1", in why.
 */
int nvml_open(struct nvml **out, char *why, size_t size);
unsigned nvml_gpus(const struct nvml *nv);

/*
 * Reads GPU i: values[q] for every quantity q read, with bit q set in
 * *have; a quantity not supported or failing this time is left out.
 * Returns 0, or -ENODEV once the GPU is lost (later reads fail alike).
 */
int nvml_read(struct nvml *nv, unsigned i, uint64_t values[GPU_QUANTITIES], uint32_t *have);

void nvml_close(struct nvml *nv);

#endif
