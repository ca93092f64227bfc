/* SPDX-License-Identifier: MIT */
/*
 * The whole offline path: a recording built from the input (see
 * offline-harness.h), read and modelled by every command that reads one,
 * each of its outputs written and thrown away. Any crash, hang, leak or
 * sanitizer report is a bug.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "offline-harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Every command's ways of reading a recording; "@" is the file, "%" an
 * empty dir, "^" a file in a dir of its own (outputs must be regular files).
 */
static const char *const runs[][FUZZ_MAX_ARGS] = {
	{ "report", "-i", "@", "--symfs", "%" },
	{ "report", "-i", "@", "--symfs", "%", "--format", "json", "-s", "comm,tid,dso,symbol" },
	{ "report", "-i", "@", "--symfs", "%", "--no-children", "--inline", "--python", "off" },
	{ "report", "-i", "@", "--symfs", "%", "--gpu" },
	{ "report", "-i", "@", "--symfs", "%", "--gpu", "--format", "json" },
	{ "report", "-i", "@", "--symfs", "%", "--gpu-pc", "--sass" },
	{ "report", "-i", "@", "--symfs", "%", "--tid", "0xfff00000" },
	{ "report", "-i", "@", "--metrics" },
	{ "report", "-i", "@", "--metrics", "--format", "json", "--comm", "sleep" },
	{ "flame", "-i", "@", "--symfs", "%", "--folded" },
	{ "flame", "-i", "@", "--symfs", "%", "--svg", "^" },
	{ "flame", "-i", "@", "--symfs", "%", "--gpu-pc", "--folded" },
	{ "script", "-i", "@", "--symfs", "%" },
	{ "script", "-i", "@", "--symfs", "%", "--inline", "--python", "both" },
	{ "annotate", "-i", "@", "--symfs", "%" },
	{ "annotate", "-i", "@", "--symfs", "%", "--format", "json", "-n", "2", "--asm" },
	{ "annotate", "-i", "@", "--symfs", "%", "--asm" },
	{ "threads", "-i", "@" },
	{ "threads", "-i", "@", "--format", "json" },
	{ "threads", "-i", "@", "--off-cpu" },
	{ "report", "-i", "@", "--off-cpu", "--format", "json" },
	{ "diagnose", "-i", "@" },
	{ "diagnose", "-i", "@", "--format", "json" },
	{ "analyze", "-i", "@", "--symfs", "%" },
	{ "analyze", "-i", "@", "--symfs", "%", "--format", "json", "--short", "1ms", "--device", "0" },
	{ "export", "-i", "@", "--symfs", "%", "-o", "-" },
	{ "export", "-i", "@", "--symfs", "%", "-o", "-", "--format", "chrome" },
	{ "export", "-i", "@", "--symfs", "%", "-o", "-", "--format", "pprof" },
	{ "export", "-i", "@", "--symfs", "%", "-o", "^", "--format", "sqlite" },
	{ "diff", "--symfs", "%", "@", "@" },
	{ "diff", "--symfs", "%", "--format", "json", "--normalize", "none", "@", "@" },
	{ "diff", "--by", "metrics,threads", "@", "@" },
	{ "flame", "--diff", "--symfs", "%", "--folded", "@", "@" },
	{ "flame", "--diff", "--symfs", "%", "--svg", "^", "@", "@" },
};

static char file_path[64], empty_dir[64], out_dir[64], out_path[80];

static void clean_up(void)
{
	unlink(file_path);
	rmdir(empty_dir);
	unlink(out_path);
	rmdir(out_dir);
}

static int set_up(void)
{
	const char *tmp = getenv("TMPDIR");
	int fd;

	snprintf(file_path, sizeof(file_path), "%s/fuzz-offline-XXXXXX", tmp ? tmp : "/tmp");
	snprintf(empty_dir, sizeof(empty_dir), "%s/fuzz-symfs-XXXXXX", tmp ? tmp : "/tmp");
	snprintf(out_dir, sizeof(out_dir), "%s/fuzz-out-XXXXXX", tmp ? tmp : "/tmp");
	fd = mkstemp(file_path);
	if (fd < 0 || !mkdtemp(empty_dir) || !mkdtemp(out_dir))
		return -1;
	snprintf(out_path, sizeof(out_path), "%s/out.svg", out_dir);
	close(fd);
	atexit(clean_up);
	return fuzz_commands_set_up();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct fuzz_placeholder ph[] = {
		{ "@", file_path }, { "%", empty_dir }, { "^", out_path },
	};
	static int ready;

	if (!ready && set_up())
		abort();
	ready = 1;
	if (fuzz_write_recording(file_path, data, size))
		return 0;
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++)
		fuzz_run_command(runs[i], ph, sizeof(ph) / sizeof(ph[0]));
	return 0;
}
