/* The results database: opening it (WAL, busy timeout, schema migrations), storing a run in one transaction, and loading it back. */
#include "store.h"
#include "store_int.h"
#include "sim/core/hash.h"
#include "sim/core/runner.h"
#include "sim/core/util.h"
#include "sim/core/version.h"

#include <sqlite3.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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
  "  name    TEXT NOT NULL,     -- e.g. 'shadow_pages_allocated' (COUNTERS in sim/core/stats.h)\n"
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

/* Version 2: the views of a run (sim/core/views.h), measured and simulated. */
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

/* ---- errors ---- */

/* Formats "results database PATH: WHAT: sqlite's message (hint)" and returns EXIT_DB. */
int store_db_error(sqlite3 *db, const char *path, const char *what, char *err, size_t errlen) {
  int code = db ? sqlite3_extended_errcode(db) & 0xff : SQLITE_NOMEM;
  int sys = db ? sqlite3_system_errno(db) : 0;
  const char *hint = "";
  switch (code) {
  case SQLITE_NOTADB: hint = " (not an SQLite database; choose another file with --db)"; break;
  case SQLITE_READONLY: hint = " (the file or its directory is read-only; choose another file with --db)"; break;
  case SQLITE_FULL: hint = " (no space left on the device)"; break;
  case SQLITE_BUSY: hint = " (other processes kept it locked for more than 10 s)"; break;
  case SQLITE_CORRUPT: hint = " (the database is damaged; choose another file with --db)"; break;
  default: break;
  }
  char sysmsg[160] = "";
  if (sys && (code == SQLITE_CANTOPEN || code == SQLITE_IOERR))
    snprintf(sysmsg, sizeof sysmsg, " (%s)", strerror(sys));
  snprintf(err, errlen, "results database %s: %s: %s%s%s", path, what,
           db ? sqlite3_errmsg(db) : "out of memory", hint, sysmsg);
  return EXIT_DB;
}

static int exec(sqlite3 *db, const char *sql) { return sqlite3_exec(db, sql, NULL, NULL, NULL); }

/* Runs a one-integer query; -1 on error (sqlite's message stays on db). */
int64_t store_query_int(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = NULL;
  int64_t v = -1;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
    v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

/* ---- opening and migrating ---- */

/* Whether a file can be created beside path; errno says why not (a missing
** or read-only directory). */
static bool dir_writable(const char *path) {
  const char *slash = strrchr(path, '/');
  char *dir = xstrdup(slash ? path : ".");
  if (slash) dir[slash == path ? 1 : slash - path] = 0;
  bool ok = access(dir, W_OK | X_OK) == 0;
  int e = errno;
  free(dir);
  errno = e;
  return ok;
}

/* Refuses what sqlite3_open would misreport: an empty name, a directory, a missing file. */
int store_check_path(const char *path, bool create, char *err, size_t errlen) {
  struct stat sb;
  if (!path || !*path) {
    snprintf(err, errlen, "results database: empty file name (use --db FILE)");
    return EXIT_DB;
  }
  if (stat(path, &sb) == 0) {
    if (S_ISDIR(sb.st_mode)) {
      snprintf(err, errlen, "results database %s: is a directory, not a database file (use --db FILE)", path);
      return EXIT_DB;
    }
    return 0;
  }
  if (errno == ENOENT && !create) {
    snprintf(err, errlen, "results database %s does not exist (runs are stored there by "
             "'vmxsim --policy P TRACE'; --db FILE chooses another)", path);
    return EXIT_DB;
  }
  if (errno == ENOENT && !dir_writable(path)) {   /* SQLite would say "No such file or directory" */
    snprintf(err, errlen, "results database %s: cannot create: %s (choose another file with --db, or --no-db)",
             path, strerror(errno));
    return EXIT_DB;
  }
  return 0;   /* sqlite3_open reports the rest */
}

/* WAL lets readers and one writer work at once; the mode persists in the file.
** Switching needs a moment of exclusive access, so retry while others hold it.
** mode: "wal", or "delete" (a rollback journal). */
static int set_journal(sqlite3 *db, const char *mode) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL);
  if (rc == SQLITE_OK) rc = sqlite3_step(st);
  bool same = rc == SQLITE_ROW && sqlite3_stricmp((const char *)sqlite3_column_text(st, 0), mode) == 0;
  sqlite3_finalize(st);
  if (rc != SQLITE_ROW) return rc;
  if (same) return SQLITE_OK;
  char sql[48];
  snprintf(sql, sizeof sql, "PRAGMA journal_mode=%s", mode);
  for (int tries = 0; tries < BUSY_TIMEOUT_MS / 10; tries++) {
    rc = exec(db, sql);
    if ((rc & 0xff) != SQLITE_BUSY) return rc;
    sqlite3_sleep(10);
  }
  return rc;
}

