/* Views of a run's exits as printed: each row's statistics (percentiles from
** its sample, standard deviation), sorted, and the table, CSV and JSON forms
** (views.h; views.c keeps the rows). */
#include "views.h"
#include "util.h"
#include "models/vmx/exit_reason.h"

#include <cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- rows as printed ---- */

static void reason_name(unsigned reason, char *buf, size_t n) {
  const char *s = exit_reason_name(reason);
  if (s) snprintf(buf, n, "%s", s);
  else snprintf(buf, n, "reason %u", reason);
}

static void row_name(const struct view_row *r, char *buf, size_t n) {
  uint64_t k = r->key;
  switch (r->dim) {
  case VD_REASON: reason_name(r->reason, buf, n); return;
  case VD_CR:
    if (k == CRKEY_CLTS) snprintf(buf, n, "clts");
    else if (k == CRKEY_LMSW) snprintf(buf, n, "lmsw");
    else snprintf(buf, n, "cr%u %s", (unsigned)(k / 2), k % 2 ? "write" : "read");
    return;
  case VD_DR: snprintf(buf, n, "dr%u %s", (unsigned)(k / 2), k % 2 ? "read" : "write"); return;
  case VD_MSR: snprintf(buf, n, "msr 0x%" PRIx64, k); return;
  case VD_PORT: snprintf(buf, n, "port 0x%x %s", (unsigned)(k & 0xffff), k >> 16 ? "out" : "in"); return;
  case VD_VECTOR: snprintf(buf, n, "vector %u", (unsigned)k); return;
  case VD_LEAF: snprintf(buf, n, "leaf 0x%" PRIx64, k); return;
  case VD_CR3: snprintf(buf, n, "cr3 0x%" PRIx64, k); return;
  default: snprintf(buf, n, "vcpu %u", (unsigned)k); return;
  }
}

