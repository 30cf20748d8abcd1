/* Reading a stored run back into a struct report, so that report_print prints
** exactly what the batch run printed; its queries share one read transaction,
** so a concurrent writer is never seen half way. */
#include "store.h"
#include "store_int.h"
#include "sim/base/util.h"

#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

static void copy_col(char *dst, size_t n, sqlite3_stmt *st, int col) {
  const unsigned char *t = sqlite3_column_text(st, col);
  snprintf(dst, n, "%s", t ? (const char *)t : "");
}

static uint64_t col_u64(sqlite3_stmt *st, int col) { return (uint64_t)sqlite3_column_int64(st, col); }

/* Counter names live in static storage (struct report_counter): this build's
** names, or, for a counter this build does not know, a name kept here. */
static const char *counter_name_static(const char *name) {
  static char extra[2 * CTR_COUNT][48];
  static unsigned nextra;
  for (unsigned c = 0; c < CTR_COUNT; c++)
    if (strcmp(counter_name(c), name) == 0) return counter_name(c);
  for (unsigned i = 0; i < nextra; i++)
    if (strcmp(extra[i], name) == 0) return extra[i];
  if (nextra == 2 * CTR_COUNT) return "unknown";
  snprintf(extra[nextra], sizeof extra[0], "%s", name);
  return extra[nextra++];
}

static int load_identity(sqlite3 *db, int64_t run_id, struct report *rep, int64_t *loaded_id) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db,
    "SELECT r.id, r.trace_name, t.workload, t.hash, r.policy, r.cpu, t.paging, t.vcpus, r.clock_ghz,"
    " r.events, r.total_exits, r.marks, r.guest_cycles, r.vmm_cycles, r.elapsed_cycles, t.metadata"
    " FROM runs r JOIN traces t ON t.id = r.trace_id"
    " WHERE r.id = CASE WHEN ?1 >= 0 THEN ?1 ELSE (SELECT max(id) FROM runs) END", -1, &st, NULL);
  if (rc == SQLITE_OK) {
    sqlite3_bind_int64(st, 1, run_id);
    rc = sqlite3_step(st);
  }
  if (rc == SQLITE_ROW) {
    *loaded_id = sqlite3_column_int64(st, 0);
    copy_col(rep->trace, sizeof rep->trace, st, 1);
    copy_col(rep->workload, sizeof rep->workload, st, 2);
    copy_col(rep->trace_hash, sizeof rep->trace_hash, st, 3);
    copy_col(rep->policy, sizeof rep->policy, st, 4);
    copy_col(rep->cpu, sizeof rep->cpu, st, 5);
    copy_col(rep->paging, sizeof rep->paging, st, 6);
    rep->vcpus = (unsigned)sqlite3_column_int(st, 7);
    rep->clock_ghz = sqlite3_column_double(st, 8);
    rep->events = col_u64(st, 9);
    rep->total_exits = col_u64(st, 10);
    rep->marks = col_u64(st, 11);
    rep->guest_cycles = col_u64(st, 12);
    rep->vmm_cycles = col_u64(st, 13);
    rep->elapsed_cycles = col_u64(st, 14);
    report_undecided_from_meta(rep, (const char *)sqlite3_column_text(st, 15));   /* the recording's, as run printed */
    rc = SQLITE_OK;
  }
  sqlite3_finalize(st);
  return rc;   /* SQLITE_DONE: no such run */
}

static int load_rows(sqlite3 *db, int64_t id, struct report *rep) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, "SELECT reason, name, coalesce(parent, ''), count, cycles, min, p5, p50, p95, max"
                              " FROM exits WHERE run_id = ?1 ORDER BY seq", -1, &st, NULL);
  if (rc == SQLITE_OK) sqlite3_bind_int64(st, 1, id);
  while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    rc = SQLITE_OK;
    if (rep->nrows == STAT_KEYS) continue;
    struct report_row *r = &rep->rows[rep->nrows++];
    r->reason = (unsigned)sqlite3_column_int(st, 0);
    copy_col(r->name, sizeof r->name, st, 1);
    copy_col(r->parent, sizeof r->parent, st, 2);
    uint64_t *v[] = { &r->count, &r->cycles, &r->min, &r->p5, &r->p50, &r->p95, &r->max };
    for (int k = 0; k < 7; k++) *v[k] = col_u64(st, 3 + k);
  }
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static int load_counters(sqlite3 *db, int64_t id, struct report *rep) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, "SELECT name, value FROM counters WHERE run_id = ?1 ORDER BY seq", -1, &st, NULL);
  if (rc == SQLITE_OK) sqlite3_bind_int64(st, 1, id);
  while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    rc = SQLITE_OK;
    if (rep->ncounters == CTR_COUNT) continue;
    const unsigned char *name = sqlite3_column_text(st, 0);
    rep->counters[rep->ncounters++] =
      (struct report_counter){ counter_name_static(name ? (const char *)name : ""), col_u64(st, 1) };
  }
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static int dim_by_name(const char *name) {
  for (unsigned d = 0; d < VD_COUNT; d++)
    if (strcmp(view_dim_name(d), name) == 0) return (int)d;
  return -1;
}