/* ---- identities: SQL functions for the migration and the merge ---- */

void store_text_hash(const char *text, char hex[HASH_HEX_LEN + 1]) {
  snprintf(hex, HASH_HEX_LEN + 1, "%016llx", (unsigned long long)xxh64(text, strlen(text)));
}

void store_run_key(const char *trace_hash, const char *policy_json, const char *cpu_hash, const char *version,
                   bool partial, uint64_t events, char key[HASH_HEX_LEN + 1]) {
  struct xxh64 h;
  const char *parts[] = { trace_hash, policy_json, cpu_hash, version };
  xxh64_init(&h);
  for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
    xxh64_update(&h, parts[i] ? parts[i] : "", strlen(parts[i] ? parts[i] : "") + 1);   /* with the NUL */
  char tail[48];
  if (partial) snprintf(tail, sizeof tail, "partial %llu", (unsigned long long)events);
  else snprintf(tail, sizeof tail, "complete");
  xxh64_update(&h, tail, strlen(tail));
  snprintf(key, HASH_HEX_LEN + 1, "%016llx", (unsigned long long)xxh64_final(&h));
}

static const char *arg_text(sqlite3_value *v) {
  const unsigned char *t = sqlite3_value_text(v);
  return t ? (const char *)t : "";
}

/* vmxsim_xxh64(TEXT): store_text_hash. */
static void sql_xxh64(sqlite3_context *cx, int argc, sqlite3_value **argv) {
  (void)argc;
  char hex[HASH_HEX_LEN + 1];
  store_text_hash(arg_text(argv[0]), hex);
  sqlite3_result_text(cx, hex, -1, SQLITE_TRANSIENT);
}

/* vmxsim_run_key(trace_hash, policy_json, cpu_hash, vmxsim_version, partial, events): store_run_key. */
static void sql_run_key(sqlite3_context *cx, int argc, sqlite3_value **argv) {
  (void)argc;
  char key[HASH_HEX_LEN + 1];
  store_run_key(arg_text(argv[0]), arg_text(argv[1]), arg_text(argv[2]), arg_text(argv[3]),
                sqlite3_value_int(argv[4]) != 0, (uint64_t)sqlite3_value_int64(argv[5]), key);
  sqlite3_result_text(cx, key, -1, SQLITE_TRANSIENT);
}

int store_register_functions(sqlite3 *db) {
  int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC;
  int rc = sqlite3_create_function(db, "vmxsim_xxh64", 1, flags, NULL, sql_xxh64, NULL, NULL);
  if (rc == SQLITE_OK) rc = sqlite3_create_function(db, "vmxsim_run_key", 6, flags, NULL, sql_run_key, NULL, NULL);
  return rc;
}

