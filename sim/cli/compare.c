/* `vmxsim compare` output: exits and cycles per reason of several stored runs,
** each against the first, as plain text for a mailing-list post, CSV or JSON. */
#include "compare.h"
#include "sim/base/texttable.h"
#include "sim/base/util.h"
#include "sim/present/report_print.h"
#include "models/vmx/exit_reason.h"

#include <cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

enum metric { M_EXITS, M_CYCLES, M_US };
static const char *const metric_name[] = { "exits", "cycles", "us" };

/* One output line: a metric of one reason (or summary) in every run, as totals. */
struct line {
  enum metric metric;
  char name[32], parent[32];
  unsigned order;              /* reasons by SDM number, breakdown rows after theirs */
  double v[COMPARE_MAX_RUNS];
};

struct cmp {
  const struct compare_run *runs;
  unsigned n;
  bool per_op;                 /* every run has marks: compare per operation */
  struct line *lines;
  unsigned nlines, cap;
};

static struct line *add_line(struct cmp *c, enum metric m, const char *name, const char *parent, unsigned order) {
  if (c->nlines == c->cap) c->lines = xrealloc(c->lines, (c->cap = c->cap ? 2 * c->cap : 64) * sizeof *c->lines);
  struct line *l = &c->lines[c->nlines++];
  memset(l, 0, sizeof *l);
  l->metric = m;
  l->order = order;
  snprintf(l->name, sizeof l->name, "%s", name);
  snprintf(l->parent, sizeof l->parent, "%s", parent);
  return l;
}

static unsigned row_order(const struct report_row *r) {
  if (!r->parent[0]) return r->reason * 512;
  int k = stat_key_by_name(r->name);
  return r->reason * 512 + 1 + (k >= 0 ? (unsigned)k : 256);
}

static int by_order(const void *a, const void *b) {
  const struct line *x = a, *y = b;
  if (x->order != y->order) return x->order < y->order ? -1 : 1;
  return strcmp(x->name, y->name);
}

/* The union of every run's exit rows (a reason missing from a run counts 0). */
static void add_reason_lines(struct cmp *c, enum metric m) {
  unsigned first = c->nlines;
  for (unsigned i = 0; i < c->n; i++) {
    const struct report *rep = &c->runs[i].rep;
    for (unsigned k = 0; k < rep->nrows; k++) {
      const struct report_row *r = &rep->rows[k];
      struct line *l = NULL;
      for (unsigned j = first; j < c->nlines && !l; j++)
        if (!strcmp(c->lines[j].name, r->name) && !strcmp(c->lines[j].parent, r->parent)) l = &c->lines[j];
      if (!l) l = add_line(c, m, r->name, r->parent, row_order(r));
      l->v[i] = (double)(m == M_EXITS ? r->count : r->cycles);
    }
  }
  qsort(c->lines + first, c->nlines - first, sizeof *c->lines, by_order);
}

static void build(struct cmp *c) {
  add_reason_lines(c, M_EXITS);
  struct line *tot = add_line(c, M_EXITS, "total", "", 0);
  for (unsigned i = 0; i < c->n; i++) tot->v[i] = (double)c->runs[i].rep.total_exits;
  add_reason_lines(c, M_CYCLES);
  struct line *vmm = add_line(c, M_CYCLES, "hypervisor", "", 0);
  for (unsigned i = 0; i < c->n; i++) vmm->v[i] = (double)c->runs[i].rep.vmm_cycles;
  struct line *guest = add_line(c, M_CYCLES, "guest", "", 0);
  for (unsigned i = 0; i < c->n; i++) guest->v[i] = (double)c->runs[i].rep.guest_cycles;
  struct line *all = add_line(c, M_CYCLES, "total", "", 0);
  for (unsigned i = 0; i < c->n; i++) all->v[i] = vmm->v[i] + guest->v[i];
  struct line *us = add_line(c, M_US, "total", "", 0);
  for (unsigned i = 0; i < c->n; i++) us->v[i] = all->v[i] / (c->runs[i].rep.clock_ghz * 1e3);
}

