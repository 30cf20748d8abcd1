/* `vmxsim runs`, `vmxsim report` and `vmxsim compare`: query the results database. */
#include "commands.h"
#include "sim/core/compare.h"
#include "sim/core/hash.h"
#include "sim/core/profile.h"
#include "sim/core/report.h"
#include "sim/core/runner.h"
#include "sim/store/known.h"
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
  "usage: vmxsim runs [--trace T] [--policy P] [--cpu C] [--workload W] [--older-than AGE]\n"
  "                   [--format table|csv|json] [--db FILE]\n"
  "       vmxsim runs --delete ID[,ID...] [--dry-run] [--db FILE]\n"
  "       vmxsim runs --prune FILTER... [--dry-run] [--db FILE]\n"
  "\n"
  "Lists the runs stored in the results database, oldest first: id, start time (UTC),\n"
  "trace, workload, policy, CPU profile, events, VM exits and microseconds per operation\n"
  "(per 'mark' event; '-' when the trace has none).  Runs stored by the REPL before the\n"
  "end of their trace say 'partial'.  --delete and --prune remove runs: they list what\n"
  "they remove, then remove it in one transaction (a trace left without runs goes too).\n"
  "\n"
  "  -t, --trace T       runs of trace T: when T is a file, those of the same content\n"
  "                      (whatever its name was); otherwise by the name given to vmxsim\n"
  "                      or its last path component\n"
  "  -p, --policy P      runs under policy P, as printed (e.g. shadowcache+lazydr)\n"
  "  -c, --cpu C         runs on CPU profile C\n"
  "  -w, --workload W    runs of traces of workload W (e.g. lat_ctx)\n"
  "      --older-than AGE  runs started more than AGE ago: N followed by s, m, h, d or w\n"
  "                      (seconds ... weeks; a bare number is days)\n"
  "  -f, --format F      table (default), csv or json\n"
  "      --db FILE       results database (default " STORE_DEFAULT_PATH ")\n"
  "      --delete IDS    delete these runs (comma-separated; repeatable)\n"
  "      --prune         delete every run the filters above select (at least one filter;\n"
  "                      --older-than 0 selects all)\n"
  "  -n, --dry-run       with --delete or --prune: list what would go, delete nothing\n"
  "\n"
  "examples:\n"
  "  vmxsim runs --trace lat_ctx.bin --cpu core2-2007\n"
  "  vmxsim runs --delete 3,4\n"
  "  vmxsim runs --prune --older-than 30d\n"
  "  vmxsim runs --prune --trace /tmp/old.bin --dry-run\n";

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
  "usage: vmxsim compare RUN_A RUN_B [RUN...] [--mixed-cpus] [--format table|csv|json] [--db FILE]\n"
  "       vmxsim compare --trace T [--policy A,B...] [--cpu C] [--run] [--mixed-cpus] [--format F]\n"
  "                      [--db FILE]\n"
  "\n"
  "Compares stored runs against the first (A): VM exits and cycles per exit reason\n"
  "side by side, the ratio to A (B/A) and the difference (B-A), per operation ('mark'\n"
  "event) when every run has marks, otherwise as totals.  The table is plain text to\n"
  "paste into a patch description.  With --trace, the latest run of T under each\n"
  "policy is taken (every policy stored for T when --policy is not given).  Runs on\n"
  "different CPU profiles are not compared unless --mixed-cpus says so: their cycles\n"
  "come from different cost tables.\n"
  "\n"
  "  -t, --trace T       the trace (a file: matched by content; otherwise by name)\n"
  "  -p, --policy A,B    policies in order, the first is the baseline; a part holding\n"
  "                      '=' belongs to the policy before it (shadowcache,cr3_target_count=2);\n"
  "                      may be repeated\n"
  "  -c, --cpu C         only runs on CPU profile C\n"
  "      --run           replay T under each --policy that has no stored run (on --cpu C,\n"
  "                      else the profile of T's other runs, else " PROFILE_DEFAULT "), all in\n"
  "                      one pass, store the runs, then compare; without it a missing run is\n"
  "                      an error\n"
  "      --mixed-cpus    compare runs on different CPU profiles all the same\n"
  "  -f, --format F      table (default), csv (one line per value) or json\n"
  "      --db FILE       results database (default " STORE_DEFAULT_PATH ")\n"
  "\n"
  "examples:\n"
  "  vmxsim compare 3 4\n"
  "  vmxsim compare --trace lat_ctx.bin --policy nocache,cr3cache --cpu core2-2007 --run\n";