/* Moves the k-th smallest of v[0..n) to v[k], the smaller ones before it and
** the others after (Hoare's FIND): the percentiles need three elements of
** the sorted sample, not the whole sort.  Runs of equal costs, common in a
** sample, split evenly. */
static void select_nth(uint64_t *v, size_t n, size_t k) {
  size_t lo = 0, hi = n - 1;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    uint64_t a = v[lo], b = v[mid], c = v[hi];      /* the median of three as the pivot */
    uint64_t pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
    size_t i = lo, j = hi;
    while (i <= j) {
      while (v[i] < pivot) i++;
      while (v[j] > pivot) j--;
      if (i <= j) {
        uint64_t t = v[i]; v[i] = v[j]; v[j] = t;
        i++;
        if (j == 0) break;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return;                                    /* v[j+1..i) all equal the pivot */
  }
}

/* The k[0] <= k[1] <= k[2]-th smallest of v[0..n), whose values lie in
** [lo, hi], into out.  The values are counted by bucket of their offset from
** lo (PCT_BUCKETS buckets), so each k lies in a known bucket: when a bucket is
** one value wide (a spread below PCT_BUCKETS, as most rows' are) that is the
** answer; else only those buckets' values are copied out, in one pass, and
** selected among.  Three selections over a row's whole sample took most of
** the time after a replay of a recording. */
#define PCT_BUCKETS 2048
#define PCT_SMALL 256
static void select_three(const uint64_t *v, size_t n, uint64_t lo, uint64_t hi, const size_t k[3], uint64_t out[3]) {
  if (n <= PCT_SMALL) {                             /* a copy and three selections cost less than the counts */
    uint64_t small[PCT_SMALL];
    memcpy(small, v, n * sizeof *v);
    select_nth(small, n, k[0]);
    select_nth(small + k[0], n - k[0], k[1] - k[0]);
    select_nth(small + k[1], n - k[1], k[2] - k[1]);
    for (unsigned j = 0; j < 3; j++) out[j] = small[k[j]];
    return;
  }
  unsigned shift = 0;
  while (((hi - lo) >> shift) >= PCT_BUCKETS) shift++;
  uint32_t *count = xcalloc(PCT_BUCKETS, sizeof *count);
  for (size_t i = 0; i < n; i++) count[(v[i] - lo) >> shift]++;
  size_t bucket[3], before[3], b = 0, below = 0;
  for (unsigned j = 0; j < 3; j++) {                /* the ks ascend: one walk of the counts */
    while (below + count[b] <= k[j]) below += count[b++];
    bucket[j] = b;
    before[j] = below;
  }
  if (shift == 0) {
    for (unsigned j = 0; j < 3; j++) out[j] = lo + bucket[j];
    free(count);
    return;
  }
  /* each distinct bucket's values into a part of tmp (a k in the same bucket as the one before shares its part) */
  uint64_t *part[3];
  size_t fill[3] = { 0, 0, 0 }, size = 0;
  uint64_t *tmp = xmalloc(n * sizeof *tmp);
  for (unsigned j = 0; j < 3; j++) {
    if (j && bucket[j] == bucket[j - 1]) { part[j] = part[j - 1]; continue; }
    part[j] = tmp + size;
    size += count[bucket[j]];
  }
  for (size_t i = 0; i < n; i++) {
    size_t bi = (v[i] - lo) >> shift;
    if (bi == bucket[0]) part[0][fill[0]++] = v[i];
    else if (bi == bucket[1]) part[1][fill[1]++] = v[i];
    else if (bi == bucket[2]) part[2][fill[2]++] = v[i];
  }
  for (unsigned j = 0; j < 3; j++) {
    select_nth(part[j], count[bucket[j]], k[j] - before[j]);
    out[j] = part[j][k[j] - before[j]];
  }
  free(tmp);
  free(count);
}

static void stat_of(const struct view_row *r, struct view_stat *s) {
  memset(s, 0, sizeof *s);
  row_name(r, s->name, sizeof s->name);
  if (r->dim > VD_REASON && r->dim < VD_CR3) reason_name(r->reason, s->parent, sizeof s->parent);
  s->dim = r->dim;
  s->reason = r->reason;
  s->key = r->key;
  s->count = r->count;
  s->cycles = r->cycles;
  s->avg = r->timed ? r->cycles / r->timed : 0;       /* xenalyze's integer average */
  s->min = r->timed ? r->min : 0;
  s->max = r->max;
  if (r->timed > 1) {
    long double mean = (long double)r->cycles / (long double)r->timed;
    long double sumsq = r->sumsq_wide ? r->sumsq : (long double)r->sumsq_int;
    long double var = sumsq / (long double)r->timed - mean * mean;
    s->stddev = var > 0 ? (double)sqrtl(var) : 0;
  }
  if (!r->nsample) return;
  /* xenalyze's percentile(): the element N * p / 100 of the sorted sample */
  size_t n = r->nsample, k[3] = { n * 5 / 100, n * 50 / 100, n * 95 / 100 };
  uint64_t p[3];
  select_three(r->sample, n, r->min, r->max, k, p);   /* the sample's values are among the timed exits' */
  s->p5 = p[0];
  s->p50 = p[1];
  s->p95 = p[2];
}

static enum view_sort g_sort;   /* qsort has no context argument */

static int by_sort(const void *a, const void *b) {
  const struct view_stat *x = a, *y = b;
  uint64_t u = 0, v = 0;
  switch (g_sort) {
  case SORT_COUNT: u = x->count; v = y->count; break;
  case SORT_TIME: u = x->cycles; v = y->cycles; break;
  case SORT_AVG: u = x->avg; v = y->avg; break;
  default: break;
  }
  if (u != v) return u > v ? -1 : 1;                /* larger first */
  if (x->dim != y->dim) return x->dim < y->dim ? -1 : 1;
  if (x->reason != y->reason) return x->reason < y->reason ? -1 : 1;
  return x->key < y->key ? -1 : x->key > y->key;
}

static unsigned collect(const struct views *w, unsigned dim, unsigned reason, bool any_reason_of_breakdown,
                        struct view_stat *out, enum view_sort sort) {
  unsigned n = 0;
  for (uint32_t i = 0; i < w->nrows; i++) {
    const struct view_row *r = &w->rows[i];
    bool take = any_reason_of_breakdown ? (r->dim > VD_REASON && r->dim < VD_CR3 && r->reason == reason)
                                        : r->dim == dim;
    if (take) stat_of(r, &out[n++]);
  }
  g_sort = sort;
  qsort(out, n, sizeof *out, by_sort);
  return n;
}

unsigned views_stats(const struct views *w, unsigned dim, bool breakdowns, enum view_sort sort,
                     struct view_stat **out) {
  struct view_stat *all = xcalloc(w->nrows + 1, sizeof *all);
  unsigned n;
  if (dim != VD_REASON || !breakdowns) {
    n = collect(w, dim, 0, false, all, sort);
  } else {
    struct view_stat *reasons = xcalloc(w->nrows + 1, sizeof *reasons);
    unsigned nr = collect(w, VD_REASON, 0, false, reasons, sort);
    n = 0;
    for (unsigned i = 0; i < nr; i++) {
      all[n++] = reasons[i];
      n += collect(w, 0, reasons[i].reason, true, all + n, sort);
    }
    free(reasons);
  }
  *out = all;
  return n;
}

void views_append_all(const struct views *w, uint8_t source, unsigned top, struct view_stat **out, unsigned *n) {
  static const unsigned dims[] = { VD_REASON, VD_CR3, VD_VCPU };
  for (unsigned d = 0; d < 3; d++) {
    struct view_stat *s;
    unsigned k = views_stats(w, dims[d], dims[d] == VD_REASON, dims[d] == VD_CR3 ? SORT_TIME : SORT_REASON, &s);
    if (dims[d] == VD_CR3 && top && k > top) k = top;
    *out = xrealloc(*out, (*n + k + 1) * sizeof **out);
    for (unsigned i = 0; i < k; i++) {
      s[i].source = source;
      (*out)[(*n)++] = s[i];
    }
    free(s);
  }
}

/* ---- printing ---- */

static double secs(const struct views_print *o, uint64_t c) { return (double)c / (o->ghz * 1e9); }
static double pct(const struct views_print *o, uint64_t c) {
  return o->total_cycles ? 100.0 * (double)c / (double)o->total_cycles : 0.0;
}

static void table_row(FILE *f, const struct view_stat *s, const char *indent, const struct views_print *o) {
  char name[48];
  snprintf(name, sizeof name, "%s%s", indent, s->name);
  fprintf(f, " %-24s %9" PRIu64 " %10.6f %6.2f%% %9" PRIu64 " {%8" PRIu64 "|%8" PRIu64 "|%8" PRIu64 "} %9" PRIu64
          " %9.0f\n", name, s->count, secs(o, s->cycles), pct(o, s->cycles), s->avg, s->p5, s->p50, s->p95,
          s->max, s->stddev);
}

static void table_head(FILE *f, const char *first) {
  fprintf(f, " %-24s %9s %10s %7s %9s {%8s|%8s|%8s} %9s %9s\n", first, "count", "secs", "pct%", "avg cyc",
          "p5", "p50", "p95", "max", "stddev");
}

static void print_dim(FILE *f, const struct views *w, unsigned dim, const char *title, const struct views_print *o) {
  struct view_stat *s;
  enum view_sort sort = o->sort == SORT_REASON && dim == VD_CR3 ? SORT_TIME : o->sort;
  unsigned n = views_stats(w, dim, false, sort, &s);
  if (n > 1 || dim == VD_VCPU) {
    fprintf(f, "\n%s:\n", title);
    table_head(f, dim == VD_CR3 ? "CR3" : "vCPU");
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
    reason_name(cols[c], name, sizeof name);
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

void views_print_table(FILE *f, const struct views *w, const struct views_print *o) {
  struct view_stat *s;
  unsigned n = views_stats(w, VD_REASON, true, o->sort, &s);
  if (o->title) fprintf(f, "%s\n\n", o->title);
  table_head(f, "VM-EXIT");
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
    reason_name(b[i].reason, name, sizeof name);
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
    reason_name(b[i].reason, name, sizeof name);
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
    cJSON *obj = cJSON_AddObjectToObject(root, view_dim_name(dims[d]));
    for (unsigned i = 0; i < n && (!o->top || i < o->top); i++) cJSON_AddItemToObject(obj, s[i].name, stat_json(&s[i]));
    free(s);
  }
  if (w->interval) cJSON_AddItemToObject(root, "intervals", views_intervals_json(w, o));
  return root;
}
