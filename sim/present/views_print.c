/* Views of a run's exits printed: the table, CSV and JSON forms
** (views_print.h; sim/replay/views_rows.c makes the rows). */
#include "views_print.h"
#include "sim/base/util.h"
#include "models/vmx/exit_reason.h"

#include <cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- printing ---- */

static double secs(const struct views_print *o, uint64_t c) { return (double)c / (o->ghz * 1e9); }
static double pct(const struct views_print *o, uint64_t c) {
  return o->total_cycles ? 100.0 * (double)c / (double)o->total_cycles : 0.0;
}

/* Microseconds of c cycles at the views' clock. */
static double us(const struct views_print *o, double c) { return c / (o->ghz * 1e3); }

/* The vCPU rows named as the recording names them (d1v0), when it does. */
static void name_vcpus(struct view_stat *s, unsigned n, const struct views_print *o) {
  for (unsigned i = 0; i < n; i++)
    if (s[i].dim == VD_VCPU && o->vcpu_names && s[i].key < o->nvcpu_names)
      snprintf(s[i].name, sizeof s[i].name, "%s", o->vcpu_names[s[i].key]);
}

static void table_row(FILE *f, const struct view_stat *s, const char *indent, const struct views_print *o) {
  char name[48];
  snprintf(name, sizeof name, "%s%s", indent, s->name);
  if (o->units_us) {                 /* perf kvm stat report's columns, times in microseconds */
    double share = o->total_exits ? 100.0 * (double)s->count / (double)o->total_exits : 0.0;
    double spread = s->avg ? 100.0 * s->stddev / (double)s->avg : 0.0;
    const char *label = view_key_label(s->dim, s->key);
    fprintf(f, " %-24s %9" PRIu64 " %8.2f%% %6.2f%% %10.2fus %10.2fus %10.2fus ( +- %6.2f%% )%s%s\n", name,
            s->count, share, pct(o, s->cycles), us(o, (double)s->min), us(o, (double)s->max),
            us(o, (double)s->avg), spread, label ? "  " : "", label ? label : "");
    return;
  }
  fprintf(f, " %-24s %9" PRIu64 " %10.6f %6.2f%% %9" PRIu64 " {%8" PRIu64 "|%8" PRIu64 "|%8" PRIu64 "} %9" PRIu64
          " %9.0f", name, s->count, secs(o, s->cycles), pct(o, s->cycles), s->avg, s->p5, s->p50, s->p95,
          s->max, s->stddev);
  const char *label = view_key_label(s->dim, s->key);
  fprintf(f, "%s%s\n", label ? "  " : "", label ? label : "");
}

static void table_head(FILE *f, const char *first, const struct views_print *o) {
  if (o->units_us) {
    fprintf(f, " %-24s %9s %9s %7s %12s %12s %12s\n", first, "Samples", "Samples%", "Time%", "Min Time",
            "Max Time", "Avg time");
    return;
  }
  fprintf(f, " %-24s %9s %10s %7s %9s {%8s|%8s|%8s} %9s %9s\n", first, "count", "secs", "pct%", "avg cyc",
          "p5", "p50", "p95", "max", "stddev");
}

static void print_dim(FILE *f, const struct views *w, unsigned dim, const char *title, const struct views_print *o) {
  struct view_stat *s;
  enum view_sort sort = o->sort == SORT_REASON && dim == VD_CR3 ? SORT_TIME : o->sort;
  unsigned n = views_stats(w, dim, false, sort, &s);
  name_vcpus(s, n, o);
  if (n > 1 || dim == VD_VCPU) {
    fprintf(f, "\n%s:\n", title);
    table_head(f, dim == VD_CR3 ? "CR3" : "vCPU", o);
    for (unsigned i = 0; i < n && (!o->top || i < o->top); i++) table_row(f, &s[i], "", o);
    if (o->top && n > o->top) fprintf(f, " (%u more; --top N shows more)\n", n - o->top);
  }
  free(s);
}

