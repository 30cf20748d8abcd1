/* `vmxsim runs`, `vmxsim report` and `vmxsim compare`: query the results database. */
#include "commands.h"
#include "sim/core/compare.h"
#include "sim/core/hash.h"
#include "sim/core/report.h"
#include "sim/core/runner.h"
#include "sim/store/store.h"
#include "sim/core/texttable.h"
#include "sim/core/util.h"

#include <cJSON.h>
#include <getopt.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char runs_usage[] =
  "usage: vmxsim runs [--trace T] [--policy P] [--cpu C] [--workload W]\n"
  "                   [--format table|csv|json] [--db FILE]\n"
  "\n"
  "Lists the runs stored in the results database, oldest first: id, start time (UTC),\n"
  "trace, workload, policy, CPU profile, events, VM exits and microseconds per operation\n"
  "(per 'mark' event; '-' when the trace has none).  Runs stored by the REPL before the\n"
  "end of their trace say 'partial'.\n"
  "\n"
  "  -t, --trace T       runs of trace T: when T is a file, those of the same content\n"
  "                      (whatever its name was); otherwise by the name given to vmxsim\n"
  "                      or its last path component\n"
  "  -p, --policy P      runs under policy P, as printed (e.g. shadowcache+lazydr)\n"
  "  -c, --cpu C         runs on CPU profile C\n"
  "  -w, --workload W    runs of traces of workload W (e.g. lat_ctx)\n"
  "  -f, --format F      table (default), csv or json\n"
  "      --db FILE       results database (default " STORE_DEFAULT_PATH ")\n"
  "\n"
  "example: vmxsim runs --trace lat_ctx.bin --cpu core2-2007\n";

static const char report_usage[] =
  "usage: vmxsim report [RUN_ID | --last] [--format table|json|csv] [--db FILE]\n"
  "\n"
  "Prints a stored run's report exactly as the batch run printed it (default: the\n"
  "last run stored).  'vmxsim runs' lists the run ids.\n"
  "\n"
  "  -l, --last          the most recently stored run (the default)\n"
  "  -f, --format F      table (default; reads like xenalyze --summary), json, csv\n"
  "      --db FILE       results database (default " STORE_DEFAULT_PATH ")\n"
  "\n"
  "example: vmxsim report 12 --format json\n";

static const char compare_usage[] =
  "usage: vmxsim compare RUN_A RUN_B [RUN...] [--format table|csv|json] [--db FILE]\n"
  "       vmxsim compare --trace T [--policy A,B...] [--cpu C] [--replay] [--format F] [--db FILE]\n"
  "\n"
  "Compares stored runs against the first (A): VM exits and cycles per exit reason\n"
  "side by side, the ratio to A (B/A) and the difference (B-A), per operation ('mark'\n"
  "event) when every run has marks, otherwise as totals.  The table is plain text to\n"
  "paste into a patch description.  With --trace, the latest run of T under each\n"
  "policy is taken (every policy stored for T when --policy is not given).\n"
  "\n"
  "  -t, --trace T       the trace (a file: matched by content; otherwise by name)\n"
  "  -p, --policy A,B    policies in order, the first is the baseline; a part holding\n"
  "                      '=' belongs to the policy before it (shadowcache,cr3_target_count=2);\n"
  "                      may be repeated\n"
  "  -c, --cpu C         only runs on CPU profile C\n"
  "  -r, --replay        replay T first under each --policy that has no stored run (on\n"
  "                      --cpu C, or the default profile), all in one pass, and store them\n"
  "  -f, --format F      table (default), csv (one line per value) or json\n"
  "      --db FILE       results database (default " STORE_DEFAULT_PATH ")\n"
  "\n"
  "examples:\n"
  "  vmxsim compare 3 4\n"
  "  vmxsim compare --trace lat_ctx.bin --policy nocache,cr3cache --cpu core2-2007\n"
  "  vmxsim compare --trace lat_ctx.bin --policy nocache,shadowcache,cr3cache --replay\n";

/* ---- shared option handling ---- */

struct db_opts {
  const char *db, *trace, *policy[COMPARE_MAX_RUNS], *cpu, *workload;
  unsigned npolicy;
  int format;
  bool last, replay;
  char *policy_buf[COMPARE_MAX_RUNS];   /* the --policy lists, split in place */
  unsigned nbuf;
  char trace_hash[HASH_HEX_LEN + 1];    /* of the --trace file, once hashed */
};

