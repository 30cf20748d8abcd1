/* `vmxsim compare`: stored runs side by side against the first, by run id or as
** the latest run of a trace under each policy, replaying the missing ones. */
#include "commands.h"
#include "db_query.h"
#include "compare.h"
#include "options.h"
#include "sim/config/profile.h"
#include "sim/replay/report.h"
#include "sim/replay/runner.h"
#include "sim/base/util.h"
#include "sim/store/known.h"
#include "sim/store/store.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char compare_usage[] =
  "usage: vmxsim compare RUN_A RUN_B [RUN...] [--mixed-cpus] [--format table|csv|json] [--db FILE]\n"
  "       vmxsim compare --trace T [--policy A,B...] [--cpu C] [--run] [--partial] [--mixed-cpus]\n"
  "                      [--format F] [--skip-bad] [--db FILE]\n"
  "\n"
  "Compares stored runs against the first (A): VM exits and cycles per exit reason\n"
  "side by side, the ratio to A (B/A) and the difference (B-A), per operation ('mark'\n"
  "event) when every run has marks, otherwise as totals.  The table is plain text to\n"
  "paste into a patch description.  With --trace, the latest run of T under each\n"
  "policy is taken (every policy stored for T when --policy is not given).  Runs on\n"
  "different CPU profiles are not compared unless --mixed-cpus says so: their cycles\n"
  "come from different cost tables.\n"
  "\n"
  "  -t, --trace T       the trace (a file: matched by content; otherwise by name); a\n"
  "                      recording (KVM ftrace text, xentrace, ...) is imported first and\n"
  "                      matched by the trace it is imported as, as 'vmxsim run' stores it\n"
  "  -p, --policy A,B    policies in order, the first is the baseline; a part holding\n"
  "                      '=' belongs to the policy before it (shadowcache,cr3_target_count=2);\n"
  "                      may be repeated; each policy once, however its values are spelled\n"
  "                      (it is looked up by the name 'vmxsim run' stores it under)\n"
  "  -c, --cpu C         only runs on CPU profile C\n"
  "      --run           replay T under each --policy that has no stored run (on --cpu C,\n"
  "                      else the profile of T's other runs, else " PROFILE_DEFAULT "), all in\n"
  "                      one pass, store the runs, then compare; without it a missing run is\n"
  "                      an error\n"
  "      --partial       with --trace, also runs the REPL's 'save' stored before the end of\n"
  "                      the trace (left out by default: they cover part of it)\n"
  "      --mixed-cpus    compare runs on different CPU profiles all the same\n"
  RECORDING_SKIP_BAD_USAGE
  "  -f, --format F      table (default), csv (one line per value) or json\n"
  "      --db FILE       results database (default " STORE_DEFAULT_PATH ")\n"
  "\n"
  "examples:\n"
  "  vmxsim compare 3 4\n"
  "  vmxsim compare --trace lat_ctx.bin --policy nocache,cr3cache --cpu core2-2007 --run\n";

/* The CPU profile for replaying a missing run: --cpu, else that of the runs
** already found (when they share one), else the default. */
static const char *replay_cpu(sqlite3 *db, const struct db_opts *o, const int64_t *ids, unsigned n, char *buf,
                              size_t len) {
  if (o->cpu) return o->cpu;
  snprintf(buf, len, "%s", PROFILE_DEFAULT);
  sqlite3_stmt *st = NULL;
  if (n && sqlite3_prepare_v2(db, "SELECT cpu FROM runs WHERE id = ?1", -1, &st, NULL) == SQLITE_OK) {
    sqlite3_bind_int64(st, 1, ids[0]);
    if (sqlite3_step(st) == SQLITE_ROW) snprintf(buf, len, "%s", (const char *)sqlite3_column_text(st, 0));
  }
  sqlite3_finalize(st);
  return buf;
}

