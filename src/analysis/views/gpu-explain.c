/* SPDX-License-Identifier: MIT */
/*
 * Why a recording has the GPU work it has, or none: CUDA collection's and
 * GPU PC sampling's status in words, for diagnose and the commands.
 */
#include "analysis/views/gpu-explain.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract/meta.h"

#define CUPTI_13_0 130000		/* cuptiGetVersion of CUDA 13.0 */
#define CUPTI_13_0_UPDATE_1 130001

/* The text after "prefix: " when value starts with prefix, else NULL. */
static const char *after(const char *value, const char *prefix)
{
	size_t len = strlen(prefix);

	if (strncmp(value, prefix, len) || (value[len] && value[len] != ':'))
		return NULL;
	value += len;
	return *value ? value + 1 + (value[1] == ' ') : value;
}

static bool has_gpu_lanes(const struct model *m)
{
	for (uint32_t lane = 1; lane <= m->t.lanes.len; lane++)
		if (model_lane_class(m, lane) == MODEL_LANE_CUDA_STREAM)
			return true;
	return false;
}

/*
 * CUDA 13.0's first CUPTI is used, but 13.0 Update 1 fixed a crash in
 * cuptiActivityFlushAll and a deadlock in disabling kernel records: said
 * after the explanation, from the version the agent recorded.
 */
static void cupti_note(const struct model *m, char *buf, size_t size)
{
	const char *version = model_meta(m, META_CUDA_CUPTI_VERSION);
	unsigned long v = version ? strtoul(version, NULL, 10) : 0;
	size_t len = strlen(buf);

	if (v >= CUPTI_13_0 && v < CUPTI_13_0_UPDATE_1 && len < size)
		snprintf(buf + len, size - len, "; CUPTI %lu is CUDA 13.0 before Update 1, "
			 "which fixed a crash in flushing records and a deadlock in disabling "
			 "them: if the program hangs or crashes under gtrace, update CUDA", v);
}

const char *cuda_explain(const struct model *m, char *buf, size_t size)
{
	const char *status = model_meta(m, META_CUDA_STATUS);
	const char *injection = model_meta(m, META_CUDA_INJECTION);
	const char *driver = model_meta(m, META_CUDA_DRIVER);
	const char *libcuda = model_meta(m, META_CUDA_LIBCUDA);
	/* Failures the agent lived with: said, never taken for the status. */
	bool warned = model_meta(m, META_CUDA_WARNINGS) != NULL;
	const char *why, *lost;

	if (status) {
		if (after(status, CUDA_STATUS_ACTIVE) && has_gpu_lanes(m))
			snprintf(buf, size, "CUPTI was active: GPU activity was recorded%s",
				 warned ? ", but some CUPTI calls failed (cuda.warnings)" : "");
		else if (after(status, CUDA_STATUS_ACTIVE))
			snprintf(buf, size, "CUPTI was active but the GPU ran no kernel, "
				 "copy or memset%s", warned ? "; some CUPTI calls failed (cuda.warnings)" : "");
		else if ((why = after(status, CUDA_STATUS_TAKEN_OVER)))
			snprintf(buf, size, "another CUPTI client took the activity buffers: "
				 "GPU activity before that was recorded, %s; CPU samples were",
				 (lost = strstr(why, "; ")) ? lost + 2 : why);
		else if ((why = after(status, CUDA_STATUS_SUBSCRIBER_CONFLICT)) && *why == '\'' &&
			 (lost = strchr(why + 1, '\'')))	/* the agent learnt its name */
			snprintf(buf, size, "%.*s held the CUPTI subscription; "
				 "GPU activity was not recorded, CPU samples were",
				 (int)(lost + 1 - why), why);
		else if (why)
			snprintf(buf, size, "another CUPTI client held the subscription (%s); "
				 "GPU activity was not recorded, CPU samples were", why);
		else if ((why = after(status, CUDA_STATUS_CUPTI_TOO_OLD)))
			snprintf(buf, size, "the CUPTI library is too old (%s); "
				 "GPU activity was not recorded, CPU samples were", why);
		else if ((why = after(status, CUDA_STATUS_CUPTI_UNAVAILABLE)))
			snprintf(buf, size, "CUPTI could not be loaded (%s); "
				 "GPU activity was not recorded, CPU samples were", why);
		else if ((why = after(status, CUDA_STATUS_CUPTI_ERROR)))
			snprintf(buf, size, "CUPTI failed (%s); "
				 "GPU activity was not recorded, CPU samples were", why);
		else
			snprintf(buf, size, "the CUDA agent reported '%s'", status);
	} else if (injection && (why = after(injection, STATUS_OFF))) {
		snprintf(buf, size, "GPU collection was off (%s); CPU samples only", why);
	} else if (driver && after(driver, CUDA_DRIVER_NONE)) {
		snprintf(buf, size, "no GPU was available: no NVIDIA driver is loaded on the "
			 "recording machine; CPU samples only");
	} else if (libcuda && after(libcuda, CUDA_LIBCUDA_MISSING)) {
		snprintf(buf, size, "the NVIDIA driver is loaded but libcuda.so.1 cannot be found, "
			 "as in a container started without the driver libraries "
			 "(nvidia-container-toolkit, docker --gpus); CPU samples only");
	} else if (injection) {
		snprintf(buf, size, "no process initialized CUDA; CPU samples only");
	} else {
		return NULL;
	}
	cupti_note(m, buf, size);
	return buf;
}

const char *pc_explain(const struct model *m, char *buf, size_t size)
{
	const char *status = model_meta(m, META_CUDA_PC_STATUS);
	char cuda[512];
	const char *why;

	if (!status && !(m->header.features & TR_FEAT_GPU_PC))
		snprintf(buf, size, "GPU PC sampling was not requested: "
			 "record with 'gtrace record --gpu-pc-sampling'");
	else if (!status)	/* the agent sets one as soon as it starts */
		snprintf(buf, size, "GPU PC sampling was requested, but the CUDA agent never "
			 "started: %s", cuda_explain(m, cuda, sizeof(cuda)) ? cuda
			 : "the recording holds no CUDA information");
	else if ((why = after(status, STATUS_REFUSED)))
		snprintf(buf, size, "the driver refused GPU PC sampling: %s", why);
	else if ((why = after(status, STATUS_OFF)))
		snprintf(buf, size, "GPU PC sampling was off: %s", why);
	else if ((why = after(status, STATUS_ON)))
		snprintf(buf, size, "GPU PC sampling was on (%s) but kept no sample; "
			 "see gtrace diagnose", why);
	else
		snprintf(buf, size, "the CUDA agent reported '%s' for GPU PC sampling", status);
	return buf;
}
