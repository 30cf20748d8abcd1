/* The results database (SQLite): schema, atomic storing of runs, reading them back.
**
** Ownership: the caller owns everything it passes in and everything it gets
** back; nothing returned needs freeing unless a function says so.
** The schema is documented in docs/schema.md.
*/
#ifndef VMXSIM_STORE_H
#define VMXSIM_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "sim/replay/report.h"

#define STORE_DEFAULT_PATH "vmxsim.db"
#define STORE_SCHEMA_VERSION 4            /* PRAGMA user_version of a current database */
#define STORE_APPLICATION_ID 0x766d7873   /* PRAGMA application_id: "vmxs" */

/* Test hook: when set, store_save sleeps this many milliseconds after each
** insert inside the run's transaction, so a test can kill it half way. */
#define STORE_DELAY_ENV "VMXSIM_TEST_STORE_DELAY_MS"

struct sqlite3;

/* One finished run, as cmd_run (or the REPL's `save`) has it. */
struct store_run {
  const struct report *rep;      /* the statistics and identity printed to the user;
                                    rep->trace_hash is used when set, else the file is hashed */
  const char *trace_path;        /* the trace file (hashed for the content hash) */
  const char *trace_metadata;    /* header metadata JSON ("" if none) */
  uint64_t trace_events;         /* records in the trace file */
  const char *policy_json;       /* resolved policy (policy_to_json) */
  const char *profile_json;      /* CPU profile as loaded (profile.json) */
  double wall_seconds;           /* replay wall time */
  bool partial;                  /* REPL: stored before the end of the trace */
  int64_t started_unix;          /* replay start (0: now minus wall_seconds) */
  const struct file_seen *seen;  /* the trace file as seen before it was read (sim/store/known.h):
                                    its hash is remembered when settled and unchanged; NULL: not */
};

/* The store_run of a finished replay (sim/replay/runner.h) of the trace file
** `trace`; it points into out. */
struct run_output;
struct store_run store_run_of(const struct run_output *out, const char *trace);

/* Stores a run in one transaction (all rows or none); creates or migrates the
** schema.  Returns 0 and the new run id, or an enum exit_code (EXIT_DB) with
** a message naming the database file. */
int store_save(const char *db_path, const struct store_run *run, int64_t *run_id, char *err, size_t errlen);
/* store_save into an open database (store_open): for a process that stores many runs. */
int store_save_db(struct sqlite3 *db, const char *db_path, const struct store_run *run, int64_t *run_id,
                  char *err, size_t errlen);

/* ---- identity of a run (docs/schema.md, "Identity of a run") ----
** Two runs are the same when their trace content, resolved policy (name and
** knobs), CPU profile content and vmxsim version are; their numbers then are
** too.  A sweep skips a run whose key is stored; a merge stores each key once. */
#define STORE_KEY_LEN 16   /* hex digits of a key or a text hash */
/* XXH64 of text, 16 lowercase hex digits (cpu_hash is that of the profile JSON). */
void store_text_hash(const char *text, char hex[STORE_KEY_LEN + 1]);
/* The run key: XXH64 of the trace hash, the policy JSON, the profile's hash and
** the version, each with its NUL, then "complete" or, for a partial run,
** "partial EVENTS". */
void store_run_key(const char *trace_hash, const char *policy_json, const char *cpu_hash, const char *version,
                   bool partial, uint64_t events, char key[STORE_KEY_LEN + 1]);
/* The first stored run with that key (*run_id 0: none).  0 or EXIT_DB. */
int store_find_run(struct sqlite3 *db, const char *db_path, const char *key, int64_t *run_id,
                   char *err, size_t errlen);
/* Registers vmxsim_xxh64(text) and vmxsim_run_key(trace_hash, policy_json,
** cpu_hash, version, partial, events) on db (store_open does): the schema
** migration and the merge compute keys with them.  An SQLite result code. */
int store_register_functions(struct sqlite3 *db);

/* ---- sweeps (sim/sweep): one row per plan and part ---- */
struct store_sweep {
  const char *plan_hash;      /* store_text_hash of plan_json */
  const char *name;
  const char *plan_json;      /* the plan as compact JSON */
  unsigned shard, nshards;    /* 0 of 1: the whole run set */
  uint64_t runs;              /* runs in this part */
};
/* Records that the part starts (again): its row with done = failed = 0 and no
** finish time.  0 and the row's id, or EXIT_DB. */
int store_sweep_begin(struct sqlite3 *db, const char *db_path, const struct store_sweep *sw, int64_t *sweep_id,
                      char *err, size_t errlen);
/* Updates the row's counts; finished sets its finish time.  0 or EXIT_DB. */
int store_sweep_progress(struct sqlite3 *db, const char *db_path, int64_t sweep_id, uint64_t done,
                         uint64_t failed, bool finished, char *err, size_t errlen);
