/* What the files of sim/store share and nobody else needs. */
#ifndef VMXSIM_STORE_INT_H
#define VMXSIM_STORE_INT_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Formats "results database PATH: WHAT: sqlite's message (hint)" into err and
** returns EXIT_DB. */
int store_db_error(sqlite3 *db, const char *path, const char *what, char *err, size_t errlen);

/* Long enough for a few writers storing runs back to back; a run's
** transaction lasts milliseconds. */
#define BUSY_TIMEOUT_MS 10000

/* The checks of opening, shared by open.c, readonly.c and the migration
** (schema.c); each returns 0 or EXIT_DB with the message in err. */
int store_check_path(const char *path, bool create, char *err, size_t errlen);
int store_newer_error(const char *path, int64_t version, int known, char *err, size_t errlen);
/* A version-0 file with tables, or another application's id, is someone else's database. */
int store_check_ours(sqlite3 *db, const char *path, int64_t version, char *err, size_t errlen);
/* Remembers hash as the content of the file `before` saw (known.h), inside the
** caller's transaction, when the file is settled and unchanged since; an
** SQLite result code (SQLITE_OK also when it is not remembered). */
struct file_seen;
int store_remember_hash(sqlite3 *db, const struct file_seen *before, const char *hash);
/* access.c: what of a database may be written, and how a reader opens it.
** store_sidecar: path + suffix ("-wal", "-shm", "-journal"), malloc'd.
** store_write_problem: whether a writer would meet something read-only (the
** file, its -wal, -shm or -journal, its directory, the file system); why
** names it ("k.db-wal is read-only for this user").
** store_wal_has_changes: whether path's -wal holds changes not in the file.
** store_read_as_immutable: whether a reader should open path as immutable
** (it may not write the file, and no change waits in its -wal), so that
** SQLite creates no -wal or -shm beside it.
** store_read_uri: "file:PATH?immutable=1" or "file:PATH?mode=ro" (malloc'd;
** open with SQLITE_OPEN_URI). */
char *store_sidecar(const char *path, const char *suffix);
bool store_write_problem(const char *path, char *why, size_t n);
bool store_wal_has_changes(const char *path);
bool store_read_as_immutable(const char *path);
char *store_read_uri(const char *path, bool immutable);

/* A one-integer query; -1 on error (sqlite's message stays on db). */
int64_t store_query_int(sqlite3 *db, const char *sql);

/* The statement helpers of every file that reads or writes rows (open.c), so
** that all of them bind, step and report alike. */
/* sqlite3_exec without callback or message: the caller reports the error from db. */
int store_exec(sqlite3 *db, const char *sql);
/* Binds s without a copy, so s must outlive the step; NULL binds "" (the columns are NOT NULL). */
int store_bind_text(sqlite3_stmt *st, int i, const char *s);
/* Steps a bound INSERT, UPDATE or DELETE to completion and resets it: SQLITE_OK or the error. */
int store_step_done(sqlite3_stmt *st);
/* Unix time t as the database keeps times: UTC, "YYYY-MM-DD HH:MM:SS". */
void store_utc_text(int64_t t, char out[32]);

#endif