/* compare --run: replays the trace under every missing policy in one pass
** (run_traces), stores the runs and returns their ids in ids[].  A policy
** "P,K=V..." as compare names it is preset spec P with overrides K=V. */
static int replay_missing(const struct db_opts *o, const char *const *policy, unsigned n, const char *cpu,
                          int64_t *ids) {
  struct stat sb;
  const char *file = o->trace_file ? o->trace_file : o->trace;
  if (stat(file, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    errorf("compare --run: %s is not a trace file, so it cannot be replayed (policy %s has no stored run)",
           o->trace, policy[0]);
    return EXIT_USAGE;
  }
  struct run_config cfg[COMPARE_MAX_RUNS];
  char *spec[COMPARE_MAX_RUNS], *sets[COMPARE_MAX_RUNS][COMPARE_MAX_RUNS];
  for (unsigned i = 0; i < n; i++) {
    char *save = NULL;
    int nsets = 0;
    spec[i] = xstrdup(policy[i]);
    strtok_r(spec[i], ",", &save);
    for (char *t; (t = strtok_r(NULL, ",", &save)) && nsets < COMPARE_MAX_RUNS;) sets[i][nsets++] = t;
    cfg[i] = (struct run_config){ spec[i], cpu, sets[i], nsets };
  }
  char err[1024];
  struct trace_known known;            /* a file the database remembers is not hashed again */
  trace_known_look_up(o->trace_file ? NULL : o->db, o->trace, &known);   /* an import is a scratch file */
  struct run_set set = { .trace = file, .configs = cfg, .nconfigs = n, .hash_trace = !known.known };
  struct run_output *out = xcalloc(n, sizeof *out);
  struct interrupt_catch ic;
  interrupt_catch(&ic, false);
  int rc = run_traces(&set, out, err, sizeof err);
  interrupt_release(&ic);
  if (rc == EXIT_OK && out->interrupted) {
    snprintf(err, sizeof err, "interrupted while replaying %s; nothing stored", o->trace);
    rc = EXIT_INTERRUPTED;
  }
  if (rc == EXIT_OK && !o->trace_file) rc = trace_known_check(&known, o->trace, err, sizeof err);
  for (unsigned i = 0; i < n && rc == EXIT_OK; i++) {
    if (known.known) snprintf(out[i].rep.trace_hash, sizeof out[i].rep.trace_hash, "%s", known.hash);
    if (o->trace_file) snprintf(out[i].rep.trace, sizeof out[i].rep.trace, "%s", o->trace);   /* the recording */
    struct store_run sr = store_run_of(&out[i], file);
    sr.seen = o->trace_file ? NULL : trace_known_to_remember(&known);   /* a scratch import is not remembered */
    if ((rc = store_save(o->db, &sr, &ids[i], err, sizeof err))) break;
    fprintf(stderr, "vmxsim: compare: replayed %s under %s on %s (run %lld stored in %s)\n", o->trace, policy[i],
            cpu, (long long)ids[i], o->db);
  }
  if (rc) errorf("%s", err);
  trace_known_free(&known);
  for (unsigned i = 0; i < n; i++) {
    run_output_free(&out[i]);
    free(spec[i]);
  }
  free(out);
  return rc;
}

/* Says how many partial runs of the trace (under the policies asked for) were
** left out, when any were: a REPL 'save' stores what it replayed so far. */
static int say_partial_left_out(sqlite3 *db, const struct db_opts *o) {
  int64_t n = 0;
  for (unsigned p = 0; p < (o->npolicy ? o->npolicy : 1); p++) {
    struct filter fl;
    int rc = cli_make_filter(&fl, o, o->npolicy ? o->policy[p] : NULL);
    if (rc) return rc;
    sqlite3_stmt *st = NULL;
    if (cli_prepare_filtered(db, "SELECT count(*) FROM run_summary WHERE" FILTER_SQL " AND partial = 1", &fl, &st) !=
        SQLITE_OK)
      return cli_query_error(db, o->db);
    if (sqlite3_step(st) == SQLITE_ROW) n += sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
  }
  if (n)
    fprintf(stderr, "vmxsim: compare: left out %lld partial run%s of %s (saved in the REPL before the end of the "
            "trace); --partial takes them\n", (long long)n, n == 1 ? "" : "s", o->trace);
  return 0;
}

/* The latest run of the trace under each policy (each stored policy when none
** given), whole runs unless --partial; with --run, a policy without one is
** replayed first. */
static int select_runs(sqlite3 *db, const struct db_opts *o, int64_t *ids, unsigned *n) {
  struct filter fl;
  sqlite3_stmt *st = NULL;
  int rc = 0;
  *n = 0;
  const char *missing[COMPARE_MAX_RUNS];
  unsigned slot[COMPARE_MAX_RUNS], nmissing = 0;
  for (unsigned p = 0; p < (o->npolicy ? o->npolicy : 1) && !rc; p++) {
    rc = cli_make_filter(&fl, o, o->npolicy ? o->policy[p] : NULL);
    if (rc) break;
    fl.whole_only = !o->partial;
    const char *sql = o->npolicy ? "SELECT id FROM run_summary WHERE" FILTER_SQL " ORDER BY id DESC LIMIT 1"
                                 : "SELECT max(id) FROM run_summary WHERE" FILTER_SQL " GROUP BY policy ORDER BY min(id)";
    if (cli_prepare_filtered(db, sql, &fl, &st) != SQLITE_OK) return cli_query_error(db, o->db);
    int step;
    unsigned before = *n;
    while ((step = sqlite3_step(st)) == SQLITE_ROW && *n < COMPARE_MAX_RUNS) ids[(*n)++] = sqlite3_column_int64(st, 0);
    if (step == SQLITE_ROW) {
      errorf("more than %d policies stored for trace %s; choose some with --policy A,B", COMPARE_MAX_RUNS, o->trace);
      rc = EXIT_USAGE;
    } else if (step != SQLITE_DONE) {
      rc = cli_query_error(db, o->db);
    } else if (o->npolicy && *n == before && o->run_missing) {
      slot[nmissing] = (*n)++;            /* filled by the replay below, in --policy order */
      missing[nmissing++] = o->policy[p];
    } else if (o->npolicy && *n == before) {
      errorf("no stored run of trace %s under policy %s%s%s; 'vmxsim compare --run' replays it, "
             "'vmxsim runs --trace %s' lists what is stored", o->trace, o->policy[p], o->cpu ? " on cpu " : "",
             o->cpu ? o->cpu : "", o->trace);
      rc = EXIT_USAGE;
    }
    sqlite3_finalize(st);
    st = NULL;
  }
  if (!rc && !o->partial) rc = say_partial_left_out(db, o);
  if (rc || !nmissing) return rc;
  char cpubuf[64];
  int64_t found[COMPARE_MAX_RUNS], replayed[COMPARE_MAX_RUNS];
  unsigned nfound = 0;
  for (unsigned i = 0; i < *n; i++) {
    bool is_missing = false;
    for (unsigned k = 0; k < nmissing; k++) is_missing |= slot[k] == i;
    if (!is_missing) found[nfound++] = ids[i];
  }
  rc = replay_missing(o, missing, nmissing, replay_cpu(db, o, found, nfound, cpubuf, sizeof cpubuf), replayed);
  for (unsigned m = 0; m < nmissing && !rc; m++) ids[slot[m]] = replayed[m];
  return rc;
}

/* Runs on different CPU profiles price the same exits differently: refused unless --mixed-cpus. */
static int check_cpus(const struct compare_run *runs, unsigned n, bool mixed) {
  for (unsigned i = 1; i < n && !mixed; i++) {
    if (!strcmp(runs[i].rep.cpu, runs[0].rep.cpu)) continue;
    errorf("compare: run %lld is on CPU profile %s but run %lld on %s: their cycles come from different cost "
           "tables; --mixed-cpus compares them anyway, --cpu C chooses runs on one profile",
           (long long)runs[0].id, runs[0].rep.cpu, (long long)runs[i].id, runs[i].rep.cpu);
    return EXIT_USAGE;
  }
  return 0;
}

static int load_and_compare(sqlite3 *db, const struct db_opts *o, const int64_t *ids, unsigned n) {
  struct compare_run *runs = xcalloc(n, sizeof *runs);
  char err[1024];
  int rc = 0;
  for (unsigned i = 0; i < n && !rc; i++) {
    rc = store_load_db(db, o->db, ids[i], &runs[i].rep, &runs[i].id, err, sizeof err);
    if (rc) errorf("%s", err);
  }
  if (!rc) rc = check_cpus(runs, n, o->mixed_cpus);
  if (!rc) compare_print(stdout, runs, n, (enum report_format)o->format);
  for (unsigned i = 0; i < n; i++) report_free(&runs[i].rep);
  free(runs);
  return rc;
}

int cmd_compare(int argc, char **argv) {
  struct db_opts o;
  char *args[COMPARE_MAX_RUNS];
  unsigned nargs = 0, n = 0;
  int64_t ids[COMPARE_MAX_RUNS];
  sqlite3 *db = NULL;
  int rc = cli_parse_db_opts(argc, argv, compare_usage, "DftpcRMAB", &o, args, COMPARE_MAX_RUNS, &nargs);
  if (!rc && nargs && o.trace) { errorf("give run ids or --trace, not both"); rc = EXIT_USAGE; }
  if (!rc && !o.trace && (o.npolicy || o.cpu || o.run_missing)) {
    errorf("--policy, --cpu and --run go with --trace");
    rc = EXIT_USAGE;
  }
  if (!rc && o.run_missing && !o.npolicy) { errorf("compare --run replays the --policy list's missing runs: give --policy A,B"); rc = EXIT_USAGE; }
  if (!rc && !nargs && !o.trace) { errorf("nothing to compare: give two run ids or --trace; see 'vmxsim compare --help'"); rc = EXIT_USAGE; }
  for (unsigned i = 0; i < nargs && !rc; i++)
    if (!cli_parse_run_id(args[i], &ids[n++])) rc = EXIT_USAGE;
  if (!rc) rc = o.run_missing ? cli_open_db_for(o.db, true, &db) : cli_open_db_readonly(o.db, &db);
  char *imported = NULL, *scratch = NULL;   /* a recording given as --trace, as 'vmxsim run' imports it */
  struct recording_opts ro = { .skip_bad = o.skip_bad };
  if (!rc && o.trace) rc = recording_import(o.trace, &ro, &imported, &scratch);
  o.trace_file = imported;
  if (!rc && o.trace) rc = select_runs(db, &o, ids, &n);
  if (!rc && n < 2) {
    errorf("compare needs two runs or more, found %u%s", n, o.trace ? " for that trace" : "");
    rc = EXIT_USAGE;
  }
  if (!rc) rc = load_and_compare(db, &o, ids, n);
  store_close(db);
  recording_remove(imported, scratch);
  cli_free_db_opts(&o);
  return rc < 0 ? EXIT_OK : rc;
}
