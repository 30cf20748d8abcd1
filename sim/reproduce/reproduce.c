/* `vmxsim reproduce`: runs the classic exit-cost experiments and prints, stores
** and plots their tables (the experiments themselves are in experiments.c). */
#include "reproduce.h"
#include "sim/core/outfile.h"
#include "sim/core/runner.h"
#include "sim/store/store.h"
#include "sim/core/texttable.h"
#include "sim/core/trace.h"
#include "sim/core/util.h"
#include "workloads/generators.h"

#include <cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
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
  "  --plots DIR    draw each experiment's chart into DIR as PNG, SVG and PDF (needs gnuplot)\n"
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

const char *xp_gen(struct xp_ctx *c, const char *const *args) {
  char key[512] = "";
  size_t used = 0;
  for (unsigned i = 0; args[i] && used < sizeof key; i++)
    used += (size_t)snprintf(key + used, sizeof key - used, "%s ", args[i]);
  for (unsigned i = 0; i < ntraces; i++)
    if (!strcmp(traces[i].key, key)) return traces[i].path;
  if (ntraces == MAX_TRACES) {
    snprintf(c->err, sizeof c->err, "too many traces");
    return NULL;
  }
  struct gen_cache *g = &traces[ntraces];
  snprintf(g->key, sizeof g->key, "%s", key);
  snprintf(g->path, sizeof g->path, "%s/%02u-%s.bin", c->dir, ntraces, args[0]);
  int argc = 0;
  while (args[argc]) argc++;
  size_t klen = strlen(key);
  progress(c, "generating %s: %.*s", base_name(g->path), (int)(klen ? klen - 1 : 0), key);   /* without the last blank */
  int rc = gen_generate(argc, (char **)args, g->path, c->err, sizeof c->err);
  if (rc != EXIT_OK) {
    c->rc = rc;
    return NULL;
  }
  g->native_cycles = native_cycles(g->path);
  ntraces++;
  return g->path;
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

/* ---- charts: scripts/plot/bars.gp draws them ---- */

/* A gnuplot string literal: double-quoted, with \\, \" and \n escaped. */
static void gp_string(FILE *f, const char *name, const char *value) {
  fprintf(f, "%s = \"", name);
  for (const char *p = value; *p; p++) {
    if (*p == '\n') fputs("\\n", f);
    else if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
    else fputc(*p, f);
  }
  fprintf(f, "\"\n");
}

/* The y axis label: the unit, with "microseconds" as µs and, for a unit that
** is only "per ...", the plotted column's own unit in front (µs, exits, cycles). */
static void axis_label(const struct xp_table *t, unsigned col, char *buf, size_t n) {
  const char *unit = t->unit, *name = t->cols[col];
  const char *micro = strstr(unit, "microseconds");
  if (micro) snprintf(buf, n, "%.*sµs%s", (int)(micro - unit), unit, micro + strlen("microseconds"));
  else if (strncmp(unit, "per ", 4)) snprintf(buf, n, "%s", unit);
  else snprintf(buf, n, "%s %s", !strcmp(name, "us") ? "µs" : strstr(name, "exits") ? "exits"
                                   : strstr(name, "cycles") ? "cycles" : name, unit);
}

/* The table's title on lines of at most 50 characters, split at blanks. */
static void wrap_title(const char *title, char *buf, size_t n) {
  size_t len = 0, line = 0;
  for (const char *p = title; *p && len + 1 < n; p++) {
    if (*p == ' ' && line + 1 + strcspn(p + 1, " ") > 50) { buf[len++] = '\n'; line = 0; continue; }
    buf[len++] = *p;
    line++;
  }
  buf[len] = 0;
}

/* A row label as a tick label: lines of at most 24 characters, broken at
** blanks ("|" marks a break, bars.gp turns it into a newline). */
static void tick_label(const char *label, char *buf, size_t n) {
  size_t len = 0, line = 0;
  for (const char *p = label; *p && len + 1 < n; p++) {
    if (*p == ' ' && line && line + 1 + strcspn(p + 1, " ") > 24) { buf[len++] = '|'; line = 0; continue; }
    buf[len++] = *p == '|' || *p == '\t' ? ' ' : *p;
    line++;
  }
  buf[len] = 0;
}

struct chart_range { double ymin, ymax, ypos; bool logy; };

/* The plotted values' range; a logarithmic axis when the positive values span
** more than a decade (and none is negative), so that small bars stay visible. */
static struct chart_range chart_range(const struct xp_table *t, unsigned first, unsigned n) {
  struct chart_range r = { 0, 0, 0, false };
  bool negative = false;
  for (unsigned row = 0; row < t->nrows; row++)
    for (unsigned c = first; c < first + n; c++) {
      double v = t->row[row].v[c];
      for (int k = 0; k < 2; k++, v = t->row[row].published[c]) {
        if (k && !t->row[row].calibrated[c]) break;
        if (v > r.ymax) r.ymax = v;
        if (v < r.ymin) r.ymin = v;
        if (v > 0 && (r.ypos == 0 || v < r.ypos)) r.ypos = v;
        negative |= v < 0;
      }
    }
  if (r.ymax <= 0) r.ymax = 1;
  if (r.ypos == 0) r.ypos = r.ymax;
  r.logy = !negative && r.ymax / r.ypos > 10;
  return r;
}

/* Writes NAME.dat (the bars), NAME.marks (the calibration points) and NAME.gp
** (the settings) into dir; returns the number of calibration points or -1. */
static int chart_inputs(const struct xp_table *t, const char *dir, unsigned first, unsigned n) {
  char dat[512], marks[512], gp[512], label[256], title[512];
  snprintf(dat, sizeof dat, "%s/%s.dat", dir, t->name);
  snprintf(marks, sizeof marks, "%s/%s.marks", dir, t->name);
  snprintf(gp, sizeof gp, "%s/%s.gp", dir, t->name);
  FILE *d = fopen(dat, "w"), *m = fopen(marks, "w"), *g = fopen(gp, "w");
  int nmarks = -1;
  if (d && m && g) {
    nmarks = 0;
    fprintf(d, "label");
    for (unsigned c = first; c < first + n; c++) fprintf(d, "\t%s", t->cols[c]);
    fprintf(d, "\n");
    for (unsigned r = 0; r < t->nrows; r++) {
      char num[NUM_TEXT_MAX], tick[sizeof t->row[r].label];
      tick_label(t->row[r].label, tick, sizeof tick);
      fprintf(d, "%s", tick);
      for (unsigned c = first; c < first + n; c++) {
        fprintf(d, "\t%s", num_shortest(num, t->row[r].v[c]));
        if (!t->row[r].calibrated[c]) continue;
        double y = t->nrows - 1.0 - r + ((n - 1) / 2.0 - (c - first)) * (0.8 / n);   /* as bars.gp's y(i) */
        fprintf(m, "%s\t", num_shortest(num, y));
        fprintf(m, "%s\t", num_shortest(num, t->row[r].v[c]));
        fprintf(m, "%s\n", num_shortest(num, t->row[r].published[c] ? t->row[r].published[c] : t->row[r].v[c]));
        nmarks++;
      }
      fprintf(d, "\n");
    }
    struct chart_range cr = chart_range(t, first, n);
    char num[NUM_TEXT_MAX];
    gp_string(g, "datafile", dat);
    gp_string(g, "markfile", marks);
    fprintf(g, "rows = %u\nn = %u\nmarks = %d\nlogx = %d\n", t->nrows, n, nmarks, cr.logy);
    fprintf(g, "vmin = %s\n", num_shortest(num, cr.ymin));
    fprintf(g, "vmax = %s\n", num_shortest(num, cr.ymax));
    fprintf(g, "vpos = %s\n", num_shortest(num, cr.ypos));
    wrap_title(t->title, title, sizeof title);
    gp_string(g, "ttl", title);
    unsigned lines = 1;
    for (const char *q = title; *q; q++) lines += *q == '\n';
    fprintf(g, "title_lines = %u\n", lines);
    axis_label(t, first, label, sizeof label);
    gp_string(g, "vlab", label);
  }
  if (d) fclose(d);
  if (m) fclose(m);
  if (g) fclose(g);
  if (nmarks < 0) errorf("%s: %s", dir, strerror(errno));
  return nmarks;
}

/* Runs gnuplot on the files in args (no shell: any path is safe); 0, or -1
** with the first line of what it printed (or why it did not run) in msg. */
static int run_gnuplot(char *const *args, char *msg, size_t n) {
  int fds[2];
  msg[0] = 0;
  if (pipe(fds) != 0) { snprintf(msg, n, "%s", strerror(errno)); return -1; }
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    close(fds[0]);
    close(fds[1]);
    execvp("gnuplot", args);
    fprintf(stderr, "cannot run gnuplot: %s\n", strerror(errno));
    _exit(127);
  }
  close(fds[1]);
  size_t got = 0;
  ssize_t k;
  while (pid > 0 && (k = read(fds[0], msg + got, n - 1 - got)) > 0 && got + 1 < n) got += (size_t)k;
  msg[got] = 0;
  size_t lead = strspn(msg, " \n");                 /* gnuplot starts its messages with a blank line */
  memmove(msg, msg + lead, got - lead + 1);
  msg[strcspn(msg, "\n")] = 0;
  close(fds[0]);
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) < 0) { snprintf(msg, n, "cannot start gnuplot: %s", strerror(errno)); return -1; }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 && !got ? 0 : -1;
}

