/* `vmxsim runs`: lists the stored runs, and deletes those chosen by id or by
** filter after listing them. */
#include "commands.h"
#include "db_query.h"
#include "options.h"
#include "sim/replay/report.h"
#include "sim/base/texttable.h"
#include "sim/base/util.h"
#include "sim/store/store.h"
#include "sim/present/report_print.h"

#include <cJSON.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

static const char runs_usage[] =
  "usage: vmxsim runs [--trace T] [--policy P] [--cpu C] [--workload W] [--older-than AGE]\n"
  "                   [--format table|csv|json] [--skip-bad] [--db FILE]\n"
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
  "                      or its last path component; a recording (KVM ftrace text,\n"
  "                      xentrace, ...) is imported and matched by the trace it is\n"
  "                      imported as, as 'vmxsim run' stores its runs\n"
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
  RECORDING_SKIP_BAD_USAGE
  "\n"
  "examples:\n"
  "  vmxsim runs --trace lat_ctx.bin --cpu core2-2007\n"
  "  vmxsim runs --delete 3,4\n"
  "  vmxsim runs --prune --older-than 30d\n"
  "  vmxsim runs --prune --trace /tmp/old.bin --dry-run\n";

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
  if (rc != SQLITE_OK) return cli_query_error(db, o->db);
  for (size_t i = 0; i < o->ndel && !rc; i++) {
    sqlite3_bind_int64(st, 1, o->del[i]);
    int step = sqlite3_step(st);
    if (step == SQLITE_DONE) {
      errorf("results database %s: no run %lld ('vmxsim runs' lists them); nothing deleted", o->db,
             (long long)o->del[i]);
      rc = EXIT_USAGE;
    } else if (step != SQLITE_ROW) {
      rc = cli_query_error(db, o->db);
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
  int rc = cli_make_filter(&fl, o, o->npolicy ? o->policy[0] : NULL);
  if (rc) return rc;
  static const char cols[] = "SELECT id, started_at, trace, trace_hash, workload, policy, cpu, events, exits,"
                             " marks, us_per_op, partial FROM run_summary WHERE";
  char sql[1024];
  snprintf(sql, sizeof sql, "%s%s ORDER BY id", cols,
           o->ndel ? " id IN (SELECT value FROM json_each(?7))" : FILTER_SQL);
  if (cli_prepare_filtered(db, sql, &fl, st) != SQLITE_OK) return cli_query_error(db, o->db);
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
  int rc = cli_parse_db_opts(argc, argv, runs_usage, "DftpcwOXPnB", &o, none, 0, &n);
  char *imported = NULL, *scratch = NULL;   /* a recording given as --trace, as 'vmxsim run' imports it */
  struct recording_opts ro = { .skip_bad = o.skip_bad };
  if (!rc && o.trace) rc = recording_import(o.trace, &ro, &imported, &scratch);
  o.trace_file = imported;
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  bool deleting = o.ndel || o.prune;
  if (!rc && o.npolicy > 1) { errorf("runs: one --policy at a time"); rc = EXIT_USAGE; }
  if (!rc) rc = check_delete_opts(&o);
  if (!rc) rc = deleting ? cli_open_db_for(o.db, false, &db) : cli_open_db_readonly(o.db, &db);
  if (!rc && o.ndel) rc = check_ids_exist(db, &o);
  if (!rc) rc = prepare_selection(db, &o, &st);
  int64_t count = 0, *ids = NULL;
  if (!rc && list_runs(st, o.format, &count, deleting ? &ids : NULL) != SQLITE_OK) rc = cli_query_error(db, o.db);
  if (!rc && !count && o.format == FORMAT_TABLE && !deleting) fprintf(stderr, "vmxsim: no stored runs match\n");
  sqlite3_finalize(st);
  if (!rc && deleting) rc = delete_listed(db, &o, ids, count);
  free(ids);
  store_close(db);
  recording_remove(imported, scratch);
  cli_free_db_opts(&o);
  return rc < 0 ? EXIT_OK : rc;
}
