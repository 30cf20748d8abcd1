/* The results database for reading only (runs, report, compare), and its
** explicit migration (vmxsim migrate).  docs/schema.md, "Read-only use". */
#include "store.h"
#include "store_int.h"
#include "sim/base/util.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Opens path read-only and reads its schema version: >= 0, or -1 with
** sqlite's message on *db (which the caller closes either way). */
static int64_t open_version(const char *path, bool immutable, sqlite3 **db) {
  char *uri = store_read_uri(path, immutable);
  int rc = sqlite3_open_v2(uri, db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
  free(uri);
  if (rc != SQLITE_OK || store_register_functions(*db) != SQLITE_OK) return -1;
  sqlite3_extended_result_codes(*db, 1);
  sqlite3_busy_timeout(*db, BUSY_TIMEOUT_MS);
  return store_query_int(*db, "PRAGMA user_version");
}

/* A WAL database needs its -shm file, which SQLite cannot make in a
** directory it may not write.  Without a -wal file holding changes, the
** database file alone is the whole database: read it as immutable. */
static bool retry_immutable(sqlite3 *db, const char *path) {
  int code = sqlite3_extended_errcode(db) & 0xff;
  return (code == SQLITE_READONLY || code == SQLITE_CANTOPEN) && !store_wal_has_changes(path);
}

static int needs_migration(const char *path, int64_t version, int target, char *err, size_t errlen) {
  snprintf(err, errlen, "results database %s: schema version %lld, this vmxsim needs %d; "
           "run 'vmxsim migrate --db %s' to upgrade it (read-only commands never change the file)",
           path, (long long)version, target, path);
  return EXIT_DB;
}

int store_open_readonly(const char *path, sqlite3 **out, char *err, size_t errlen) {
  *out = NULL;
  int rc = store_check_path(path, false, err, errlen);
  if (rc) return rc;
  sqlite3 *db = NULL;
  bool immutable = store_read_as_immutable(path);
  int64_t version = open_version(path, immutable, &db);
  if (version < 0 && db && !immutable && retry_immutable(db, path)) {
    sqlite3_close(db);
    db = NULL;
    version = open_version(path, true, &db);
  }
  if (version < 0) rc = store_db_error(db, path, "cannot open", err, errlen);
  else if (version > STORE_SCHEMA_VERSION) rc = store_newer_error(path, version, STORE_SCHEMA_VERSION, err, errlen);
  else if ((rc = store_check_ours(db, path, version, err, errlen)) == 0 && version < STORE_SCHEMA_VERSION)
    rc = needs_migration(path, version, STORE_SCHEMA_VERSION, err, errlen);
  if (rc) sqlite3_close(db);
  else *out = db;
  return rc;
}

int store_migrate_file(const char *path, int *from, int *to, char *err, size_t errlen) {
  sqlite3 *db = NULL;
  *from = *to = 0;
  int rc = store_check_path(path, false, err, errlen);
  if (rc) return rc;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK)
    *from = (int)store_query_int(db, "PRAGMA user_version");
  sqlite3_close(db);
  db = NULL;
  rc = store_open_journal(path, false, STORE_JOURNAL_KEEP, &db, err, errlen);
  if (rc == 0) *to = (int)store_query_int(db, "PRAGMA user_version");
  store_close(db);
  return rc;
}
