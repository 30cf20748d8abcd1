/* Unit tests for the results database: hashing, schema creation and migration, round trips, atomicity, errors. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/trace/hash.h"
#include "sim/replay/report.h"
#include "sim/store/store.h"
#include "sim/base/util.h"
#include "faulty_vfs.h"
#include "db_fixture.h"
#include "sim/present/report_print.h"

#define assert_contains(hay, needle) do { \
    const char *h_ = (hay), *n_ = (needle); \
    if (!strstr(h_, n_)) fail_msg("expected to contain: %s\n  actual: %s", n_, h_); \
  } while (0)

/* ---- fixtures: a scratch directory with a small "trace" file ---- */

struct fx {
  char dir[64], db[96], trace[96];
  char err[1024];
};

static int setup(void **state) {
  struct fx *f = calloc(1, sizeof *f);
  if (!scratch_dir_make(f->dir, sizeof f->dir, "store")) return -1;
  snprintf(f->db, sizeof f->db, "%s/r.db", f->dir);
  snprintf(f->trace, sizeof f->trace, "%s/t.bin", f->dir);
  FILE *t = fopen(f->trace, "wb");
  if (!t) return -1;
  fputs("not really a trace, but hashable", t);
  fclose(t);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  struct fx *f = *state;
  int rc = scratch_dir_remove(f->dir);
  free(f);
  return rc;
}

/* A report with every kind of field set, including values above INT64_MAX. */
static void sample_report(struct report *rep, const char *policy) {
  memset(rep, 0, sizeof *rep);
  snprintf(rep->trace, sizeof rep->trace, "dir/lat_ctx.bin");
  snprintf(rep->workload, sizeof rep->workload, "lat_ctx");
  snprintf(rep->policy, sizeof rep->policy, "%s", policy);
  snprintf(rep->cpu, sizeof rep->cpu, "core2-2007");
  snprintf(rep->paging, sizeof rep->paging, "pae");
  rep->vcpus = 2;
  rep->clock_ghz = 2.4;
  rep->events = 1000;
  rep->total_exits = 30;
  rep->marks = 10;
  rep->guest_cycles = 123456789;
  rep->vmm_cycles = 987654;
  rep->elapsed_cycles = UINT64_MAX - 5;
  struct report_row rows[] = {
    { "CR_ACCESS", "", 28, 20, 400000, 15000, 16000, 20000, 25000, 30000 },
    { "cr3 write", "CR_ACCESS", 28, 20, 400000, 15000, 16000, 20000, 25000, 30000 },
    { "HLT", "", 12, 10, 587654, 100, 200, 300, 400, UINT64_MAX },
  };
  memcpy(rep->rows, rows, sizeof rows);
  rep->nrows = 3;
  for (unsigned c = 0; c < CTR_COUNT; c++)
    rep->counters[rep->ncounters++] = (struct report_counter){ counter_name(c), c * 7 };
}

static struct store_run sample_run(const struct fx *f, const struct report *rep) {
  return (struct store_run){ .rep = rep, .trace_path = f->trace, .trace_metadata = "{\"procs\": 2}",
                             .trace_events = 1000, .policy_json = "{\"paging\": \"shadow\"}",
                             .profile_json = "{\"name\": \"core2-2007\"}", .wall_seconds = 0.5 };
}

static char *print_to_string(const struct report *rep, enum report_format fmt) {
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  report_print(m, rep, fmt);
  fclose(m);
  return buf;
}

static void sql_exec(const char *path, const char *sql) {
  sqlite3 *db = NULL;
  char *msg = NULL;
  assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
  if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) fail_msg("%s: %s", sql, msg);
  sqlite3_close(db);
}

/* ---- hashing ---- */

static void test_xxh64_known_values(void **state) {
  (void)state;
  assert_true(xxh64("", 0) == 0xef46db3751d8e999ULL);
  assert_true(xxh64("abc", 3) == 0x44bc2cf5ad770999ULL);
}

static void test_xxh64_streaming_equals_one_shot(void **state) {
  (void)state;
  unsigned char data[1000];
  for (unsigned i = 0; i < sizeof data; i++) data[i] = (unsigned char)(i * 131 + 7);
  for (size_t len = 0; len <= sizeof data; len += 37) {
    uint64_t one = xxh64(data, len);
    for (size_t step = 1; step < 70; step += 13) {
      struct xxh64 h;
      xxh64_init(&h);
      for (size_t off = 0; off < len; off += step) xxh64_update(&h, data + off, len - off < step ? len - off : step);
      assert_true(xxh64_final(&h) == one);
    }
  }
}