static void free_db_opts(struct db_opts *o) {
  for (unsigned i = 0; i < o->nbuf; i++) free(o->policy_buf[i]);
}

/* Splits "A,B" into policies; a part with '=' is an override of the policy before it. */
static int add_policies(struct db_opts *o, const char *arg) {
  if (o->nbuf == COMPARE_MAX_RUNS) {
    errorf("--policy: at most %d policies", COMPARE_MAX_RUNS);
    return EXIT_USAGE;
  }
  char *copy = o->policy_buf[o->nbuf++] = xstrdup(arg), *save = NULL, *prev = NULL;
  for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (strchr(tok, '=') && prev) {
      /* Glue the override back onto its policy, right after it: empty parts
      ** ("a,,k=v") in between are dropped.  save points past tok's end. */
      char *end = prev + strlen(prev);
      memmove(end + 1, tok, strlen(tok) + 1);
      *end = ',';
      continue;
    }
    if (o->npolicy == COMPARE_MAX_RUNS) {
      errorf("--policy: at most %d policies", COMPARE_MAX_RUNS);
      return EXIT_USAGE;
    }
    o->policy[o->npolicy++] = prev = tok;
  }
  if (!prev) {
    errorf("--policy '%s': no policy named", arg);
    return EXIT_USAGE;
  }
  return 0;
}

/* Parses the options of a query command (those in `allowed`, by short letter)
** and takes at most `max` operands, which may come before or after options.
** Returns -1 after --help, EXIT_USAGE after a message, else 0. */
static int parse_db_opts(int argc, char **argv, const char *usage, const char *allowed, struct db_opts *o,
                         char **operands, unsigned max, unsigned *n) {
  static const struct option longopts[] = {
    { "db", required_argument, 0, 'D' },    { "format", required_argument, 0, 'f' },
    { "trace", required_argument, 0, 't' }, { "policy", required_argument, 0, 'p' },
    { "cpu", required_argument, 0, 'c' },   { "workload", required_argument, 0, 'w' },
    { "last", no_argument, 0, 'l' },        { "replay", no_argument, 0, 'r' },
    { "help", no_argument, 0, 'h' },        { 0, 0, 0, 0 } };
  memset(o, 0, sizeof *o);
  o->db = STORE_DEFAULT_PATH;
  optind = 1;
  opterr = 0;
  int c;
  /* GNU getopt moves the operands after the options, so they may come anywhere. */
  while ((c = getopt_long(argc, argv, "f:t:p:c:w:lrh", longopts, NULL)) != -1) {
    if (c != '?' && c != 'h' && !strchr(allowed, c)) {
      const struct option *lo = longopts;
      while (lo->val != c) lo++;
      errorf("--%s does not apply to 'vmxsim %s'; see 'vmxsim %s --help'", lo->name, argv[0], argv[0]);
      return EXIT_USAGE;
    }
    switch (c) {
    case 'D': o->db = optarg; break;
    case 'f':
      if ((o->format = report_format_from_name(optarg)) < 0) {
        errorf("--format %s: expected table, json or csv", optarg);
        return EXIT_USAGE;
      }
      break;
    case 't': o->trace = optarg; break;
    case 'p': if (add_policies(o, optarg)) return EXIT_USAGE; break;
    case 'c': o->cpu = optarg; break;
    case 'w': o->workload = optarg; break;
    case 'l': o->last = true; break;
    case 'r': o->replay = true; break;
    case 'h': fputs(usage, stdout); return -1;
    default:
      errorf("%s: unknown option or missing argument; see 'vmxsim %s --help'", argv[optind - 1], argv[0]);
      return EXIT_USAGE;
    }
  }
  if ((unsigned)(argc - optind) > max) {
    errorf("unexpected argument '%s'; see 'vmxsim %s --help'", argv[optind + (int)max], argv[0]);
    return EXIT_USAGE;
  }
  for (*n = 0; optind < argc; optind++) operands[(*n)++] = argv[optind];
  return 0;
}

