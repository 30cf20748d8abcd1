/* The sweeps table: each part of a sweep recorded as it starts and progresses,
** and read back as the parts still to run, which is how an interrupted or
** sharded sweep is resumed and how a merge of shards reports what is missing.
** docs/schema.md, "sweeps". */
#include "store.h"
#include "store_int.h"
#include "sim/base/util.h"
#include "sim/base/version.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- a part as it starts and progresses ---- */

static void utc_now(char out[32]) { store_utc_text((int64_t)time(NULL), out); }

int store_sweep_begin(sqlite3 *db, const char *path, const struct store_sweep *sw, int64_t *sweep_id,
                      char *err, size_t errlen) {
  char now[32];
  utc_now(now);
  *sweep_id = 0;
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db,
    "INSERT INTO sweeps(plan_hash, name, plan, shard, nshards, runs, done, failed, vmxsim_version, started_at)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0, 0, ?7, ?8)"
    " ON CONFLICT (plan_hash, shard, nshards) DO UPDATE SET runs = excluded.runs, done = 0, failed = 0,"
    " vmxsim_version = excluded.vmxsim_version, started_at = excluded.started_at, finished_at = NULL"
    " RETURNING id", -1, &st, NULL);
  if (rc == SQLITE_OK) {
    store_bind_text(st, 1, sw->plan_hash);
    store_bind_text(st, 2, sw->name);
    store_bind_text(st, 3, sw->plan_json);
    sqlite3_bind_int64(st, 4, sw->shard);
    sqlite3_bind_int64(st, 5, sw->nshards);
    sqlite3_bind_int64(st, 6, (int64_t)sw->runs);
    store_bind_text(st, 7, VMXSIM_VERSION);
    store_bind_text(st, 8, now);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *sweep_id = sqlite3_column_int64(st, 0);
    rc = rc == SQLITE_ROW ? sqlite3_step(st) : rc;
  }
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? 0 : store_db_error(db, path, "cannot record the sweep", err, errlen);
}

int store_sweep_progress(sqlite3 *db, const char *path, int64_t sweep_id, uint64_t done, uint64_t failed,
                         bool finished, char *err, size_t errlen) {
  char now[32];
  utc_now(now);
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, "UPDATE sweeps SET done = ?2, failed = ?3,"
                              " finished_at = CASE WHEN ?4 THEN ?5 END WHERE id = ?1", -1, &st, NULL);
  if (rc == SQLITE_OK) {
    sqlite3_bind_int64(st, 1, sweep_id);
    sqlite3_bind_int64(st, 2, (int64_t)done);
    sqlite3_bind_int64(st, 3, (int64_t)failed);
    sqlite3_bind_int(st, 4, finished);
    store_bind_text(st, 5, now);
    rc = store_step_done(st);
  }
  sqlite3_finalize(st);
  return rc == SQLITE_OK ? 0 : store_db_error(db, path, "cannot record the sweep's progress", err, errlen);
}

/* ---- gaps: parts of a sharded sweep that are missing or unfinished ---- */

static void add_gap(struct store_gap **gaps, size_t *n, sqlite3_stmt *st, unsigned shard, bool missing) {
  *gaps = xrealloc(*gaps, (*n + 1) * sizeof **gaps);
  struct store_gap *g = &(*gaps)[(*n)++];
  memset(g, 0, sizeof *g);
  snprintf(g->plan_hash, sizeof g->plan_hash, "%s", (const char *)sqlite3_column_text(st, 0));
  snprintf(g->name, sizeof g->name, "%s", (const char *)sqlite3_column_text(st, 1));
  g->nshards = (unsigned)sqlite3_column_int64(st, 2);
  g->shard = shard;
  g->missing = missing;
}

/* One plan's parts, from a row (plan_hash, name, nshards, parts as "shard:runs:done:failed:finished,..."). */
static void plan_gaps(struct store_gap **gaps, size_t *n, sqlite3_stmt *st) {
  unsigned nshards = (unsigned)sqlite3_column_int64(st, 2);
  const char *parts = (const char *)sqlite3_column_text(st, 3);
  unsigned next = 0;
  for (const char *p = parts ? parts : ""; *p;) {
    unsigned shard, finished;
    unsigned long long runs, done, failed;
    int used = 0;
    if (sscanf(p, "%u:%llu:%llu:%llu:%u%n", &shard, &runs, &done, &failed, &finished, &used) != 5) break;
    p += used + (p[used] == ',');
    for (; next < shard && next < nshards; next++) add_gap(gaps, n, st, next, true);
    next = shard + 1;
    if (finished && failed == 0) continue;
    add_gap(gaps, n, st, shard, false);
    struct store_gap *g = &(*gaps)[*n - 1];
    g->runs = runs, g->done = done, g->failed = failed;
  }
  for (; next < nshards; next++) add_gap(gaps, n, st, next, true);
}

int store_sweep_gaps(sqlite3 *db, const char *path, struct store_gap **gaps, size_t *ngaps, char *err,
                     size_t errlen) {
  *gaps = NULL;
  *ngaps = 0;
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db,
    "SELECT plan_hash, min(name), nshards, group_concat(shard || ':' || runs || ':' || done || ':' || failed"
    " || ':' || (finished_at IS NOT NULL), ',')"
    " FROM (SELECT * FROM sweeps ORDER BY plan_hash, nshards, shard)"
    " GROUP BY plan_hash, nshards ORDER BY min(id)", -1, &st, NULL);
  while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    plan_gaps(gaps, ngaps, st);
    rc = SQLITE_OK;
  }
  sqlite3_finalize(st);
  if (rc == SQLITE_DONE) return 0;
  free(*gaps);
  *gaps = NULL;
  *ngaps = 0;
  return store_db_error(db, path, "cannot read the sweeps", err, errlen);
}
