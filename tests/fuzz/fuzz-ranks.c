/* SPDX-License-Identifier: MIT */
/*
 * Reading several recordings as the ranks of one job: up to MAX_RANKS
 * recordings built from the input, each a little-endian u32 length and
 * that many bytes of fuzz-offline's input (see offline-harness.h),
 * written into a directory beside a file that is not a recording, then
 * read by the commands through -i DIR, repeated -i, --ranks, --rank and
 * --align. Any crash, hang, leak or sanitizer report is a bug.
 * tests/fuzz/make-ranks-corpus.sh turns a job's recordings into an input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "offline-harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_RANKS 4

/* "%" is the directory of the recordings, "@0" and "@1" the first two, "&" an empty dir. */
static const char *const runs[][FUZZ_MAX_ARGS] = {
	{ "report", "-i", "%", "--symfs", "&" },
	{ "report", "-i", "%", "--ranks" },
	{ "report", "-i", "%", "--ranks", "--align", "collectives", "--format", "json" },
	{ "report", "-i", "@0", "-i", "@1", "--symfs", "&", "--rank", "1", "-s", "rank,comm" },
	{ "report", "-i", "%", "--symfs", "&", "--gpu", "--align", "collectives" },
	{ "report", "-i", "%", "--metrics" },
	{ "flame", "-i", "%", "--symfs", "&", "--folded", "--align", "collectives" },
	{ "threads", "-i", "%", "--format", "json" },
	{ "diagnose", "-i", "%", "--align", "collectives" },
	{ "export", "-i", "%", "--symfs", "&", "-o", "-" },
};

static char dir[64], symfs[64], paths[MAX_RANKS][96], other[96];

static void clean_up(void)
{
	for (size_t i = 0; i < MAX_RANKS; i++)
		unlink(paths[i]);
	unlink(other);
	rmdir(dir);
	rmdir(symfs);
}

static int set_up(void)
{
	const char *tmp = getenv("TMPDIR");
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/fuzz-ranks-XXXXXX", tmp ? tmp : "/tmp");
	snprintf(symfs, sizeof(symfs), "%s/fuzz-symfs-XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(dir) || !mkdtemp(symfs))
		return -1;
	for (size_t i = 0; i < MAX_RANKS; i++)
		snprintf(paths[i], sizeof(paths[i]), "%s/rank%zu.data", dir, i);
	/* What a job's directory may hold beside the recordings: read and left out. */
	snprintf(other, sizeof(other), "%s/notes.txt", dir);
	f = fopen(other, "w");
	if (!f || fputs("not a recording\n", f) < 0 || fclose(f))
		return -1;
	atexit(clean_up);
	return fuzz_commands_set_up();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct fuzz_placeholder ph[] = {
		{ "%", dir }, { "&", symfs }, { "@0", paths[0] }, { "@1", paths[1] },
	};
	static int ready;
	size_t at = 0, ranks = 0;

	if (!ready && set_up())
		abort();
	ready = 1;
	for (size_t i = 0; i < MAX_RANKS; i++)
		unlink(paths[i]);
	while (ranks < MAX_RANKS && at + 4 <= size) {
		uint32_t len;

		memcpy(&len, data + at, sizeof(len));
		at += 4;
		if (len > size - at || fuzz_write_recording(paths[ranks], data + at, len))
			break;
		at += len;
		ranks++;
	}
	if (!ranks)
		return 0;
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++)
		fuzz_run_command(runs[i], ph, sizeof(ph) / sizeof(ph[0]));
	return 0;
}