static bool parse_run_id(const char *s, int64_t *id) {
  uint64_t v;
  if (!parse_u64(s, &v) || v > INT64_MAX) {
    errorf("'%s' is not a run id (a number from 'vmxsim runs')", s);
    return false;
  }
  *id = (int64_t)v;
  return true;
}

/* ---- run selection ---- */

/* The WHERE clause of run_summary filters: ?1 trace hash, ?2 trace name, ?3 policy, ?4 cpu, ?5 workload. */
#define FILTER_SQL                                                                                \
  " (?1 IS NULL OR trace_hash = ?1)"                                                              \
  " AND (?2 IS NULL OR trace = ?2 OR substr(trace, -length(?2) - 1) = '/' || ?2)"                 \
  " AND (?3 IS NULL OR policy = ?3) AND (?4 IS NULL OR cpu = ?4) AND (?5 IS NULL OR workload = ?5)"

struct filter {
  char hash[HASH_HEX_LEN + 1];  /* set when the trace names a file */
  const char *trace, *policy, *cpu, *workload;
};

/* A trace that is a file is matched by content, so renamed copies still match. */
static int make_filter(struct filter *fl, struct db_opts *o, const char *policy) {
  struct stat sb;
  memset(fl, 0, sizeof *fl);
  fl->trace = o->trace;
  fl->policy = policy;
  fl->cpu = o->cpu;
  fl->workload = o->workload;
  if (o->trace && stat(o->trace, &sb) == 0 && S_ISREG(sb.st_mode)) {
    char err[600];
    if (!o->trace_hash[0] && hash_file(o->trace, o->trace_hash, err, sizeof err) != EXIT_OK) {
      errorf("%s", err);
      return EXIT_BADINPUT;
    }
    snprintf(fl->hash, sizeof fl->hash, "%s", o->trace_hash);
    fl->trace = NULL;
  }
  return 0;
}

static void bind_opt(sqlite3_stmt *st, int i, const char *s) {
  if (s && *s) sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
  else sqlite3_bind_null(st, i);
}

static int prepare_filtered(sqlite3 *db, const char *sql, const struct filter *fl, sqlite3_stmt **st) {
  int rc = sqlite3_prepare_v2(db, sql, -1, st, NULL);
  if (rc != SQLITE_OK) return rc;
  bind_opt(*st, 1, fl->hash);
  bind_opt(*st, 2, fl->trace);
  bind_opt(*st, 3, fl->policy);
  bind_opt(*st, 4, fl->cpu);
  bind_opt(*st, 5, fl->workload);
  return SQLITE_OK;
}

static int query_error(sqlite3 *db, const char *path) {
  errorf("results database %s: cannot query: %s", path, sqlite3_errmsg(db));
  return EXIT_DB;
}

/* Opens the database for a query command; EXIT_DB after a message. */
static int open_db(const char *path, sqlite3 **db) {
  char err[1024];
  int rc = store_open(path, false, db, err, sizeof err);
  if (rc) errorf("%s", err);
  return rc;
}

/* The same, creating it when missing (compare --replay stores runs). */
static int open_db_create(const char *path, sqlite3 **db) {
  char err[1024];
  int rc = store_open(path, true, db, err, sizeof err);
  if (rc) errorf("%s", err);
  return rc;
}

/* ---- vmxsim runs ---- */

struct run_line {
  int64_t id, events, exits, marks;
  const char *started, *trace, *hash, *workload, *policy, *cpu;
  double us;                    /* < 0 when no marks */
  bool partial;
};

static void read_run_line(sqlite3_stmt *st, struct run_line *l) {
  l->id = sqlite3_column_int64(st, 0);
  l->started = (const char *)sqlite3_column_text(st, 1);
  l->trace = (const char *)sqlite3_column_text(st, 2);
  l->hash = (const char *)sqlite3_column_text(st, 3);
  l->workload = (const char *)sqlite3_column_text(st, 4);
  l->policy = (const char *)sqlite3_column_text(st, 5);
  l->cpu = (const char *)sqlite3_column_text(st, 6);
  l->events = sqlite3_column_int64(st, 7);
  l->exits = sqlite3_column_int64(st, 8);
  l->marks = sqlite3_column_int64(st, 9);
  l->us = sqlite3_column_type(st, 10) == SQLITE_NULL ? -1 : sqlite3_column_double(st, 10);
  l->partial = sqlite3_column_int(st, 11) != 0;
}

