/* SPDX-License-Identifier: MIT */
#include "cuda/names.h"

#include <stdio.h>
#include <string.h>

/* Indexed by CUpti_ActivityMemcpyKind. */
static const char *const copy_names[] = {
	"[CUDA memcpy 0]",
	"[CUDA memcpy HtoD]",
	"[CUDA memcpy DtoH]",
	"[CUDA memcpy 3]",	/* HtoA */
	"[CUDA memcpy 4]",	/* AtoH */
	"[CUDA memcpy 5]",	/* AtoA */
	"[CUDA memcpy 6]",	/* AtoD */
	"[CUDA memcpy 7]",	/* DtoA */
	"[CUDA memcpy DtoD]",
	"[CUDA memcpy HtoH]",
	"[CUDA memcpy PtoP]",
};

const char *cuda_copy_name(uint32_t kind, char *buf, size_t size)
{
	if (kind < sizeof(copy_names) / sizeof(copy_names[0]))
		return copy_names[kind];
	snprintf(buf, size, "[CUDA memcpy %u]", (unsigned)kind);
	return buf;
}

/* name is prefix, then nothing or a version suffix ("_v2", "_ptsz"). */
static bool is_function(const char *name, const char *prefix)
{
	size_t n = strlen(prefix);

	return !strncmp(name, prefix, n) && (name[n] == '\0' || name[n] == '_');
}

bool cuda_api_waits(const char *name)
{
	static const char *const syncs[] = {
		"cudaDeviceSynchronize", "cudaThreadSynchronize", "cudaStreamSynchronize",
		"cudaEventSynchronize", "cuCtxSynchronize", "cuStreamSynchronize",
		"cuEventSynchronize",
	};

	if (!name)
		return false;
	for (size_t i = 0; i < sizeof(syncs) / sizeof(syncs[0]); i++)
		if (is_function(name, syncs[i]))
			return true;
	/* cudaMemcpy, cudaMemcpy2D, cudaMemcpyToSymbol, cuMemcpyHtoD_v2, cuMemcpyPeer... */
	return (!strncmp(name, "cudaMemcpy", 10) || !strncmp(name, "cuMemcpy", 8)) &&
	       !strstr(name, "Async");
}

bool cuda_api_queues_work(const char *name)
{
	static const char *const prefixes[] = {
		"cuLaunch", "cudaLaunch", "cuGraphLaunch", "cudaGraphLaunch",
		"cuMemcpy", "cudaMemcpy", "cuMemset", "cudaMemset",
	};

	/* A host function runs on the CPU: CUPTI has no record of it. */
	if (!name || strstr(name, "HostFunc"))
		return false;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}