/* The compared value: per operation, or the total when some run has no marks. */
static double value(const struct cmp *c, const struct line *l, unsigned i) {
  return c->per_op ? l->v[i] / (double)c->runs[i].rep.marks : l->v[i];
}
static double per_op_value(const struct cmp *c, const struct line *l, unsigned i) {
  return c->runs[i].rep.marks ? l->v[i] / (double)c->runs[i].rep.marks : NAN;
}
/* Run i against the baseline; NAN when the baseline is 0. */
static double ratio(const struct cmp *c, const struct line *l, unsigned i) {
  double base = value(c, l, 0);
  return base != 0 ? value(c, l, i) / base : NAN;
}
static double diff(const struct cmp *c, const struct line *l, unsigned i) { return value(c, l, i) - value(c, l, 0); }

/* ---- text ---- */

static const char *value_fmt(const struct cmp *c, enum metric m, bool sign) {
  bool frac = m == M_US || (m == M_EXITS && c->per_op);
  return sign ? (frac ? "%+.3f" : "%+.0f") : (frac ? "%.3f" : "%.0f");
}

static void cell_num(struct texttable *t, const char *fmt, double v) {
  if (isnan(v)) tt_cell(t, "-");
  else tt_cell(t, fmt, v);
}

static void header_row(struct texttable *t, const struct cmp *c, const char *label) {
  tt_cell(t, "%s", label);
  for (unsigned i = 0; i < c->n; i++) tt_cell(t, "%c", 'A' + i);
  for (unsigned i = 1; i < c->n; i++) {
    tt_cell(t, "%c/A", 'A' + i);
    tt_cell(t, "%c-A", 'A' + i);
  }
}

static void value_row(struct texttable *t, const struct cmp *c, const struct line *l, const char *label) {
  tt_cell(t, "%s%s", l->parent[0] ? "  " : "", label);
  for (unsigned i = 0; i < c->n; i++) cell_num(t, value_fmt(c, l->metric, false), value(c, l, i));
  for (unsigned i = 1; i < c->n; i++) {
    cell_num(t, "%.3f", ratio(c, l, i));
    cell_num(t, value_fmt(c, l->metric, true), diff(c, l, i));
  }
}

static bool same_text(const struct cmp *c, size_t off) {
  for (unsigned i = 1; i < c->n; i++)
    if (strcmp((const char *)&c->runs[i].rep + off, (const char *)&c->runs[0].rep + off)) return false;
  return true;
}
static bool same_marks(const struct cmp *c) {
  for (unsigned i = 1; i < c->n; i++)
    if (c->runs[i].rep.marks != c->runs[0].rep.marks) return false;
  return true;
}

/* "trace T (workload), cpu C, N operations": what every run shares; the legend gives the rest. */
static void print_heading(FILE *f, const struct cmp *c) {
  const struct report *r0 = &c->runs[0].rep;
  bool trace = same_text(c, offsetof(struct report, trace)) && same_text(c, offsetof(struct report, trace_hash));
  bool cpu = same_text(c, offsetof(struct report, cpu)), marks = same_marks(c);
  fprintf(f, "vmxsim compare");
  if (trace) fprintf(f, ": trace %s (%s)", r0->trace, r0->workload[0] ? r0->workload : "-");
  if (cpu) fprintf(f, "%s cpu %s", trace ? "," : ":", r0->cpu);
  if (c->per_op && marks) fprintf(f, ", per operation (%" PRIu64 " mark%s)", r0->marks, r0->marks == 1 ? "" : "s");
  else if (c->per_op) fprintf(f, ", per operation (mark)");
  else fprintf(f, ", totals (%s)", r0->marks ? "some runs have no marks" : "the trace has no marks");
  fprintf(f, "\n\n");
  for (unsigned i = 0; i < c->n; i++) {
    const struct report *r = &c->runs[i].rep;
    if (c->runs[i].id > 0) fprintf(f, "  %c: run %" PRId64 ", policy %s", 'A' + i, c->runs[i].id, r->policy);
    else fprintf(f, "  %c: policy %s", 'A' + i, r->policy);     /* not stored (yet): vmxsim run */
    if (!cpu) fprintf(f, ", cpu %s", r->cpu);
    if (!trace) fprintf(f, ", trace %s", r->trace);
    if (!marks) fprintf(f, " (%" PRIu64 " mark%s)", r->marks, r->marks == 1 ? "" : "s");
    fprintf(f, "\n");
  }
  fprintf(f, "\n");
}

