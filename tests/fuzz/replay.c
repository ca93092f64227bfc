/* SPDX-License-Identifier: MIT */
/*
 * A main() for fuzz harnesses without libFuzzer: runs LLVMFuzzerTestOneInput
 * once on every file named on the command line, or in a directory named
 * there, so the committed corpus replays in every make check.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data = NULL;
	size_t len = 0, cap = 0, n;

	if (!f) {
		fprintf(stderr, "replay: cannot open '%s': %s\n", path, strerror(errno));
		return -1;
	}
	do {
		if (len == cap) {
			cap = cap ? cap * 2 : 4096;
			data = xrealloc(data, cap);
		}
		n = fread(data + len, 1, cap - len, f);
		len += n;
	} while (n);
	if (ferror(f)) {
		fprintf(stderr, "replay: cannot read '%s'\n", path);
		fclose(f);
		free(data);
		return -1;
	}
	fclose(f);
	/* Exactly len bytes, so that a read past the end shows under ASan. */
	data = xrealloc(data, len ? len : 1);
	LLVMFuzzerTestOneInput(data, len);
	free(data);
	return 0;
}

static int replay(const char *path, int *files)
{
	struct dirent **names;
	struct stat st;
	int n, err = 0;

	if (stat(path, &st) < 0) {
		fprintf(stderr, "replay: cannot open '%s': %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		++*files;
		return replay_file(path);
	}
	n = scandir(path, &names, NULL, alphasort);
	if (n < 0) {
		fprintf(stderr, "replay: cannot list '%s': %s\n", path, strerror(errno));
		return -1;
	}
	for (int i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.') {
			size_t len = strlen(path) + strlen(names[i]->d_name) + 2;
			char *sub = xmalloc(len);

			snprintf(sub, len, "%s/%s", path, names[i]->d_name);
			err |= replay(sub, files);
			free(sub);
		}
		free(names[i]);
	}
	free(names);
	return err;
}

int main(int argc, char **argv)
{
	int files = 0, err = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++)
		err |= replay(argv[i], &files);
	printf("replayed %d inputs\n", files);
	return err ? 1 : 0;
}
