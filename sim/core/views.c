/* Views of a run's exits: rows by reason and breakdown key, time series (views.h). */
#include "views.h"
#include "util.h"
#include "models/vmx/exit_reason.h"

#include <cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const dim_names[] = {
#define X(e, n) n,
  VIEW_DIMS(X)
#undef X
};
const char *view_dim_name(unsigned dim) { return dim < VD_COUNT ? dim_names[dim] : "?"; }

int view_sort_from_name(const char *s) {
  static const char *const names[] = { "reason", "count", "time", "avg" };
  for (int i = 0; i < 4; i++)
    if (strcmp(s, names[i]) == 0) return i;
  return -1;
}

/* Control-register keys: crN * 2 + write, then CLTS and LMSW. */
#define CRKEY_CLTS 0x100u
#define CRKEY_LMSW 0x101u

void views_init(struct views *w, int vcpu, uint64_t interval, bool interval_events) {
  memset(w, 0, sizeof *w);
  w->vcpu = vcpu;
  w->interval = interval;
  w->interval_events = interval_events;
}

void views_free(struct views *w) {
  for (uint32_t i = 0; i < w->nrows; i++) free(w->rows[i].sample);
  free(w->rows);
  free(w->index);
  free(w->buckets);
  free(w->bindex);
  memset(w, 0, sizeof *w);
}

static void *copy_of(const void *p, size_t n) {
  if (!p || !n) return NULL;
  void *q = xmalloc(n);
  memcpy(q, p, n);
  return q;
}

void views_copy(struct views *to, const struct views *from) {
  *to = *from;
  to->rows = copy_of(from->rows, from->cap * sizeof *from->rows);
  to->index = copy_of(from->index, from->icap * sizeof *from->index);
  to->buckets = copy_of(from->buckets, from->bcap * sizeof *from->buckets);
  to->bindex = copy_of(from->bindex, from->bicap * sizeof *from->bindex);
  for (uint32_t i = 0; i < to->nrows; i++)
    to->rows[i].sample = copy_of(from->rows[i].sample, from->rows[i].cap * sizeof *from->rows[i].sample);
}

/* ---- the row index ---- */

static uint64_t mix(uint64_t v) {
  v ^= v >> 33;
  v *= 0xff51afd7ed558ccdull;
  v ^= v >> 33;
  return v;
}

static uint64_t row_hash(unsigned dim, unsigned reason, uint64_t key) {
  return mix(key ^ mix((uint64_t)dim << 16 | reason));
}

static void index_rebuild(struct views *w) {
  free(w->index);
  w->icap = w->icap ? w->icap * 2 : 64;
  w->index = xcalloc(w->icap, sizeof *w->index);
  for (uint32_t i = 0; i < w->nrows; i++) {
    const struct view_row *r = &w->rows[i];
    uint32_t s = (uint32_t)row_hash(r->dim, r->reason, r->key) & (w->icap - 1);
    while (w->index[s]) s = (s + 1) & (w->icap - 1);
    w->index[s] = i + 1;
  }
}

static struct view_row *row_of(struct views *w, unsigned dim, unsigned reason, uint64_t key) {
  if ((w->nrows + 1) * 2 > w->icap) index_rebuild(w);
  uint32_t s = (uint32_t)row_hash(dim, reason, key) & (w->icap - 1);
  for (; w->index[s]; s = (s + 1) & (w->icap - 1)) {
    struct view_row *r = &w->rows[w->index[s] - 1];
    if (r->dim == dim && r->reason == reason && r->key == key) return r;
  }
  if (w->nrows == w->cap) w->rows = xrealloc(w->rows, (w->cap = w->cap ? 2 * w->cap : 32) * sizeof *w->rows);
  struct view_row *r = &w->rows[w->nrows];
  memset(r, 0, sizeof *r);
  r->dim = (uint8_t)dim;
  r->reason = (uint16_t)reason;
  r->key = key;
  w->index[s] = ++w->nrows;
  return r;
}