static void test_hash_file(void **state) {
  struct fx *f = *state;
  char hex[HASH_HEX_LEN + 1];
  assert_int_equal(hash_file(f->trace, hex, f->err, sizeof f->err), EXIT_OK);
  assert_int_equal(strlen(hex), 16);
  const char *s = "not really a trace, but hashable";
  char want[32];
  snprintf(want, sizeof want, "%016llx", (unsigned long long)xxh64(s, strlen(s)));
  assert_string_equal(hex, want);
  assert_int_equal(hash_file("/nonexistent/x", hex, f->err, sizeof f->err), EXIT_BADINPUT);
  assert_contains(f->err, "/nonexistent/x");
}

/* ---- schema ---- */

static void test_schema_created(void **state) {
  struct fx *f = *state;
  struct sqlite3 *db = NULL;
  assert_int_equal(store_open(f->db, true, &db, f->err, sizeof f->err), 0);
  store_close(db);
  assert_int_equal(store_migrations[store_nmigrations - 1].version, STORE_SCHEMA_VERSION);
  assert_int_equal(sql_int(f->db, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
  assert_int_equal(sql_int(f->db, "PRAGMA application_id"), STORE_APPLICATION_ID);
  assert_int_equal(sql_int(f->db, "SELECT count(*) FROM sqlite_master WHERE name IN "
                                  "('traces', 'runs', 'exits', 'counters', 'run_summary')"), 5);
  assert_int_equal(sql_int(f->db, "SELECT count(*) FROM pragma_journal_mode WHERE journal_mode = 'wal'"), 1);
  /* Opening again is a no-op. */
  assert_int_equal(store_open(f->db, true, &db, f->err, sizeof f->err), 0);
  store_close(db);
  assert_int_equal(sql_int(f->db, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
}

static void test_open_missing_without_create(void **state) {
  struct fx *f = *state;
  struct sqlite3 *db = NULL;
  assert_int_equal(store_open(f->db, false, &db, f->err, sizeof f->err), EXIT_DB);
  assert_contains(f->err, "does not exist");
  assert_int_equal(access(f->db, F_OK), -1);   /* and it was not created */
}

/* A database at version 1 meets a vmxsim that knows a version 2. */
static void test_migration_to_pretend_v2(void **state) {
  struct fx *f = *state;
  struct report rep;
  sample_report(&rep, "nocache");
  struct store_run run = sample_run(f, &rep);
  int64_t id;
  assert_int_equal(store_save(f->db, &run, &id, f->err, sizeof f->err), 0);

  struct store_migration steps[STORE_SCHEMA_VERSION + 1];
  memcpy(steps, store_migrations, store_nmigrations * sizeof *steps);
  steps[store_nmigrations] = (struct store_migration){ STORE_SCHEMA_VERSION + 1,
    "ALTER TABLE runs ADD COLUMN note TEXT NOT NULL DEFAULT 'migrated';"
    "CREATE TABLE tags (run_id INTEGER REFERENCES runs(id), tag TEXT);" };
  struct sqlite3 *db = NULL;
  assert_int_equal(store_open(f->db, false, &db, f->err, sizeof f->err), 0);
  assert_int_equal(store_migrate(db, f->db, steps, store_nmigrations + 1, f->err, sizeof f->err), 0);
  store_close(db);
  assert_int_equal(sql_int(f->db, "PRAGMA user_version"), STORE_SCHEMA_VERSION + 1);
  assert_int_equal(sql_int(f->db, "SELECT count(*) FROM runs WHERE note = 'migrated'"), 1);
  assert_int_equal(sql_int(f->db, "SELECT count(*) FROM tags"), 0);

  /* The real vmxsim now meets a database newer than it knows: a clear error, nothing changed. */
  assert_int_equal(store_open(f->db, false, &db, f->err, sizeof f->err), EXIT_DB);
  assert_contains(f->err, "newer than this vmxsim");
  assert_int_equal(store_save(f->db, &run, &id, f->err, sizeof f->err), EXIT_DB);
  char newer[48];
  snprintf(newer, sizeof newer, "schema version %d", STORE_SCHEMA_VERSION + 1);
  assert_contains(f->err, newer);
  assert_int_equal(sql_int(f->db, "SELECT count(*) FROM runs"), 1);
}

/* A version-1 database (before views) is migrated to the current version, keeps
** its runs, and then stores and loads a run's views. */
static void test_migration_from_v1_keeps_runs_and_adds_views(void **state) {
  struct fx *f = *state;
  struct report rep;
  sample_report(&rep, "nocache");
  struct store_run run = sample_run(f, &rep);
  int64_t id;
  struct sqlite3 *db = NULL;
  assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);                          /* version 1: step 1 alone */
  assert_int_equal(store_migrate(db, f->db, store_migrations, 1, f->err, sizeof f->err), 0);
  sqlite3_close(db);
  assert_int_equal(sql_int(f->db, "PRAGMA user_version"), 1);
  assert_int_equal(store_save(f->db, &run, &id, f->err, sizeof f->err), 0);      /* migrates, then stores */
  assert_int_equal(sql_int(f->db, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
  struct view_stat v[2] = {
    { .source = VS_MEASURED, .name = "CR_ACCESS", .dim = VD_REASON, .reason = 28, .key = 28, .count = 7, .cycles = 700, .avg = 100 },
    { .source = VS_SIMULATED, .name = "cr3 write", .parent = "CR_ACCESS", .dim = VD_CR, .reason = 28, .key = 7,
      .count = 7, .cycles = 7000, .avg = 1000, .p50 = 1000, .stddev = 1.5 },
  };
  rep.vrows = v;
  rep.nvrows = 2;
  assert_int_equal(store_save(f->db, &run, &id, f->err, sizeof f->err), 0);
  struct report back;
  assert_int_equal(store_load(f->db, id, &back, NULL, f->err, sizeof f->err), 0);
  assert_int_equal(back.nvrows, 2);
  assert_int_equal(back.vrows[0].source, VS_MEASURED);
  assert_string_equal(back.vrows[1].name, "cr3 write");
  assert_string_equal(back.vrows[1].parent, "CR_ACCESS");
  assert_int_equal(back.vrows[1].dim, VD_CR);
  assert_int_equal(back.vrows[1].cycles, 7000);
  assert_true(back.vrows[1].stddev == 1.5);
  assert_true(report_has_measured(&back));
  report_free(&back);
  assert_int_equal(sql_int(f->db, "SELECT count(*) FROM runs"), 2);
}

/* A database whose user_version is lower than the steps (here 0 but ours) is brought up to date. */
static void test_migration_from_lower_version(void **state) {
  struct fx *f = *state;
  sql_exec(f->db, "PRAGMA application_id = 1986885747");
  struct sqlite3 *db = NULL;
  assert_int_equal(store_open(f->db, false, &db, f->err, sizeof f->err), 0);
  store_close(db);
  assert_int_equal(sql_int(f->db, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
}

/* A failing step leaves the database as it was: all steps share one transaction. */
static void test_failed_migration_changes_nothing(void **state) {
  struct fx *f = *state;
  struct sqlite3 *db = NULL;
  assert_int_equal(store_open(f->db, true, &db, f->err, sizeof f->err), 0);
  enum { V = STORE_SCHEMA_VERSION };
  struct store_migration steps[STORE_SCHEMA_VERSION + 2];
  memcpy(steps, store_migrations, store_nmigrations * sizeof *steps);
  steps[V] = (struct store_migration){ V + 1, "CREATE TABLE fine (x);" };
  steps[V + 1] = (struct store_migration){ V + 2, "ALTER TABLE no_such_table ADD COLUMN y;" };
  assert_int_equal(store_migrate(db, f->db, steps, V + 2, f->err, sizeof f->err), EXIT_DB);
  char want[96];
  snprintf(want, sizeof want, "cannot upgrade the schema from version %d to %d", V, V + 2);
  assert_contains(f->err, want);
  store_close(db);
  assert_int_equal(sql_int(f->db, "PRAGMA user_version"), V);
  assert_int_equal(sql_int(f->db, "SELECT count(*) FROM sqlite_master WHERE name = 'fine'"), 0);
}

static void test_foreign_database_refused(void **state) {
  struct fx *f = *state;
  sql_exec(f->db, "CREATE TABLE accounts (id INTEGER)");
  struct sqlite3 *db = NULL;
  assert_int_equal(store_open(f->db, true, &db, f->err, sizeof f->err), EXIT_DB);
  assert_contains(f->err, "not a vmxsim results database");
}

/* ---- runs ---- */

static void test_run_round_trip(void **state) {
  struct fx *f = *state;
  struct report rep, back;
  sample_report(&rep, "shadowcache+lazydr,cr3_target_count=2");
  struct store_run run = sample_run(f, &rep);
  int64_t id = 0, loaded = 0;
  assert_int_equal(store_save(f->db, &run, &id, f->err, sizeof f->err), 0);
  assert_int_equal(id, 1);
  assert_int_equal(store_load(f->db, id, &back, &loaded, f->err, sizeof f->err), 0);
  assert_int_equal(loaded, id);
  assert_int_equal(strlen(back.trace_hash), 16);
  for (int fmt = FORMAT_TABLE; fmt <= FORMAT_CSV; fmt++) {
    char *a = print_to_string(&rep, (enum report_format)fmt), *b = print_to_string(&back, (enum report_format)fmt);
    assert_string_equal(a, b);
    free(a);
    free(b);
  }
  assert_true(back.elapsed_cycles == UINT64_MAX - 5);
  assert_true(back.rows[2].max == UINT64_MAX);
  assert_int_equal(sql_int(f->db, "SELECT count(*) FROM traces WHERE json_extract(metadata, '$.procs') = 2"), 1);
  assert_int_equal(sql_int(f->db, "SELECT events_per_sec FROM runs"), 2000);
}

static void test_last_and_missing_runs(void **state) {
  struct fx *f = *state;
  struct report rep, back;
  int64_t id, loaded;
  sample_report(&rep, "nocache");
  struct store_run run = sample_run(f, &rep);
  assert_int_equal(store_save(f->db, &run, &id, f->err, sizeof f->err), 0);
  assert_int_equal(store_load(f->db, -1, &back, &loaded, f->err, sizeof f->err), 0);
  assert_int_equal(loaded, 1);
  sample_report(&rep, "ept");
  assert_int_equal(store_save(f->db, &run, &id, f->err, sizeof f->err), 0);
  assert_int_equal(store_load(f->db, -1, &back, &loaded, f->err, sizeof f->err), 0);
  assert_int_equal(loaded, 2);
  assert_string_equal(back.policy, "ept");
  assert_int_equal(store_load(f->db, 99, &back, &loaded, f->err, sizeof f->err), EXIT_USAGE);
  assert_contains(f->err, "no run 99");
  /* Two runs of one trace share its row. */
  assert_int_equal(sql_int(f->db, "SELECT count(*) FROM traces"), 1);
}

static void test_load_from_empty_database(void **state) {
  struct fx *f = *state;
  struct sqlite3 *db = NULL;
  struct report back;
  assert_int_equal(store_open(f->db, true, &db, f->err, sizeof f->err), 0);
  store_close(db);
  assert_int_equal(store_load(f->db, -1, &back, NULL, f->err, sizeof f->err), EXIT_USAGE);
  assert_contains(f->err, "no runs stored yet");
}

/* An insert failing half way through (a trigger stands in for a crash or a
** full disk) leaves no trace of the run. */
static void test_failed_save_leaves_nothing(void **state) {
  struct fx *f = *state;
  struct report rep;
  int64_t id;
  sample_report(&rep, "nocache");
  struct store_run run = sample_run(f, &rep);
  assert_int_equal(store_save(f->db, &run, &id, f->err, sizeof f->err), 0);
  sql_exec(f->db, "CREATE TRIGGER boom BEFORE INSERT ON counters WHEN NEW.seq = 3 "
                  "BEGIN SELECT RAISE(ABORT, 'disk on fire'); END");
  snprintf(rep.trace_hash, sizeof rep.trace_hash, "00000000deadbeef");   /* a new trace row too */
  assert_int_equal(store_save(f->db, &run, &id, f->err, sizeof f->err), EXIT_DB);
  assert_contains(f->err, "cannot store the run: disk on fire");
  assert_int_equal(sql_int(f->db, "SELECT count(*) FROM runs"), 1);
  assert_int_equal(sql_int(f->db, "SELECT count(*) FROM traces"), 1);
  assert_int_equal(sql_int(f->db, "SELECT count(*) FROM exits WHERE run_id <> 1"), 0);
  assert_int_equal(sql_int(f->db, "SELECT count(*) FROM counters WHERE run_id <> 1"), 0);
}

/* A storage fault in the middle of the run's transaction (docs/schema.md,
** "Storage faults"): EXIT_DB with SQLite's reason, and the database as it was. */
static void check_fault(struct fx *f, int code, int after, const char *why) {
  struct report rep;
  int64_t id;
  sample_report(&rep, "nocache");
  struct store_run run = sample_run(f, &rep);
  assert_int_equal(store_save(f->db, &run, &id, f->err, sizeof f->err), 0);
  snprintf(rep.trace_hash, sizeof rep.trace_hash, "00000000deadbee%d", after);   /* a new trace row too */
  int64_t runs = sql_int(f->db, "SELECT count(*) FROM runs"), traces = sql_int(f->db, "SELECT count(*) FROM traces");
  int64_t exits = sql_int(f->db, "SELECT count(*) FROM exits"), counters = sql_int(f->db, "SELECT count(*) FROM counters");
  faulty_vfs_fail(code, after);
  int rc = store_save(f->db, &run, &id, f->err, sizeof f->err);
  faulty_vfs_fail(0, 0);
  print_message("fault 0x%x after %d writes: rc %d (expected %d), %s\n", code, after, rc, EXIT_DB, f->err);
  assert_int_equal(rc, EXIT_DB);
  assert_contains(f->err, "cannot store the run");
  assert_contains(f->err, why);
  assert_int_equal(sql_int(f->db, "SELECT count(*) FROM runs"), runs);
  assert_int_equal(sql_int(f->db, "SELECT count(*) FROM traces"), traces);
  assert_int_equal(sql_int(f->db, "SELECT count(*) FROM exits"), exits);
  assert_int_equal(sql_int(f->db, "SELECT count(*) FROM counters"), counters);
  assert_int_equal(sql_int(f->db, "SELECT count(*) FROM pragma_integrity_check WHERE integrity_check <> 'ok'"), 0);
  assert_int_equal(store_save(f->db, &run, &id, f->err, sizeof f->err), 0);   /* healed: stores again */
  assert_int_equal(sql_int(f->db, "SELECT count(*) FROM runs"), runs + 1);
}

static void test_io_error_during_store(void **state) {
  for (int after = 0; after < 3; after++) check_fault(*state, SQLITE_IOERR_WRITE, after, "disk I/O error");
}

static void test_full_disk_during_store(void **state) {
  check_fault(*state, SQLITE_FULL, 0, "no space left on the device");
}

/* A counter this build does not know (stored by another version) still prints. */
static void test_unknown_counter_kept(void **state) {
  struct fx *f = *state;
  struct report rep, back;
  int64_t id;
  sample_report(&rep, "nocache");
  struct store_run run = sample_run(f, &rep);
  assert_int_equal(store_save(f->db, &run, &id, f->err, sizeof f->err), 0);
  sql_exec(f->db, "UPDATE counters SET name = 'from_the_future' WHERE seq = 1");
  assert_int_equal(store_load(f->db, id, &back, NULL, f->err, sizeof f->err), 0);
  assert_string_equal(back.counters[1].name, "from_the_future");
  assert_int_equal(back.counters[1].value, 7);
}

static void test_bad_paths(void **state) {
  struct fx *f = *state;
  struct report rep;
  int64_t id;
  sample_report(&rep, "nocache");
  struct store_run run = sample_run(f, &rep);
  assert_int_equal(store_save(f->dir, &run, &id, f->err, sizeof f->err), EXIT_DB);
  assert_contains(f->err, "is a directory");
  assert_int_equal(store_save(f->trace, &run, &id, f->err, sizeof f->err), EXIT_DB);
  assert_contains(f->err, "not an SQLite database");
  assert_int_equal(store_save("", &run, &id, f->err, sizeof f->err), EXIT_DB);
  assert_contains(f->err, "empty file name");
  run.trace_path = "/nonexistent/trace.bin";
  assert_int_equal(store_save(f->db, &run, &id, f->err, sizeof f->err), EXIT_DB);
  assert_contains(f->err, "run not stored");
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_xxh64_known_values),
    cmocka_unit_test(test_xxh64_streaming_equals_one_shot),
    T(test_hash_file),
    T(test_schema_created),
    T(test_open_missing_without_create),
    T(test_migration_to_pretend_v2),
    T(test_migration_from_v1_keeps_runs_and_adds_views),
    T(test_migration_from_lower_version),
    T(test_failed_migration_changes_nothing),
    T(test_foreign_database_refused),
    T(test_run_round_trip),
    T(test_last_and_missing_runs),
    T(test_load_from_empty_database),
    T(test_failed_save_leaves_nothing),
    T(test_unknown_counter_kept),
    T(test_bad_paths),
    T(test_io_error_during_store),
    T(test_full_disk_during_store),
  };
  faulty_vfs_install();
  return cmocka_run_group_tests(tests, NULL, NULL);
}