/* ---- shared option handling ---- */

struct db_opts {
  const char *db, *trace, *policy[COMPARE_MAX_RUNS], *cpu, *workload;
  unsigned npolicy;
  int format;
  bool last;
  char older[32];                       /* --older-than as an SQLite modifier, "-86400 seconds" */
  int64_t *del;                         /* --delete ids */
  size_t ndel;
  bool prune, dry_run;
  bool run_missing, mixed_cpus;         /* compare --run, --mixed-cpus */
  char *policy_buf[COMPARE_MAX_RUNS];   /* the --policy lists, split in place */
  unsigned nbuf;
};

static void free_db_opts(struct db_opts *o) {
  for (unsigned i = 0; i < o->nbuf; i++) free(o->policy_buf[i]);
  free(o->del);
}

/* "30d", "12h", "90" (days): the SQLite date modifier for that long ago. */
static int parse_age(struct db_opts *o, const char *arg) {
  static const struct { char unit; uint64_t secs; } units[] = {
    { 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 }, { 'w', 604800 } };
  char num[24];
  size_t len = strlen(arg);
  uint64_t n, mult = 86400;
  for (size_t i = 0; len && i < sizeof units / sizeof *units; i++)
    if (arg[len - 1] == units[i].unit) { mult = units[i].secs; len--; }
  if (len == 0 || len >= sizeof num || (memcpy(num, arg, len), num[len] = 0, !parse_u64(num, &n)) ||
      n > UINT64_MAX / mult / 2) {
    errorf("--older-than '%s': expected a number followed by s, m, h, d or w (e.g. 30d)", arg);
    return EXIT_USAGE;
  }
  snprintf(o->older, sizeof o->older, "-%llu seconds", (unsigned long long)(n * mult));
  return 0;
}

