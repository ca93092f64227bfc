/* SPDX-License-Identifier: MIT */
/*
 * sqldb.h when gtrace is built without libsqlite3 (./configure
 * --without-sqlite, or no libsqlite3-dev): no database can be opened, so
 * nothing else is ever called with one.
 */
#include "analysis/encoders/sqldb.h"

#include <errno.h>
#include <stddef.h>

bool sqldb_available(void)
{
	return false;
}

int sqldb_open(struct sqldb **db, const char *path)
{
	*db = NULL;
	return -ENOTSUP;
}

void sqldb_exec(struct sqldb *db, const char *sql)
{
}

struct sqlstmt *sqldb_prepare(struct sqldb *db, const char *sql)
{
	return NULL;
}

void sqlstmt_int(struct sqlstmt *st, int i, int64_t v)
{
}

void sqlstmt_u64(struct sqlstmt *st, int i, uint64_t v)
{
}

void sqlstmt_real(struct sqlstmt *st, int i, double v)
{
}

void sqlstmt_text(struct sqlstmt *st, int i, const char *v)
{
}

void sqlstmt_null(struct sqlstmt *st, int i)
{
}

void sqlstmt_run(struct sqlstmt *st)
{
}

void sqlstmt_free(struct sqlstmt *st)
{
}

int sqldb_close(struct sqldb *db)
{
	return -ENOTSUP;
}
