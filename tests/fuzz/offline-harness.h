/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_TESTS_FUZZ_OFFLINE_HARNESS_H
#define GTRACE_TESTS_FUZZ_OFFLINE_HARNESS_H

/*
 * What the harnesses of the offline commands share. The recordings they
 * make of their input, which holds
 * what a file's chunks carry rather than the file, so that mutations reach
 * the tables, the model and the commands instead of failing a checksum:
 * 8 bytes of header features, then chunks, each a little-endian u32 length
 * and that many bytes: a TABLES payload, or with the length's top bit set,
 * the zstd frame of one, kept compressed so that what decompresses to much
 * (a bomb) is reached. Chunks that the input holds whole end with an END
 * chunk; a length that runs past the end leaves the file without one, as a
 * killed recorder does. tests/fuzz/make-offline-corpus.sh turns real
 * recordings into inputs.
 */

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmds.h"
#include "cmd/offline.h"
#include "format/file.h"
#include "util/log.h"

#define FUZZ_FRAME_BIT 0x80000000u
#define FUZZ_MAX_ARGS 12
/* Each recording may decode this much: one that decompresses to much reaches it soon. */
#define FUZZ_READ_LIMIT "4M"

/* A command's words; a word that names a placeholder stands for its value. */
struct fuzz_placeholder {
	const char *word, *value;
};

/* Writes the recording of size bytes of input at path; -1 when they make none. */
static inline int fuzz_write_recording(const char *path, const uint8_t *data, size_t size)
{
	struct tr_writer *w;
	uint64_t features;
	size_t at = 8;
	int err;

	if (size < 8)
		return -1;
	memcpy(&features, data, sizeof(features));
	if (tr_writer_open(&w, path, features))
		return -1;
	while (at + 4 <= size) {
		uint32_t len;

		memcpy(&len, data + at, sizeof(len));
		at += 4;
		if ((len & ~FUZZ_FRAME_BIT) > size - at)
			break;
		if (len & FUZZ_FRAME_BIT) {
			len &= ~FUZZ_FRAME_BIT;
			if (tr_writer_put_frame(w, TR_CHUNK_TABLES, data + at, len))
				break;
		} else if (tr_writer_put(w, TR_CHUNK_TABLES, data + at, len)) {
			break;
		}
		at += len;
	}
	err = at == size ? tr_writer_put(w, TR_CHUNK_END, NULL, 0) : 0;
	return tr_writer_close(w) || err ? -1 : 0;
}

/* Quiet commands within FUZZ_READ_LIMIT; stdout is not the point, the sanitizers' reports are. */
static inline int fuzz_commands_set_up(void)
{
	setenv(READ_LIMIT_ENV, FUZZ_READ_LIMIT, 1);
	quiet = 1;
	return freopen("/dev/null", "w", stdout) ? 0 : -1;
}

/* Runs the command of args (NULL-ended), its placeholders replaced. */
static inline void fuzz_run_command(const char *const *args,
				    const struct fuzz_placeholder *ph, size_t nph)
{
	char *argv[FUZZ_MAX_ARGS + 1] = {0};
	int argc = 0;

	for (; argc < FUZZ_MAX_ARGS && args[argc]; argc++) {
		argv[argc] = (char *)args[argc];
		for (size_t i = 0; i < nph; i++)
			if (!strcmp(args[argc], ph[i].word))
				argv[argc] = (char *)ph[i].value;
	}
	/* 0, not 1: glibc's getopt starts afresh, as in a new process. */
	optind = 0;
	command_find(argv[0])->fn(argc, argv);
	fflush(stdout);
}

#endif
