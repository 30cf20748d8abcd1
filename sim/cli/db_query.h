/* What the query commands (runs, report, compare: cmd_runs.c, cmd_report.c,
** cmd_compare.c) share and nobody else needs: one option parser, so that an
** option means the same in each and one that does not apply is named as such,
** and one way of selecting runs, so that `runs` lists what `compare` takes. */
#ifndef VMXSIM_DB_QUERY_H
#define VMXSIM_DB_QUERY_H

#include "compare.h"
#include "sim/trace/hash.h"

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct db_opts {
  const char *db, *trace, *cpu, *workload;
  char *policy[COMPARE_MAX_RUNS];       /* --policy: the names the runs are stored under (policy_name) */
  unsigned npolicy;
  int format;
  bool last;
  char older[32];                       /* --older-than as an SQLite modifier, "-86400 seconds" */
  int64_t *del;                         /* --delete ids */
  size_t ndel;
  bool prune, dry_run;
  bool run_missing, mixed_cpus;         /* compare --run, --mixed-cpus */
  bool partial;                         /* compare --partial: runs the REPL stored before the trace's end too */
  bool skip_bad;                        /* compare --skip-bad (a recording's unparseable lines) */
  const char *trace_file;               /* the file behind --trace: a recording's import; NULL: trace itself */
};

void cli_free_db_opts(struct db_opts *o);
/* Parses the options of a query command (those in `allowed`, by short letter)
** and takes at most `max` operands, which may come before or after options.
** Returns -1 after --help, EXIT_USAGE after a message, else 0. */
int cli_parse_db_opts(int argc, char **argv, const char *usage, const char *allowed, struct db_opts *o,
                      char **operands, unsigned max, unsigned *n);
/* False after a message when s is not a run id. */
bool cli_parse_run_id(const char *s, int64_t *id);

/* The WHERE clause of run_summary filters: ?1 trace hash, ?2 trace name, ?3 policy, ?4 cpu, ?5 workload,
** ?6 a date modifier ("-86400 seconds"): runs started before that long ago; ?8 not NULL: whole runs
** only (not those the REPL stored before the end of their trace). */
#define FILTER_SQL                                                                                \
  " (?1 IS NULL OR trace_hash = ?1)"                                                              \
  " AND (?2 IS NULL OR trace = ?2 OR substr(trace, -length(?2) - 1) = '/' || ?2)"                 \
  " AND (?3 IS NULL OR policy = ?3) AND (?4 IS NULL OR cpu = ?4) AND (?5 IS NULL OR workload = ?5)" \
  " AND (?6 IS NULL OR started_at < datetime('now', ?6))" \
  " AND (?8 IS NULL OR partial = 0)"

struct filter {
  char hash[HASH_HEX_LEN + 1];  /* set when the trace names a file */
  const char *trace, *policy, *cpu, *workload, *older;
  bool whole_only;              /* leave out partial runs */
};

/* Fills fl from the options, with policy for --policy; a trace that is a file is
** matched by content (trace_file's, when set: a recording's runs are stored under
** the hash of the trace it is imported as).  EXIT_BADINPUT after a message when it cannot be hashed. */
int cli_make_filter(struct filter *fl, const struct db_opts *o, const char *policy);
/* Prepares sql, which holds FILTER_SQL, with fl's values bound. */
int cli_prepare_filtered(sqlite3 *db, const char *sql, const struct filter *fl, sqlite3_stmt **st);
/* Says the query on path failed; returns EXIT_DB. */
int cli_query_error(sqlite3 *db, const char *path);
/* Opens the database for a query command (create: compare --run, which stores
** runs); EXIT_DB after a message. */
int cli_open_db_for(const char *path, bool create, sqlite3 **db);
/* Opens it read-only (runs and compare without --run): never migrated. */
int cli_open_db_readonly(const char *path, sqlite3 **db);

#endif
