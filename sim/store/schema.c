/* The schema of the results database as its migration steps, and the code that
** applies them.  Apart from opening and writing because a released step is
** never edited, only appended to: docs/schema.md, "Migrations". */
#include "store.h"
#include "store_int.h"
#include "sim/base/util.h"

#include <sqlite3.h>
#include <stdio.h>

/* ---- schema ---- */

/* Version 1.  SQLite keeps the comments inside each CREATE in sqlite_master,
** so `sqlite3 vmxsim.db .schema` explains the columns too.  docs/schema.md
** is the full description; keep the two in step. */
static const char schema_v1[] =
  "PRAGMA application_id = 1986885747;\n"   /* STORE_APPLICATION_ID, "vmxs" */
  "CREATE TABLE traces (\n"
  "  id        INTEGER PRIMARY KEY,\n"
  "  hash      TEXT NOT NULL UNIQUE,  -- XXH64 of the whole file, 16 hex digits (xxhsum -H1)\n"
  "  name      TEXT NOT NULL,         -- file name when first stored\n"
  "  workload  TEXT NOT NULL,         -- header workload name ('' if none)\n"
  "  paging    TEXT NOT NULL,         -- guest paging: '32', 'pae' or '64'\n"
  "  vcpus     INTEGER NOT NULL,\n"
  "  events    INTEGER NOT NULL,      -- records in the file\n"
  "  metadata  TEXT                   -- header metadata JSON (generator parameters), NULL if none\n"
  ");\n"
  "CREATE TABLE runs (\n"
  "  id             INTEGER PRIMARY KEY,\n"
  "  trace_id       INTEGER NOT NULL REFERENCES traces(id),\n"
  "  trace_name     TEXT NOT NULL,     -- the trace path as given on the command line\n"
  "  policy         TEXT NOT NULL,     -- policy name as printed: presets joined by '+', then ',knob=value'\n"
  "  policy_json    TEXT NOT NULL,     -- every knob, resolved (a file usable as --policy)\n"
  "  cpu            TEXT NOT NULL,     -- CPU profile name\n"
  "  cpu_json       TEXT NOT NULL,     -- the profile as loaded (a file usable as --cpu)\n"
  "  clock_ghz      REAL NOT NULL,\n"
  "  vmxsim_version TEXT NOT NULL,\n"
  "  started_at     TEXT NOT NULL,     -- UTC, 'YYYY-MM-DD HH:MM:SS'\n"
  "  wall_seconds   REAL NOT NULL,     -- replay wall time\n"
  "  events_per_sec REAL,              -- NULL when the wall time was too short to measure\n"
  "  events         INTEGER NOT NULL,  -- events replayed\n"
  "  partial        INTEGER NOT NULL DEFAULT 0,  -- 1: stored by the REPL before the end of the trace\n"
  "  total_exits    INTEGER NOT NULL,\n"
  "  marks          INTEGER NOT NULL,  -- workload operations (mark events)\n"
  "  guest_cycles   INTEGER NOT NULL,\n"
  "  vmm_cycles     INTEGER NOT NULL,  -- hypervisor: every exit's round trip and handler\n"
  "  elapsed_cycles INTEGER NOT NULL   -- the busiest vCPU's guest + hypervisor cycles\n"
  ");\n"
  "CREATE INDEX runs_by_trace ON runs(trace_id, policy, cpu);\n"
  "CREATE TABLE exits (\n"
  "  run_id  INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n"
  "  seq     INTEGER NOT NULL,  -- position in the report\n"
  "  reason  INTEGER NOT NULL,  -- SDM basic exit reason (the parent's for a breakdown row)\n"
  "  name    TEXT NOT NULL,     -- 'CR_ACCESS', or a breakdown row such as 'cr3 write'\n"
  "  parent  TEXT,              -- NULL for a reason; the reason's name for a breakdown row\n"
  "  count   INTEGER NOT NULL,\n"
  "  cycles  INTEGER NOT NULL,  -- hypervisor cycles of these exits\n"
  "  min     INTEGER NOT NULL,  -- per-exit cycles: minimum, percentiles (nearest rank), maximum\n"
  "  p5      INTEGER NOT NULL,\n"
  "  p50     INTEGER NOT NULL,\n"
  "  p95     INTEGER NOT NULL,\n"
  "  max     INTEGER NOT NULL,\n"
  "  PRIMARY KEY (run_id, seq)\n"
  ") WITHOUT ROWID;\n"
  "CREATE TABLE counters (\n"
  "  run_id  INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n"
  "  seq     INTEGER NOT NULL,  -- position in the report\n"
  "  name    TEXT NOT NULL,     -- e.g. 'shadow_pages_allocated' (COUNTERS in sim/replay/stats.h)\n"
  "  value   INTEGER NOT NULL,\n"
  "  PRIMARY KEY (run_id, seq)\n"
  ") WITHOUT ROWID;\n"
  "CREATE VIEW run_summary AS\n"
  "  SELECT r.id, r.started_at, r.trace_name AS trace, t.hash AS trace_hash, t.workload, t.metadata,\n"
  "         r.policy, r.cpu, r.clock_ghz, r.events, r.total_exits AS exits, r.marks,\n"
  "         r.guest_cycles, r.vmm_cycles, r.guest_cycles + r.vmm_cycles AS cycles,\n"
  "         CASE WHEN r.marks > 0 THEN (r.guest_cycles + r.vmm_cycles) / (r.marks * r.clock_ghz * 1000.0) END\n"
  "           AS us_per_op,  -- microseconds per workload operation\n"
  "         r.wall_seconds, r.events_per_sec, r.partial\n"
  "  FROM runs r JOIN traces t ON t.id = r.trace_id;\n";

