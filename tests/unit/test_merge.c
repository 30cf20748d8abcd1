/* Unit tests for run identity (run keys), the version-1 to version-2 migration,
** merging results databases (lossless, idempotent, ids remapped) and the gaps
** of a sharded sweep. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/version.h"
#include "sim/store/store.h"
#include "sim/base/util.h"
#include "db_fixture.h"

#define assert_contains(hay, needle) do { \
    const char *h_ = (hay), *n_ = (needle); \
    if (!strstr(h_, n_)) fail_msg("expected to contain: %s\n  actual: %s", n_, h_); \
  } while (0)

struct fx {
  char dir[64];
  char err[1024];
};

static int setup(void **state) {
  struct fx *f = calloc(1, sizeof *f);
  if (!scratch_dir_make(f->dir, sizeof f->dir, "merge")) return -1;
  *state = f;
  return 0;
}

static int teardown(void **state) {
  struct fx *f = *state;
  int rc = scratch_dir_remove(f->dir);
  free(f);
  return rc;
}

static const char *path_in(const struct fx *f, const char *name) {
  static char buf[4][128];
  static unsigned next;
  char *p = buf[next++ % 4];
  snprintf(p, sizeof buf[0], "%s/%s", f->dir, name);
  return p;
}

/* The rows of sql, one line each with '|' between columns (malloc'd). */
static char *sql_dump(const char *path, const char *sql) {
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  if (sqlite3_open(path, &db) == SQLITE_OK && sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK)
    while (sqlite3_step(st) == SQLITE_ROW) {
      for (int c = 0; c < sqlite3_column_count(st); c++) {
        const unsigned char *t = sqlite3_column_text(st, c);
        fprintf(m, "%s%s", c ? "|" : "", t ? (const char *)t : "NULL");
      }
      fputc('\n', m);
    }
  sqlite3_finalize(st);
  sqlite3_close(db);
  fclose(m);
  return buf;
}

/* Everything a run's numbers are, by key: what a merge must keep. */
static char *dump_runs(const char *path) {
  return sql_dump(path,
    "SELECT r.run_key, t.hash, r.policy, r.cpu, r.total_exits, r.guest_cycles, r.vmm_cycles,"
    " (SELECT group_concat(e.name || '=' || e.count || '/' || e.cycles, ',') FROM exits e WHERE e.run_id = r.id),"
    " (SELECT group_concat(c.name || '=' || c.value, ',') FROM counters c WHERE c.run_id = r.id)"
    " FROM runs r JOIN traces t ON t.id = r.trace_id ORDER BY r.run_key");
}

/* Stores a run of trace hash `trace` under policy `policy` with exits and counters
** from n, and nviews of the view rows of a recording. */
static void store_views(struct fx *f, const char *db, const char *trace, const char *policy, uint64_t n,
                        unsigned nviews) {
  struct report rep;
  memset(&rep, 0, sizeof rep);
  snprintf(rep.trace, sizeof rep.trace, "t-%s.bin", trace);
  snprintf(rep.trace_hash, sizeof rep.trace_hash, "%s", trace);
  snprintf(rep.workload, sizeof rep.workload, "lat_ctx");
  snprintf(rep.policy, sizeof rep.policy, "%s", policy);
  snprintf(rep.cpu, sizeof rep.cpu, "core2-2007");
  snprintf(rep.paging, sizeof rep.paging, "64");
  rep.vcpus = 1;
  rep.clock_ghz = 2.4;
  rep.events = 100 + n;
  rep.total_exits = n;
  rep.guest_cycles = 1000 * n;
  rep.vmm_cycles = 77 * n;
  rep.nrows = 1;
  snprintf(rep.rows[0].name, sizeof rep.rows[0].name, "CR_ACCESS");
  rep.rows[0].reason = 28;
  rep.rows[0].count = n;
  rep.rows[0].cycles = 77 * n;
  rep.ncounters = 1;
  rep.counters[0] = (struct report_counter){ counter_name(0), 3 * n };
  struct view_stat v[2] = {
    { .source = VS_MEASURED, .name = "CR_ACCESS", .dim = VD_REASON, .reason = 28, .key = 28, .count = n, .cycles = 9 * n },
    { .source = VS_SIMULATED, .name = "cr3 write", .parent = "CR_ACCESS", .dim = VD_CR, .reason = 28, .key = 7,
      .count = n, .cycles = 77 * n, .stddev = 0.5 },
  };
  rep.vrows = nviews ? v : NULL;
  rep.nvrows = nviews;
  char policy_json[128];
  snprintf(policy_json, sizeof policy_json, "{\"name\":\"%s\"}", policy);
  struct store_run run = { .rep = &rep, .trace_metadata = "{\"procs\":2}", .trace_events = rep.events,
                           .policy_json = policy_json, .profile_json = "{\"name\":\"core2-2007\"}",
                           .wall_seconds = 0.1 };
  assert_int_equal(store_save(db, &run, NULL, f->err, sizeof f->err), 0);
}