static void print_text(FILE *f, const struct cmp *c) {
  struct texttable t;
  char align[1 + 3 * COMPARE_MAX_RUNS];
  tt_init(&t, 1 + c->n + 2 * (c->n - 1));
  memset(align, 'r', t.ncols);
  align[0] = 'l';
  align[t.ncols] = 0;
  enum metric prev = M_US;
  for (unsigned k = 0; k < c->nlines; k++) {
    const struct line *l = &c->lines[k];
    if (l->metric != prev && l->metric != M_US) {
      if (k) tt_endrow(&t);
      header_row(&t, c, l->metric == M_EXITS ? (c->per_op ? "VM exits/op" : "VM exits")
                                             : (c->per_op ? "cycles/op" : "cycles"));
    }
    if (l->metric == M_US) tt_endrow(&t);
    prev = l->metric;
    value_row(&t, c, l, l->metric == M_US ? (c->per_op ? "us/op" : "us") : l->name);
  }
  print_heading(f, c);
  tt_print(f, &t, align, 2);
  tt_free(&t);
}

/* ---- CSV and JSON ---- */

static void csv_num(FILE *f, double v) {
  char buf[NUM_TEXT_MAX];
  if (!isnan(v)) fputs(num_shortest(buf, v), f);
}

static void print_csv(FILE *f, const struct cmp *c) {
  fprintf(f, "metric,name,parent,run,policy,cpu,trace,total,per_op,ratio,diff\n");
  for (unsigned k = 0; k < c->nlines; k++) {
    const struct line *l = &c->lines[k];
    for (unsigned i = 0; i < c->n; i++) {
      const struct report *r = &c->runs[i].rep;
      fprintf(f, "%s,", metric_name[l->metric]);
      csv_field(f, l->name);
      fputc(',', f);
      csv_field(f, l->parent);
      fprintf(f, ",%" PRId64 ",", c->runs[i].id);
      csv_field(f, r->policy);
      fputc(',', f);
      csv_field(f, r->cpu);
      fputc(',', f);
      csv_field(f, r->trace);
      fputc(',', f);
      csv_num(f, l->v[i]);
      fputc(',', f);
      csv_num(f, per_op_value(c, l, i));
      fputc(',', f);
      if (i) csv_num(f, ratio(c, l, i));
      fputc(',', f);
      if (i) csv_num(f, diff(c, l, i));
      fputc('\n', f);
    }
  }
}

static void json_num(cJSON *o, const char *key, double v) { json_add_number(o, key, v); }

static cJSON *json_runs(const struct cmp *c) {
  cJSON *a = cJSON_CreateArray();
  for (unsigned i = 0; i < c->n; i++) {
    const struct report *r = &c->runs[i].rep;
    cJSON *o = cJSON_CreateObject();
    char label[2] = { (char)('A' + i), 0 };
    cJSON_AddStringToObject(o, "label", label);
    cJSON_AddNumberToObject(o, "id", (double)c->runs[i].id);
    run_identity_json(o, &(struct run_identity){ r->trace, r->trace_hash, r->workload, r->policy, r->cpu });
    cJSON_AddNumberToObject(o, "marks", (double)r->marks);
    cJSON_AddItemToArray(a, o);
  }
  return a;
}

static void add_measured_json(cJSON *root, const struct cmp *c, const struct report *m);

