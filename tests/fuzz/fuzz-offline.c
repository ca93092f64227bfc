/* SPDX-License-Identifier: MIT */
/*
 * The whole offline path: a recording built from the input, read and
 * modelled by every command that reads one, each of its outputs written
 * and thrown away. Any crash, hang, leak or sanitizer report is a bug.
 *
 * The input holds what a file's chunks carry rather than the file, so that
 * mutations reach the tables, the model and the commands instead of
 * failing a checksum: 8 bytes of header features, then chunks, each a
 * little-endian u32 length and that many bytes of TABLES payload. Chunks
 * that the input holds whole end with an END chunk; a length that runs
 * past the end leaves the file without one, as a killed recorder does.
 * tests/fuzz/make-offline-corpus.sh turns real recordings into inputs.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmds.h"
#include "format/file.h"
#include "util/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ARGS 12

/* Every command's ways of reading a recording; "@" is the file, "%" an empty dir. */
static const char *const runs[][MAX_ARGS] = {
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
	{ "flame", "-i", "@", "--symfs", "%", "--svg", "/dev/null" },
	{ "flame", "-i", "@", "--symfs", "%", "--gpu-pc", "--folded" },
	{ "threads", "-i", "@" },
	{ "threads", "-i", "@", "--format", "json" },
	{ "diagnose", "-i", "@" },
	{ "diagnose", "-i", "@", "--format", "json" },
	{ "export", "-i", "@", "--symfs", "%", "-o", "-" },
	{ "export", "-i", "@", "--symfs", "%", "-o", "-", "--format", "chrome" },
	{ "diff", "--symfs", "%", "@", "@" },
	{ "diff", "--symfs", "%", "--format", "json", "--normalize", "none", "@", "@" },
	{ "diff", "--by", "metrics,threads", "@", "@" },
	{ "flame", "--diff", "--symfs", "%", "--folded", "@", "@" },
};

static char file_path[64], empty_dir[64];

static void clean_up(void)
{
	unlink(file_path);
	rmdir(empty_dir);
}

static int set_up(void)
{
	const char *tmp = getenv("TMPDIR");
	int fd;

	snprintf(file_path, sizeof(file_path), "%s/fuzz-offline-XXXXXX", tmp ? tmp : "/tmp");
	snprintf(empty_dir, sizeof(empty_dir), "%s/fuzz-symfs-XXXXXX", tmp ? tmp : "/tmp");
	fd = mkstemp(file_path);
	if (fd < 0 || !mkdtemp(empty_dir))
		return -1;
	close(fd);
	atexit(clean_up);
	quiet = 1;
	/* The outputs are not the point; the sanitizers' reports on stderr are. */
	return freopen("/dev/null", "w", stdout) ? 0 : -1;
}

static int write_file(const uint8_t *data, size_t size)
{
	struct tr_writer *w;
	uint64_t features;
	size_t at = 8;
	int err;

	if (size < 8)
		return -1;
	memcpy(&features, data, sizeof(features));
	if (tr_writer_open(&w, file_path, features))
		return -1;
	while (at + 4 <= size) {
		uint32_t len;

		memcpy(&len, data + at, sizeof(len));
		at += 4;
		if (len > size - at)
			break;
		if (tr_writer_put(w, TR_CHUNK_TABLES, data + at, len))
			break;
		at += len;
	}
	err = at == size ? tr_writer_put(w, TR_CHUNK_END, NULL, 0) : 0;
	return tr_writer_close(w) || err ? -1 : 0;
}

static void run(const char *const *args)
{
	char *argv[MAX_ARGS + 1] = {0};
	int argc = 0;

	for (; argc < MAX_ARGS && args[argc]; argc++)
		argv[argc] = (char *)(!strcmp(args[argc], "@")   ? file_path
				      : !strcmp(args[argc], "%") ? empty_dir
								 : args[argc]);
	/* 0, not 1: glibc's getopt starts afresh, as in a new process. */
	optind = 0;
	command_find(argv[0])->fn(argc, argv);
	fflush(stdout);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;

	if (!ready && set_up())
		abort();
	ready = 1;
	if (write_file(data, size))
		return 0;
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++)
		run(runs[i]);
	return 0;
}