static void store_one(struct fx *f, const char *db, const char *trace, const char *policy, uint64_t n) {
  store_views(f, db, trace, policy, n, 0);
}

/* ---- identity ---- */

static void test_run_key_components(void **state) {
  (void)state;
  char a[17], b[17];
  store_run_key("h1", "{\"name\":\"ept\"}", "c1", "0.1.0", false, 10, a);
  store_run_key("h1", "{\"name\":\"ept\"}", "c1", "0.1.0", false, 99, b);
  assert_string_equal(a, b);                    /* events matter only for a partial run */
  assert_int_equal(strlen(a), 16);
  const char *variants[][4] = {
    { "h2", "{\"name\":\"ept\"}", "c1", "0.1.0" }, { "h1", "{\"name\":\"nocache\"}", "c1", "0.1.0" },
    { "h1", "{\"name\":\"ept\"}", "c2", "0.1.0" }, { "h1", "{\"name\":\"ept\"}", "c1", "0.2.0" },
    { "h1{\"name\":\"ept\"}", "", "c1", "0.1.0" },   /* the separators count */
  };
  for (size_t i = 0; i < sizeof variants / sizeof *variants; i++) {
    store_run_key(variants[i][0], variants[i][1], variants[i][2], variants[i][3], false, 10, b);
    if (!strcmp(a, b)) fail_msg("variant %zu has the same key %s", i, a);
  }
  store_run_key("h1", "{\"name\":\"ept\"}", "c1", "0.1.0", true, 10, b);
  assert_string_not_equal(a, b);
}

/* A stored run carries its key and profile hash, and is found by the key. */
static void test_saved_run_has_key(void **state) {
  struct fx *f = *state;
  const char *db = path_in(f, "a.db");
  store_one(f, db, "00000000000000a1", "ept", 5);
  char cpu_hash[17], key[17];
  store_text_hash("{\"name\":\"core2-2007\"}", cpu_hash);
  store_run_key("00000000000000a1", "{\"name\":\"ept\"}", cpu_hash, VMXSIM_VERSION, false, 105, key);
  char *got = sql_dump(db, "SELECT run_key, cpu_hash FROM runs");
  char want[64];
  snprintf(want, sizeof want, "%s|%s\n", key, cpu_hash);
  assert_string_equal(got, want);
  free(got);
  struct sqlite3 *h = NULL;
  int64_t id = -1;
  assert_int_equal(store_open(db, false, &h, f->err, sizeof f->err), 0);
  assert_int_equal(store_find_run(h, db, key, &id, f->err, sizeof f->err), 0);
  assert_int_equal(id, 1);
  assert_int_equal(store_find_run(h, db, "0000000000000000", &id, f->err, sizeof f->err), 0);
  assert_int_equal(id, 0);
  store_close(h);
}

/* ---- migration from version 1 ---- */

/* A database of schema version `version` (made by the first migration steps alone) with one run. */
static void make_old(struct fx *f, const char *db, int version) {
  sqlite3 *h = NULL;
  assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
  assert_int_equal(store_migrate(h, db, store_migrations, (size_t)version, f->err, sizeof f->err), 0);
  char *msg = NULL;
  int rc = sqlite3_exec(h,
    "INSERT INTO traces(hash, name, workload, paging, vcpus, events) VALUES ('00000000000000b1', 'x.bin', 'w', '64', 1, 9);"
    "INSERT INTO runs(trace_id, trace_name, policy, policy_json, cpu, cpu_json, clock_ghz, vmxsim_version,"
    " started_at, wall_seconds, events, total_exits, marks, guest_cycles, vmm_cycles, elapsed_cycles)"
    " VALUES (1, 'x.bin', 'ept', '{\"name\":\"ept\"}', 'core2-2007', '{\"cpu\":1}', 2.4, '0.0.9',"
    " '2020-01-01 00:00:00', 1.0, 9, 4, 0, 100, 50, 150);"
    "INSERT INTO exits VALUES (1, 0, 28, 'CR_ACCESS', NULL, 4, 50, 1, 2, 3, 4, 5);"
    "INSERT INTO counters VALUES (1, 0, 'root_hits', 6);", NULL, NULL, &msg);
  if (rc != SQLITE_OK) fail_msg("%s", msg);
  if (version >= 2 && sqlite3_exec(h, "INSERT INTO views VALUES (1, 0, 'measured', 'reason', 28, 28, 'CR_ACCESS',"
                                      " NULL, 4, 40, 10, 1, 2, 3, 4, 5, 0.25)", NULL, NULL, &msg) != SQLITE_OK)
    fail_msg("%s", msg);
  sqlite3_close(h);
  assert_int_equal(sql_int(db, "PRAGMA user_version"), version);
}

