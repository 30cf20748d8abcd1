/* Unit tests for the remembered hashes of trace files (sim/store/known.h): when
** a hash is remembered, when it is given back, and when it is not. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/trace/hash.h"
#include "sim/replay/report.h"
#include "sim/store/known.h"
#include "sim/store/store.h"
#include "db_fixture.h"

struct fx {
  char dir[64], db[96], trace[96], other[96];
  char err[1024];
  struct report rep;
};

static void write_file(const char *path, const char *text) {
  FILE *t = fopen(path, "wb");
  assert_non_null(t);
  fputs(text, t);
  fclose(t);
}

static int setup(void **state) {
  struct fx *f = calloc(1, sizeof *f);
  if (!scratch_dir_make(f->dir, sizeof f->dir, "known")) return -1;
  snprintf(f->db, sizeof f->db, "%s/r.db", f->dir);
  snprintf(f->trace, sizeof f->trace, "%s/t.bin", f->dir);
  snprintf(f->other, sizeof f->other, "%s/u.bin", f->dir);
  write_file(f->trace, "the content of a trace file");
  snprintf(f->rep.trace, sizeof f->rep.trace, "t.bin");
  snprintf(f->rep.policy, sizeof f->rep.policy, "nocache");
  snprintf(f->rep.cpu, sizeof f->rep.cpu, "core2-2007");
  snprintf(f->rep.paging, sizeof f->rep.paging, "pae");
  f->rep.vcpus = 1;
  f->rep.clock_ghz = 2.4;
  *state = f;
  return 0;
}

static int teardown(void **state) {
  struct fx *f = *state;
  int rc = scratch_dir_remove(f->dir);
  free(f);
  return rc;
}

/* The file as looked at `later` seconds after its last change: a test cannot
** wait for a file to settle, so it moves the moment of the look instead. */
static void look(const char *path, struct file_seen *s, int later) {
  assert_true(file_seen_take(path, s));
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  s->at_ns = (int64_t)st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec + later * 1000000000LL;
}

/* Stores a run of f->trace (hashed by the store) with the file as seen. */
static void store_with(struct fx *f, const struct file_seen *seen) {
  struct store_run run = { .rep = &f->rep, .trace_path = f->trace, .trace_metadata = "", .trace_events = 0,
                           .policy_json = "{}", .profile_json = "{}", .wall_seconds = 0.1, .seen = seen };
  int64_t id = 0;
  if (store_save(f->db, &run, &id, f->err, sizeof f->err) != 0) fail_msg("store_save: %s", f->err);
}

static void test_seen_of_files(void **state) {
  struct fx *f = *state;
  struct file_seen s;
  assert_true(file_seen_take(f->trace, &s));
  assert_int_equal(s.path[0], '/');
  assert_int_equal(s.size, (int64_t)strlen("the content of a trace file"));
  struct file_seen again;
  assert_true(file_seen_take(f->trace, &again));
  assert_true(file_seen_same(&s, &again));
  file_seen_free(&again);
  file_seen_free(&s);
  assert_false(file_seen_take(f->dir, &s));            /* a directory */
  assert_false(s.ok);
  file_seen_free(&s);
  assert_false(file_seen_take("/nonexistent/t.bin", &s));
  file_seen_free(&s);
}

static void test_settled_needs_an_old_ctime(void **state) {
  struct fx *f = *state;
  struct file_seen s;
  look(f->trace, &s, 0);
  assert_false(file_seen_settled(&s));
  s.at_ns += FILE_SETTLED_NS;                           /* exactly the margin: still racy */
  assert_false(file_seen_settled(&s));
  s.at_ns += 1;
  assert_true(file_seen_settled(&s));
  file_seen_free(&s);
}

/* A settled file's hash is remembered with the run and given back for the file unchanged. */
static void test_remembered_and_given_back(void **state) {
  struct fx *f = *state;
  struct file_seen s;
  look(f->trace, &s, 10);
  store_with(f, &s);
  file_seen_free(&s);
  assert_int_equal(sql_int(f->db, "SELECT count(*) FROM trace_files"), 1);
  char want[HASH_HEX_LEN + 1], got[HASH_HEX_LEN + 1] = "";
  assert_int_equal(hash_file(f->trace, want, f->err, sizeof f->err), EXIT_OK);
  struct file_seen now;
  assert_true(file_seen_take(f->trace, &now));
  assert_true(store_known_hash(f->db, &now, got));
  assert_string_equal(got, want);
  file_seen_free(&now);
}

