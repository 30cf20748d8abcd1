/* `vmxsim reproduce`: runs the classic exit-cost experiments and prints and
** stores their tables (the experiments themselves are in experiments.c, the
** charts in reproduce_plot.c). */
#include "reproduce.h"
#include "sim/base/outfile.h"
#include "sim/import/import.h"
#include "sim/replay/runner.h"
#include "sim/store/store.h"
#include "sim/base/texttable.h"
#include "sim/trace/trace.h"
#include "sim/base/util.h"
#include "workloads/generators.h"

#include <cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_TRACES 64
/* Where results go when --db is not given: a database of their own, so that the
** runs of reproduce's temporary traces stay out of the user's vmxsim.db. */
#define REPRODUCE_DB "vmxsim-reproduce.db"

static const char usage[] =
  "usage: vmxsim reproduce [--only NAME[,NAME]] [--format table|json|md] [--db FILE | --no-db]\n"
  "                        [--plots DIR] [--quick] [--keep DIR] [--quiet | --progress]\n"
  "\n"
  "Runs the classic exit-cost experiments with the 2007/2008/2009 (and 2018) CPU profiles:\n"
  "generates each workload, replays it under each policy, and prints one table per\n"
  "experiment. Values marked * were fitted on a calibration point; every other simulated\n"
  "value is a prediction (docs/experiments.md says which inputs come from where).\n"
  "\n"
  "  --only NAMES   run only these experiments (comma-separated; see the list below)\n"
  "  --format F     table (default), md (Markdown), json\n"
  "  --db FILE      store every run in FILE (default " REPRODUCE_DB ", kept apart from\n"
  "                 the runs in vmxsim.db); --no-db to store nothing\n"
  "  --plots DIR    draw each experiment's chart into DIR as PNG, SVG and PDF (needs gnuplot),\n"
  "                 with NAME.caption.txt beside each: the figure's caption (what it shows,\n"
  "                 what * marks); the figures carry no title of their own\n"
  "  --quick        reduced sizes (seconds instead of minutes; for tests)\n"
  "  --keep DIR     keep the generated traces in DIR\n"
  "  -q, --quiet    no progress on standard error (shown by default on a terminal:\n"
  "                 the experiment, the trace being generated, the run and its percentage)\n"
  "  --progress     progress lines even when standard error is not a terminal\n"
  "\n"
  "experiments:\n";

/* ---- generating and running ---- */

struct gen_cache {
  char key[512];
  char path[300];
  uint64_t native_cycles;
};
static struct gen_cache traces[MAX_TRACES];
static unsigned ntraces;

static uint64_t native_cycles(const char *path) {
  struct trace_reader r;
  uint64_t sum = 0;
  if (trace_open(&r, path) != EXIT_OK) return 0;
  const struct trace_event *ev;
  while ((ev = trace_next(&r))) sum += ev->cycles;
  trace_close(&r);
  return sum;
}

/* ---- progress on standard error ---- */

