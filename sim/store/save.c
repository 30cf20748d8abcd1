/* Writing runs: storing one in a single transaction, and deleting some with
** every row that belongs to them, so that a crash, a full disk or a
** concurrent writer never leaves part of a run.  docs/schema.md, "Writing:
** one transaction per run" and "Deleting runs". */
#include "store.h"
#include "store_int.h"
#include "sim/trace/hash.h"
#include "sim/replay/runner.h"
#include "sim/base/util.h"
#include "sim/base/version.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- storing a run ---- */

/* The statements of one run's transaction, prepared once. */
struct saver {
  sqlite3 *db;
  const struct store_run *run;
  const char *hash;
  int64_t trace_id, run_id;
  unsigned delay_ms;             /* STORE_DELAY_ENV test hook */
};

static void test_delay(const struct saver *s) {
  if (s->delay_ms) sqlite3_sleep((int)s->delay_ms);
}

static int save_trace(struct saver *s) {
  const struct report *rep = s->run->rep;
  const char *meta = s->run->trace_metadata;
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(s->db, "INSERT OR IGNORE INTO traces(hash, name, workload, paging, vcpus, events, "
                              "metadata) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)", -1, &st, NULL);
  if (rc == SQLITE_OK) {
    store_bind_text(st, 1, s->hash);
    store_bind_text(st, 2, rep->trace);
    store_bind_text(st, 3, rep->workload);
    store_bind_text(st, 4, rep->paging);
    sqlite3_bind_int64(st, 5, rep->vcpus);
    sqlite3_bind_int64(st, 6, (int64_t)s->run->trace_events);
    if (meta && *meta) store_bind_text(st, 7, meta);
    rc = store_step_done(st);
  }
  sqlite3_finalize(st);
  st = NULL;
  if (rc == SQLITE_OK) rc = sqlite3_prepare_v2(s->db, "SELECT id FROM traces WHERE hash = ?1", -1, &st, NULL);
  if (rc == SQLITE_OK) {
    store_bind_text(st, 1, s->hash);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
      s->trace_id = sqlite3_column_int64(st, 0);
      rc = SQLITE_OK;
    }
  }
  sqlite3_finalize(st);
  return rc;
}

static int save_run_row(struct saver *s) {
  const struct store_run *run = s->run;
  const struct report *rep = run->rep;
  char started[32];
  store_utc_text(run->started_unix ? run->started_unix : (int64_t)(time(NULL) - (time_t)run->wall_seconds), started);
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(s->db,
    "INSERT INTO runs(trace_id, trace_name, policy, policy_json, cpu, cpu_json, clock_ghz, vmxsim_version,"
    " started_at, wall_seconds, events_per_sec, events, partial, total_exits, marks, guest_cycles,"
    " vmm_cycles, elapsed_cycles, cpu_hash, run_key)"
    " VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20)",
    -1, &st, NULL);
  char cpu_hash[HASH_HEX_LEN + 1], key[HASH_HEX_LEN + 1];
  store_text_hash(run->profile_json ? run->profile_json : "", cpu_hash);
  store_run_key(s->hash, run->policy_json, cpu_hash, VMXSIM_VERSION, run->partial, rep->events, key);
  if (rc == SQLITE_OK) {
    sqlite3_bind_int64(st, 1, s->trace_id);
    store_bind_text(st, 2, rep->trace);
    store_bind_text(st, 3, rep->policy);
    store_bind_text(st, 4, run->policy_json);
    store_bind_text(st, 5, rep->cpu);
    store_bind_text(st, 6, run->profile_json);
    sqlite3_bind_double(st, 7, rep->clock_ghz);
    store_bind_text(st, 8, VMXSIM_VERSION);
    store_bind_text(st, 9, started);
    sqlite3_bind_double(st, 10, run->wall_seconds);
    if (run->wall_seconds > 0) sqlite3_bind_double(st, 11, (double)rep->events / run->wall_seconds);
    /* uint64 values go in as int64 bit patterns and come back unchanged. */
    sqlite3_bind_int64(st, 12, (int64_t)rep->events);
    sqlite3_bind_int(st, 13, run->partial);
    sqlite3_bind_int64(st, 14, (int64_t)rep->total_exits);
    sqlite3_bind_int64(st, 15, (int64_t)rep->marks);
    sqlite3_bind_int64(st, 16, (int64_t)rep->guest_cycles);
    sqlite3_bind_int64(st, 17, (int64_t)rep->vmm_cycles);
    sqlite3_bind_int64(st, 18, (int64_t)rep->elapsed_cycles);
    store_bind_text(st, 19, cpu_hash);
    store_bind_text(st, 20, key);
    rc = store_step_done(st);
  }
  sqlite3_finalize(st);
  if (rc == SQLITE_OK) s->run_id = sqlite3_last_insert_rowid(s->db);
  return rc;
}

