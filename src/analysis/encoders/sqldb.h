/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_ANALYSIS_ENCODERS_SQLDB_H
#define GTRACE_ANALYSIS_ENCODERS_SQLDB_H

/*
 * The little of SQLite that export --format sqlite writes with: a new
 * database, statements run once or prepared and run per row. libsqlite3
 * (sqldb-libsqlite.c), or nothing when gtrace is built without it
 * (sqldb-stub.c): then sqldb_available is false and sqldb_open fails.
 *
 * The first error sticks: binding and stepping go on as no-ops after it,
 * and sqldb_close returns it, so that a writer checks once at the end.
 */

#include <stdbool.h>
#include <stdint.h>

struct sqldb;
struct sqlstmt;

/* Whether this gtrace was built with libsqlite3. */
bool sqldb_available(void);

/*
 * Opens path, an empty file or none, as a new database written without a
 * journal or syncs: a file nobody reads until it is whole. 0, -ENOTSUP
 * without libsqlite3, or a negative errno (-EIO for SQLite's own errors).
 */
int sqldb_open(struct sqldb **db, const char *path);
/* Runs sql, one or more statements without parameters. */
void sqldb_exec(struct sqldb *db, const char *sql);
/* A statement to run per row; NULL after an error. */
struct sqlstmt *sqldb_prepare(struct sqldb *db, const char *sql);
/* Binds parameter i (1, 2, ...) of the row to come. */
void sqlstmt_int(struct sqlstmt *st, int i, int64_t v);
/* A value past INT64_MAX as the nearest REAL: SQLite's integers are signed. */
void sqlstmt_u64(struct sqlstmt *st, int i, uint64_t v);
void sqlstmt_real(struct sqlstmt *st, int i, double v);
/* NULL text binds NULL; the text is copied. */
void sqlstmt_text(struct sqlstmt *st, int i, const char *v);
void sqlstmt_null(struct sqlstmt *st, int i);
/* Inserts the row bound, then unbinds every parameter (NULL) for the next. */
void sqlstmt_run(struct sqlstmt *st);
void sqlstmt_free(struct sqlstmt *st);
/*
 * Closes the database (its statements freed first): 0, or the first
 * error, a negative errno: -ENOSPC for a full disk, else -EIO.
 */
int sqldb_close(struct sqldb *db);

#endif