static void runs_table_row(struct texttable *t, const struct run_line *l) {
  tt_cell(t, "%" PRId64, l->id);
  tt_cell(t, "%s", l->started);
  tt_cell(t, "%s", l->trace);
  tt_cell(t, "%s", l->workload[0] ? l->workload : "-");
  tt_cell(t, "%s", l->policy);
  tt_cell(t, "%s", l->cpu);
  tt_cell(t, "%" PRId64, l->events);
  tt_cell(t, "%" PRId64, l->exits);
  if (l->us < 0) tt_cell(t, "-");
  else tt_cell(t, "%.3f", l->us);
  tt_cell(t, "%s", l->partial ? "partial" : "");
}

static void csv_field(FILE *f, const char *s, const char *sep) {
  if (strpbrk(s, ",\"\n")) {
    fputc('"', f);
    for (; *s; s++) fprintf(f, *s == '"' ? "\"\"" : "%c", *s);
    fputc('"', f);
  } else {
    fputs(s, f);
  }
  fputs(sep, f);
}

static void runs_csv_row(FILE *f, const struct run_line *l) {
  fprintf(f, "%" PRId64 ",", l->id);
  const char *text[] = { l->started, l->trace, l->hash, l->workload, l->policy, l->cpu };
  for (size_t i = 0; i < sizeof text / sizeof *text; i++) csv_field(f, text[i], ",");
  fprintf(f, "%" PRId64 ",%" PRId64 ",%" PRId64 ",", l->events, l->exits, l->marks);
  if (l->us >= 0) fprintf(f, "%.17g", l->us);
  fprintf(f, ",%d\n", l->partial);
}

static cJSON *runs_json_row(const struct run_line *l) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "id", (double)l->id);
  cJSON_AddStringToObject(o, "started_at", l->started);
  run_identity_json(o, &(struct run_identity){ l->trace, l->hash, l->workload, l->policy, l->cpu });
  cJSON_AddNumberToObject(o, "events", (double)l->events);
  cJSON_AddNumberToObject(o, "exits", (double)l->exits);
  cJSON_AddNumberToObject(o, "marks", (double)l->marks);
  if (l->us < 0) cJSON_AddNullToObject(o, "us_per_op");
  else cJSON_AddNumberToObject(o, "us_per_op", l->us);
  cJSON_AddBoolToObject(o, "partial", l->partial);
  return o;
}

/* Prints the matching runs; returns how many. */
static int list_runs(sqlite3_stmt *st, int format, int64_t *count) {
  struct texttable t;
  tt_init(&t, 10);
  cJSON *arr = cJSON_CreateArray();
  static const char *const head[] = { "id", "started (UTC)", "trace", "workload", "policy", "cpu", "events",
                                      "exits", "us/op", "" };
  for (size_t i = 0; i < 10; i++) tt_cell(&t, "%s", head[i]);
  if (format == FORMAT_CSV)
    printf("id,started_at,trace,trace_hash,workload,policy,cpu,events,exits,marks,us_per_op,partial\n");
  int rc;
  *count = 0;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    struct run_line l;
    read_run_line(st, &l);
    ++*count;
    if (format == FORMAT_CSV) runs_csv_row(stdout, &l);
    else if (format == FORMAT_JSON) cJSON_AddItemToArray(arr, runs_json_row(&l));
    else runs_table_row(&t, &l);
  }
  if (format == FORMAT_TABLE && *count) tt_print(stdout, &t, "rlllllrrrl", 2);
  if (format == FORMAT_JSON) {
    char *s = cJSON_Print(arr);
    printf("%s\n", s);
    free(s);
  }
  cJSON_Delete(arr);
  tt_free(&t);
  return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