static int by_bucket(const void *a, const void *b) {
  const struct view_bucket *x = a, *y = b;
  if (x->index != y->index) return x->index < y->index ? -1 : 1;
  return x->reason < y->reason ? -1 : x->reason > y->reason;
}

/* The buckets sorted by interval then reason; the caller frees. */
static struct view_bucket *sorted_buckets(const struct views *w) {
  struct view_bucket *b = xmalloc((w->nbuckets + 1) * sizeof *b);
  memcpy(b, w->buckets, w->nbuckets * sizeof *b);
  qsort(b, w->nbuckets, sizeof *b, by_bucket);
  return b;
}

static double bucket_start(const struct views *w, const struct views_print *o, uint64_t index) {
  return w->interval_events ? (double)(index * w->interval) : (double)(index * w->interval) / (o->ghz * 1e3);
}

void views_print_intervals(FILE *f, const struct views *w, const struct views_print *o) {
  bool used[65536] = { false };
  unsigned cols[64], ncols = 0;
  for (uint32_t i = 0; i < w->nbuckets; i++) used[w->buckets[i].reason] = true;
  for (unsigned r = 0; r < 65536 && ncols < 64; r++)
    if (used[r]) cols[ncols++] = r;
  struct view_bucket *b = sorted_buckets(w);
  int width[64];
  fprintf(f, "\n%s%sexits per interval of %" PRIu64 " %s:\n %12s", o->series ? o->series : "", o->series ? " " : "",
          w->interval_events ? w->interval : (uint64_t)((double)w->interval / (o->ghz * 1e3) + 0.5),
          w->interval_events ? "events" : "us", w->interval_events ? "event" : "start_us");
  for (unsigned c = 0; c < ncols; c++) {
    char name[32];
    view_reason_name(cols[c], name, sizeof name);
    width[c] = strlen(name) > 12 ? (int)strlen(name) : 12;
    fprintf(f, " %*s", width[c], name);
  }
  fprintf(f, "\n");
  for (uint32_t i = 0; i < w->nbuckets;) {
    uint64_t index = b[i].index;
    fprintf(f, " %12.3f", bucket_start(w, o, index));
    for (unsigned c = 0; c < ncols; c++) {
      uint64_t n = 0;
      for (uint32_t j = i; j < w->nbuckets && b[j].index == index; j++)
        if (b[j].reason == cols[c]) n = b[j].count;
      fprintf(f, " %*" PRIu64, width[c], n);
    }
    fprintf(f, "\n");
    while (i < w->nbuckets && b[i].index == index) i++;
  }
  free(b);
}

void views_print_table(FILE *f, const struct views *w, const struct views_print *given) {
  struct views_print po = *given, *o = &po;
  o->total_exits = w->exits;
  struct view_stat *s;
  unsigned n = views_stats(w, VD_REASON, true, o->sort, &s);
  if (o->title) fprintf(f, "%s\n\n", o->title);
  table_head(f, "VM-EXIT", o);
  for (unsigned i = 0; i < n; i++) table_row(f, &s[i], s[i].dim == VD_REASON ? "" : "  ", o);
  if (!n) fprintf(f, " (no VM exits)\n");
  free(s);
  print_dim(f, w, VD_CR3, "by address space (CR3), most time first", o);
  print_dim(f, w, VD_VCPU, "by vCPU", o);
  if (w->interval) views_print_intervals(f, w, o);
}

void views_print_csv(FILE *f, const struct views *w, const struct views_print *o, const char *source) {
  static const unsigned dims[] = { VD_REASON, VD_CR3, VD_VCPU };
  for (unsigned d = 0; d < 3; d++) {
    struct view_stat *s;
    unsigned n = views_stats(w, dims[d], dims[d] == VD_REASON, o->sort, &s);
    name_vcpus(s, n, o);
    for (unsigned i = 0; i < n; i++)
      fprintf(f, "%s,%s,%s,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
              ",%" PRIu64 ",%.1f\n", source, view_dim_name(s[i].dim), s[i].name, s[i].parent, s[i].count,
              s[i].cycles, s[i].avg, s[i].min, s[i].p5, s[i].p50, s[i].p95, s[i].max, s[i].stddev);
    free(s);
  }
  if (!w->interval) return;
  struct view_bucket *b = sorted_buckets(w);
  for (uint32_t i = 0; i < w->nbuckets; i++) {
    char name[32];
    view_reason_name(b[i].reason, name, sizeof name);
    fprintf(f, "%s,interval,%s,%.3f,%" PRIu64 ",%" PRIu64 ",,,,,,,\n", source, name,
            bucket_start(w, o, b[i].index), b[i].count, b[i].cycles);
  }
  free(b);
}

