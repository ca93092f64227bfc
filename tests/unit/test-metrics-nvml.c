/* SPDX-License-Identifier: MIT */
/*
 * src/record/nvml.c on the NVML test double (tests/metrics/fake-nvml.c,
 * $BUILD/tests/metrics/libnvidia-ml.so.1), scripted through FAKE_NVML:
 * each way of not starting, the readings and their units, quantities not
 * supported or failing once, a GPU lost, the clock event reasons under
 * either name, and NVML shut down at the end.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/nvml.h"
#include "test.h"

#define ALL ((1u << GPU_QUANTITIES) - 1)
#define BIT(q) (1u << (q))

static char fake[4096], old_fake[4096], log_path[4096];

/* nvml_open on the fake at path with the script; its error, why in why. */
static int open_with(struct nvml **nv, const char *path, const char *script, char *why,
		     size_t size)
{
	setenv("GTRACE_NVML", path, 1);
	setenv("FAKE_NVML", script, 1);
	return nvml_open(nv, why, size);
}

static void test_missing_library(void)
{
	struct nvml *nv = (struct nvml *)1;
	char why[256] = "";

	CHECK_EQ_U64(open_with(&nv, "/nonexistent/libnvidia-ml.so.1", "", why, sizeof(why)),
		     -ENOENT);
	CHECK(nv == NULL);
	CHECK_STREQ(why, "no /nonexistent/libnvidia-ml.so.1");
}

static void test_init_fails(void)
{
	struct nvml *nv;
	char why[256] = "";

	CHECK_EQ_U64(open_with(&nv, fake, "init=fail", why, sizeof(why)), -EIO);
	CHECK(nv == NULL);
	CHECK(strstr(why, "nvmlInit") != NULL);
	/* A script the fake cannot read fails the same way (and says so on stderr). */
	CHECK_EQ_U64(open_with(&nv, fake, "gpus=2;bogus=1", why, sizeof(why)), -EIO);
}

static void test_no_gpu(void)
{
	struct nvml *nv;
	char why[256] = "";
	FILE *f;
	char line[64];
	int inits = 0, shutdowns = 0;

	unlink(log_path);
	setenv("FAKE_NVML_LOG", log_path, 1);
	CHECK_EQ_U64(open_with(&nv, fake, " gpus = 0 ", why, sizeof(why)), -ENODEV);
	CHECK_STREQ(why, "NVML lists no GPU");
	unsetenv("FAKE_NVML_LOG");
	/* Started, then shut down when it had nothing to read. */
	f = fopen(log_path, "r");
	CHECK(f != NULL);
	while (f && fgets(line, sizeof(line), f)) {
		inits += !strcmp(line, "nvmlInit_v2 0\n");
		shutdowns += !strcmp(line, "nvmlShutdown 0\n");
	}
	if (f)
		fclose(f);
	CHECK_EQ_U64(inits, 1);
	CHECK_EQ_U64(shutdowns, 1);
}

static void test_readings(void)
{
	uint64_t v[GPU_QUANTITIES];
	struct nvml *nv;
	char why[256] = "";
	uint32_t have;

	CHECK_EQ_U64(open_with(&nv, fake,
			       "gpus=2; sm=10,50,90; sm@1=5; memutil=7; mem_used_mib=1,2;"
			       "mem_total_mib=16; power_mw=70500; temp=61; clock_sm=1410;"
			       "clock_mem=1215; pcie_rx=300; pcie_tx=400; throttle=0x44",
			       why, sizeof(why)), 0);
	if (!nv)
		return;
	CHECK_EQ_U64(nvml_gpus(nv), 2);
	CHECK_EQ_U64(nvml_read(nv, 0, v, &have), 0);
	CHECK_EQ_U64(have, ALL);
	CHECK_EQ_U64(v[GPU_SM_UTIL], 10);
	CHECK_EQ_U64(v[GPU_MEM_UTIL], 7);
	CHECK_EQ_U64(v[GPU_MEM_USED], 1024);		/* KiB */
	CHECK_EQ_U64(v[GPU_MEM_TOTAL], 16 * 1024);
	CHECK_EQ_U64(v[GPU_POWER], 70500);		/* mW */
	CHECK_EQ_U64(v[GPU_TEMP], 61);
	CHECK_EQ_U64(v[GPU_CLOCK_SM], 1410);
	CHECK_EQ_U64(v[GPU_CLOCK_MEM], 1215);
	CHECK_EQ_U64(v[GPU_PCIE_RX], 300);
	CHECK_EQ_U64(v[GPU_PCIE_TX], 400);
	CHECK_EQ_U64(v[GPU_THROTTLE], 0x44);
	/* Each read takes the next value; the last repeats. */
	CHECK_EQ_U64(nvml_read(nv, 0, v, &have), 0);
	CHECK_EQ_U64(v[GPU_SM_UTIL], 50);
	CHECK_EQ_U64(v[GPU_MEM_USED], 2048);
	CHECK_EQ_U64(nvml_read(nv, 0, v, &have), 0);
	CHECK_EQ_U64(v[GPU_SM_UTIL], 90);
	CHECK_EQ_U64(nvml_read(nv, 0, v, &have), 0);
	CHECK_EQ_U64(v[GPU_SM_UTIL], 90);
	CHECK_EQ_U64(v[GPU_MEM_USED], 2048);
	/* GPU 1: its own sm, the rest shared; its cursors its own. */
	CHECK_EQ_U64(nvml_read(nv, 1, v, &have), 0);
	CHECK_EQ_U64(have, ALL);
	CHECK_EQ_U64(v[GPU_SM_UTIL], 5);
	CHECK_EQ_U64(v[GPU_MEM_USED], 1024);
	nvml_close(nv);
}