/* Version 2: the views of a run (sim/replay/views.h), measured and simulated. */
static const char schema_v2[] =
  "CREATE TABLE views (\n"
  "  run_id  INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n"
  "  seq     INTEGER NOT NULL,  -- position in the run's views\n"
  "  source  TEXT NOT NULL,     -- 'measured' (what the recording's host measured) or 'simulated'\n"
  "  view    TEXT NOT NULL,     -- reason, cr, dr, msr, port, vector, leaf (under a reason), cr3, vcpu\n"
  "  reason  INTEGER NOT NULL,  -- SDM basic exit reason (the parent's for a breakdown row; 0 for cr3, vcpu)\n"
  "  key     INTEGER NOT NULL,  -- reason, CR key (crN*2+write; 256 clts, 257 lmsw), DR key, MSR index,\n"
  "                             -- port + 65536 for out, vector, CPUID leaf, CR3 value, vCPU\n"
  "  name    TEXT NOT NULL,     -- as printed: 'CR_ACCESS', 'cr3 write', 'msr 0x6e0', 'port 0x70 out'\n"
  "  parent  TEXT,              -- the reason's name for a breakdown row, NULL otherwise\n"
  "  count   INTEGER NOT NULL,\n"
  "  cycles  INTEGER NOT NULL,\n"
  "  avg     INTEGER NOT NULL,  -- cycles / exits with a nonzero cost (xenalyze's average)\n"
  "  min     INTEGER NOT NULL,\n"
  "  p5      INTEGER NOT NULL,  -- percentiles of an even sample of at most 10240 exits (xenalyze's)\n"
  "  p50     INTEGER NOT NULL,\n"
  "  p95     INTEGER NOT NULL,\n"
  "  max     INTEGER NOT NULL,\n"
  "  stddev  REAL NOT NULL,\n"
  "  PRIMARY KEY (run_id, seq)\n"
  ") WITHOUT ROWID;\n";

/* Version 3: the identity of a run (what a sweep skips and a merge stores
** once) and the sweeps that filled the database.  The backfill uses the SQL
** functions store_open registers (vmxsim_xxh64, vmxsim_run_key). */
static const char schema_v3[] =
  "ALTER TABLE runs ADD COLUMN cpu_hash TEXT;  -- XXH64 of cpu_json, 16 hex digits\n"
  "ALTER TABLE runs ADD COLUMN run_key TEXT;   -- identity: XXH64 of trace hash, policy_json, cpu_hash,"
  " vmxsim_version (and events if partial)\n"
  "UPDATE runs SET cpu_hash = vmxsim_xxh64(cpu_json),\n"
  "  run_key = vmxsim_run_key((SELECT hash FROM traces t WHERE t.id = runs.trace_id), policy_json,\n"
  "                           vmxsim_xxh64(cpu_json), vmxsim_version, partial, events);\n"
  "CREATE INDEX runs_by_key ON runs(run_key);\n"
  "CREATE TABLE sweeps (\n"
  "  id             INTEGER PRIMARY KEY,\n"
  "  plan_hash      TEXT NOT NULL,     -- XXH64 of the plan as compact JSON\n"
  "  name           TEXT NOT NULL,     -- the plan's name\n"
  "  plan           TEXT NOT NULL,     -- the plan as compact JSON\n"
  "  shard          INTEGER NOT NULL,  -- this part: shard of nshards (0 of 1: the whole sweep)\n"
  "  nshards        INTEGER NOT NULL,\n"
  "  runs           INTEGER NOT NULL,  -- runs in this part\n"
  "  done           INTEGER NOT NULL,  -- of which stored (now or before)\n"
  "  failed         INTEGER NOT NULL,  -- of which failed in the last attempt\n"
  "  vmxsim_version TEXT NOT NULL,\n"
  "  started_at     TEXT NOT NULL,     -- UTC, the last attempt\n"
  "  finished_at    TEXT,              -- UTC; NULL while running or after an interruption\n"
  "  UNIQUE (plan_hash, shard, nshards)\n"
  ");\n";

