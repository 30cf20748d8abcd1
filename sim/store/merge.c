/* Merging results databases (the shards of a sweep) into one, losslessly and
** idempotently: traces by content hash, runs by their key (store_run_key),
** ids remapped, one transaction per merged file.  docs/sweeps.md, "Merge". */
#include "store.h"
#include "store_int.h"
#include "sim/base/util.h"
#include "sim/base/version.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The key of a run of the attached file, computed whatever its schema version
** (version 1 files have no run_key column). */
#define SHARD_RUN_KEY \
  "vmxsim_run_key(t.hash, r.policy_json, vmxsim_xxh64(r.cpu_json), r.vmxsim_version, r.partial, r.events)"

/* The steps of one merge, in order; each runs inside the transaction. */
static const char *const merge_steps[] = {
  "CREATE TEMP TABLE merge_runs (old INTEGER PRIMARY KEY, run_key TEXT NOT NULL, cpu_hash TEXT NOT NULL,"
  " new INTEGER)",
  "INSERT INTO temp.merge_runs(old, run_key, cpu_hash)"
  " SELECT r.id, " SHARD_RUN_KEY ", vmxsim_xxh64(r.cpu_json)"
  " FROM shard.runs r JOIN shard.traces t ON t.id = r.trace_id",
  /* each key once: not when the output has it, and the file's first run only */
  "DELETE FROM temp.merge_runs WHERE run_key IN (SELECT run_key FROM main.runs WHERE run_key IS NOT NULL)"
  " OR old NOT IN (SELECT min(old) FROM temp.merge_runs GROUP BY run_key)",
  "INSERT OR IGNORE INTO main.traces(hash, name, workload, paging, vcpus, events, metadata)"
  " SELECT hash, name, workload, paging, vcpus, events, metadata FROM shard.traces ORDER BY id",
  "INSERT INTO main.runs(trace_id, trace_name, policy, policy_json, cpu, cpu_json, clock_ghz, vmxsim_version,"
  " started_at, wall_seconds, events_per_sec, events, partial, total_exits, marks, guest_cycles, vmm_cycles,"
  " elapsed_cycles, cpu_hash, run_key)"
  " SELECT (SELECT id FROM main.traces mt WHERE mt.hash = t.hash), r.trace_name, r.policy, r.policy_json, r.cpu,"
  " r.cpu_json, r.clock_ghz, r.vmxsim_version, r.started_at, r.wall_seconds, r.events_per_sec, r.events,"
  " r.partial, r.total_exits, r.marks, r.guest_cycles, r.vmm_cycles, r.elapsed_cycles, m.cpu_hash, m.run_key"
  " FROM temp.merge_runs m JOIN shard.runs r ON r.id = m.old JOIN shard.traces t ON t.id = r.trace_id"
  " ORDER BY m.old",
  "UPDATE temp.merge_runs SET new = (SELECT min(id) FROM main.runs mr WHERE mr.run_key = merge_runs.run_key)",
  "INSERT INTO main.exits(run_id, seq, reason, name, parent, count, cycles, min, p5, p50, p95, max)"
  " SELECT m.new, e.seq, e.reason, e.name, e.parent, e.count, e.cycles, e.min, e.p5, e.p50, e.p95, e.max"
  " FROM shard.exits e JOIN temp.merge_runs m ON m.old = e.run_id",
  "INSERT INTO main.counters(run_id, seq, name, value)"
  " SELECT m.new, c.seq, c.name, c.value FROM shard.counters c JOIN temp.merge_runs m ON m.old = c.run_id",
};

/* The views of the added runs (schema version 2 and later). */
static const char merge_views[] =
  "INSERT INTO main.views(run_id, seq, source, view, reason, key, name, parent, count, cycles, avg, min, p5, p50,"
  " p95, max, stddev)"
  " SELECT m.new, v.seq, v.source, v.view, v.reason, v.key, v.name, v.parent, v.count, v.cycles, v.avg, v.min,"
  " v.p5, v.p50, v.p95, v.max, v.stddev FROM shard.views v JOIN temp.merge_runs m ON m.old = v.run_id";

/* A sweep part's row: the output keeps the better of two (finished without
** failures, then finished, then more runs done). */
#define PART_RANK(t) "((" t ".finished_at IS NOT NULL AND " t ".failed = 0) * 2 + (" t ".finished_at IS NOT NULL))"
static const char merge_sweeps[] =
  "INSERT INTO main.sweeps(plan_hash, name, plan, shard, nshards, runs, done, failed, vmxsim_version,"
  " started_at, finished_at)"
  " SELECT plan_hash, name, plan, shard, nshards, runs, done, failed, vmxsim_version, started_at, finished_at"
  " FROM shard.sweeps WHERE true"
  " ON CONFLICT (plan_hash, shard, nshards) DO UPDATE SET runs = excluded.runs, done = excluded.done,"
  " failed = excluded.failed, vmxsim_version = excluded.vmxsim_version, started_at = excluded.started_at,"
  " finished_at = excluded.finished_at"
  " WHERE " PART_RANK("excluded") " > " PART_RANK("sweeps")
  " OR (" PART_RANK("excluded") " = " PART_RANK("sweeps") " AND excluded.done > sweeps.done)";