/* "3,4,5" added to the --delete list. */
static int add_delete_ids(struct db_opts *o, const char *arg) {
  char *copy = xstrdup(arg), *save = NULL;
  int rc = 0;
  for (char *tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
    uint64_t v;
    if (!parse_u64(tok, &v) || v > INT64_MAX) {
      errorf("--delete: '%s' is not a run id (a number from 'vmxsim runs')", tok);
      rc = EXIT_USAGE;
      break;
    }
    o->del = xrealloc(o->del, (o->ndel + 1) * sizeof *o->del);
    o->del[o->ndel++] = (int64_t)v;
  }
  free(copy);
  return rc;
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
    { "last", no_argument, 0, 'l' },        { "older-than", required_argument, 0, 'O' },
    { "delete", required_argument, 0, 'X' }, { "prune", no_argument, 0, 'P' },
    { "dry-run", no_argument, 0, 'n' },     { "run", no_argument, 0, 'R' },
    { "mixed-cpus", no_argument, 0, 'M' },  { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
  memset(o, 0, sizeof *o);
  o->db = STORE_DEFAULT_PATH;
  optind = 1;
  opterr = 0;
  int c;
  /* GNU getopt moves the operands after the options, so they may come anywhere. */
  while ((c = getopt_long(argc, argv, "f:t:p:c:w:lnh", longopts, NULL)) != -1) {
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
    case 'O': if (parse_age(o, optarg)) return EXIT_USAGE; break;
    case 'X': if (add_delete_ids(o, optarg)) return EXIT_USAGE; break;
    case 'P': o->prune = true; break;
    case 'n': o->dry_run = true; break;
    case 'R': o->run_missing = true; break;
    case 'M': o->mixed_cpus = true; break;
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

/* The WHERE clause of run_summary filters: ?1 trace hash, ?2 trace name, ?3 policy, ?4 cpu, ?5 workload,
** ?6 a date modifier ("-86400 seconds"): runs started before that long ago. */
#define FILTER_SQL                                                                                \
  " (?1 IS NULL OR trace_hash = ?1)"                                                              \
  " AND (?2 IS NULL OR trace = ?2 OR substr(trace, -length(?2) - 1) = '/' || ?2)"                 \
  " AND (?3 IS NULL OR policy = ?3) AND (?4 IS NULL OR cpu = ?4) AND (?5 IS NULL OR workload = ?5)" \
  " AND (?6 IS NULL OR started_at < datetime('now', ?6))"

struct filter {
  char hash[HASH_HEX_LEN + 1];  /* set when the trace names a file */
  const char *trace, *policy, *cpu, *workload, *older;
};

/* A trace that is a file is matched by content, so renamed copies still match. */
static int make_filter(struct filter *fl, const struct db_opts *o, const char *policy) {
  struct stat sb;
  memset(fl, 0, sizeof *fl);
  fl->trace = o->trace;
  fl->policy = policy;
  fl->cpu = o->cpu;
  fl->workload = o->workload;
  fl->older = o->older[0] ? o->older : NULL;
  if (o->trace && stat(o->trace, &sb) == 0 && S_ISREG(sb.st_mode)) {
    char err[600];
    struct file_seen seen;
    file_seen_take(o->trace, &seen);
    bool known = store_known_hash(o->db, &seen, fl->hash);   /* a file stored before need not be hashed */
    file_seen_free(&seen);
    if (!known && hash_file(o->trace, fl->hash, err, sizeof err) != EXIT_OK) {
      errorf("%s", err);
      return EXIT_BADINPUT;
    }
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
  bind_opt(*st, 6, fl->older);
  return SQLITE_OK;
}

static int query_error(sqlite3 *db, const char *path) {
  errorf("results database %s: cannot query: %s", path, sqlite3_errmsg(db));
  return EXIT_DB;
}

/* Opens the database for a query command (create: compare --run, which stores
** runs); EXIT_DB after a message. */
static int open_db_for(const char *path, bool create, sqlite3 **db) {
  char err[1024];
  int rc = store_open(path, create, db, err, sizeof err);
  if (rc) errorf("%s", err);
  return rc;
}

/* Opens it read-only (runs and compare without --run): never migrated. */
static int open_db_readonly(const char *path, sqlite3 **db) {
  char err[1024];
  int rc = store_open_readonly(path, db, err, sizeof err);
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

static void runs_csv_row(FILE *f, const struct run_line *l) {
  fprintf(f, "%" PRId64 ",", l->id);
  const char *text[] = { l->started, l->trace, l->hash, l->workload, l->policy, l->cpu };
  for (size_t i = 0; i < sizeof text / sizeof *text; i++) {
    csv_field(f, text[i]);
    fputc(',', f);
  }
  fprintf(f, "%" PRId64 ",%" PRId64 ",%" PRId64 ",", l->events, l->exits, l->marks);
  char num[NUM_TEXT_MAX];
  if (l->us >= 0) fputs(num_shortest(num, l->us), f);
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
  else json_add_number(o, "us_per_op", l->us);
  cJSON_AddBoolToObject(o, "partial", l->partial);
  return o;
}

/* Prints the matching runs, counts them in *count and, when ids is not NULL,
** collects their ids (malloc'd). */
static int list_runs(sqlite3_stmt *st, int format, int64_t *count, int64_t **ids) {
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
    if (ids) {
      *ids = xrealloc(*ids, (size_t)(*count + 1) * sizeof **ids);
      (*ids)[*count] = l.id;
    }
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

/* --delete: the ids must all exist; EXIT_USAGE naming the first that does not. */
static int check_ids_exist(sqlite3 *db, const struct db_opts *o) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, "SELECT 1 FROM runs WHERE id = ?1", -1, &st, NULL);
  if (rc != SQLITE_OK) return query_error(db, o->db);
  for (size_t i = 0; i < o->ndel && !rc; i++) {
    sqlite3_bind_int64(st, 1, o->del[i]);
    int step = sqlite3_step(st);
    if (step == SQLITE_DONE) {
      errorf("results database %s: no run %lld ('vmxsim runs' lists them); nothing deleted", o->db,
             (long long)o->del[i]);
      rc = EXIT_USAGE;
    } else if (step != SQLITE_ROW) {
      rc = query_error(db, o->db);
    }
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  return rc;
}

static bool has_filter(const struct db_opts *o) {
  return o->trace || o->npolicy || o->cpu || o->workload || o->older[0];
}

/* What --delete and --prune may be combined with. */
static int check_delete_opts(const struct db_opts *o) {
  if (o->ndel && o->prune) { errorf("runs: --delete takes ids, --prune filters: give one of them"); return EXIT_USAGE; }
  if (o->ndel && has_filter(o)) {
    errorf("runs: --delete takes run ids only; to delete by trace, policy, cpu, workload or age use --prune");
    return EXIT_USAGE;
  }
  if (o->prune && !has_filter(o)) {
    errorf("runs: --prune needs a filter (--trace, --policy, --cpu, --workload, --older-than); "
           "'--older-than 0' selects every run");
    return EXIT_USAGE;
  }
  if (o->dry_run && !o->ndel && !o->prune) { errorf("runs: --dry-run goes with --delete or --prune"); return EXIT_USAGE; }
  return 0;
}

/* Deletes ids (already listed) unless --dry-run, and says what happened. */
static int delete_listed(sqlite3 *db, const struct db_opts *o, const int64_t *ids, int64_t n) {
  if (o->dry_run || !n) {
    fprintf(stderr, "vmxsim: %s %lld run%s from %s\n", o->dry_run ? "would delete" : "deleted", (long long)n,
            n == 1 ? "" : "s", o->db);
    return 0;
  }
  char err[1024];
  int64_t done = 0;
  int rc = store_delete_runs(db, o->db, ids, (size_t)n, &done, err, sizeof err);
  if (rc) errorf("%s", err);
  else fprintf(stderr, "vmxsim: deleted %lld run%s from %s\n", (long long)done, done == 1 ? "" : "s", o->db);
  return rc;
}

/* The runs to list (and delete): those the filters select, or the --delete ids. */
static int prepare_selection(sqlite3 *db, const struct db_opts *o, sqlite3_stmt **st) {
  struct filter fl;
  int rc = make_filter(&fl, o, o->npolicy ? o->policy[0] : NULL);
  if (rc) return rc;
  static const char cols[] = "SELECT id, started_at, trace, trace_hash, workload, policy, cpu, events, exits,"
                             " marks, us_per_op, partial FROM run_summary WHERE";
  char sql[1024];
  snprintf(sql, sizeof sql, "%s%s ORDER BY id", cols,
           o->ndel ? " id IN (SELECT value FROM json_each(?7))" : FILTER_SQL);
  if (prepare_filtered(db, sql, &fl, st) != SQLITE_OK) return query_error(db, o->db);
  if (o->ndel) {
    char *list = xmalloc(o->ndel * 24 + 3), *p = list;
    p += sprintf(p, "[");
    for (size_t i = 0; i < o->ndel; i++) p += sprintf(p, "%s%lld", i ? "," : "", (long long)o->del[i]);
    sprintf(p, "]");
    sqlite3_bind_text(*st, 7, list, -1, SQLITE_TRANSIENT);
    free(list);
  }
  return 0;
}

int cmd_runs(int argc, char **argv) {
  struct db_opts o;
  char *none[1];
  unsigned n;
  int rc = parse_db_opts(argc, argv, runs_usage, "DftpcwOXPn", &o, none, 0, &n);
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  bool deleting = o.ndel || o.prune;
  if (!rc && o.npolicy > 1) { errorf("runs: one --policy at a time"); rc = EXIT_USAGE; }
  if (!rc) rc = check_delete_opts(&o);
  if (!rc) rc = deleting ? open_db_for(o.db, false, &db) : open_db_readonly(o.db, &db);
  if (!rc && o.ndel) rc = check_ids_exist(db, &o);
  if (!rc) rc = prepare_selection(db, &o, &st);
  int64_t count = 0, *ids = NULL;
  if (!rc && list_runs(st, o.format, &count, deleting ? &ids : NULL) != SQLITE_OK) rc = query_error(db, o.db);
  if (!rc && !count && o.format == FORMAT_TABLE && !deleting) fprintf(stderr, "vmxsim: no stored runs match\n");
  sqlite3_finalize(st);
  if (!rc && deleting) rc = delete_listed(db, &o, ids, count);
  free(ids);
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
  if (stat(o->trace, &sb) != 0 || !S_ISREG(sb.st_mode)) {
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
  trace_known_look_up(o->db, o->trace, &known);
  struct run_set set = { .trace = o->trace, .configs = cfg, .nconfigs = n, .hash_trace = !known.known };
  struct run_output *out = xcalloc(n, sizeof *out);
  struct interrupt_catch ic;
  interrupt_catch(&ic, false);
  int rc = run_traces(&set, out, err, sizeof err);
  interrupt_release(&ic);
  if (rc == EXIT_OK && out->interrupted) {
    snprintf(err, sizeof err, "interrupted while replaying %s; nothing stored", o->trace);
    rc = EXIT_INTERRUPTED;
  }
  if (rc == EXIT_OK) rc = trace_known_check(&known, o->trace, err, sizeof err);
  for (unsigned i = 0; i < n && rc == EXIT_OK; i++) {
    if (known.known) snprintf(out[i].rep.trace_hash, sizeof out[i].rep.trace_hash, "%s", known.hash);
    struct store_run sr = store_run_of(&out[i], o->trace);
    sr.seen = trace_known_to_remember(&known);
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

/* The latest run of the trace under each policy (each stored policy when none
** given); with --run, a policy without one is replayed first. */
static int select_runs(sqlite3 *db, const struct db_opts *o, int64_t *ids, unsigned *n) {
  struct filter fl;
  sqlite3_stmt *st = NULL;
  int rc = 0;
  *n = 0;
  const char *missing[COMPARE_MAX_RUNS];
  unsigned slot[COMPARE_MAX_RUNS], nmissing = 0;
  for (unsigned p = 0; p < (o->npolicy ? o->npolicy : 1) && !rc; p++) {
    rc = make_filter(&fl, o, o->npolicy ? o->policy[p] : NULL);
    if (rc) break;
    const char *sql = o->npolicy ? "SELECT id FROM run_summary WHERE" FILTER_SQL " ORDER BY id DESC LIMIT 1"
                                 : "SELECT max(id) FROM run_summary WHERE" FILTER_SQL " GROUP BY policy ORDER BY min(id)";
    if (prepare_filtered(db, sql, &fl, &st) != SQLITE_OK) return query_error(db, o->db);
    int step;
    unsigned before = *n;
    while ((step = sqlite3_step(st)) == SQLITE_ROW && *n < COMPARE_MAX_RUNS) ids[(*n)++] = sqlite3_column_int64(st, 0);
    if (step == SQLITE_ROW) {
      errorf("more than %d policies stored for trace %s; choose some with --policy A,B", COMPARE_MAX_RUNS, o->trace);
      rc = EXIT_USAGE;
    } else if (step != SQLITE_DONE) {
      rc = query_error(db, o->db);
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
  int rc = parse_db_opts(argc, argv, compare_usage, "DftpcRM", &o, args, COMPARE_MAX_RUNS, &nargs);
  if (!rc && nargs && o.trace) { errorf("give run ids or --trace, not both"); rc = EXIT_USAGE; }
  if (!rc && !o.trace && (o.npolicy || o.cpu || o.run_missing)) {
    errorf("--policy, --cpu and --run go with --trace");
    rc = EXIT_USAGE;
  }
  if (!rc && o.run_missing && !o.npolicy) { errorf("compare --run replays the --policy list's missing runs: give --policy A,B"); rc = EXIT_USAGE; }
  if (!rc && !nargs && !o.trace) { errorf("nothing to compare: give two run ids or --trace; see 'vmxsim compare --help'"); rc = EXIT_USAGE; }
  for (unsigned i = 0; i < nargs && !rc; i++)
    if (!parse_run_id(args[i], &ids[n++])) rc = EXIT_USAGE;
  if (!rc) rc = o.run_missing ? open_db_for(o.db, true, &db) : open_db_readonly(o.db, &db);
  if (!rc && o.trace) rc = select_runs(db, &o, ids, &n);
  if (!rc && n < 2) {
    errorf("compare needs two runs or more, found %u%s", n, o.trace ? " for that trace" : "");
    rc = EXIT_USAGE;
  }
  if (!rc) rc = load_and_compare(db, &o, ids, n);
  store_close(db);
  free_db_opts(&o);
  return rc < 0 ? EXIT_OK : rc;
}
