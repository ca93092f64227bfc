/* SPDX-License-Identifier: MIT */
/* sqldb.h on libsqlite3. */
#include "analysis/encoders/sqldb.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>

#include "util/xalloc.h"

struct sqldb {
	sqlite3 *db;
	int err;		/* the first error, a negative errno; 0 none */
};

struct sqlstmt {
	struct sqldb *db;
	sqlite3_stmt *st;
};

bool sqldb_available(void)
{
	return true;
}

/* Keeps the first error: SQLite's code as an errno. */
static void failed(struct sqldb *db, int code)
{
	if (!db->err)
		db->err = (code & 0xff) == SQLITE_FULL ? -ENOSPC : -EIO;
}

int sqldb_open(struct sqldb **out, const char *path)
{
	struct sqldb *db = xcalloc(1, sizeof(*db));
	/* One thread writes it: no locking of each call. */
	int code = sqlite3_open_v2(path, &db->db,
				   SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
				   NULL);

	*out = NULL;
	if (code != SQLITE_OK) {
		sqlite3_close(db->db);
		free(db);
		return code == SQLITE_CANTOPEN ? -EACCES : -EIO;
	}
	/* Nobody reads the file before it is whole and renamed into place. */
	sqldb_exec(db, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;"
		       "PRAGMA locking_mode = EXCLUSIVE");
	*out = db;
	return 0;
}

void sqldb_exec(struct sqldb *db, const char *sql)
{
	int code;

	if (db->err)
		return;
	code = sqlite3_exec(db->db, sql, NULL, NULL, NULL);
	if (code != SQLITE_OK)
		failed(db, code);
}

struct sqlstmt *sqldb_prepare(struct sqldb *db, const char *sql)
{
	struct sqlstmt *st;
	int code;

	if (db->err)
		return NULL;
	st = xcalloc(1, sizeof(*st));
	st->db = db;
	code = sqlite3_prepare_v2(db->db, sql, -1, &st->st, NULL);
	if (code != SQLITE_OK) {
		failed(db, code);
		free(st);
		return NULL;
	}
	return st;
}

static void bound(struct sqlstmt *st, int code)
{
	if (code != SQLITE_OK)
		failed(st->db, code);
}

void sqlstmt_int(struct sqlstmt *st, int i, int64_t v)
{
	if (st)
		bound(st, sqlite3_bind_int64(st->st, i, v));
}

void sqlstmt_u64(struct sqlstmt *st, int i, uint64_t v)
{
	if (v > INT64_MAX)
		sqlstmt_real(st, i, (double)v);
	else
		sqlstmt_int(st, i, (int64_t)v);
}

void sqlstmt_real(struct sqlstmt *st, int i, double v)
{
	if (st)
		bound(st, sqlite3_bind_double(st->st, i, v));
}

void sqlstmt_text(struct sqlstmt *st, int i, const char *v)
{
	if (st)
		bound(st, v ? sqlite3_bind_text(st->st, i, v, -1, SQLITE_TRANSIENT)
			    : sqlite3_bind_null(st->st, i));
}

void sqlstmt_null(struct sqlstmt *st, int i)
{
	if (st)
		bound(st, sqlite3_bind_null(st->st, i));
}

void sqlstmt_run(struct sqlstmt *st)
{
	int code;

	if (!st || st->db->err)
		return;
	code = sqlite3_step(st->st);
	if (code != SQLITE_DONE)
		failed(st->db, code);
	sqlite3_reset(st->st);
	sqlite3_clear_bindings(st->st);
}

void sqlstmt_free(struct sqlstmt *st)
{
	if (!st)
		return;
	sqlite3_finalize(st->st);
	free(st);
}

int sqldb_close(struct sqldb *db)
{
	int err = db->err, code = sqlite3_close(db->db);

	if (code != SQLITE_OK && !err)
		err = -EIO;
	free(db);
	return err;
}