static int save_exits(struct saver *s) {
  const struct report *rep = s->run->rep;
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(s->db, "INSERT INTO exits(run_id, seq, reason, name, parent, count, cycles, min, "
                              "p5, p50, p95, max) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12)", -1, &st, NULL);
  for (unsigned i = 0; i < rep->nrows && rc == SQLITE_OK; i++) {
    const struct report_row *r = &rep->rows[i];
    sqlite3_bind_int64(st, 1, s->run_id);
    sqlite3_bind_int(st, 2, (int)i);
    sqlite3_bind_int(st, 3, (int)r->reason);
    store_bind_text(st, 4, r->name);
    if (r->parent[0]) store_bind_text(st, 5, r->parent);
    else sqlite3_bind_null(st, 5);
    const uint64_t v[] = { r->count, r->cycles, r->min, r->p5, r->p50, r->p95, r->max };
    for (int k = 0; k < 7; k++) sqlite3_bind_int64(st, 6 + k, (int64_t)v[k]);
    rc = store_step_done(st);
    test_delay(s);
  }
  sqlite3_finalize(st);
  return rc;
}

static int save_counters(struct saver *s) {
  const struct report *rep = s->run->rep;
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(s->db, "INSERT INTO counters(run_id, seq, name, value) VALUES (?1, ?2, ?3, ?4)",
                              -1, &st, NULL);
  for (unsigned i = 0; i < rep->ncounters && rc == SQLITE_OK; i++) {
    sqlite3_bind_int64(st, 1, s->run_id);
    sqlite3_bind_int(st, 2, (int)i);
    store_bind_text(st, 3, rep->counters[i].name);
    sqlite3_bind_int64(st, 4, (int64_t)rep->counters[i].value);
    rc = store_step_done(st);
    test_delay(s);
  }
  sqlite3_finalize(st);
  return rc;
}

static int save_views(struct saver *s) {
  const struct report *rep = s->run->rep;
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(s->db, "INSERT INTO views(run_id, seq, source, view, reason, key, name, parent, count, "
                              "cycles, avg, min, p5, p50, p95, max, stddev) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,"
                              "?11,?12,?13,?14,?15,?16,?17)", -1, &st, NULL);
  for (unsigned i = 0; i < rep->nvrows && rc == SQLITE_OK; i++) {
    const struct view_stat *v = &rep->vrows[i];
    sqlite3_bind_int64(st, 1, s->run_id);
    sqlite3_bind_int(st, 2, (int)i);
    store_bind_text(st, 3, v->source == VS_MEASURED ? "measured" : "simulated");
    store_bind_text(st, 4, view_dim_name(v->dim));
    sqlite3_bind_int(st, 5, v->reason);
    sqlite3_bind_int64(st, 6, (int64_t)v->key);
    store_bind_text(st, 7, v->name);
    if (v->parent[0]) store_bind_text(st, 8, v->parent);
    else sqlite3_bind_null(st, 8);
    const uint64_t n[] = { v->count, v->cycles, v->avg, v->min, v->p5, v->p50, v->p95, v->max };
    for (int k = 0; k < 8; k++) sqlite3_bind_int64(st, 9 + k, (int64_t)n[k]);
    sqlite3_bind_double(st, 17, v->stddev);
    rc = store_step_done(st);
  }
  sqlite3_finalize(st);
  return rc;
}

static unsigned delay_from_env(void) {
  const char *s = getenv(STORE_DELAY_ENV);
  uint64_t v;
  return s && parse_u64(s, &v) && v < 60000 ? (unsigned)v : 0;
}

/* The whole run in one IMMEDIATE transaction: a crash at any point leaves
** nothing of it, and concurrent writers queue on the busy timeout. */
static int save_all(struct saver *s, const char *path, char *err, size_t errlen) {
  int rc = store_exec(s->db, "BEGIN IMMEDIATE");
  if (rc != SQLITE_OK) return store_db_error(s->db, path, "cannot store the run", err, errlen);
  rc = save_trace(s);
  if (rc == SQLITE_OK) { test_delay(s); rc = save_run_row(s); }
  if (rc == SQLITE_OK) { test_delay(s); rc = save_exits(s); }
  if (rc == SQLITE_OK) rc = save_counters(s);
  if (rc == SQLITE_OK) rc = save_views(s);
  if (rc == SQLITE_OK) rc = store_remember_hash(s->db, s->run->seen, s->hash);
  if (rc == SQLITE_OK) rc = store_exec(s->db, "COMMIT");
  if (rc == SQLITE_OK) return 0;
  store_db_error(s->db, path, "cannot store the run", err, errlen);
  store_exec(s->db, "ROLLBACK");
  return EXIT_DB;
}