/* Shows what the experiment does now: rewritten in place on a terminal, one
** line each otherwise. */
static void progress(const struct xp_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void progress(const struct xp_ctx *c, const char *fmt, ...) {
  if (c->progress == XP_PROGRESS_OFF) return;
  char what[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  if (c->progress == XP_PROGRESS_TTY) fprintf(stderr, "\r[%u/%u] %s: %.100s\033[K", c->xp_index, c->xp_count, c->xp_name, what);
  else fprintf(stderr, "vmxsim: reproduce: [%u/%u] %s: %s\n", c->xp_index, c->xp_count, c->xp_name, what);
  fflush(stderr);
}

/* The percentage of a long replay, on a terminal only (called every 2^22 events). */
static bool replay_progress(struct engine *e, const struct trace_reader *r, void *arg) {
  const struct xp_ctx *c = arg;
  if (c->progress == XP_PROGRESS_TTY && r->hdr.event_count)
    fprintf(stderr, " %3u%%\b\b\b\b\b", (unsigned)(100 * e->index / r->hdr.event_count));
  return !interrupt_requested();
}

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

/* The trace of key: *made when it was made before (its entry), else a new
** entry (not yet counted: ntraces grows once the trace is written) with its
** path in the experiments' directory; NULL when the table is full. */
static struct gen_cache *cache_entry(struct xp_ctx *c, const char *key, const char *label, bool *made) {
  *made = false;
  for (unsigned i = 0; i < ntraces; i++)
    if (!strcmp(traces[i].key, key)) {
      *made = true;
      return &traces[i];
    }
  if (ntraces == MAX_TRACES) {
    snprintf(c->err, sizeof c->err, "too many traces");
    return NULL;
  }
  struct gen_cache *g = &traces[ntraces];
  snprintf(g->key, sizeof g->key, "%s", key);
  snprintf(g->path, sizeof g->path, "%s/%02u-%s.bin", c->dir, ntraces, label);
  return g;
}

/* A new entry's trace, once written (rc): counted, with its native cycles;
** its path, or NULL with c->rc set. */
static const char *cache_commit(struct xp_ctx *c, struct gen_cache *g, int rc) {
  if (rc != EXIT_OK) {
    c->rc = rc;
    return NULL;
  }
  g->native_cycles = native_cycles(g->path);
  ntraces++;
  return g->path;
}

const char *xp_gen(struct xp_ctx *c, const char *const *args) {
  char key[512] = "";
  size_t used = 0;
  for (unsigned i = 0; args[i] && used < sizeof key; i++)
    used += (size_t)snprintf(key + used, sizeof key - used, "%s ", args[i]);
  bool made;
  struct gen_cache *g = cache_entry(c, key, args[0], &made);
  if (!g || made) return g ? g->path : NULL;
  int argc = 0;
  while (args[argc]) argc++;
  size_t klen = strlen(key);
  progress(c, "generating %s: %.*s", base_name(g->path), (int)(klen ? klen - 1 : 0), key);   /* without the last blank */
  return cache_commit(c, g, gen_generate(argc, (char **)args, g->path, c->err, sizeof c->err));
}

const char *xp_import(struct xp_ctx *c, const char *recording, const char *label, const struct import_opts *opt) {
  char key[512];
  snprintf(key, sizeof key, "import %s %s guest %u ghz %g", recording, label, opt->guest, opt->cpu_ghz);
  bool made;
  struct gen_cache *g = cache_entry(c, key, label, &made);
  if (!g || made) return g ? g->path : NULL;
  progress(c, "importing %s as %s", base_name(recording), base_name(g->path));
  const struct import_format *f = import_detect(recording, c->err, sizeof c->err);
  if (!f) {
    if (!c->err[0]) snprintf(c->err, sizeof c->err, "%s: a vmxsim trace, not a recording", recording);
    c->rc = EXIT_BADINPUT;
    return NULL;
  }
  struct import_job job = { .format = f, .input = recording, .output = g->path, .workload = label,
                            .command = "vmxsim reproduce", .opt = *opt };
  struct import im;
  int rc = import_file(&job, &im, c->err, sizeof c->err);
  import_free(&im);
  return cache_commit(c, g, rc);
}

static const struct gen_cache *cached(const char *path) {
  for (unsigned i = 0; i < ntraces; i++)
    if (!strcmp(traces[i].path, path)) return &traces[i];
  return NULL;
}

static void store(struct xp_ctx *c, const struct run_output *o, const char *trace) {
  if (!c->db) return;
  struct store_run sr = store_run_of(o, trace);
  int64_t id;
  char err[1024];
  if (store_save(c->db, &sr, &id, err, sizeof err) != EXIT_OK) {
    errorf("%s (results are still printed)", err);
    c->db = NULL;                    /* say it once */
    c->rc = EXIT_DB;
  }
}

int xp_failed(const struct xp_ctx *c) { return c->rc ? c->rc : EXIT_INTERNAL; }

static void result_of(const struct run_output *o, const char *trace, struct xp_result *out) {
  const struct report *r = &o->rep;
  const struct gen_cache *g = cached(trace);
  double per = r->marks ? (double)r->marks : 1.0, hz = r->clock_ghz * 1e9;
  memset(out, 0, sizeof *out);
  out->rep = *r;
  out->marks = r->marks;
  out->total_exits = r->total_exits;
  out->exits_per_op = (double)r->total_exits / per;
  out->us_per_op = (double)(r->guest_cycles + r->vmm_cycles) / per / hz * 1e6;
  out->native_us_per_op = g ? (double)g->native_cycles / per / hz * 1e6 : 0;
  out->seconds = (double)r->elapsed_cycles / hz;
}

int xp_run_many(struct xp_ctx *c, const char *trace, const struct xp_config *cfg, unsigned n, struct xp_result *out) {
  struct run_config *rc_ = xcalloc(n, sizeof *rc_);
  for (unsigned i = 0; i < n; i++) {
    int nsets = 0;
    while (cfg[i].sets && cfg[i].sets[nsets]) nsets++;
    rc_[i] = (struct run_config){ cfg[i].policy, cfg[i].cpu, (char *const *)cfg[i].sets, nsets };
  }
  struct run_set set = { .trace = trace, .configs = rc_, .nconfigs = n, .hash_trace = c->db != NULL,
                         .progress = replay_progress, .progress_arg = c };
  struct run_output *o = xcalloc(n, sizeof *o);
  for (unsigned i = 0; i < n; i++) {
    c->runs++;
    progress(c, "run %u: %s under %s%s%s on %s", c->runs, base_name(trace), cfg[i].policy, rc_[i].nsets ? "," : "",
             rc_[i].nsets ? cfg[i].sets[0] : "", cfg[i].cpu);
  }
  int rc = run_traces(&set, o, c->err, sizeof c->err);
  if (rc == EXIT_OK && o[0].interrupted) {
    snprintf(c->err, sizeof c->err, "interrupted");
    rc = EXIT_INTERRUPTED;
  }
  for (unsigned i = 0; i < n && rc == EXIT_OK; i++) {
    result_of(&o[i], trace, &out[i]);
    store(c, &o[i], trace);
  }
  if (rc) c->rc = rc;
  for (unsigned i = 0; i < n; i++) run_output_free(&o[i]);
  free(o);
  free(rc_);
  return rc;
}

int xp_run(struct xp_ctx *c, const char *trace, const char *policy, const char *cpu,
           const char *const *sets, struct xp_result *out) {
  return xp_run_many(c, trace, &(struct xp_config){ policy, cpu, sets }, 1, out);
}

struct xp_row *xp_add_row(struct xp_table *t, const char *fmt, ...) {
  struct xp_row *r = &t->row[t->nrows < XP_MAX_ROWS ? t->nrows++ : XP_MAX_ROWS - 1];
  memset(r, 0, sizeof *r);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->label, sizeof r->label, fmt, ap);
  va_end(ap);
  return r;
}

/* ---- output ---- */

/* Decimals for a value by magnitude: 4202, 180.9, 9.19, 0.019. */
static int value_decimals(double v) {
  double a = v < 0 ? -v : v;
  return a >= 1000 ? 0 : a >= 100 ? 1 : a >= 1 ? 2 : 3;
}

/* One precision per column: the most decimals any non-zero value of it needs,
** so that a column's numbers line up on the decimal point and none loses a
** digit it would show on its own (2 for a column of zeros). */
static void column_decimals(const struct xp_table *t, int dec[XP_MAX_COLS]) {
  for (unsigned c = 0; c < t->ncols; c++) {
    dec[c] = -1;
    for (unsigned r = 0; r < t->nrows; r++) {
      int d = value_decimals(t->row[r].v[c]);
      if (t->row[r].v[c] != 0 && d > dec[c]) dec[c] = d;
    }
    if (dec[c] < 0) dec[c] = 2;
  }
}

/* A value at its column's precision; one fitted on a calibration point gets
** "*" and the published value in brackets, so model and publication stand
** side by side. */
static void fmt_value(char *buf, size_t n, const struct xp_row *row, unsigned c, int decimals) {
  int used = snprintf(buf, n, "%.*f", decimals, row->v[c]);
  if (!row->calibrated[c] || used < 0 || (size_t)used >= n) return;
  used += snprintf(buf + used, n - (size_t)used, "*");
  if (row->published[c] && (size_t)used + 2 < n)
    snprintf(buf + used, n - (size_t)used, " [%.*f]", decimals, row->published[c]);
}

static void print_text(FILE *f, const struct xp_table *t, bool md) {
  char buf[64];
  int dec[XP_MAX_COLS];
  column_decimals(t, dec);
  if (md) fprintf(f, "### %s\n\n%s (%s; predictions unless marked *)\n\n", t->name, t->title, t->unit);
  else fprintf(f, "== %s: %s\n   (%s; predictions unless marked *)\n\n", t->name, t->title, t->unit);
  if (md) {
    fprintf(f, "| |");
    for (unsigned c = 0; c < t->ncols; c++) fprintf(f, " %s |", t->cols[c]);
    fprintf(f, "\n|---|");
    for (unsigned c = 0; c < t->ncols; c++) fprintf(f, "---:|");
    fprintf(f, "\n");
    for (unsigned r = 0; r < t->nrows; r++) {
      fprintf(f, "| %s |", t->row[r].label);
      for (unsigned c = 0; c < t->ncols; c++) {
        fmt_value(buf, sizeof buf, &t->row[r], c, dec[c]);
        fprintf(f, " %s |", buf);
      }
      fprintf(f, "\n");
    }
    fprintf(f, "\n%s\n\n", t->notes);
    return;
  }
  struct texttable tt;
  tt_init(&tt, t->ncols + 1);
  tt_cell(&tt, "%s", "");
  for (unsigned c = 0; c < t->ncols; c++) tt_cell(&tt, "%s", t->cols[c]);
  for (unsigned r = 0; r < t->nrows; r++) {
    tt_cell(&tt, "%s", t->row[r].label);
    for (unsigned c = 0; c < t->ncols; c++) {
      fmt_value(buf, sizeof buf, &t->row[r], c, dec[c]);
      tt_cell(&tt, "%s", buf);
    }
  }
  char align[XP_MAX_COLS + 2] = "l";
  for (unsigned c = 0; c < t->ncols; c++) strcat(align, "r");
  tt_print(f, &tt, align, 2);
  tt_free(&tt);
  fprintf(f, "\n   %s\n\n", t->notes);
}

static cJSON *table_json(const struct xp_table *t) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", t->name);
  cJSON_AddStringToObject(o, "title", t->title);
  cJSON_AddStringToObject(o, "unit", t->unit);
  cJSON *cols = cJSON_AddArrayToObject(o, "columns");
  for (unsigned c = 0; c < t->ncols; c++) cJSON_AddItemToArray(cols, cJSON_CreateString(t->cols[c]));
  cJSON *rows = cJSON_AddArrayToObject(o, "rows");
  for (unsigned r = 0; r < t->nrows; r++) {
    cJSON *row = cJSON_CreateObject(), *vals = cJSON_CreateObject(), *cal = cJSON_CreateArray();
    cJSON_AddStringToObject(row, "label", t->row[r].label);
    for (unsigned c = 0; c < t->ncols; c++) {
      json_add_number(vals, t->cols[c], t->row[r].v[c]);
      if (t->row[r].calibrated[c]) cJSON_AddItemToArray(cal, cJSON_CreateString(t->cols[c]));
      if (t->row[r].published[c]) {
        cJSON *pub = cJSON_GetObjectItemCaseSensitive(row, "published");
        if (!pub) pub = cJSON_AddObjectToObject(row, "published");
        json_add_number(pub, t->cols[c], t->row[r].published[c]);
      }
    }
    cJSON_AddItemToObject(row, "values", vals);
    cJSON_AddItemToObject(row, "calibrated", cal);
    cJSON_AddItemToArray(rows, row);
  }
  cJSON_AddStringToObject(o, "notes", t->notes);
  return o;
}

