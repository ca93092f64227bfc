/* SPDX-License-Identifier: MIT */
#include "cuda/cupti-api.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>

#define CUPTI_SONAME "libcupti.so.13"

struct cupti_api cupti;

#define CUPTI_API_NAME(name) #name,
const char *const cupti_function_names[] = { CUPTI_FUNCTIONS(CUPTI_API_NAME) NULL };
#undef CUPTI_API_NAME

/*
 * A CUPTI another part of the process loaded (a framework's own copy) is the
 * one to use: a second copy would not see its subscription. NVTX reaches
 * CUPTI through the agent for the same reason (see InitializeInjectionNvtx2).
 */
static void *open_cupti(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);

	if (!h)
		h = dlopen(CUPTI_SONAME, RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	return h;
}

int cupti_api_load(const char *path, char *why, size_t size)
{
	void *h = open_cupti(path);
	const char *err;

	if (!h) {
		err = dlerror();
		snprintf(why, size, "%s", err ? err : path);
		return -ENOENT;
	}
#define CUPTI_API_RESOLVE(name)						\
	cupti.name = (__typeof__(name) *)dlsym(h, #name);		\
	if (!cupti.name) {						\
		snprintf(why, size, "missing %s", #name);		\
		return -ENOENT;						\
	}
	CUPTI_FUNCTIONS(CUPTI_API_RESOLVE)
#undef CUPTI_API_RESOLVE
	/* Optional: without it NVTX ranges go unrecorded, the rest works. */
	cupti.InitializeInjectionNvtx2 = (cupti_nvtx_init_fn *)dlsym(h, "InitializeInjectionNvtx2");
	/* The handle stays open: CUPTI lives as long as the process. */
	return 0;
}

const char *cupti_result_string(CUptiResult r, char *buf, size_t size)
{
	const char *s = NULL;

	if (cupti.cuptiGetResultString && cupti.cuptiGetResultString(r, &s) == CUPTI_SUCCESS && s)
		return s;
	snprintf(buf, size, "CUPTI error %d", (int)r);
	return buf;
}
