/* Views of a run's exits as rows: each row's statistics (percentiles from its
** sample, standard deviation), sorted (views.h; views.c keeps the rows,
** sim/present/views_print.c prints them). */
#include "views.h"
#include "sim/base/util.h"
#include "models/vmx/exit_reason.h"

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- rows as printed ---- */

void view_reason_name(unsigned reason, char *buf, size_t n) {
  const char *s = exit_reason_name(reason);
  if (s) snprintf(buf, n, "%s", s);
  else snprintf(buf, n, "reason %u", reason);
}

/* The names of the MSRs guests write and read most (SDM Vol. 4, "Model-Specific
** Registers", the architectural MSRs; the x2APIC registers, SDM Vol. 3A 11.12.1.2;
** KVM's paravirtual MSRs, Linux Documentation/virt/kvm/x86/msr.rst). */
static const struct { uint32_t msr; const char *name; } msr_names[] = {
  { 0x10, "IA32_TSC" },                 { 0x1b, "IA32_APIC_BASE" },        { 0x3a, "IA32_FEATURE_CONTROL" },
  { 0x3b, "IA32_TSC_ADJUST" },          { 0x48, "IA32_SPEC_CTRL" },        { 0x49, "IA32_PRED_CMD" },
  { 0x8b, "IA32_BIOS_SIGN_ID" },        { 0xe7, "IA32_MPERF" },            { 0xe8, "IA32_APERF" },
  { 0x10a, "IA32_ARCH_CAPABILITIES" },  { 0x174, "IA32_SYSENTER_CS" },     { 0x175, "IA32_SYSENTER_ESP" },
  { 0x176, "IA32_SYSENTER_EIP" },       { 0x1a0, "IA32_MISC_ENABLE" },     { 0x1d9, "IA32_DEBUGCTL" },
  { 0x277, "IA32_PAT" },                { 0x6e0, "IA32_TSC_DEADLINE" },    { 0x802, "x2APIC ID" },
  { 0x808, "x2APIC TPR" },              { 0x80b, "x2APIC EOI" },           { 0x80d, "x2APIC LDR" },
  { 0x80f, "x2APIC SIVR" },             { 0x830, "x2APIC ICR" },           { 0x832, "x2APIC LVT timer" },
  { 0x838, "x2APIC initial count" },    { 0x83e, "x2APIC divide config" }, { 0x83f, "x2APIC self IPI" },
  { 0xc0000080, "IA32_EFER" },          { 0xc0000081, "IA32_STAR" },       { 0xc0000082, "IA32_LSTAR" },
  { 0xc0000083, "IA32_CSTAR" },         { 0xc0000084, "IA32_FMASK" },      { 0xc0000100, "IA32_FS_BASE" },
  { 0xc0000101, "IA32_GS_BASE" },       { 0xc0000102, "IA32_KERNEL_GS_BASE" }, { 0xc0000103, "IA32_TSC_AUX" },
  { 0x11, "KVM wall clock" },           { 0x12, "KVM system time" },       { 0x4b564d00, "KVM wall clock" },
  { 0x4b564d01, "KVM system time" },    { 0x4b564d02, "KVM async PF" },    { 0x4b564d03, "KVM steal time" },
  { 0x4b564d04, "KVM PV EOI" },         { 0x4b564d05, "KVM poll control" },
};

/* The exceptions' mnemonics, vectors 0-31 (SDM Vol. 3A 6.3.1, Table 6-1). */
static const char *const exception_names[32] = {
  "#DE", "#DB", "NMI", "#BP", "#OF", "#BR", "#UD", "#NM", "#DF", "", "#TS", "#NP", "#SS", "#GP", "#PF", "",
  "#MF", "#AC", "#MC", "#XM", "#VE", "#CP", "", "", "", "", "", "", "#HV", "#VC", "#SX", "",
};

const char *view_key_label(unsigned dim, uint64_t key) {
  if (dim == VD_MSR) {
    for (size_t i = 0; i < sizeof msr_names / sizeof *msr_names; i++)
      if (msr_names[i].msr == key) return msr_names[i].name;
  } else if (dim == VD_VECTOR && key < 32 && exception_names[key][0]) {
    return exception_names[key];
  }
  return NULL;
}

static void row_name(const struct view_row *r, char *buf, size_t n) {
  uint64_t k = r->key;
  switch (r->dim) {
  case VD_REASON: view_reason_name(r->reason, buf, n); return;
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

/* xenalyze's percentile(): the element N * p / 100 of the sorted sample, for 5, 50 and 95 */
static void percentiles_of(const struct view_row *r, uint64_t p[3]) {
  size_t n = r->nsample, k[3] = { n * 5 / 100, n * 50 / 100, n * 95 / 100 };
  select_three(r->sample, n, r->min, r->max, k, p);   /* the sample's values are among the timed exits' */
}

static void stat_of(const struct view_row *r, struct view_stat *s) {
  memset(s, 0, sizeof *s);
  row_name(r, s->name, sizeof s->name);
  if (r->dim > VD_REASON && r->dim < VD_CR3) view_reason_name(r->reason, s->parent, sizeof s->parent);
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
  uint64_t p[3];
  if (r->pct_at == r->timed + 1) memcpy(p, r->pct, sizeof p);
  else percentiles_of(r, p);
  s->p5 = p[0];
  s->p50 = p[1];
  s->p95 = p[2];
}

/* ---- every row's percentiles at once ---- */

struct pct_job { struct views *w; uint32_t from, to; };

static void *pct_rows(void *arg) {
  struct pct_job *j = arg;
  for (uint32_t i = j->from; i < j->to; i++) {
    struct view_row *r = &j->w->rows[i];
    if (!r->nsample) continue;
    percentiles_of(r, r->pct);
    r->pct_at = r->timed + 1;
  }
  return NULL;
}

/* Below this many sampled exits in all, a second thread costs more than it saves. */
#define PCT_THREAD_MIN 100000

void views_percentiles(struct views *w) {
  uint64_t total = 0, half = 0;
  for (uint32_t i = 0; i < w->nrows; i++) total += w->rows[i].nsample;
  uint32_t mid = 0;                              /* the rows before mid hold about half the samples */
  for (; mid < w->nrows && half * 2 < total; mid++) half += w->rows[mid].nsample;
  struct pct_job first = { w, 0, mid }, second = { w, mid, w->nrows };
  pthread_t t;
  bool two = total >= PCT_THREAD_MIN && pthread_create(&t, NULL, pct_rows, &second) == 0;
  pct_rows(&first);
  if (two) pthread_join(t, NULL);
  else pct_rows(&second);
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