/* ---- the command ---- */

struct repro_opts {
  const char *only, *db, *plots, *keep;
  int format;                 /* 0 table, 1 md, 2 json */
  bool quick, quiet, progress;
};

static int parse_opts(int argc, char **argv, struct repro_opts *o) {
  static const struct option longopts[] = {
    { "only", required_argument, 0, 'O' }, { "format", required_argument, 0, 'f' },
    { "db", required_argument, 0, 'D' },   { "no-db", no_argument, 0, 'N' },
    { "plots", required_argument, 0, 'P' }, { "quick", no_argument, 0, 'Q' },
    { "keep", required_argument, 0, 'K' }, { "quiet", no_argument, 0, 'q' },
    { "progress", no_argument, 0, 'G' },   { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
  memset(o, 0, sizeof *o);
  o->db = REPRODUCE_DB;
  int c;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, "f:qh", longopts, NULL)) != -1) {
    switch (c) {
    case 'O': o->only = optarg; break;
    case 'f':
      if (!strcmp(optarg, "table")) o->format = 0;
      else if (!strcmp(optarg, "md")) o->format = 1;
      else if (!strcmp(optarg, "json")) o->format = 2;
      else { errorf("--format %s: expected table, md or json", optarg); return EXIT_USAGE; }
      break;
    case 'D': o->db = optarg; break;
    case 'N': o->db = NULL; break;
    case 'P': o->plots = optarg; break;
    case 'Q': o->quick = true; break;
    case 'K': o->keep = optarg; break;
    case 'q': o->quiet = true; break;
    case 'G': o->progress = true; break;
    case 'h':
      fputs(usage, stdout);
      for (unsigned i = 0; i < nexperiments; i++) printf("  %-18s %s\n", experiments[i].name, experiments[i].summary);
      printf("\nexample: vmxsim reproduce --only cr3-cache-2008 --plots plots\n");
      return -1;
    default:
      errorf("%s: unknown option or missing argument; see 'vmxsim reproduce --help'", argv[optind - 1]);
      return EXIT_USAGE;
    }
  }
  if (optind < argc) {
    errorf("unexpected argument '%s'; see 'vmxsim reproduce --help'", argv[optind]);
    return EXIT_USAGE;
  }
  return EXIT_OK;
}