int cmd_runs(int argc, char **argv) {
  struct db_opts o;
  char *none[1];
  unsigned n;
  int rc = parse_db_opts(argc, argv, runs_usage, "Dftpcw", &o, none, 0, &n);
  struct filter fl;
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  if (!rc) rc = make_filter(&fl, &o, o.npolicy ? o.policy[0] : NULL);
  if (!rc && o.npolicy > 1) { errorf("runs: one --policy at a time"); rc = EXIT_USAGE; }
  if (!rc) rc = open_db(o.db, &db);
  if (!rc && prepare_filtered(db, "SELECT id, started_at, trace, trace_hash, workload, policy, cpu, events, exits,"
                              " marks, us_per_op, partial FROM run_summary WHERE" FILTER_SQL " ORDER BY id",
                              &fl, &st) != SQLITE_OK)
    rc = query_error(db, o.db);
  int64_t count = 0;
  if (!rc && list_runs(st, o.format, &count) != SQLITE_OK) rc = query_error(db, o.db);
  if (!rc && !count && o.format == FORMAT_TABLE) fprintf(stderr, "vmxsim: no stored runs match\n");
  sqlite3_finalize(st);
  store_close(db);
  free_db_opts(&o);
  return rc < 0 ? EXIT_OK : rc;
}

/* ---- vmxsim report ---- */

int cmd_report(int argc, char **argv) {
  struct db_opts o;
  char *ids[1];
  unsigned n;
  int64_t id = -1;
  int rc = parse_db_opts(argc, argv, report_usage, "Dfl", &o, ids, 1, &n);
  if (!rc && n && o.last) { errorf("give a RUN_ID or --last, not both"); rc = EXIT_USAGE; }
  if (!rc && n && !parse_run_id(ids[0], &id)) rc = EXIT_USAGE;
  struct report *rep = xmalloc(sizeof *rep);
  char err[1024];
  if (!rc) {
    rc = store_load(o.db, id, rep, NULL, err, sizeof err);
    if (rc) errorf("%s", err);
    else report_print(stdout, rep, (enum report_format)o.format);
  }
  if (!rc) report_free(rep);
  free(rep);
  free_db_opts(&o);
  return rc < 0 ? EXIT_OK : rc;
}

/* ---- vmxsim compare ---- */

/* The latest run of the trace under each policy (each stored policy when none given). */
static int select_runs(sqlite3 *db, struct db_opts *o, int64_t *ids, unsigned *n) {
  struct filter fl;
  sqlite3_stmt *st = NULL;
  int rc = 0;
  *n = 0;
  for (unsigned p = 0; p < (o->npolicy ? o->npolicy : 1) && !rc; p++) {
    rc = make_filter(&fl, o, o->npolicy ? o->policy[p] : NULL);
    if (rc) break;
    const char *sql = o->npolicy ? "SELECT id FROM run_summary WHERE" FILTER_SQL " ORDER BY id DESC LIMIT 1"
                                 : "SELECT max(id) FROM run_summary WHERE" FILTER_SQL " GROUP BY policy ORDER BY min(id)";
    if (prepare_filtered(db, sql, &fl, &st) != SQLITE_OK) return query_error(db, o->db);
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW && *n < COMPARE_MAX_RUNS) ids[(*n)++] = sqlite3_column_int64(st, 0);
    if (step == SQLITE_ROW) {
      errorf("more than %d policies stored for trace %s; choose some with --policy A,B", COMPARE_MAX_RUNS, o->trace);
      rc = EXIT_USAGE;
    } else if (step != SQLITE_DONE) {
      rc = query_error(db, o->db);
    } else if (o->npolicy && *n == p) {
      errorf("no stored run of trace %s under policy %s%s%s; 'vmxsim runs --trace %s' lists them (--replay "
             "replays what is missing)", o->trace, o->policy[p], o->cpu ? " on cpu " : "", o->cpu ? o->cpu : "", o->trace);
      rc = EXIT_USAGE;
    }
    sqlite3_finalize(st);
    st = NULL;
  }
  return rc;
}

/* Whether a run of the trace under policy is stored. */
static int has_run(sqlite3 *db, struct db_opts *o, const char *policy, bool *found) {
  struct filter fl;
  sqlite3_stmt *st = NULL;
  int rc = make_filter(&fl, o, policy);
  if (rc) return rc;
  if (prepare_filtered(db, "SELECT id FROM run_summary WHERE" FILTER_SQL " LIMIT 1", &fl, &st) != SQLITE_OK)
    return query_error(db, o->db);
  int step = sqlite3_step(st);
  sqlite3_finalize(st);
  if (step != SQLITE_ROW && step != SQLITE_DONE) return query_error(db, o->db);
  *found = step == SQLITE_ROW;
  return 0;
}