static int load_views(sqlite3 *db, int64_t id, struct report *rep) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, "SELECT source, view, reason, key, name, coalesce(parent, ''), count, cycles, avg, min,"
                              " p5, p50, p95, max, stddev FROM views WHERE run_id = ?1 ORDER BY seq", -1, &st, NULL);
  if (rc == SQLITE_OK) sqlite3_bind_int64(st, 1, id);
  while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    rc = SQLITE_OK;
    char src[16], dim[16];
    copy_col(src, sizeof src, st, 0);
    copy_col(dim, sizeof dim, st, 1);
    int d = dim_by_name(dim);
    if (d < 0) continue;                       /* a view this build does not know */
    rep->vrows = xrealloc(rep->vrows, (rep->nvrows + 1) * sizeof *rep->vrows);
    struct view_stat *v = &rep->vrows[rep->nvrows++];
    memset(v, 0, sizeof *v);
    v->source = strcmp(src, "measured") == 0 ? VS_MEASURED : VS_SIMULATED;
    v->dim = (uint8_t)d;
    v->reason = (uint16_t)sqlite3_column_int(st, 2);
    v->key = col_u64(st, 3);
    copy_col(v->name, sizeof v->name, st, 4);
    copy_col(v->parent, sizeof v->parent, st, 5);
    uint64_t *n[] = { &v->count, &v->cycles, &v->avg, &v->min, &v->p5, &v->p50, &v->p95, &v->max };
    for (int k = 0; k < 8; k++) *n[k] = col_u64(st, 6 + k);
    v->stddev = sqlite3_column_double(st, 14);
  }
  sqlite3_finalize(st);
  rep->show_views = rep->nvrows > 0;           /* stored only when computed: shown as the run showed them */
  return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

int store_load_db(sqlite3 *db, const char *path, int64_t run_id, struct report *rep, int64_t *loaded_id,
                  char *err, size_t errlen) {
  int64_t id = -1;
  memset(rep, 0, sizeof *rep);
  /* A read transaction, so a concurrent writer cannot slip in between the queries. */
  int rc = store_exec(db, "BEGIN");
  if (rc == SQLITE_OK) rc = load_identity(db, run_id, rep, &id);
  if (rc == SQLITE_DONE) {
    store_exec(db, "ROLLBACK");
    if (run_id >= 0) snprintf(err, errlen, "results database %s: no run %lld ('vmxsim runs' lists them)", path, (long long)run_id);
    else snprintf(err, errlen, "results database %s: no runs stored yet", path);
    return EXIT_USAGE;
  }
  if (rc == SQLITE_OK) rc = load_rows(db, id, rep);
  if (rc == SQLITE_OK) rc = load_counters(db, id, rep);
  if (rc == SQLITE_OK) rc = load_views(db, id, rep);
  if (rc != SQLITE_OK) {
    report_free(rep);
    store_db_error(db, path, "cannot read the run", err, errlen);
    store_exec(db, "ROLLBACK");
    return EXIT_DB;
  }
  store_exec(db, "COMMIT");
  if (loaded_id) *loaded_id = id;
  return 0;
}

int store_load(const char *path, int64_t run_id, struct report *rep, int64_t *loaded_id, char *err, size_t errlen) {
  sqlite3 *db = NULL;
  int rc = store_open_readonly(path, &db, err, errlen);
  if (rc == 0) rc = store_load_db(db, path, run_id, rep, loaded_id, err, errlen);
  store_close(db);
  return rc;
}
