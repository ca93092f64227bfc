/* SPDX-License-Identifier: MIT */
#include "record/program.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record/python.h"

/* execvp's search path where PATH is not set. */
#define DEFAULT_PATH "/bin:/usr/bin"
/* The kernel reads this much of a script for its "#!" line (BINPRM_BUF_SIZE). */
#define SHEBANG_BYTES 256

bool program_path(const char *cmd, char *path, size_t size)
{
	const char *dirs = getenv("PATH");

	if (strchr(cmd, '/'))
		return snprintf(path, size, "%s", cmd) < (int)size;
	for (const char *d = dirs ? dirs : DEFAULT_PATH; ; d++) {
		size_t len = strcspn(d, ":");
		struct stat st;

		/* An empty entry is the working directory. */
		if (snprintf(path, size, "%.*s%s%s", (int)len, d, len ? "/" : "", cmd) < (int)size &&
		    !stat(path, &st) && S_ISREG(st.st_mode) && !access(path, X_OK))
			return true;
		d += len;
		if (!*d)
			return false;
	}
}

/* Whether the file at path, or the one its links lead to, is a CPython interpreter. */
static bool is_python(const char *path)
{
	char real[PATH_MAX];

	/* "python" may be a link to python3.X (Debian's python-is-python3). */
	return pyreader_is_python_path(path) ||
	       (realpath(path, real) && pyreader_is_python_path(real));
}

/* Whether the script at path names a CPython interpreter on its "#!" line. */
static bool shebang_is_python(const char *path)
{
	char line[SHEBANG_BYTES + 1], found[PATH_MAX], *word, *save;
	const char *base;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ssize_t got = fd >= 0 ? read(fd, line, SHEBANG_BYTES) : -1;

	if (fd >= 0)
		close(fd);
	if (got < 2 || memcmp(line, "#!", 2))
		return false;
	line[got] = '\0';
	line[strcspn(line, "\n")] = '\0';
	word = strtok_r(line + 2, " \t", &save);
	base = word ? strrchr(word, '/') : NULL;
	/*
	 * "#!/usr/bin/env [-S] [-u NAME] [NAME=VALUE] python3": the first
	 * word that is no option or setting, by PATH.
	 */
	if (word && !strcmp(base ? base + 1 : word, "env")) {
		while ((word = strtok_r(NULL, " \t", &save)) && (*word == '-' || strchr(word, '=')))
			if (!strcmp(word, "-u") || !strcmp(word, "-C"))
				strtok_r(NULL, " \t", &save);	/* their argument */
		if (word && !program_path(word, found, sizeof(found)))
			return false;
		word = word ? found : NULL;
	}
	return word && is_python(word);
}

bool program_runs_python(const char *cmd)
{
	char path[PATH_MAX];
	struct stat st;

	return program_path(cmd, path, sizeof(path)) && !stat(path, &st) && S_ISREG(st.st_mode) &&
	       (is_python(path) || shebang_is_python(path));
}

bool process_runs_python(pid_t pid)
{
	char link[64], exe[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	if (n <= 0)
		return false;
	exe[n] = '\0';
	return pyreader_is_python_path(exe);
}