int store_open_journal(const char *path, bool create, enum store_journal journal, sqlite3 **out,
                       char *err, size_t errlen) {
  sqlite3 *db = NULL;
  *out = NULL;
  int rc = store_check_path(path, create, err, errlen);
  if (rc) return rc;
  int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
  if (sqlite3_open_v2(path, &db, flags, NULL) != SQLITE_OK || store_register_functions(db) != SQLITE_OK) {
    rc = store_db_error(db, path, "cannot open", err, errlen);
    goto done;
  }
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, BUSY_TIMEOUT_MS);
  /* SQLite silently opens a write-protected file read-only; storing needs to know now. */
  if (create && sqlite3_db_readonly(db, "main") == 1) {
    snprintf(err, errlen, "results database %s: cannot store the run: the file is read-only "
             "(choose another file with --db, or --no-db)", path);
    rc = EXIT_DB;
    goto done;
  }
  const char *mode = journal == STORE_JOURNAL_WAL ? "wal" : journal == STORE_JOURNAL_ROLLBACK ? "delete" : NULL;
  if (mode && sqlite3_db_readonly(db, "main") == 0 && set_journal(db, mode) != SQLITE_OK) {
    rc = store_db_error(db, path, "cannot open", err, errlen);
    goto done;
  }
  rc = store_migrate(db, path, store_migrations, store_nmigrations, err, errlen);
done:
  if (rc) sqlite3_close(db);
  else *out = db;
  return rc;
}

int store_open(const char *path, bool create, sqlite3 **out, char *err, size_t errlen) {
  return store_open_journal(path, create, STORE_JOURNAL_WAL, out, err, errlen);
}

void store_close(sqlite3 *db) { sqlite3_close(db); }

int store_newer_error(const char *path, int64_t version, int known, char *err, size_t errlen) {
  snprintf(err, errlen, "results database %s: schema version %lld is newer than this vmxsim (%s) "
           "understands (%d); use a newer vmxsim, or another file with --db", path, (long long)version,
           VMXSIM_VERSION, known);
  return EXIT_DB;
}

/* A version-0 file with tables, or another application's id, is someone else's database. */
int store_check_ours(sqlite3 *db, const char *path, int64_t version, char *err, size_t errlen) {
  int64_t app = store_query_int(db, "PRAGMA application_id");
  int64_t tables = version == 0 ? store_query_int(db, "SELECT count(*) FROM sqlite_master") : 0;
  if (app < 0 || tables < 0) return store_db_error(db, path, "cannot read the schema", err, errlen);
  if ((app != 0 && app != STORE_APPLICATION_ID) || tables > 0) {
    snprintf(err, errlen, "results database %s: an SQLite database, but not a vmxsim results database "
             "(choose another file with --db)", path);
    return EXIT_DB;
  }
  return 0;
}