static void print_json(FILE *f, const struct cmp *c, const struct report *m) {
  cJSON *root = cJSON_CreateObject();
  cJSON_AddBoolToObject(root, "per_op", c->per_op);
  cJSON_AddItemToObject(root, "runs", json_runs(c));
  cJSON *rows = cJSON_AddArrayToObject(root, "rows");
  for (unsigned k = 0; k < c->nlines; k++) {
    const struct line *l = &c->lines[k];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "metric", metric_name[l->metric]);
    cJSON_AddStringToObject(o, "name", l->name);
    cJSON_AddStringToObject(o, "parent", l->parent);
    cJSON *vals = cJSON_AddArrayToObject(o, "values");
    for (unsigned i = 0; i < c->n; i++) {
      cJSON *v = cJSON_CreateObject();
      json_num(v, "total", l->v[i]);
      json_num(v, "per_op", per_op_value(c, l, i));
      json_num(v, "ratio", i ? ratio(c, l, i) : NAN);
      json_num(v, "diff", i ? diff(c, l, i) : NAN);
      cJSON_AddItemToArray(vals, v);
    }
    cJSON_AddItemToArray(rows, o);
  }
  if (m) add_measured_json(root, c, m);
  char *s = cJSON_Print(root);
  fprintf(f, "%s\n", s);
  free(s);
  cJSON_Delete(root);
}

/* ---- what the recording measured, beside each run ---- */

/* The first run that carries measured exits, or NULL. */
static const struct report *measured_of(const struct cmp *c) {
  for (unsigned i = 0; i < c->n; i++)
    if (report_has_measured(&c->runs[i].rep)) return &c->runs[i].rep;
  return NULL;
}

static const struct report_row *sim_row(const struct report *rep, const struct view_stat *m) {
  for (unsigned k = 0; k < rep->nrows; k++)
    if (!rep->rows[k].parent[0] && rep->rows[k].reason == m->reason) return &rep->rows[k];
  return NULL;
}

/* Why no run has a simulated average for a measured reason: vmxsim never
** decides its exits (NULL when some run took one, or the model decides it). */
static const char *not_redecided(const struct cmp *c, const struct view_stat *m) {
  for (unsigned i = 0; i < c->n; i++) {
    const struct report_row *r = sim_row(&c->runs[i].rep, m);
    if (r && r->count) return NULL;
  }
  return exit_reason_not_redecided(m->reason);
}

/* What run i's policy made of a measured reason, as `run` says beside it
** (report_reason_note); NOTE_NONE for what not_redecided says for every run. */
static enum reason_note run_note(const struct cmp *c, unsigned i, const struct view_stat *m,
                                 struct reason_note_text *note) {
  if (not_redecided(c, m)) return NOTE_NONE;
  const struct report_row *r = sim_row(&c->runs[i].rep, m);
  return report_reason_note(&c->runs[i].rep, m->reason, m->count, r ? r->count : 0, note);
}

static const char *const note_label[] = {
  [NOTE_NOT_REDECIDED] = "not re-decided", [NOTE_REMOVED] = "simulated 0", [NOTE_FEWER] = "fewer",
};

/* "NAME: not re-decided: why" (every run), "NAME: N undecided: why" (the
** recording's, report.h), then "A: NAME: simulated 0: why" per run. */
static void print_notes(FILE *f, const struct cmp *c, const struct report *m, const struct view_stat *v) {
  const char *why = not_redecided(c, v);
  if (why) fprintf(f, "%s: not re-decided: %s\n", v->name, why);
  for (unsigned i = 0; i < m->nundecided; i++)
    if (m->undecided[i].reason == v->reason)
      fprintf(f, "%s: %" PRIu64 " undecided: %s\n", v->name, m->undecided[i].count, m->undecided[i].why);
  for (unsigned i = 0; i < c->n; i++) {
    struct reason_note_text note;
    enum reason_note k = run_note(c, i, v, &note);
    if (k != NOTE_NONE) fprintf(f, "%c: %s: %s: %s\n", 'A' + i, v->name, note_label[k], note.why);
  }
}