/* One chart per table, as DIR/NAME.png, .svg and .pdf: the plotted columns as
** clustered bars (scripts/plot/bars.gp, found by data_file). */
static void plot(const struct xp_table *t, const char *dir) {
  unsigned first = t->plot_first, n = t->plot_n ? t->plot_n : (t->ncols < 3 ? t->ncols : 3);
  char script[4096], gp[512], fmtgp[512], msg[512];
  if (!data_file("plot/bars.gp", script, sizeof script)) {
    errorf("%s: the chart script plot/bars.gp is not installed (looked in %s; set %s)", t->name, script, DATADIR_ENV);
    return;
  }
  if (chart_inputs(t, dir, first, n) < 0) return;
  snprintf(gp, sizeof gp, "%s/%s.gp", dir, t->name);
  snprintf(fmtgp, sizeof fmtgp, "%s/%s.fmt.gp", dir, t->name);
  static const char *const formats[] = { "png", "svg", "pdf" };
  for (unsigned f = 0; f < 3; f++) {
    FILE *g = fopen(fmtgp, "w");
    if (!g) { errorf("%s: %s", fmtgp, strerror(errno)); return; }
    char out[600], scripts_dir[4096];
    snprintf(out, sizeof out, "%s/%s.%s", dir, t->name, formats[f]);
    snprintf(scripts_dir, sizeof scripts_dir, "%.*s/", (int)(strrchr(script, '/') - script), script);
    gp_string(g, "dir", scripts_dir);
    gp_string(g, "fmt", formats[f]);
    gp_string(g, "outfile", out);
    fclose(g);
    char *args[] = { "gnuplot", gp, fmtgp, script, NULL };
    if (run_gnuplot(args, msg, sizeof msg) != 0) {
      errorf("%s: gnuplot failed or is not installed (scripts/setup.sh installs it)%s%s", out, msg[0] ? ": " : "", msg);
      return;
    }
  }
  fprintf(stderr, "vmxsim: wrote %s/%s.png, .svg and .pdf\n", dir, t->name);
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
        if (o.plots) plot(&t[k], o.plots);
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