/* Applies the steps above `version` and sets user_version; inside the caller's transaction. */
static int apply_steps(sqlite3 *db, int64_t version, const struct store_migration *steps, size_t n) {
  int rc = SQLITE_OK;
  for (size_t i = 0; i < n && rc == SQLITE_OK; i++)
    if (steps[i].version > version) rc = exec(db, steps[i].sql);
  if (rc == SQLITE_OK) {
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA user_version = %d", steps[n - 1].version);
    rc = exec(db, sql);
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
  int rc = exec(db, "BEGIN IMMEDIATE");
  if (rc != SQLITE_OK) return store_db_error(db, path, "cannot upgrade the schema", err, errlen);
  version = store_query_int(db, "PRAGMA user_version");
  if (version < 0) rc = store_db_error(db, path, "cannot upgrade the schema", err, errlen);
  else if (version > target) rc = store_newer_error(path, version, target, err, errlen);
  else rc = store_check_ours(db, path, version, err, errlen);
  if (rc == 0 && version < target) {
    if (apply_steps(db, version, steps, n) != SQLITE_OK || exec(db, "COMMIT") != SQLITE_OK) {
      char what[96];
      snprintf(what, sizeof what, "cannot upgrade the schema from version %lld to %d", (long long)version, target);
      rc = store_db_error(db, path, what, err, errlen);
    }
  }
  if (rc || version == target) exec(db, "ROLLBACK");
  return rc;
}

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

static int bind_text(sqlite3_stmt *st, int i, const char *s) {
  return sqlite3_bind_text(st, i, s ? s : "", -1, SQLITE_STATIC);
}

/* Steps a bound INSERT to completion and resets it for the next row. */
static int step_done(sqlite3_stmt *st) {
  int rc = sqlite3_step(st);
  sqlite3_reset(st);
  return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static int save_trace(struct saver *s) {
  const struct report *rep = s->run->rep;
  const char *meta = s->run->trace_metadata;
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(s->db, "INSERT OR IGNORE INTO traces(hash, name, workload, paging, vcpus, events, "
                              "metadata) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)", -1, &st, NULL);
  if (rc == SQLITE_OK) {
    bind_text(st, 1, s->hash);
    bind_text(st, 2, rep->trace);
    bind_text(st, 3, rep->workload);
    bind_text(st, 4, rep->paging);
    sqlite3_bind_int64(st, 5, rep->vcpus);
    sqlite3_bind_int64(st, 6, (int64_t)s->run->trace_events);
    if (meta && *meta) bind_text(st, 7, meta);
    rc = step_done(st);
  }
  sqlite3_finalize(st);
  st = NULL;
  if (rc == SQLITE_OK) rc = sqlite3_prepare_v2(s->db, "SELECT id FROM traces WHERE hash = ?1", -1, &st, NULL);
  if (rc == SQLITE_OK) {
    bind_text(st, 1, s->hash);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
      s->trace_id = sqlite3_column_int64(st, 0);
      rc = SQLITE_OK;
    }
  }
  sqlite3_finalize(st);
  return rc;
}

static void utc_text(int64_t t, char out[32]) {
  time_t tt = (time_t)t;
  struct tm tm;
  gmtime_r(&tt, &tm);
  strftime(out, 32, "%Y-%m-%d %H:%M:%S", &tm);
}

static int save_run_row(struct saver *s) {
  const struct store_run *run = s->run;
  const struct report *rep = run->rep;
  char started[32];
  utc_text(run->started_unix ? run->started_unix : (int64_t)(time(NULL) - (time_t)run->wall_seconds), started);
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
    bind_text(st, 2, rep->trace);
    bind_text(st, 3, rep->policy);
    bind_text(st, 4, run->policy_json);
    bind_text(st, 5, rep->cpu);
    bind_text(st, 6, run->profile_json);
    sqlite3_bind_double(st, 7, rep->clock_ghz);
    bind_text(st, 8, VMXSIM_VERSION);
    bind_text(st, 9, started);
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
    bind_text(st, 19, cpu_hash);
    bind_text(st, 20, key);
    rc = step_done(st);
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
    bind_text(st, 4, r->name);
    if (r->parent[0]) bind_text(st, 5, r->parent);
    else sqlite3_bind_null(st, 5);
    const uint64_t v[] = { r->count, r->cycles, r->min, r->p5, r->p50, r->p95, r->max };
    for (int k = 0; k < 7; k++) sqlite3_bind_int64(st, 6 + k, (int64_t)v[k]);
    rc = step_done(st);
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
    bind_text(st, 3, rep->counters[i].name);
    sqlite3_bind_int64(st, 4, (int64_t)rep->counters[i].value);
    rc = step_done(st);
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
    bind_text(st, 3, v->source == VS_MEASURED ? "measured" : "simulated");
    bind_text(st, 4, view_dim_name(v->dim));
    sqlite3_bind_int(st, 5, v->reason);
    sqlite3_bind_int64(st, 6, (int64_t)v->key);
    bind_text(st, 7, v->name);
    if (v->parent[0]) bind_text(st, 8, v->parent);
    else sqlite3_bind_null(st, 8);
    const uint64_t n[] = { v->count, v->cycles, v->avg, v->min, v->p5, v->p50, v->p95, v->max };
    for (int k = 0; k < 8; k++) sqlite3_bind_int64(st, 9 + k, (int64_t)n[k]);
    sqlite3_bind_double(st, 17, v->stddev);
    rc = step_done(st);
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
  int rc = exec(s->db, "BEGIN IMMEDIATE");
  if (rc != SQLITE_OK) return store_db_error(s->db, path, "cannot store the run", err, errlen);
  rc = save_trace(s);
  if (rc == SQLITE_OK) { test_delay(s); rc = save_run_row(s); }
  if (rc == SQLITE_OK) { test_delay(s); rc = save_exits(s); }
  if (rc == SQLITE_OK) rc = save_counters(s);
  if (rc == SQLITE_OK) rc = save_views(s);
  if (rc == SQLITE_OK) rc = store_remember_hash(s->db, s->run->seen, s->hash);
  if (rc == SQLITE_OK) rc = exec(s->db, "COMMIT");
  if (rc == SQLITE_OK) return 0;
  store_db_error(s->db, path, "cannot store the run", err, errlen);
  exec(s->db, "ROLLBACK");
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

/* ---- deleting runs ---- */

/* Runs `sql` (one ?1 parameter) for each id; SQLITE_OK or the first error. */
static int for_each_id(sqlite3 *db, const char *sql, const int64_t *ids, size_t n, int64_t *changed) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  for (size_t i = 0; i < n && rc == SQLITE_OK; i++) {
    sqlite3_bind_int64(st, 1, ids[i]);
    rc = step_done(st);
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
  int rc = exec(db, "BEGIN IMMEDIATE");
  if (rc == SQLITE_OK) rc = for_each_id(db, "DELETE FROM exits WHERE run_id = ?1", ids, n, NULL);
  if (rc == SQLITE_OK) rc = for_each_id(db, "DELETE FROM counters WHERE run_id = ?1", ids, n, NULL);
  if (rc == SQLITE_OK) rc = for_each_id(db, "DELETE FROM views WHERE run_id = ?1", ids, n, NULL);
  if (rc == SQLITE_OK) rc = for_each_id(db, "DELETE FROM runs WHERE id = ?1", ids, n, &count);
  if (rc == SQLITE_OK) rc = exec(db, "DELETE FROM traces WHERE id NOT IN (SELECT trace_id FROM runs)");
  if (rc == SQLITE_OK) rc = exec(db, "DELETE FROM trace_files WHERE hash NOT IN (SELECT hash FROM traces)");
  if (rc == SQLITE_OK) rc = exec(db, "COMMIT");
  if (rc != SQLITE_OK) {
    store_db_error(db, path, "cannot delete runs", err, errlen);
    exec(db, "ROLLBACK");
    return EXIT_DB;
  }
  if (deleted) *deleted = count;
  return 0;
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

int store_find_run(sqlite3 *db, const char *path, const char *key, int64_t *run_id, char *err, size_t errlen) {
  sqlite3_stmt *st = NULL;
  *run_id = 0;
  int rc = sqlite3_prepare_v2(db, "SELECT min(id) FROM runs WHERE run_key = ?1", -1, &st, NULL);
  if (rc == SQLITE_OK) {
    bind_text(st, 1, key);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
      *run_id = sqlite3_column_int64(st, 0);
      rc = SQLITE_OK;
    }
  }
  sqlite3_finalize(st);
  return rc == SQLITE_OK ? 0 : store_db_error(db, path, "cannot look up a run", err, errlen);
}

/* ---- sweeps ---- */

static void utc_now(char out[32]) { utc_text((int64_t)time(NULL), out); }

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
    bind_text(st, 1, sw->plan_hash);
    bind_text(st, 2, sw->name);
    bind_text(st, 3, sw->plan_json);
    sqlite3_bind_int64(st, 4, sw->shard);
    sqlite3_bind_int64(st, 5, sw->nshards);
    sqlite3_bind_int64(st, 6, (int64_t)sw->runs);
    bind_text(st, 7, VMXSIM_VERSION);
    bind_text(st, 8, now);
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
    bind_text(st, 5, now);
    rc = step_done(st);
  }
  sqlite3_finalize(st);
  return rc == SQLITE_OK ? 0 : store_db_error(db, path, "cannot record the sweep's progress", err, errlen);
}

/* ---- loading a run ---- */

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
    " r.events, r.total_exits, r.marks, r.guest_cycles, r.vmm_cycles, r.elapsed_cycles"
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
  int rc = exec(db, "BEGIN");
  if (rc == SQLITE_OK) rc = load_identity(db, run_id, rep, &id);
  if (rc == SQLITE_DONE) {
    exec(db, "ROLLBACK");
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
    exec(db, "ROLLBACK");
    return EXIT_DB;
  }
  exec(db, "COMMIT");
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