/* A file changed in the last FILE_SETTLED_NS may change again without its
** times moving: its hash is not remembered. */
static void test_recent_file_not_remembered(void **state) {
  struct fx *f = *state;
  struct file_seen s;
  look(f->trace, &s, 1);
  store_with(f, &s);
  assert_int_equal(sql_int(f->db, "SELECT count(*) FROM runs"), 1);
  assert_int_equal(sql_int(f->db, "SELECT count(*) FROM trace_files"), 0);
  char got[HASH_HEX_LEN + 1];
  assert_false(store_known_hash(f->db, &s, got));
  file_seen_free(&s);
}

/* Changed between the look and the store (while it was replayed): not remembered. */
static void test_changed_before_the_store_not_remembered(void **state) {
  struct fx *f = *state;
  struct file_seen s;
  look(f->trace, &s, 10);
  write_file(f->trace, "the content of a trace file, changed");
  store_with(f, &s);
  assert_int_equal(sql_int(f->db, "SELECT count(*) FROM trace_files"), 0);
  file_seen_free(&s);
}

/* Once remembered, a file rewritten (other size) or replaced (other inode) is not known. */
static void test_changed_file_not_known(void **state) {
  struct fx *f = *state;
  struct file_seen s;
  look(f->trace, &s, 10);
  store_with(f, &s);
  file_seen_free(&s);
  char got[HASH_HEX_LEN + 1];
  write_file(f->trace, "the content of a trace file, and more");
  assert_true(file_seen_take(f->trace, &s));
  assert_false(store_known_hash(f->db, &s, got));
  file_seen_free(&s);

  look(f->trace, &s, 10);                               /* remembered again as it is now */
  store_with(f, &s);
  file_seen_free(&s);
  write_file(f->other, "the content of a trace file, and MORE");   /* same size, another file */
  assert_int_equal(rename(f->other, f->trace), 0);
  assert_true(file_seen_take(f->trace, &s));
  assert_false(store_known_hash(f->db, &s, got));
  file_seen_free(&s);
  assert_int_equal(sql_int(f->db, "SELECT count(*) FROM trace_files"), 1);   /* one row per path */
}

/* No database, not a database, a database from before trace_files: nothing known, no error. */
static void test_unknown_databases(void **state) {
  struct fx *f = *state;
  struct file_seen s;
  look(f->trace, &s, 10);
  char got[HASH_HEX_LEN + 1];
  assert_false(store_known_hash(f->db, &s, got));
  assert_int_equal(access(f->db, F_OK), -1);            /* and none was created */
  assert_false(store_known_hash(f->trace, &s, got));
  assert_false(store_known_hash(f->dir, &s, got));
  sqlite3 *db = NULL;
  assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
  assert_int_equal(store_register_functions(db), SQLITE_OK);   /* step 3 computes run keys */
  assert_int_equal(store_migrate(db, f->db, store_migrations, 3, f->err, sizeof f->err), 0);
  sqlite3_close(db);
  assert_false(store_known_hash(f->db, &s, got));
  assert_int_equal(sql_int(f->db, "PRAGMA user_version"), 3);   /* only read */
  store_with(f, &s);                                    /* a store migrates it and remembers */
  assert_true(store_known_hash(f->db, &s, got));
  file_seen_free(&s);
}

/* Deleting the last run of a trace forgets its file. */
static void test_delete_forgets(void **state) {
  struct fx *f = *state;
  struct file_seen s;
  look(f->trace, &s, 10);
  store_with(f, &s);
  file_seen_free(&s);
  struct sqlite3 *db = NULL;
  assert_int_equal(store_open(f->db, false, &db, f->err, sizeof f->err), 0);
  int64_t id = 1, deleted = 0;
  assert_int_equal(store_delete_runs(db, f->db, &id, 1, &deleted, f->err, sizeof f->err), 0);
  store_close(db);
  assert_int_equal(deleted, 1);
  assert_int_equal(sql_int(f->db, "SELECT count(*) FROM trace_files"), 0);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
    T(test_seen_of_files),
    T(test_settled_needs_an_old_ctime),
    T(test_remembered_and_given_back),
    T(test_recent_file_not_remembered),
    T(test_changed_before_the_store_not_remembered),
    T(test_changed_file_not_known),
    T(test_unknown_databases),
    T(test_delete_forgets),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