/* --replay: the policies of --policy without a stored run of the trace are
** replayed on it in one pass and stored.  A policy "P,K=V,..." as compare
** names it is preset spec P with overrides K=V. */
static int replay_missing(sqlite3 *db, struct db_opts *o) {
  struct run_config cfg[COMPARE_MAX_RUNS];
  char *copies[COMPARE_MAX_RUNS], *sets[COMPARE_MAX_RUNS][COMPARE_MAX_RUNS];
  unsigned n = 0;
  int rc = 0;
  for (unsigned i = 0; i < o->npolicy && !rc; i++) {
    bool found;
    if ((rc = has_run(db, o, o->policy[i], &found)) || found) continue;
    char *spec = copies[n] = xstrdup(o->policy[i]), *save = NULL;
    int nsets = 0;
    strtok_r(spec, ",", &save);
    for (char *t; (t = strtok_r(NULL, ",", &save)) && nsets < COMPARE_MAX_RUNS;) sets[n][nsets++] = t;
    cfg[n] = (struct run_config){ spec, o->cpu, sets[n], nsets };
    n++;
  }
  if (!rc && n) {
    struct run_set set = { .trace = o->trace, .configs = cfg, .nconfigs = n, .hash_trace = true };
    struct run_output *out = xcalloc(n, sizeof *out);
    char err[1024];
    struct interrupt_catch ic;
    interrupt_catch(&ic, false);
    rc = run_traces(&set, out, err, sizeof err);
    interrupt_release(&ic);
    if (rc) errorf("%s", err);
    else if (out->interrupted) { errorf("interrupted while replaying %s; nothing stored", o->trace); rc = EXIT_INTERRUPTED; }
    for (unsigned i = 0; i < n && !rc; i++) {
      struct store_run run = store_run_of(&out[i], o->trace);
      if ((rc = store_save(o->db, &run, NULL, err, sizeof err))) errorf("%s", err);
    }
    for (unsigned i = 0; i < n; i++) run_output_free(&out[i]);
    free(out);
  }
  for (unsigned i = 0; i < n; i++) free(copies[i]);
  return rc;
}

static int load_and_compare(sqlite3 *db, const char *path, const int64_t *ids, unsigned n, int format) {
  struct compare_run *runs = xcalloc(n, sizeof *runs);
  char err[1024];
  int rc = 0;
  for (unsigned i = 0; i < n && !rc; i++) {
    rc = store_load_db(db, path, ids[i], &runs[i].rep, &runs[i].id, err, sizeof err);
    if (rc) errorf("%s", err);
  }
  if (!rc) compare_print(stdout, runs, n, (enum report_format)format);
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
  int rc = parse_db_opts(argc, argv, compare_usage, "Dftpcr", &o, args, COMPARE_MAX_RUNS, &nargs);
  if (!rc && nargs && o.trace) { errorf("give run ids or --trace, not both"); rc = EXIT_USAGE; }
  if (!rc && o.replay && (!o.trace || !o.npolicy)) { errorf("--replay replays a --trace file under each --policy"); rc = EXIT_USAGE; }
  if (!rc && !o.trace && (o.npolicy || o.cpu)) { errorf("--policy and --cpu select runs of a --trace"); rc = EXIT_USAGE; }
  if (!rc && !nargs && !o.trace) { errorf("nothing to compare: give two run ids or --trace; see 'vmxsim compare --help'"); rc = EXIT_USAGE; }
  for (unsigned i = 0; i < nargs && !rc; i++)
    if (!parse_run_id(args[i], &ids[n++])) rc = EXIT_USAGE;
  if (!rc) rc = o.replay ? open_db_create(o.db, &db) : open_db(o.db, &db);
  if (!rc && o.replay) rc = replay_missing(db, &o);
  if (!rc && o.trace) rc = select_runs(db, &o, ids, &n);
  if (!rc && n < 2) {
    errorf("compare needs two runs or more, found %u%s", n, o.trace ? " for that trace" : "");
    rc = EXIT_USAGE;
  }
  if (!rc) rc = load_and_compare(db, o.db, ids, n, o.format);
  store_close(db);
  free_db_opts(&o);
  return rc < 0 ? EXIT_OK : rc;
}
