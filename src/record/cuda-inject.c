/* SPDX-License-Identifier: MIT */
#include "record/cuda-inject.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "contract/meta.h"
#include "record/collect.h"
#include "contract/pcopts.h"
#include "util/xalloc.h"

#define AGENT_NAME "libgtrace-cuda.so"
#define DRIVER_VERSION_FILE "/proc/driver/nvidia/version"
/*
 * An ASan-built command checks that its runtime comes first among the
 * libraries loaded at start; a preloaded agent comes before it.
 */
#define ASAN_LINK_ORDER_OFF "verify_asan_link_order=0"

static const char *const var_names[CUDA_INJECT_VARS] = {
	[CUDA_INJECT_DRIVER] = "CUDA_INJECTION64_PATH",
	[CUDA_INJECT_PRELOAD] = "LD_PRELOAD",
	[CUDA_INJECT_NVTX] = "NVTX_INJECTION64_PATH",
	[CUDA_INJECT_CUPTI] = "GTRACE_CUPTI",
	[CUDA_INJECT_ASAN] = "ASAN_OPTIONS",
	[CUDA_INJECT_API] = "GTRACE_CUDA_API",
	[CUDA_INJECT_PC] = PC_OPTS_ENV,
};

static void __attribute__((format(printf, 2, 3))) turn_off(struct cuda_inject *ci,
							    const char *fmt, ...)
{
	char buf[2 * PATH_MAX + 128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	ci->off = xstrdup(buf);
}

/* path made absolute (the command may change directory), or NULL if unreadable. */
static char *readable(const char *path)
{
	char *abs;

	if (!path || !*path || access(path, R_OK))
		return NULL;
	abs = realpath(path, NULL);
	return abs ? abs : xstrdup(path);
}

static char *join(const char *a, const char *sep, const char *b)
{
	size_t len = strlen(a) + strlen(sep) + strlen(b) + 1;
	char *s = xmalloc(len);

	snprintf(s, len, "%s%s%s", a, sep, b);
	return s;
}

/* Next to the running gtrace (build/ in the tree), else where make install put it. */
static char *find_agent(char *tried, size_t size)
{
	char exe[PATH_MAX], *slash, *path, *found;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	tried[0] = '\0';
	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			path = join(exe, "/", AGENT_NAME);
			found = readable(path);
			free(path);
			if (found)
				return found;
			snprintf(tried, size, "'%s' or ", exe);
		}
	}
	path = join(GTRACE_LIBDIR, "/", AGENT_NAME);
	found = readable(path);
	free(path);
	snprintf(tried + strlen(tried), size - strlen(tried), "'%s'", GTRACE_LIBDIR);
	return found;
}

/* ld.so splits LD_PRELOAD at spaces and colons: a path with either cannot go in. */
static char *preload_value(const char *agent)
{
	const char *old = getenv("LD_PRELOAD");
	size_t len = strlen(agent);

	if (strpbrk(agent, " :"))
		return NULL;
	if (!old || !*old)
		return xstrdup(agent);
	for (const char *p = strstr(old, agent); p; p = strstr(p + 1, agent))
		if ((p == old || p[-1] == ' ' || p[-1] == ':') &&
		    (p[len] == '\0' || p[len] == ' ' || p[len] == ':'))
			return NULL;	/* preloaded already */
	return join(old, ":", agent);
}

static void plan_values(struct cuda_inject *ci)
{
	const char *nvtx = getenv(var_names[CUDA_INJECT_NVTX]);
	const char *asan = getenv(var_names[CUDA_INJECT_ASAN]);

	ci->value[CUDA_INJECT_DRIVER] = xstrdup(ci->agent);
	ci->value[CUDA_INJECT_PRELOAD] = preload_value(ci->agent);
	/*
	 * NVTX goes through the agent, which hands it to the CUPTI it uses:
	 * one loaded by path may be a second copy beside the application's.
	 * Another NVTX tool the user chose keeps its ranges.
	 */
	if (!nvtx || !*nvtx)
		ci->value[CUDA_INJECT_NVTX] = xstrdup(ci->agent);
	ci->value[CUDA_INJECT_CUPTI] = xstrdup(ci->cupti);
	if (ci->value[CUDA_INJECT_PRELOAD])
		ci->value[CUDA_INJECT_ASAN] = asan && *asan ? join(asan, ":", ASAN_LINK_ORDER_OFF)
							    : xstrdup(ASAN_LINK_ORDER_OFF);
}