struct store_run store_run_of(const struct run_output *out, const char *trace) {
  struct store_run run = {
    .rep = &out->rep, .trace_path = trace, .trace_metadata = out->metadata,
    .trace_events = out->trace_events, .policy_json = out->policy_json,
    .profile_json = out->profile_json, .wall_seconds = out->wall_seconds,
  };
  return run;
}

/* The trace's content hash: the report's when set, else the file's. */
static int run_trace_hash(const char *path, const struct store_run *run, char hash[HASH_HEX_LEN + 1],
                          char *err, size_t errlen) {
  char why[600];
  if (run->rep->trace_hash[0]) {
    snprintf(hash, HASH_HEX_LEN + 1, "%.*s", HASH_HEX_LEN, run->rep->trace_hash);
  } else if (!run->trace_path) {
    snprintf(err, errlen, "results database %s: run not stored: no trace file to hash", path);
    return EXIT_DB;
  } else if (hash_file(run->trace_path, hash, why, sizeof why) != EXIT_OK) {
    snprintf(err, errlen, "results database %s: run not stored: %s", path, why);
    return EXIT_DB;
  }
  return 0;
}

static int save_hashed(sqlite3 *db, const char *path, const struct store_run *run, const char *hash,
                       int64_t *run_id, char *err, size_t errlen) {
  struct saver s = { .db = db, .run = run, .hash = hash, .delay_ms = delay_from_env() };
  int rc = save_all(&s, path, err, errlen);
  if (rc == 0 && run_id) *run_id = s.run_id;
  return rc;
}

int store_save_db(sqlite3 *db, const char *path, const struct store_run *run, int64_t *run_id,
                  char *err, size_t errlen) {
  char hash[HASH_HEX_LEN + 1];
  int rc = run_trace_hash(path, run, hash, err, errlen);
  return rc ? rc : save_hashed(db, path, run, hash, run_id, err, errlen);
}

int store_save(const char *path, const struct store_run *run, int64_t *run_id, char *err, size_t errlen) {
  char hash[HASH_HEX_LEN + 1];
  int rc = run_trace_hash(path, run, hash, err, errlen);   /* before creating the database */
  if (rc) return rc;
  sqlite3 *db = NULL;
  rc = store_open(path, true, &db, err, errlen);
  if (rc == 0) rc = save_hashed(db, path, run, hash, run_id, err, errlen);
  store_close(db);
  return rc;
}

/* ---- deleting runs ---- */

/* Runs `sql` (one ?1 parameter) for each id; SQLITE_OK or the first error. */
static int for_each_id(sqlite3 *db, const char *sql, const int64_t *ids, size_t n, int64_t *changed) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  for (size_t i = 0; i < n && rc == SQLITE_OK; i++) {
    sqlite3_bind_int64(st, 1, ids[i]);
    rc = store_step_done(st);
    if (changed) *changed += sqlite3_changes(db);
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  return rc;
}

int store_delete_runs(sqlite3 *db, const char *path, const int64_t *ids, size_t n, int64_t *deleted,
                      char *err, size_t errlen) {
  int64_t count = 0;
  /* The schema's ON DELETE CASCADE needs PRAGMA foreign_keys; deleting the rows
  ** explicitly works whatever the connection's setting. */
  int rc = store_exec(db, "BEGIN IMMEDIATE");
  if (rc == SQLITE_OK) rc = for_each_id(db, "DELETE FROM exits WHERE run_id = ?1", ids, n, NULL);
  if (rc == SQLITE_OK) rc = for_each_id(db, "DELETE FROM counters WHERE run_id = ?1", ids, n, NULL);
  if (rc == SQLITE_OK) rc = for_each_id(db, "DELETE FROM views WHERE run_id = ?1", ids, n, NULL);
  if (rc == SQLITE_OK) rc = for_each_id(db, "DELETE FROM runs WHERE id = ?1", ids, n, &count);
  if (rc == SQLITE_OK) rc = store_exec(db, "DELETE FROM traces WHERE id NOT IN (SELECT trace_id FROM runs)");
  if (rc == SQLITE_OK) rc = store_exec(db, "DELETE FROM trace_files WHERE hash NOT IN (SELECT hash FROM traces)");
  if (rc == SQLITE_OK) rc = store_exec(db, "COMMIT");
  if (rc != SQLITE_OK) {
    store_db_error(db, path, "cannot delete runs", err, errlen);
    store_exec(db, "ROLLBACK");
    return EXIT_DB;
  }
  if (deleted) *deleted = count;
  return 0;
}