/* Version 4: the content hashes of trace files, remembered so that the next
** stored run of an unchanged file need not hash it (sim/store/known.h). */
static const char schema_v4[] =
  "CREATE TABLE trace_files (\n"
  "  path      TEXT PRIMARY KEY,  -- absolute path of a trace file, symbolic links resolved\n"
  "  device    INTEGER NOT NULL,  -- st_dev and st_ino: the file itself\n"
  "  inode     INTEGER NOT NULL,\n"
  "  size      INTEGER NOT NULL,  -- bytes\n"
  "  mtime_ns  INTEGER NOT NULL,  -- modification and status-change times, ns since 1970\n"
  "  ctime_ns  INTEGER NOT NULL,\n"
  "  hash      TEXT NOT NULL,     -- traces.hash of its content while it had these\n"
  "  hashed_at TEXT NOT NULL      -- UTC, when the hash began to be taken\n"
  ") WITHOUT ROWID;\n";

const struct store_migration store_migrations[] = {
  { 1, schema_v1 },
  { 2, schema_v2 },
  { 3, schema_v3 },
  { 4, schema_v4 },
  /* { 5, "ALTER TABLE runs ADD COLUMN ...;" }: append, never edit a released step. */
};
const size_t store_nmigrations = sizeof store_migrations / sizeof *store_migrations;

/* ---- migrating ---- */

/* Applies the steps above `version` and sets user_version; inside the caller's transaction. */
static int apply_steps(sqlite3 *db, int64_t version, const struct store_migration *steps, size_t n) {
  int rc = SQLITE_OK;
  for (size_t i = 0; i < n && rc == SQLITE_OK; i++)
    if (steps[i].version > version) rc = store_exec(db, steps[i].sql);
  if (rc == SQLITE_OK) {
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA user_version = %d", steps[n - 1].version);
    rc = store_exec(db, sql);
  }
  return rc;
}

int store_migrate(sqlite3 *db, const char *path, const struct store_migration *steps, size_t n,
                  char *err, size_t errlen) {
  int target = n ? steps[n - 1].version : 0;
  int64_t version = store_query_int(db, "PRAGMA user_version");
  if (version < 0) return store_db_error(db, path, "cannot open", err, errlen);
  if (version == target) return store_check_ours(db, path, version, err, errlen);
  if (version > target) return store_newer_error(path, version, target, err, errlen);
  /* Another process may be migrating too: take the write lock, then look again. */
  int rc = store_exec(db, "BEGIN IMMEDIATE");
  if (rc != SQLITE_OK) return store_db_error(db, path, "cannot upgrade the schema", err, errlen);
  version = store_query_int(db, "PRAGMA user_version");
  if (version < 0) rc = store_db_error(db, path, "cannot upgrade the schema", err, errlen);
  else if (version > target) rc = store_newer_error(path, version, target, err, errlen);
  else rc = store_check_ours(db, path, version, err, errlen);
  if (rc == 0 && version < target) {
    if (apply_steps(db, version, steps, n) != SQLITE_OK || store_exec(db, "COMMIT") != SQLITE_OK) {
      char what[96];
      snprintf(what, sizeof what, "cannot upgrade the schema from version %lld to %d", (long long)version, target);
      rc = store_db_error(db, path, what, err, errlen);
    }
  }
  if (rc || version == target) store_exec(db, "ROLLBACK");
  return rc;
}