void cuda_inject_plan(struct cuda_inject *ci, bool wanted, bool attach, bool all_calls,
		      const struct pc_opts *pc)
{
	char settings[128];

	const char *env_agent = getenv("GTRACE_CUDA_AGENT");
	const char *env_cupti = getenv("GTRACE_CUPTI");
	const char *injected = getenv(var_names[CUDA_INJECT_DRIVER]);
	const char *cupti = env_cupti && *env_cupti ? env_cupti : CUPTI_LIB_PATH;
	char tried[2 * PATH_MAX + 16];

	memset(ci, 0, sizeof(*ci));
	if (!wanted) {
		turn_off(ci, STATUS_OFF ": --no-cuda");
		return;
	}
	if (attach) {
		turn_off(ci, STATUS_OFF ": attached to a running process "
			 "(the agent loads at its start)");
		return;
	}
	if (injected && *injected) {
		turn_off(ci, STATUS_OFF ": CUDA_INJECTION64_PATH names '%s' already "
			 "(another CUDA tool)", injected);
		return;
	}
	if (env_agent && *env_agent) {
		ci->agent = readable(env_agent);
		if (!ci->agent) {
			turn_off(ci, STATUS_OFF ": cannot read GTRACE_CUDA_AGENT '%s'", env_agent);
			return;
		}
	} else if (!HAVE_CUPTI) {
		turn_off(ci, STATUS_OFF ": gtrace was built without CUPTI");
		return;
	} else {
		ci->agent = find_agent(tried, sizeof(tried));
		if (!ci->agent) {
			turn_off(ci, STATUS_OFF ": no " AGENT_NAME " in %s", tried);
			return;
		}
	}
	ci->cupti = readable(cupti);
	if (!ci->cupti) {
		free(ci->agent);
		ci->agent = NULL;
		turn_off(ci, STATUS_OFF ": no CUPTI at '%s' (set GTRACE_CUPTI)", cupti);
		return;
	}
	plan_values(ci);
	ci->value[CUDA_INJECT_API] = xstrdup(all_calls ? "all" : "filtered");
	if (pc) {
		pc_opts_format(pc, settings, sizeof(settings));
		ci->value[CUDA_INJECT_PC] = xstrdup(settings);
	}
}

void cuda_inject_setenv(struct cuda_inject *ci)
{
	for (int i = 0; i < CUDA_INJECT_VARS; i++) {
		const char *old;

		if (!ci->value[i])
			continue;
		old = getenv(var_names[i]);
		ci->had[i] = old != NULL;
		ci->saved[i] = old ? xstrdup(old) : NULL;
		setenv(var_names[i], ci->value[i], 1);
	}
}

void cuda_inject_restore(struct cuda_inject *ci)
{
	for (int i = 0; i < CUDA_INJECT_VARS; i++) {
		if (!ci->value[i])
			continue;
		if (ci->had[i])
			setenv(var_names[i], ci->saved[i], 1);
		else
			unsetenv(var_names[i]);
		free(ci->saved[i]);
		ci->saved[i] = NULL;
	}
}

/*
 * The first line of the NVIDIA kernel driver's version file, if it is
 * loaded; and, when it is, whether its user-space library can be found: a
 * container started without the driver libraries sees the one, not the other.
 */
static void driver_meta(struct collector *c)
{
	char line[512];
	FILE *f = fopen(DRIVER_VERSION_FILE, "re");
	bool ok = f && fgets(line, sizeof(line), f);
	void *libcuda;

	if (f)
		fclose(f);
	if (!ok) {
		collector_meta(c, META_CUDA_DRIVER,
			       CUDA_DRIVER_NONE ": no NVIDIA kernel driver loaded");
		return;
	}
	line[strcspn(line, "\n")] = '\0';
	collector_meta(c, META_CUDA_DRIVER, line);
	libcuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
	if (libcuda) {
		dlclose(libcuda);
		return;
	}
	snprintf(line, sizeof(line), CUDA_LIBCUDA_MISSING ": %s", dlerror());
	collector_meta(c, META_CUDA_LIBCUDA, line);
}

void cuda_inject_meta(const struct cuda_inject *ci, struct collector *c)
{
	collector_meta(c, META_CUDA_INJECTION, ci->agent ? ci->agent : ci->off);
	driver_meta(c);
}

void cuda_inject_free(struct cuda_inject *ci)
{
	for (int i = 0; i < CUDA_INJECT_VARS; i++) {
		free(ci->value[i]);
		free(ci->saved[i]);
	}
	free(ci->agent);
	free(ci->cupti);
	free(ci->off);
	memset(ci, 0, sizeof(*ci));
}