static void print_measured_text(FILE *f, const struct cmp *c, const struct report *m) {
  struct texttable t;
  char align[3 + 2 * COMPARE_MAX_RUNS + 1];
  tt_init(&t, 3 + 2 * c->n);
  memset(align, 'r', t.ncols);
  align[0] = 'l';
  align[t.ncols] = 0;
  tt_cell(&t, "measured");
  tt_cell(&t, "exits");
  tt_cell(&t, "avg cyc");
  for (unsigned i = 0; i < c->n; i++) { tt_cell(&t, "%c avg", 'A' + i); tt_cell(&t, "%c/meas", 'A' + i); }
  for (unsigned k = 0; k < m->nvrows; k++) {
    const struct view_stat *v = &m->vrows[k];
    if (v->source != VS_MEASURED || v->dim != VD_REASON) continue;
    tt_cell(&t, "%s", v->name);
    tt_cell(&t, "%" PRIu64, v->count);
    tt_cell(&t, "%" PRIu64, v->avg);
    for (unsigned i = 0; i < c->n; i++) {
      const struct report_row *r = sim_row(&c->runs[i].rep, v);
      double avg = r && r->count ? (double)r->cycles / (double)r->count : NAN;
      cell_num(&t, "%.0f", avg);
      cell_num(&t, "%.3f", v->avg ? avg / (double)v->avg : NAN);
    }
  }
  fprintf(f, "\nwhat the recording measured, beside each run's simulated average per exit:\n\n");
  tt_print(f, &t, align, 2);
  tt_free(&t);
  for (unsigned k = 0; k < m->nvrows; k++)
    if (m->vrows[k].source == VS_MEASURED && m->vrows[k].dim == VD_REASON) print_notes(f, c, m, &m->vrows[k]);
}

static void add_measured_json(cJSON *root, const struct cmp *c, const struct report *m) {
  cJSON *o = cJSON_AddObjectToObject(root, "measured");
  for (unsigned k = 0; k < m->nvrows; k++) {
    const struct view_stat *v = &m->vrows[k];
    if (v->source != VS_MEASURED || v->dim != VD_REASON) continue;
    cJSON *e = cJSON_AddObjectToObject(o, v->name);
    cJSON_AddNumberToObject(e, "count", (double)v->count);
    cJSON_AddNumberToObject(e, "avg", (double)v->avg);
    const char *why = not_redecided(c, v);
    if (why) cJSON_AddStringToObject(e, "not_redecided", why);
    report_undecided_json(e, m, v->reason);
    cJSON *sims = cJSON_AddArrayToObject(e, "simulated_avg");
    for (unsigned i = 0; i < c->n; i++) {
      const struct report_row *r = sim_row(&c->runs[i].rep, v);
      cJSON *x = cJSON_CreateObject();
      json_num(x, "avg", r && r->count ? (double)r->cycles / (double)r->count : NAN);
      struct reason_note_text note;
      enum reason_note kind = run_note(c, i, v, &note);
      if (kind != NOTE_NONE) cJSON_AddStringToObject(x, report_reason_note_key(kind), note.why);
      cJSON_AddItemToArray(sims, x);
    }
  }
}

void compare_print(FILE *f, const struct compare_run *runs, unsigned n, enum report_format fmt) {
  struct cmp c = { .runs = runs, .n = n < COMPARE_MAX_RUNS ? n : COMPARE_MAX_RUNS, .per_op = true };
  for (unsigned i = 0; i < c.n; i++)
    if (!runs[i].rep.marks) c.per_op = false;
  build(&c);
  const struct report *m = measured_of(&c);
  if (fmt == FORMAT_JSON) print_json(f, &c, m);
  else if (fmt == FORMAT_CSV) print_csv(f, &c);
  else {
    print_text(f, &c);
    if (m) print_measured_text(f, &c, m);
  }
  free(c.lines);
}