/* A part of a sharded sweep that the database lacks or holds unfinished. */
struct store_gap {
  char name[128];              /* the plan's name */
  char plan_hash[STORE_KEY_LEN + 1];
  unsigned shard, nshards;
  bool missing;                /* no row at all; else started but not finished, or with failures */
  uint64_t runs, done, failed; /* of an unfinished part */
};
/* The gaps of every sweep recorded in db, in plan and shard order (*gaps:
** malloc'd, caller frees; *ngaps may be 0).  0 or EXIT_DB. */
int store_sweep_gaps(struct sqlite3 *db, const char *db_path, struct store_gap **gaps, size_t *ngaps,
                     char *err, size_t errlen);

/* Reads run `run_id` (or the last one when run_id < 0) back into rep so that
** report_print prints exactly what the batch run printed.  EXIT_USAGE when
** there is no such run. */
int store_load(const char *db_path, int64_t run_id, struct report *rep, int64_t *loaded_id,
               char *err, size_t errlen);

/* ---- for the query commands (sim/cli/cmd_runs.c, cmd_report.c, cmd_compare.c) and tests ---- */

/* Opens an existing database (create: creating it if missing) with WAL and a
** busy timeout, and migrates its schema forward.  Returns 0 or EXIT_DB with a
** message; on success *db must be closed with store_close. */
int store_open(const char *db_path, bool create, struct sqlite3 **db, char *err, size_t errlen);
/* Opens an existing database read-only, for the commands that only read it
** (runs, report, compare): never writes, never migrates, and works on a
** write-protected file or directory (a WAL database without its -shm file
** there is read as immutable).  A database of an older schema is refused
** with a message that names 'vmxsim migrate'.  0 or EXIT_DB with a message. */
int store_open_readonly(const char *db_path, struct sqlite3 **db, char *err, size_t errlen);
/* Brings the database's schema up to this vmxsim's (vmxsim migrate): sets
** *from and *to to the versions before and after.  0 or EXIT_DB. */
int store_migrate_file(const char *db_path, int *from, int *to, char *err, size_t errlen);
/* How the database journals its transactions. */
enum store_journal {
  STORE_JOURNAL_WAL,        /* write-ahead log: concurrent readers; local file systems only */
  STORE_JOURNAL_ROLLBACK,   /* rollback journal (journal_mode=DELETE): for network file
                               systems, which lack the shared memory WAL needs */
  STORE_JOURNAL_KEEP,       /* as the file has it (a new file: rollback) */
};
/* store_open with the journal mode chosen. */
int store_open_journal(const char *db_path, bool create, enum store_journal journal, struct sqlite3 **db,
                       char *err, size_t errlen);
void store_close(struct sqlite3 *db);
/* store_load on an open database. */
int store_load_db(struct sqlite3 *db, const char *db_path, int64_t run_id, struct report *rep,
                  int64_t *loaded_id, char *err, size_t errlen);

/* Deletes the runs with these ids (their exits and counters too) and every
** trace left without a run, in one transaction: all or nothing.  Ids that do
** not exist are skipped; *deleted (may be NULL) is how many runs went.
** Returns 0 or EXIT_DB with a message. */
int store_delete_runs(struct sqlite3 *db, const char *db_path, const int64_t *ids, size_t n, int64_t *deleted,
                      char *err, size_t errlen);

/* One schema migration: the SQL that takes a database from version-1 to version. */
struct store_migration {
  int version;
  const char *sql;
};
/* Brings db up to the last step's version in one transaction, applying the
** steps above its user_version in order; a database newer than the last step
** is an error.  store_open uses the real list (schema.c); tests pass their own. */
int store_migrate(struct sqlite3 *db, const char *db_path, const struct store_migration *steps,
                  size_t nsteps, char *err, size_t errlen);
/* The real migrations, for tests that extend them. */
extern const struct store_migration store_migrations[];
extern const size_t store_nmigrations;

/* ---- merging databases (sim/store/merge.c; docs/sweeps.md, "Merge") ---- */

/* What merging one database into another did. */
struct store_merge_result {
  uint64_t runs;       /* runs in the merged file */
  uint64_t added;      /* of which stored now */
  uint64_t present;    /* of which already there (same key), or repeated in the file */
  int version;         /* the file's schema version */
};
/* Merges the results database at `from` into the open database out (opened
** with store_open_journal) in one transaction: traces by content hash, each
** run key once (ids remapped), their exits, counters and views, the sweeps' rows.
** `from` is only read; a file of an older schema version is read as it is, a
** newer one is refused.  0, EXIT_BADINPUT (no such file, not a results
** database, a newer schema, the output itself) or EXIT_DB, with the message
** naming the file in err. */
int store_merge(struct sqlite3 *out, const char *out_path, const char *from, struct store_merge_result *res,
                char *err, size_t errlen);

#endif
