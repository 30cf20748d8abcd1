/* Run statistics: counts, cycles, exact percentiles, counters. */
#include "stats.h"
#include "sim/base/util.h"

#include <stdlib.h>
#include <string.h>

void stats_init(struct stats *s) { memset(s, 0, sizeof *s); }

void stats_free(struct stats *s) {
  for (unsigned k = 0; k < STAT_KEYS; k++) {
    free(s->row[k].hist.val);
    free(s->row[k].hist.cnt);
  }
  memset(s, 0, sizeof *s);
}

static uint32_t slot_of(uint64_t v, uint32_t cap) {
  v ^= v >> 33;
  v *= 0xff51afd7ed558ccdull;
  v ^= v >> 33;
  return (uint32_t)v & (cap - 1);
}

static void hist_insert(struct cost_hist *h, uint64_t v, uint64_t n);

static void hist_grow(struct cost_hist *h) {
  struct cost_hist old = *h;
  h->cap = old.cap ? old.cap * 2 : 16;
  h->used = 0;
  h->last = 0;
  h->val = xcalloc(h->cap, sizeof *h->val);
  h->cnt = xcalloc(h->cap, sizeof *h->cnt);
  for (uint32_t i = 0; i < old.cap; i++)
    if (old.cnt[i]) hist_insert(h, old.val[i], old.cnt[i]);
  free(old.val);
  free(old.cnt);
}

/* Distinct per-exit costs are few (sums of profile constants), so an exact
** table stays small; its size depends on the cost model, not the trace length. */
static void hist_insert(struct cost_hist *h, uint64_t v, uint64_t n) {
  if (h->used * 2 >= h->cap) hist_grow(h);
  uint32_t i = slot_of(v, h->cap);
  while (h->cnt[i] && h->val[i] != v) i = (i + 1) & (h->cap - 1);
  if (!h->cnt[i]) { h->val[i] = v; h->used++; }
  h->cnt[i] += n;
  h->last = i + 1;
}

/* One exit of cost v: the value inserted last is tested first, without the hash. */
static inline void hist_insert_one(struct cost_hist *h, uint64_t v) {
  if (h->last && h->val[h->last - 1] == v) h->cnt[h->last - 1]++;
  else hist_insert(h, v, 1);
}

static void row_add(struct stat_row *r, uint64_t cycles) {
  if (r->count == 0 || cycles < r->min) r->min = cycles;
  if (cycles > r->max) r->max = cycles;
  r->count++;
  r->cycles += cycles;
}

void stats_add_exit(struct stats *s, unsigned reason, unsigned key, uint64_t cycles) {
  row_add(&s->row[reason], cycles);
  if (key != reason) row_add(&s->row[key], cycles);
  hist_insert_one(&s->row[key].hist, cycles);
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* The tables a row's distribution is made of: its own and, for a reason
** with a breakdown, its breakdown rows'. */
static unsigned hists_of(const struct stats *s, unsigned key, const struct cost_hist **h) {
  unsigned n = 0;
  h[n++] = &s->row[key].hist;
  if (key < STAT_CR_BASE)
    for (unsigned k = STAT_CR_BASE; k < STAT_KEYS; k++)
      if (stat_key_parent(k) == key && s->row[k].hist.used) h[n++] = &s->row[k].hist;
  return n;
}

/* How many exits of the tables cost exactly v. */
static uint64_t count_of(const struct cost_hist *const *h, unsigned nh, uint64_t v) {
  uint64_t n = 0;
  for (unsigned t = 0; t < nh; t++) {
    if (!h[t]->cap) continue;
    uint32_t j = slot_of(v, h[t]->cap);
    while (h[t]->cnt[j] && h[t]->val[j] != v) j = (j + 1) & (h[t]->cap - 1);
    n += h[t]->cnt[j];
  }
  return n;
}

uint64_t stats_percentile(const struct stats *s, unsigned key, unsigned pct) {
  const struct stat_row *r = &s->row[key];
  if (r->count == 0) return 0;
  const struct cost_hist *h[STAT_KEYS];
  unsigned nh = hists_of(s, key, h);
  uint32_t total = 0;
  for (unsigned t = 0; t < nh; t++) total += h[t]->used;
  uint64_t *vals = xmalloc(total * sizeof *vals);
  uint32_t n = 0;
  for (unsigned t = 0; t < nh; t++)
    for (uint32_t i = 0; i < h[t]->cap; i++)
      if (h[t]->cnt[i]) vals[n++] = h[t]->val[i];
  qsort(vals, n, sizeof *vals, cmp_u64);
  /* nearest rank: the smallest value with at least ceil(p% of count) at or below it */
  uint64_t rank = (pct * r->count + 99) / 100;
  if (rank == 0) rank = 1;
  uint64_t seen = 0, result = vals[n - 1];
  for (uint32_t i = 0; i < n; i++) {
    if (i && vals[i] == vals[i - 1]) continue;     /* a value in several tables: counted once, all of it */
    seen += count_of(h, nh, vals[i]);
    if (seen >= rank) { result = vals[i]; break; }
  }
  free(vals);
  return result;
}