static void test_defaults(void)
{
	uint64_t v[GPU_QUANTITIES];
	struct nvml *nv;
	char why[256] = "";
	uint32_t have;

	unsetenv("FAKE_NVML");
	setenv("GTRACE_NVML", fake, 1);
	CHECK_EQ_U64(nvml_open(&nv, why, sizeof(why)), 0);
	if (!nv)
		return;
	CHECK_EQ_U64(nvml_gpus(nv), 1);
	CHECK_EQ_U64(nvml_read(nv, 0, v, &have), 0);
	CHECK_EQ_U64(have, ALL);
	CHECK_EQ_U64(v[GPU_MEM_TOTAL], 81920 * 1024);
	CHECK_EQ_U64(v[GPU_THROTTLE], 0x1);
	nvml_close(nv);
}

static void test_not_supported(void)
{
	uint64_t v[GPU_QUANTITIES];
	struct nvml *nv;
	char why[256] = "";
	uint32_t have;

	CHECK_EQ_U64(open_with(&nv, fake, "gpus=2; notsup=power,pcie; notsup@1=clock_mem",
			       why, sizeof(why)), 0);
	if (!nv)
		return;
	for (int i = 0; i < 3; i++) {
		CHECK_EQ_U64(nvml_read(nv, 0, v, &have), 0);
		CHECK_EQ_U64(have, ALL & ~(BIT(GPU_POWER) | BIT(GPU_PCIE_RX) | BIT(GPU_PCIE_TX)));
	}
	/* notsup@1 replaces notsup for GPU 1. */
	CHECK_EQ_U64(nvml_read(nv, 1, v, &have), 0);
	CHECK_EQ_U64(have, ALL & ~BIT(GPU_CLOCK_MEM));
	nvml_close(nv);
}

static void test_failing_read(void)
{
	uint64_t v[GPU_QUANTITIES];
	struct nvml *nv;
	char why[256] = "";
	uint32_t have;

	CHECK_EQ_U64(open_with(&nv, fake, "sm=10,x,30; temp=x,40", why, sizeof(why)), 0);
	if (!nv)
		return;
	CHECK_EQ_U64(nvml_read(nv, 0, v, &have), 0);
	CHECK_EQ_U64(have, ALL & ~BIT(GPU_TEMP));
	CHECK_EQ_U64(v[GPU_SM_UTIL], 10);
	/* One call gives both utilizations: an 'x' in sm fails both. */
	CHECK_EQ_U64(nvml_read(nv, 0, v, &have), 0);
	CHECK_EQ_U64(have, ALL & ~(BIT(GPU_SM_UTIL) | BIT(GPU_MEM_UTIL)));
	CHECK_EQ_U64(v[GPU_TEMP], 40);
	CHECK_EQ_U64(nvml_read(nv, 0, v, &have), 0);
	CHECK_EQ_U64(have, ALL);
	CHECK_EQ_U64(v[GPU_SM_UTIL], 30);
	nvml_close(nv);
}