/* xenalyze's even sample (update_summary): while the row has fewer exits than
** the sample size every exit is kept; lap L (L = timed / VIEW_SAMPLE + 1) then
** overwrites the slots i with (i - L/3) % L == 0, that is L/3, L/3 + L, ...
** The next such timed value is kept in the row, so an exit that is not
** sampled costs one comparison. */
static uint64_t next_sample_after(uint64_t timed) {
  uint64_t lap = timed / VIEW_SAMPLE + 1, index = timed % VIEW_SAMPLE;
  if (index + lap < VIEW_SAMPLE) return timed + lap;
  uint64_t next = lap + 1;                        /* the first slot of the next lap */
  if (next / 3 >= VIEW_SAMPLE) return UINT64_MAX; /* none in this lap or any later one */
  return lap * VIEW_SAMPLE + next / 3;
}

/* Called only when the exit is sampled (past the first lap, a small share of
** a row's exits): kept out of line so that row_add, inlined at each of
** views_add's rows, stays short. */
__attribute__((noinline)) static void sample_store(struct view_row *r, uint64_t c) {
  uint64_t index = r->timed % VIEW_SAMPLE;
  if (index >= r->cap) {
    r->cap = r->cap ? (r->cap * 2 > VIEW_SAMPLE ? VIEW_SAMPLE : r->cap * 2) : 16;
    r->sample = xrealloc(r->sample, r->cap * sizeof *r->sample);
  }
  r->sample[index] = c;
  if (index >= r->nsample) r->nsample = (uint32_t)index + 1;
  r->next_sample = next_sample_after(r->timed);
  /* Past the first lap the slots written are far apart: ask for the next one's
  ** line now, so that the store does not wait for it (a 10 % shorter replay of
  ** a recording, where most of the views' time went to these misses). */
  uint64_t next = r->next_sample % VIEW_SAMPLE;
  if (next < r->cap) __builtin_prefetch(&r->sample[next], 1);
}

static inline __attribute__((always_inline)) void row_add(struct view_row *r, uint64_t c) {
  r->count++;
  if (!c) return;                 /* xenalyze counts it, but not in the average or the sample */
  if (r->timed == r->next_sample) sample_store(r, c);
  if (r->timed == 0 || c < r->min) r->min = c;
  if (c > r->max) r->max = c;
  r->timed++;
  r->cycles += c;
  if (!r->sumsq_wide) {
    uint64_t sq = c * c;
    if (c <= UINT32_MAX && sq <= UINT64_MAX - r->sumsq_int) { r->sumsq_int += sq; return; }
    r->sumsq_wide = true;
    r->sumsq = (long double)r->sumsq_int;
  }
  r->sumsq += (long double)c * (long double)c;
}

/* The rows an exit always adds to, through their direct tables. */
static struct view_row *direct_row(struct views *w, uint32_t *slot, unsigned dim, unsigned reason, uint64_t key) {
  if (*slot) {
    struct view_row *r = &w->rows[*slot - 1];
    if (r->key == key) return r;
  }
  struct view_row *r = row_of(w, dim, reason, key);
  *slot = (uint32_t)(r - w->rows) + 1;
  return r;
}

/* The hot table's slot: one multiply, its top bits (Fibonacci hashing), as the
** table is looked up on every exit and row_hash's two rounds showed in profiles;
** the keys (CR3 pages, MSR indexes, ports, leaves) differ in middle bits, which
** the multiply carries up. */
static unsigned hot_slot(unsigned dim, unsigned reason, uint64_t key) {
  uint64_t h = (key ^ ((uint64_t)dim << 56 | (uint64_t)reason << 40)) * 0x9e3779b97f4a7c15ull;
  return (unsigned)(h >> 56) & (VIEW_HOT - 1);
}