static bool selected(const char *only, const char *name) {
  if (!only) return true;
  size_t n = strlen(name);
  for (const char *p = only; (p = strstr(p, name)); p += n)
    if ((p == only || p[-1] == ',') && (p[n] == 0 || p[n] == ',')) return true;
  return false;
}

static int check_only(const char *only) {
  if (!only) return EXIT_OK;
  char *copy = xstrdup(only), *save = NULL;
  int rc = EXIT_OK;
  for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    bool known = false;
    for (unsigned i = 0; i < nexperiments; i++) known |= !strcmp(experiments[i].name, tok);
    if (!known) {
      errorf("unknown experiment '%s'; 'vmxsim reproduce --help' lists them", tok);
      rc = EXIT_USAGE;
    }
  }
  free(copy);
  return rc;
}

static bool make_dir(const char *dir) {
  if (mkdir(dir, 0777) == 0 || errno == EEXIST) return true;
  errorf("%s: %s", dir, strerror(errno));
  return false;
}

void xp_cleanup(const struct xp_ctx *c, bool keep) {
  for (unsigned i = 0; i < ntraces; i++)
    if (!keep) remove(traces[i].path);
  if (!keep) outfile_tmpdir_remove(c->dir);
  ntraces = 0;
}

int cmd_reproduce(int argc, char **argv) {
  struct repro_opts o;
  int rc = parse_opts(argc, argv, &o);
  if (rc) return rc < 0 ? EXIT_OK : rc;
  if ((rc = check_only(o.only)) != EXIT_OK) return rc;
  if ((o.plots && !make_dir(o.plots)) || (o.keep && !make_dir(o.keep))) return EXIT_BADINPUT;
  struct xp_ctx c = { .quick = o.quick, .db = o.db };
  if (o.keep) snprintf(c.dir, sizeof c.dir, "%s", o.keep);
  else {
    char *dir, err[512];
    if ((rc = outfile_tmpdir("vmxsim-reproduce", &dir, err, sizeof err)) != EXIT_OK) {
      errorf("%s", err);
      return rc;
    }
    snprintf(c.dir, sizeof c.dir, "%s", dir);
    free(dir);
  }
  c.progress = o.quiet ? XP_PROGRESS_OFF : isatty(2) ? XP_PROGRESS_TTY : o.progress ? XP_PROGRESS_LINES : XP_PROGRESS_OFF;
  for (unsigned i = 0; i < nexperiments; i++) c.xp_count += selected(o.only, experiments[i].name);
  struct interrupt_catch ic;
  interrupt_catch(&ic, false);
  cJSON *all = cJSON_CreateArray();
  double t_all = monotonic_seconds();
  for (unsigned i = 0; i < nexperiments && c.rc == EXIT_OK; i++) {
    const struct experiment *x = &experiments[i];
    if (!selected(o.only, x->name)) continue;
    c.xp_index++;
    c.xp_name = x->name;
    c.runs = 0;
    double t0 = monotonic_seconds();
    struct xp_table *t = xcalloc(x->ntables, sizeof *t);
    int xrc = x->run(&c, t);
    if (c.progress == XP_PROGRESS_TTY) fprintf(stderr, "\r\033[K");
    if (xrc != EXIT_OK) {
      errorf("%s: %s", x->name, c.err);
      c.rc = xp_failed(&c);
    } else {
      if (c.progress != XP_PROGRESS_OFF)
        fprintf(stderr, "vmxsim: reproduce: [%u/%u] %s: %u runs in %.1f s\n", c.xp_index, c.xp_count, x->name, c.runs,
                monotonic_seconds() - t0);
      for (unsigned k = 0; k < x->ntables; k++) {
        if (o.format == 2) cJSON_AddItemToArray(all, table_json(&t[k]));
        else print_text(stdout, &t[k], o.format == 1);
        if (o.plots) xp_plot(&t[k], o.plots);
      }
      fflush(stdout);
    }
    free(t);
  }
  interrupt_release(&ic);
  if (c.progress != XP_PROGRESS_OFF && c.rc == EXIT_OK)
    fprintf(stderr, "vmxsim: reproduce: %u experiment%s in %.1f s%s%s\n", c.xp_count, c.xp_count == 1 ? "" : "s",
            monotonic_seconds() - t_all, c.db ? "; runs stored in " : "", c.db ? c.db : "");
  if (o.format == 2) {
    char *s = cJSON_Print(all);
    printf("%s\n", s);
    free(s);
  }
  cJSON_Delete(all);
  xp_cleanup(&c, o.keep != NULL);
  return c.rc;
}
