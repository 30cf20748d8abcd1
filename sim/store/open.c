/* Opening the results database for writing: the checks that name the problem
** where SQLite's message would mislead, WAL and the busy timeout, the schema
** brought forward; and the error and statement helpers that every file of
** sim/store shares, so that they all report a failure the same way. */
#include "store.h"
#include "store_int.h"
#include "sim/base/outfile.h"
#include "sim/base/util.h"
#include "sim/base/version.h"

#include <sqlite3.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- errors ---- */

/* Formats "results database PATH: WHAT: sqlite's message (hint)" and returns EXIT_DB. */
int store_db_error(sqlite3 *db, const char *path, const char *what, char *err, size_t errlen) {
  int code = db ? sqlite3_extended_errcode(db) & 0xff : SQLITE_NOMEM;
  int sys = db ? sqlite3_system_errno(db) : 0;
  const char *hint = "";
  char readonly[1200];
  switch (code) {
  case SQLITE_NOTADB: hint = " (not an SQLite database; choose another file with --db)"; break;
  case SQLITE_READONLY:
    if (store_write_problem(path, readonly + 2, sizeof readonly - 40)) {
      memcpy(readonly, " (", 2);
      strcat(readonly, "; choose another file with --db)");
      hint = readonly;
    } else {
      hint = " (choose another file with --db)";
    }
    break;
  case SQLITE_FULL: hint = " (no space left on the device)"; break;
  case SQLITE_BUSY: hint = " (other processes kept it locked for more than 10 s)"; break;
  case SQLITE_CORRUPT: hint = " (the database is damaged; choose another file with --db)"; break;
  default: break;
  }
  char sysmsg[160] = "";
  if (sys && (code == SQLITE_CANTOPEN || code == SQLITE_IOERR))
    snprintf(sysmsg, sizeof sysmsg, " (%s)", strerror(sys));
  snprintf(err, errlen, "results database %s: %s: %s%s%s", path, what,
           db ? sqlite3_errmsg(db) : "out of memory", hint, sysmsg);
  return EXIT_DB;
}

int store_exec(sqlite3 *db, const char *sql) { return sqlite3_exec(db, sql, NULL, NULL, NULL); }