/* Breakdown and CR3 rows: a reason's breakdown cycles through a few keys
** (CR3 and CR4 writes, three MSRs, four CPUID leaves), and the address spaces
** through a few CR3 values, so a small table keyed by hash holds them nearly
** always; a miss, or a slot another row took, goes through the index. */
static struct view_row *hot_row(struct views *w, unsigned dim, unsigned reason, uint64_t key) {
  uint32_t *slot = &w->hot[hot_slot(dim, reason, key)];
  if (*slot) {
    struct view_row *r = &w->rows[*slot - 1];
    if (r->key == key && r->dim == dim && r->reason == reason) return r;
  }
  struct view_row *r = row_of(w, dim, reason, key);
  *slot = (uint32_t)(r - w->rows) + 1;
  return r;
}

/* A vCPU's address-space row: its CR3 changes far less often than it exits,
** so the row of its last CR3 is kept per vCPU. */
static struct view_row *cr3_row(struct views *w, unsigned vcpu, uint64_t cr3) {
  uint32_t slot = w->cr3_row[vcpu];
  if (slot && w->rows[slot - 1].key == cr3) return &w->rows[slot - 1];
  struct view_row *r = hot_row(w, VD_CR3, 0, cr3);
  w->cr3_row[vcpu] = (uint32_t)(r - w->rows) + 1;
  return r;
}

static struct view_row *reason_row(struct views *w, unsigned reason) {
  if (reason >= VIEW_DIRECT_REASONS) return row_of(w, VD_REASON, reason, reason);
  return direct_row(w, &w->reason_row[reason], VD_REASON, reason, reason);
}

/* ---- what an exit is broken down by ---- */

static bool breakdown_of(unsigned reason, const struct trace_event *ev, unsigned *dim, uint64_t *key) {
  switch (ev->type) {
  case EV_CR_WRITE: case EV_CR_READ: *dim = VD_CR; *key = ev->aux * 2u + (ev->type == EV_CR_WRITE); return true;
  case EV_CLTS: *dim = VD_CR; *key = CRKEY_CLTS; return true;
  case EV_LMSW: *dim = VD_CR; *key = CRKEY_LMSW; return true;
  case EV_DR_WRITE: case EV_DR_READ: *dim = VD_DR; *key = ev->aux * 2u + (ev->type == EV_DR_READ); return true;
  case EV_RDMSR: case EV_WRMSR: *dim = VD_MSR; *key = ev->a & 0xffffffffu; return true;
  case EV_IO: *dim = VD_PORT; *key = (ev->a & 0xffff) | (uint64_t)(ev->aux & IO_AUX_OUT) << 16; return true;
  case EV_EXC: case EV_INTR: *dim = VD_VECTOR; *key = ev->a & 0xff; return true;
  case EV_TOUCH: *dim = VD_VECTOR; *key = 14; return reason == EXIT_REASON_EXCEPTION_NMI;
  case EV_CPUID: *dim = VD_LEAF; *key = ev->a & 0xffffffffu; return true;
  default: return false;
  }
}

static void bucket_add(struct views *w, uint64_t when, unsigned reason, uint64_t cycles) {
  uint64_t index = when / w->interval;
  if ((w->nbuckets + 1) * 2 > w->bicap) {
    free(w->bindex);
    w->bicap = w->bicap ? w->bicap * 2 : 256;
    w->bindex = xcalloc(w->bicap, sizeof *w->bindex);
    for (uint32_t i = 0; i < w->nbuckets; i++) {
      uint32_t s = (uint32_t)row_hash(0, w->buckets[i].reason, w->buckets[i].index) & (w->bicap - 1);
      while (w->bindex[s]) s = (s + 1) & (w->bicap - 1);
      w->bindex[s] = i + 1;
    }
  }
  uint32_t s = (uint32_t)row_hash(0, reason, index) & (w->bicap - 1);
  for (; w->bindex[s]; s = (s + 1) & (w->bicap - 1)) {
    struct view_bucket *b = &w->buckets[w->bindex[s] - 1];
    if (b->index == index && b->reason == reason) { b->count++; b->cycles += cycles; return; }
  }
  if (w->nbuckets == w->bcap) w->buckets = xrealloc(w->buckets, (w->bcap = w->bcap ? 2 * w->bcap : 64) * sizeof *w->buckets);
  w->buckets[w->nbuckets] = (struct view_bucket){ index, (uint16_t)reason, 1, cycles };
  w->bindex[s] = ++w->nbuckets;
}