static void make_v1(struct fx *f, const char *db) { make_old(f, db, 1); }

static void test_v1_migrates_with_keys(void **state) {
  struct fx *f = *state;
  const char *db = path_in(f, "v1.db");
  make_v1(f, db);
  struct sqlite3 *h = NULL;
  assert_int_equal(store_open(db, false, &h, f->err, sizeof f->err), 0);
  store_close(h);
  assert_int_equal(sql_int(db, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
  char cpu_hash[17], key[17], want[64];
  store_text_hash("{\"cpu\":1}", cpu_hash);
  store_run_key("00000000000000b1", "{\"name\":\"ept\"}", cpu_hash, "0.0.9", false, 9, key);
  snprintf(want, sizeof want, "%s|%s\n", key, cpu_hash);
  char *got = sql_dump(db, "SELECT run_key, cpu_hash FROM runs");
  assert_string_equal(got, want);
  free(got);
  assert_int_equal(sql_int(db, "SELECT count(*) FROM sweeps"), 0);
}

/* ---- merge ---- */

static int merge_into(struct fx *f, const char *out, const char *from, struct store_merge_result *res) {
  struct sqlite3 *h = NULL;
  int rc = store_open_journal(out, true, STORE_JOURNAL_KEEP, &h, f->err, sizeof f->err);
  if (rc == 0) rc = store_merge(h, out, from, res, f->err, sizeof f->err);
  store_close(h);
  return rc;
}

/* Two shards sharing one run: the union, each run once, numbers intact; again: no change. */
static void test_merge_union_and_idempotent(void **state) {
  struct fx *f = *state;
  const char *s0 = path_in(f, "s0.db"), *s1 = path_in(f, "s1.db"), *out = path_in(f, "out.db");
  store_one(f, s0, "00000000000000a1", "ept", 1);
  store_one(f, s0, "00000000000000a1", "nocache", 2);
  store_one(f, s1, "00000000000000a2", "ept", 3);
  store_one(f, s1, "00000000000000a1", "nocache", 2);   /* the same run as in s0 */
  struct store_merge_result res;
  assert_int_equal(merge_into(f, out, s0, &res), 0);
  assert_int_equal(res.runs, 2);
  assert_int_equal(res.added, 2);
  assert_int_equal(merge_into(f, out, s1, &res), 0);
  assert_int_equal(res.runs, 2);
  assert_int_equal(res.added, 1);
  assert_int_equal(res.present, 1);
  assert_int_equal(sql_int(out, "SELECT count(*) FROM runs"), 3);
  assert_int_equal(sql_int(out, "SELECT count(*) FROM traces"), 2);
  assert_int_equal(sql_int(out, "SELECT count(*) FROM exits"), 3);
  assert_int_equal(sql_int(out, "SELECT count(*) FROM counters"), 3);
  /* ids remapped: s1's first run (id 1 there) is run 3 here, with its own exits */
  assert_int_equal(sql_int(out, "SELECT count FROM exits WHERE run_id = 3"), 3);
  assert_int_equal(sql_int(out, "SELECT value FROM counters WHERE run_id = 3"), 9);
  assert_int_equal(sql_int(out, "SELECT count(*) FROM pragma_journal_mode WHERE journal_mode = 'delete'"), 1);

  char *before = dump_runs(out), *all = sql_dump(out, "SELECT * FROM runs ORDER BY id");
  assert_int_equal(merge_into(f, out, s0, &res), 0);
  assert_int_equal(res.added, 0);
  assert_int_equal(merge_into(f, out, s1, &res), 0);
  assert_int_equal(res.added, 0);
  assert_int_equal(res.present, 2);
  char *after = dump_runs(out), *all_after = sql_dump(out, "SELECT * FROM runs ORDER BY id");
  assert_string_equal(before, after);
  assert_string_equal(all, all_after);
  free(before), free(after), free(all), free(all_after);
  char *check = sql_dump(out, "PRAGMA integrity_check");
  assert_string_equal(check, "ok\n");
  free(check);
}

/* Merging in either order gives the same runs. */
static void test_merge_order_free(void **state) {
  struct fx *f = *state;
  const char *s0 = path_in(f, "s0.db"), *s1 = path_in(f, "s1.db");
  store_one(f, s0, "00000000000000a1", "ept", 1);
  store_one(f, s1, "00000000000000a2", "nocache", 2);
  store_one(f, s1, "00000000000000a1", "ept", 1);
  struct store_merge_result res;
  const char *ab = path_in(f, "ab.db"), *ba = path_in(f, "ba.db");
  assert_int_equal(merge_into(f, ab, s0, &res), 0);
  assert_int_equal(merge_into(f, ab, s1, &res), 0);
  assert_int_equal(merge_into(f, ba, s1, &res), 0);
  assert_int_equal(merge_into(f, ba, s0, &res), 0);
  char *x = dump_runs(ab), *y = dump_runs(ba);
  assert_string_equal(x, y);
  assert_int_equal(sql_int(ab, "SELECT count(*) FROM runs"), 2);
  free(x), free(y);
}

/* The views of a run come along, under its new id. */
static void test_merge_views(void **state) {
  struct fx *f = *state;
  const char *s0 = path_in(f, "s0.db"), *out = path_in(f, "out.db");
  store_one(f, out, "00000000000000a9", "ept", 1);
  store_views(f, s0, "00000000000000a1", "nocache", 5, 2);
  struct store_merge_result res;
  assert_int_equal(merge_into(f, out, s0, &res), 0);
  char *got = sql_dump(out, "SELECT run_id, seq, source, view, name, coalesce(parent, '-'), count, cycles, stddev"
                            " FROM views ORDER BY run_id, seq");
  assert_string_equal(got, "2|0|measured|reason|CR_ACCESS|-|5|45|0.0\n2|1|simulated|cr|cr3 write|CR_ACCESS|5|385|0.5\n");
  free(got);
  assert_int_equal(merge_into(f, out, s0, &res), 0);
  assert_int_equal(sql_int(out, "SELECT count(*) FROM views"), 2);
}

static void test_merge_v1_file(void **state) {
  struct fx *f = *state;
  const char *v1 = path_in(f, "v1.db"), *out = path_in(f, "out.db");
  make_v1(f, v1);
  struct store_merge_result res;
  assert_int_equal(merge_into(f, out, v1, &res), 0);
  assert_int_equal(res.version, 1);
  assert_int_equal(res.added, 1);
  assert_int_equal(sql_int(v1, "PRAGMA user_version"), 1);   /* only read */
  char *got = sql_dump(out, "SELECT e.count, c.value, r.vmxsim_version FROM runs r JOIN exits e ON e.run_id = r.id"
                            " JOIN counters c ON c.run_id = r.id");
  assert_string_equal(got, "4|6|0.0.9\n");
  free(got);
}

/* A version-2 file (views, no run keys) is read as it is, its views merged. */
static void test_merge_v2_file(void **state) {
  struct fx *f = *state;
  const char *v2 = path_in(f, "v2.db"), *out = path_in(f, "out.db");
  make_old(f, v2, 2);
  struct store_merge_result res;
  assert_int_equal(merge_into(f, out, v2, &res), 0);
  assert_int_equal(res.version, 2);
  assert_int_equal(res.added, 1);
  assert_int_equal(sql_int(v2, "PRAGMA user_version"), 2);
  char *got = sql_dump(out, "SELECT v.run_id, v.name, v.count, v.stddev FROM views v");
  assert_string_equal(got, "1|CR_ACCESS|4|0.25\n");
  free(got);
  assert_int_equal(merge_into(f, out, v2, &res), 0);
  assert_int_equal(res.added, 0);
}

static void test_merge_refusals(void **state) {
  struct fx *f = *state;
  const char *out = path_in(f, "out.db"), *newer = path_in(f, "newer.db"), *foreign = path_in(f, "foreign.db");
  struct store_merge_result res;
  store_one(f, out, "00000000000000a1", "ept", 1);
  assert_int_equal(merge_into(f, out, path_in(f, "shard-3.db"), &res), EXIT_BADINPUT);
  assert_contains(f->err, "shard-3.db: missing");
  assert_int_equal(merge_into(f, out, out, &res), EXIT_BADINPUT);
  assert_contains(f->err, "is the output database itself");
  sqlite3 *h = NULL;
  sqlite3_open(newer, &h);
  sqlite3_exec(h, "PRAGMA application_id = 1986885747; PRAGMA user_version = 99; CREATE TABLE runs (x)", 0, 0, 0);
  sqlite3_close(h);
  assert_int_equal(merge_into(f, out, newer, &res), EXIT_BADINPUT);
  assert_contains(f->err, "schema version 99 is newer than this vmxsim");
  sqlite3_open(foreign, &h);
  sqlite3_exec(h, "CREATE TABLE accounts (x)", 0, 0, 0);
  sqlite3_close(h);
  assert_int_equal(merge_into(f, out, foreign, &res), EXIT_BADINPUT);
  assert_contains(f->err, "foreign.db: not a vmxsim results database");
  assert_int_equal(sql_int(out, "SELECT count(*) FROM runs"), 1);   /* untouched */
}

/* ---- sweeps and their gaps ---- */

static void record_part(struct fx *f, const char *db, unsigned shard, unsigned n, uint64_t runs, uint64_t done,
                        bool finished) {
  struct sqlite3 *h = NULL;
  assert_int_equal(store_open_journal(db, true, STORE_JOURNAL_ROLLBACK, &h, f->err, sizeof f->err), 0);
  struct store_sweep sw = { "00000000000000ff", "study", "{\"name\":\"study\"}", shard, n, runs };
  int64_t id;
  assert_int_equal(store_sweep_begin(h, db, &sw, &id, f->err, sizeof f->err), 0);
  assert_int_equal(store_sweep_progress(h, db, id, done, 0, finished, f->err, sizeof f->err), 0);
  store_close(h);
}

static void test_gaps_after_merge(void **state) {
  struct fx *f = *state;
  const char *s0 = path_in(f, "s0.db"), *s1 = path_in(f, "s1.db"), *out = path_in(f, "out.db");
  record_part(f, s0, 0, 4, 10, 10, true);
  record_part(f, s1, 1, 4, 10, 4, false);
  assert_int_equal(sql_int(s0, "SELECT count(*) FROM pragma_journal_mode WHERE journal_mode = 'delete'"), 1);
  struct store_merge_result res;
  assert_int_equal(merge_into(f, out, s0, &res), 0);
  assert_int_equal(merge_into(f, out, s1, &res), 0);
  struct sqlite3 *h = NULL;
  struct store_gap *gaps;
  size_t n;
  assert_int_equal(store_open(out, false, &h, f->err, sizeof f->err), 0);
  assert_int_equal(store_sweep_gaps(h, out, &gaps, &n, f->err, sizeof f->err), 0);
  assert_int_equal(n, 3);
  assert_int_equal(gaps[0].shard, 1);
  assert_false(gaps[0].missing);
  assert_int_equal(gaps[0].done, 4);
  assert_int_equal(gaps[1].shard, 2);
  assert_true(gaps[1].missing);
  assert_int_equal(gaps[2].shard, 3);
  assert_int_equal(gaps[2].nshards, 4);
  assert_string_equal(gaps[2].name, "study");
  free(gaps);
  store_close(h);
  /* shard 1 finishes and is merged again: its better row replaces the old one */
  record_part(f, s1, 1, 4, 10, 10, true);
  assert_int_equal(merge_into(f, out, s1, &res), 0);
  assert_int_equal(store_open(out, false, &h, f->err, sizeof f->err), 0);
  assert_int_equal(store_sweep_gaps(h, out, &gaps, &n, f->err, sizeof f->err), 0);
  assert_int_equal(n, 2);
  assert_int_equal(gaps[0].shard, 2);
  free(gaps);
  store_close(h);
  /* and an older, unfinished row merged later does not replace it */
  record_part(f, s1, 1, 4, 10, 2, false);
  assert_int_equal(merge_into(f, out, s1, &res), 0);
  assert_int_equal(sql_int(out, "SELECT done FROM sweeps WHERE shard = 1"), 10);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_run_key_components),
    T(test_saved_run_has_key),
    T(test_v1_migrates_with_keys),
    T(test_merge_union_and_idempotent),
    T(test_merge_order_free),
    T(test_merge_views),
    T(test_merge_v1_file),
    T(test_merge_v2_file),
    T(test_merge_refusals),
    T(test_gaps_after_merge),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
