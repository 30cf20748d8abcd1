/* What the results-database unit tests share (test_store.c, test_known.c,
** test_merge.c): a scratch directory per test, and one-value SQL queries on a
** database file opened beside the store's own connection. */
#ifndef VMXSIM_TEST_DB_FIXTURE_H
#define VMXSIM_TEST_DB_FIXTURE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sqlite3.h>

/* A new directory /tmp/vmxsim-WHAT-XXXXXX into dir; false when it cannot be made. */
static inline int scratch_dir_make(char *dir, size_t n, const char *what) {
  snprintf(dir, n, "/tmp/vmxsim-%s-XXXXXX", what);
  return mkdtemp(dir) != NULL;
}

/* Removes the directory and all in it: 0, or -1 (a cmocka teardown's result). */
static inline int scratch_dir_remove(const char *dir) {
  char cmd[160];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

/* The first column of the first row of sql on the database at path; -1 when none. */
static inline int64_t sql_int(const char *path, const char *sql) {
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  int64_t v = -1;
  if (sqlite3_open(path, &db) == SQLITE_OK && sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return v;
}

#endif