void views_add(struct views *w, unsigned vcpu, unsigned reason, const struct trace_event *cause,
               uint64_t cr3, uint64_t clock, uint64_t cycles) {
  if (w->vcpu >= 0 && vcpu != (unsigned)w->vcpu) return;
  reason &= 0xffff;
  w->exits++;
  w->cycles += cycles;
  row_add(reason_row(w, reason), cycles);
  unsigned dim;
  uint64_t key;
  if (cause && breakdown_of(reason, cause, &dim, &key)) row_add(hot_row(w, dim, reason, key), cycles);
  if (vcpu < TRACE_VCPU_MAX) {
    row_add(cr3_row(w, vcpu, cr3), cycles);
    row_add(direct_row(w, &w->vcpu_row[vcpu], VD_VCPU, 0, vcpu), cycles);
  } else {
    row_add(hot_row(w, VD_CR3, 0, cr3), cycles);
    row_add(row_of(w, VD_VCPU, 0, vcpu), cycles);
  }
  if (w->interval) bucket_add(w, w->interval_events ? w->events : clock, reason, cycles);
}

void views_feed(struct views *w, const struct trace_event *ev) {
  unsigned v = ev->vcpu;
  if (v >= w->nvcpus) w->nvcpus = v + 1;
  w->clock[v] += ev->cycles;
  switch (ev->type) {
  case EV_RUN: case EV_MARK: return;
  case EV_MEASURED:
    w->clock[v] += ev->a;
    views_add(w, v, MEASURED_REASON(ev->b), (ev->aux & MEASURED_ALONE) ? NULL : &w->last[v], w->cr3[v],
              w->clock[v], ev->a);
    return;
  case EV_INIT: case EV_CR_WRITE:
    if (ev->aux == 3) w->cr3[v] = ev->a;
    break;
  default: break;
  }
  w->last[v] = *ev;
  w->events++;
}

void views_feed_block(struct views *const *w, unsigned nw, const struct trace_event *evs, size_t n) {
  for (unsigned m = 0; m < nw; m++)
    for (size_t i = 0; i < n; i++) views_feed(w[m], &evs[i]);
}

uint64_t views_elapsed(const struct views *w) {
  uint64_t m = 0;
  for (unsigned v = 0; v < w->nvcpus; v++)
    if (w->clock[v] > m) m = w->clock[v];
  return m;
}

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
  s->min = r->min;
  s->max = r->max;
  if (r->timed > 1) {
    long double mean = (long double)r->cycles / (long double)r->timed;
    long double sumsq = r->sumsq_wide ? r->sumsq : (long double)r->sumsq_int;
    long double var = sumsq / (long double)r->timed - mean * mean;
    s->stddev = var > 0 ? (double)sqrtl(var) : 0;
  }
  if (!r->nsample) return;
  uint64_t *v = xmalloc(r->nsample * sizeof *v);
  memcpy(v, r->sample, r->nsample * sizeof *v);
  /* xenalyze's percentile(): the element N * p / 100 of the sorted sample;
  ** each selection leaves the larger elements after it for the next */
  size_t n = r->nsample, k5 = n * 5 / 100, k50 = n * 50 / 100, k95 = n * 95 / 100;
  select_nth(v, n, k5);
  select_nth(v + k5, n - k5, k50 - k5);
  select_nth(v + k50, n - k50, k95 - k50);
  s->p5 = v[k5];
  s->p50 = v[k50];
  s->p95 = v[k95];
  free(v);
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