static int exec(sqlite3 *db, const char *sql) { return sqlite3_exec(db, sql, NULL, NULL, NULL); }

/* Refuses what cannot be merged: a missing file, the output itself. */
static int check_file(const char *out_path, const char *from, char *err, size_t errlen) {
  struct stat a, b;
  if (stat(from, &b) != 0) {
    snprintf(err, errlen, "%s: %s", from, errno == ENOENT ? "missing (no such file)" : strerror(errno));
    return EXIT_BADINPUT;
  }
  if (S_ISDIR(b.st_mode)) {
    snprintf(err, errlen, "%s: is a directory, not a results database", from);
    return EXIT_BADINPUT;
  }
  if (stat(out_path, &a) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
    snprintf(err, errlen, "%s: is the output database itself", from);
    return EXIT_BADINPUT;
  }
  return 0;
}

/* The attached file must be a vmxsim results database of a version this build reads. */
static int check_attached(sqlite3 *db, const char *out_path, const char *from, int *version,
                          char *err, size_t errlen) {
  int64_t app = store_query_int(db, "PRAGMA shard.application_id");
  int64_t ver = store_query_int(db, "PRAGMA shard.user_version");
  if (app < 0 || ver < 0) {
    char what[600];
    snprintf(what, sizeof what, "cannot read %s", from);
    return store_db_error(db, out_path, what, err, errlen);
  }
  if (app != STORE_APPLICATION_ID || ver < 1) {
    snprintf(err, errlen, "%s: not a vmxsim results database%s", from,
             app == STORE_APPLICATION_ID ? " (no schema: nothing was ever stored in it)" : "");
    return EXIT_BADINPUT;
  }
  if (ver > STORE_SCHEMA_VERSION) {
    snprintf(err, errlen, "%s: schema version %lld is newer than this vmxsim (%s) understands (%d); "
             "merge with a newer vmxsim", from, (long long)ver, VMXSIM_VERSION, STORE_SCHEMA_VERSION);
    return EXIT_BADINPUT;
  }
  *version = (int)ver;
  return 0;
}

/* The whole copy, in one transaction; on failure nothing of it stays. */
static int copy_all(sqlite3 *db, const char *out_path, const char *from, struct store_merge_result *res,
                    char *err, size_t errlen) {
  int rc = exec(db, "BEGIN IMMEDIATE");
  for (size_t i = 0; i < sizeof merge_steps / sizeof *merge_steps && rc == SQLITE_OK; i++) {
    rc = exec(db, merge_steps[i]);
    if (i == 1) res->runs = (uint64_t)sqlite3_changes(db);
  }
  if (rc == SQLITE_OK) res->added = (uint64_t)store_query_int(db, "SELECT count(*) FROM temp.merge_runs");
  if (rc == SQLITE_OK && res->version >= 2) rc = exec(db, merge_views);
  if (rc == SQLITE_OK && res->version >= 3) rc = exec(db, merge_sweeps);
  if (rc == SQLITE_OK) rc = exec(db, "DROP TABLE temp.merge_runs");
  if (rc == SQLITE_OK) rc = exec(db, "COMMIT");
  if (rc == SQLITE_OK) {
    res->present = res->runs - res->added;
    return 0;
  }
  char what[600];
  snprintf(what, sizeof what, "cannot merge %s into it", from);
  int code = store_db_error(db, out_path, what, err, errlen);
  exec(db, "ROLLBACK");
  exec(db, "DROP TABLE IF EXISTS temp.merge_runs");
  return code;
}

int store_merge(sqlite3 *db, const char *out_path, const char *from, struct store_merge_result *res,
                char *err, size_t errlen) {
  memset(res, 0, sizeof *res);
  int rc = check_file(out_path, from, err, errlen);
  if (rc) return rc;
  /* read-only, so that a file on a read-only mount or of another user merges
  ** and gets no -wal or -shm beside it (the output's connection takes URIs) */
  char *uri = store_read_uri(from, store_read_as_immutable(from));
  sqlite3_stmt *st = NULL;
  rc = sqlite3_prepare_v2(db, "ATTACH ?1 AS shard", -1, &st, NULL);
  if (rc == SQLITE_OK) {
    sqlite3_bind_text(st, 1, uri, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
  }
  sqlite3_finalize(st);
  free(uri);
  if (rc != SQLITE_DONE) {
    char what[600];
    snprintf(what, sizeof what, "cannot open %s", from);
    return store_db_error(db, out_path, what, err, errlen);
  }
  rc = check_attached(db, out_path, from, &res->version, err, errlen);
  if (rc == 0) rc = copy_all(db, out_path, from, res, err, errlen);
  exec(db, "DETACH shard");
  return rc;
}
