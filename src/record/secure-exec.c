/* SPDX-License-Identifier: MIT */
#include "record/secure-exec.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "record/program.h"

/* What the kernel looks at in bprm_fill_uid and cap_bprm_creds_from_file. */
static const char *gains_rights(int fd, const struct stat *st)
{
	struct statvfs vfs;
	char magic[2];

	/* nosuid, no_new_privs and scripts (the kernel ignores the bits on them). */
	if ((!fstatvfs(fd, &vfs) && (vfs.f_flag & ST_NOSUID)) ||
	    prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1 ||
	    (pread(fd, magic, 2, 0) == 2 && !memcmp(magic, "#!", 2)))
		return NULL;
	if ((st->st_mode & S_ISUID) && st->st_uid != getuid())
		return "at its exec: it is set-user-ID, so not this user's to watch (AT_SECURE)";
	if ((st->st_mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP) && st->st_gid != getgid())
		return "at its exec: it is set-group-ID, so not this user's to watch (AT_SECURE)";
	/* Root has every capability a file could give already. */
	if (geteuid() && fgetxattr(fd, "security.capability", NULL, 0) > 0)
		return "at its exec: it has file capabilities, so is not this user's to watch (AT_SECURE)";
	return NULL;
}

const char *secure_exec_why(const char *cmd)
{
	char path[PATH_MAX];
	const char *why;
	struct stat st;
	int fd;

	if (!program_path(cmd, path, sizeof(path)))
		return NULL;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return !stat(path, &st) && S_ISREG(st.st_mode) && !access(path, X_OK)
			       ? "at its exec: this user may not read it, so may not watch it"
			       : NULL;
	why = fstat(fd, &st) ? NULL : gains_rights(fd, &st);
	close(fd);
	return why;
}