static cJSON *stat_json(const struct view_stat *s) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "count", (double)s->count);
  cJSON_AddNumberToObject(o, "cycles", (double)s->cycles);
  cJSON_AddNumberToObject(o, "avg", (double)s->avg);
  cJSON_AddNumberToObject(o, "min", (double)s->min);
  cJSON_AddNumberToObject(o, "p5", (double)s->p5);
  cJSON_AddNumberToObject(o, "p50", (double)s->p50);
  cJSON_AddNumberToObject(o, "p95", (double)s->p95);
  cJSON_AddNumberToObject(o, "max", (double)s->max);
  cJSON_AddNumberToObject(o, "stddev", round(s->stddev * 10) / 10);   /* 0.1 cycle is precision enough */
  const char *label = view_key_label(s->dim, s->key);
  if (label) cJSON_AddStringToObject(o, "label", label);
  return o;
}

cJSON *views_intervals_json(const struct views *w, const struct views_print *o) {
  cJSON *a = cJSON_CreateArray(), *cur = NULL;
  struct view_bucket *b = sorted_buckets(w);
  for (uint32_t i = 0; i < w->nbuckets; i++) {
    if (!i || b[i].index != b[i - 1].index) {
      cJSON *it = cJSON_CreateObject();
      cJSON_AddNumberToObject(it, w->interval_events ? "start_event" : "start_us", bucket_start(w, o, b[i].index));
      cur = cJSON_AddObjectToObject(it, "exits");
      cJSON_AddItemToArray(a, it);
    }
    char name[32];
    view_reason_name(b[i].reason, name, sizeof name);
    cJSON *e = cJSON_AddObjectToObject(cur, name);
    cJSON_AddNumberToObject(e, "count", (double)b[i].count);
    cJSON_AddNumberToObject(e, "cycles", (double)b[i].cycles);
  }
  free(b);
  return a;
}

cJSON *views_json(const struct views *w, const struct views_print *o) {
  cJSON *root = cJSON_CreateObject();
  cJSON_AddNumberToObject(root, "total_exits", (double)w->exits);
  struct view_stat *s;
  unsigned n = views_stats(w, VD_REASON, true, o->sort, &s);
  cJSON *exits = cJSON_AddObjectToObject(root, "exits"), *bd = cJSON_AddObjectToObject(root, "breakdown");
  for (unsigned i = 0; i < n; i++) {
    if (s[i].dim == VD_REASON) { cJSON_AddItemToObject(exits, s[i].name, stat_json(&s[i])); continue; }
    cJSON *sub = cJSON_GetObjectItemCaseSensitive(bd, s[i].parent);
    if (!sub) sub = cJSON_AddObjectToObject(bd, s[i].parent);
    cJSON_AddItemToObject(sub, s[i].name, stat_json(&s[i]));
  }
  free(s);
  static const unsigned dims[] = { VD_CR3, VD_VCPU };
  for (unsigned d = 0; d < 2; d++) {
    n = views_stats(w, dims[d], false, dims[d] == VD_CR3 && o->sort == SORT_REASON ? SORT_TIME : o->sort, &s);
    name_vcpus(s, n, o);
    cJSON *obj = cJSON_AddObjectToObject(root, view_dim_name(dims[d]));
    for (unsigned i = 0; i < n && (!o->top || i < o->top); i++) cJSON_AddItemToObject(obj, s[i].name, stat_json(&s[i]));
    free(s);
  }
  if (w->interval) cJSON_AddItemToObject(root, "intervals", views_intervals_json(w, o));
  return root;
}
