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
#include "sim/core/report.h"

#define STORE_DEFAULT_PATH "vmxsim.db"
#define STORE_SCHEMA_VERSION 2            /* PRAGMA user_version of a current database */
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
};

/* The store_run of a finished replay (sim/core/runner.h) of the trace file
** `trace`; it points into out. */
struct run_output;
struct store_run store_run_of(const struct run_output *out, const char *trace);

/* Stores a run in one transaction (all rows or none); creates or migrates the
** schema.  Returns 0 and the new run id, or an enum exit_code (EXIT_DB) with
** a message naming the database file. */
int store_save(const char *db_path, const struct store_run *run, int64_t *run_id, char *err, size_t errlen);

/* Reads run `run_id` (or the last one when run_id < 0) back into rep so that
** report_print prints exactly what the batch run printed.  EXIT_USAGE when
** there is no such run. */
int store_load(const char *db_path, int64_t run_id, struct report *rep, int64_t *loaded_id,
               char *err, size_t errlen);

/* ---- for the query commands (sim/cli/cmd_db.c) and tests ---- */

/* Opens an existing database (create: creating it if missing) with WAL and a
** busy timeout, and migrates its schema forward.  Returns 0 or EXIT_DB with a
** message; on success *db must be closed with store_close. */
int store_open(const char *db_path, bool create, struct sqlite3 **db, char *err, size_t errlen);
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
** is an error.  store_open uses the real list (store.c); tests pass their own. */
int store_migrate(struct sqlite3 *db, const char *db_path, const struct store_migration *steps,
                  size_t nsteps, char *err, size_t errlen);
/* The real migrations, for tests that extend them. */
extern const struct store_migration store_migrations[];
extern const size_t store_nmigrations;

#endif