/* Runs a one-integer query; -1 on error (sqlite's message stays on db). */
int64_t store_query_int(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = NULL;
  int64_t v = -1;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
    v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

/* ---- statements ---- */

int store_bind_text(sqlite3_stmt *st, int i, const char *s) {
  return sqlite3_bind_text(st, i, s ? s : "", -1, SQLITE_STATIC);
}

/* Steps a bound INSERT to completion and resets it for the next row. */
int store_step_done(sqlite3_stmt *st) {
  int rc = sqlite3_step(st);
  sqlite3_reset(st);
  return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

void store_utc_text(int64_t t, char out[32]) {
  time_t tt = (time_t)t;
  struct tm tm;
  gmtime_r(&tt, &tm);
  strftime(out, 32, "%Y-%m-%d %H:%M:%S", &tm);
}

/* ---- opening ---- */

/* Refuses what sqlite3_open would misreport: an empty name, a directory, a missing file. */
int store_check_path(const char *path, bool create, char *err, size_t errlen) {
  struct stat sb;
  if (!path || !*path) {
    snprintf(err, errlen, "results database: empty file name (use --db FILE)");
    return EXIT_DB;
  }
  if (stat(path, &sb) == 0) {
    if (S_ISDIR(sb.st_mode)) {
      snprintf(err, errlen, "results database %s: is a directory, not a database file (use --db FILE)", path);
      return EXIT_DB;
    }
    /* Left by an older vmxsim killed while creating it: nothing was ever stored. */
    if (sb.st_size == 0 && !create) {
      snprintf(err, errlen, "results database %s is empty (0 bytes): no run was ever stored in it (the next "
               "stored run makes it a database; --db FILE chooses another)", path);
      return EXIT_DB;
    }
    return 0;
  }
  if (errno == ENOENT && !create) {
    snprintf(err, errlen, "results database %s does not exist (runs are stored there by "
             "'vmxsim --policy P TRACE'; --db FILE chooses another)", path);
    return EXIT_DB;
  }
  return 0;   /* a new file: store_open_journal creates it */
}

/* A writer's open refused before SQLite would fail half way: whatever of
** the database is read-only, named. */
static int check_writable(const char *path, char *err, size_t errlen) {
  char why[1024];
  if (!store_write_problem(path, why, sizeof why)) return 0;
  snprintf(err, errlen, "results database %s: cannot write it: %s (choose another file with --db, or --no-db)",
           path, why);
  return EXIT_DB;
}

/* A new database is made whole under a temporary name (schema and all) and
** only then linked to its name, so that a kill or a full disk never leaves
** an empty or half-made file there.  Linked, not renamed: when another
** process made the same file meanwhile, its file (maybe holding runs) stays
** and is used. */
static int create_new(const char *path, char *err, size_t errlen) {
  struct outfile o;
  int rc = outfile_begin(&o, path, OUTFILE_REGULAR, err, errlen);
  if (rc) return EXIT_DB;
  sqlite3 *db = NULL;
  if (sqlite3_open_v2(outfile_path(&o), &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK ||
      store_register_functions(db) != SQLITE_OK) {
    rc = store_db_error(db, path, "cannot create", err, errlen);
  } else {
    sqlite3_extended_result_codes(db, 1);
    /* no -journal file beside the temporary one: a kill would leave it behind */
    rc = store_exec(db, "PRAGMA journal_mode=MEMORY") == SQLITE_OK
           ? store_migrate(db, path, store_migrations, store_nmigrations, err, errlen)
           : store_db_error(db, path, "cannot create", err, errlen);
  }
  if (sqlite3_close(db) != SQLITE_OK && !rc) rc = store_db_error(db, path, "cannot create", err, errlen);
  if (rc) {
    outfile_discard(&o);
    return rc;
  }
  rc = outfile_commit_new(&o, err, errlen);
  return rc ? EXIT_DB : 0;
}

/* WAL lets readers and one writer work at once; the mode persists in the file.
** Switching needs a moment of exclusive access, so retry while others hold it.
** mode: "wal", or "delete" (a rollback journal). */
static int set_journal(sqlite3 *db, const char *mode) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL);
  if (rc == SQLITE_OK) rc = sqlite3_step(st);
  bool same = rc == SQLITE_ROW && sqlite3_stricmp((const char *)sqlite3_column_text(st, 0), mode) == 0;
  sqlite3_finalize(st);
  if (rc != SQLITE_ROW) return rc;
  if (same) return SQLITE_OK;
  char sql[48];
  snprintf(sql, sizeof sql, "PRAGMA journal_mode=%s", mode);
  for (int tries = 0; tries < BUSY_TIMEOUT_MS / 10; tries++) {
    rc = store_exec(db, sql);
    if ((rc & 0xff) != SQLITE_BUSY) return rc;
    sqlite3_sleep(10);
  }
  return rc;
}

int store_open_journal(const char *path, bool create, enum store_journal journal, sqlite3 **out,
                       char *err, size_t errlen) {
  sqlite3 *db = NULL;
  *out = NULL;
  int rc = store_check_path(path, create, err, errlen);
  if (rc) return rc;
  /* An existing file, an empty one included (left by an older vmxsim, or being
  ** made by another process), is opened as it is: SQLite's locks order the
  ** processes that make its schema.  Only a missing one is made here. */
  struct stat sb;
  rc = stat(path, &sb) == 0 ? check_writable(path, err, errlen) : create_new(path, err, errlen);
  if (rc) return rc;
  /* URIs are for ATTACH (a merge's read-only shards); the path itself stays a
  ** plain name: one that starts with "file:" is opened as "./file:..." */
  char *name = strncmp(path, "file:", 5) ? xstrdup(path) : store_sidecar("./", path);
  int orc = sqlite3_open_v2(name, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI, NULL);
  free(name);
  if (orc != SQLITE_OK || store_register_functions(db) != SQLITE_OK) {
    rc = store_db_error(db, path, "cannot open", err, errlen);
    goto done;
  }
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, BUSY_TIMEOUT_MS);
  const char *mode = journal == STORE_JOURNAL_WAL ? "wal" : journal == STORE_JOURNAL_ROLLBACK ? "delete" : NULL;
  if (mode && sqlite3_db_readonly(db, "main") == 0 && set_journal(db, mode) != SQLITE_OK) {
    rc = store_db_error(db, path, "cannot open", err, errlen);
    goto done;
  }
  rc = store_migrate(db, path, store_migrations, store_nmigrations, err, errlen);
done:
  if (rc) sqlite3_close(db);
  else *out = db;
  return rc;
}

int store_open(const char *path, bool create, sqlite3 **out, char *err, size_t errlen) {
  return store_open_journal(path, create, STORE_JOURNAL_WAL, out, err, errlen);
}

void store_close(sqlite3 *db) { sqlite3_close(db); }

/* ---- refusals that readonly.c and the migration share ---- */

int store_newer_error(const char *path, int64_t version, int known, char *err, size_t errlen) {
  snprintf(err, errlen, "results database %s: schema version %lld is newer than this vmxsim (%s) "
           "understands (%d); use a newer vmxsim, or another file with --db", path, (long long)version,
           VMXSIM_VERSION, known);
  return EXIT_DB;
}

/* A version-0 file with tables, or another application's id, is someone else's database. */
int store_check_ours(sqlite3 *db, const char *path, int64_t version, char *err, size_t errlen) {
  int64_t app = store_query_int(db, "PRAGMA application_id");
  int64_t tables = version == 0 ? store_query_int(db, "SELECT count(*) FROM sqlite_master") : 0;
  if (app < 0 || tables < 0) return store_db_error(db, path, "cannot read the schema", err, errlen);
  if ((app != 0 && app != STORE_APPLICATION_ID) || tables > 0) {
    snprintf(err, errlen, "results database %s: an SQLite database, but not a vmxsim results database "
             "(choose another file with --db)", path);
    return EXIT_DB;
  }
  return 0;
}