static void test_lost(void)
{
	uint64_t v[GPU_QUANTITIES];
	struct nvml *nv;
	char why[256] = "";
	uint32_t have;

	CHECK_EQ_U64(open_with(&nv, fake, "lost_after@1=2; gpus=2; sm=1,2,3,4", why,
			       sizeof(why)), 0);
	if (!nv)
		return;
	for (int i = 0; i < 2; i++) {
		CHECK_EQ_U64(nvml_read(nv, 1, v, &have), 0);
		CHECK_EQ_U64(have, ALL);
		CHECK_EQ_U64(v[GPU_SM_UTIL], i + 1);
	}
	CHECK_EQ_U64(nvml_read(nv, 1, v, &have), -ENODEV);
	CHECK_EQ_U64(have, 0);
	CHECK_EQ_U64(nvml_read(nv, 1, v, &have), -ENODEV);
	/* GPU 0 reads on. */
	for (int i = 0; i < 4; i++) {
		CHECK_EQ_U64(nvml_read(nv, 0, v, &have), 0);
		CHECK_EQ_U64(v[GPU_SM_UTIL], i + 1);
	}
	nvml_close(nv);

	/* lost_after=0: lost from the first read, on every GPU. */
	CHECK_EQ_U64(open_with(&nv, fake, "gpus=2; lost_after=0", why, sizeof(why)), 0);
	if (!nv)
		return;
	CHECK_EQ_U64(nvml_read(nv, 0, v, &have), -ENODEV);
	CHECK_EQ_U64(nvml_read(nv, 1, v, &have), -ENODEV);
	nvml_close(nv);
}

/* Copies the double to path with mode and owner; false if it could not. */
static bool copy_fake(const char *path, mode_t mode, uid_t owner)
{
	char buf[65536];
	FILE *in = fopen(fake, "rb"), *out = fopen(path, "wb");
	size_t n;
	bool ok = in && out;

	while (ok && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		ok = fwrite(buf, 1, n, out) == n;
	if (in)
		fclose(in);
	if (out && fclose(out))
		ok = false;
	return ok && !chmod(path, mode) && !chown(path, owner, (gid_t)-1);
}

/* open_with on a copy of the double at path with mode and owner; nvml_open's error. */
static int open_copy(const char *path, mode_t mode, uid_t owner, char *why, size_t size)
{
	struct nvml *nv = NULL;
	int err;

	CHECK(copy_fake(path, mode, owner));
	err = open_with(&nv, path, "", why, size);
	if (nv)
		nvml_close(nv);
	return err;
}

/* As root, $GTRACE_NVML is loaded only from a file of root's that others cannot write. */
static void test_refused_as_root(void)
{
	char path[64], why[256] = "";

	if (geteuid()) {
		printf("  note: not root, the rule for root not checked\n");
		return;
	}
	snprintf(path, sizeof(path), "/tmp/gtrace-nvml-%u.so", (unsigned)getpid());
	CHECK_EQ_U64(open_copy(path, 0757, 0, why, sizeof(why)), -EPERM);
	CHECK(strstr(why, "refused") != NULL);
	CHECK_EQ_U64(open_copy(path, 0775, 0, why, sizeof(why)), -EPERM);
	CHECK_EQ_U64(open_copy(path, 0755, 65534, why, sizeof(why)), -EPERM);
	CHECK_EQ_U64(open_copy(path, 0755, 0, why, sizeof(why)), 0);
	unlink(path);
}

static void test_old_reasons_name(void)
{
	uint64_t v[GPU_QUANTITIES];
	struct nvml *nv;
	char why[256] = "";
	uint32_t have;

	CHECK_EQ_U64(open_with(&nv, old_fake, "throttle=0x8", why, sizeof(why)), 0);
	if (!nv)
		return;
	CHECK_EQ_U64(nvml_read(nv, 0, v, &have), 0);
	CHECK_EQ_U64(have, ALL);
	CHECK_EQ_U64(v[GPU_THROTTLE], 0x8);
	nvml_close(nv);
}

int main(void)
{
	const char *build = getenv("BUILD");

	if (!build || !*build)
		build = "build";
	snprintf(fake, sizeof(fake), "%s/tests/metrics/libnvidia-ml.so.1", build);
	snprintf(old_fake, sizeof(old_fake), "%s/tests/metrics/old-names/libnvidia-ml.so.1", build);
	snprintf(log_path, sizeof(log_path), "%s/tests/metrics/test-metrics-nvml.log", build);
	if (access(fake, R_OK) || access(old_fake, R_OK)) {
		printf("SKIP: the NVML test double is not built (%s): run make tests\n", fake);
		return 77;
	}
	unsetenv("FAKE_NVML_LOG");
	RUN(test_missing_library);
	RUN(test_init_fails);
	RUN(test_no_gpu);
	RUN(test_readings);
	RUN(test_defaults);
	RUN(test_not_supported);
	RUN(test_refused_as_root);
	RUN(test_failing_read);
	RUN(test_lost);
	RUN(test_old_reasons_name);
	unlink(log_path);
	return test_summary();
}
