/* Views of a run's exits: rows by reason and breakdown key, time series, fed
** exit by exit (views.h); views_print.c turns the rows into statistics and prints them. */
#include "views.h"
#include "sim/base/util.h"
#include "models/vmx/exit_reason.h"

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

void views_init(struct views *w, int vcpu, uint64_t interval, bool interval_events) {
  memset(w, 0, sizeof *w);
  w->vcpu = vcpu;
  w->interval = interval;
  w->interval_events = interval_events;
}

void views_free(struct views *w) {
  for (uint32_t i = 0; i < w->nrows; i++)
    if (!w->rows[i].sample_arena) free(w->rows[i].sample);
  huge_arena_free(&w->samples);
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
  to->samples = (struct huge_arena){ 0 };      /* the copy's samples are its own, from malloc */
  for (uint32_t i = 0; i < to->nrows; i++) {
    to->rows[i].sample = copy_of(from->rows[i].sample, from->rows[i].cap * sizeof *from->rows[i].sample);
    to->rows[i].sample_arena = false;
  }
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
  r->min = UINT64_MAX;
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

/* A row's sample grows fourfold from 16 up to VIEW_SAMPLE, in the views'
** arena: a piece outgrown stays there unused (at most a third of the last),
** which costs less than malloc's realloc did, whose copies and fresh pages
** were most of a summary's page faults. */
static void sample_grow(struct views *w, struct view_row *r) {
  uint32_t cap = r->cap ? (r->cap * 4 > VIEW_SAMPLE ? VIEW_SAMPLE : r->cap * 4) : 16;
  uint64_t *s = huge_alloc(&w->samples, cap * sizeof *s);
  if (r->nsample) memcpy(s, r->sample, r->nsample * sizeof *s);
  if (!r->sample_arena) free(r->sample);
  r->sample = s;
  r->sample_arena = true;
  r->cap = cap;
}

/* Called only when the exit is sampled (past the first lap, a small share of
** a row's exits): kept out of line so that row_add, inlined at each of
** views_add's rows, stays short. */
__attribute__((noinline)) static void sample_store(struct views *w, struct view_row *r, uint64_t c) {
  uint64_t index = r->timed % VIEW_SAMPLE;
  if (index >= r->cap) sample_grow(w, r);
  r->sample[index] = c;
  if (index >= r->nsample) r->nsample = (uint32_t)index + 1;
  r->next_sample = next_sample_after(r->timed);
  /* Past the first lap the slots written are far apart: ask for the next one's
  ** line now, so that the store does not wait for it (a 10 % shorter replay of
  ** a recording, where most of the views' time went to these misses). */
  uint64_t next = r->next_sample % VIEW_SAMPLE;
  if (next < r->cap) __builtin_prefetch(&r->sample[next], 1);
}

/* The square that would not fit in the 64-bit sum, and every one after it:
** the sum goes on in long double, and the integer sum is left at UINT64_MAX,
** so that row_add's test sends each later square here. */
__attribute__((noinline)) static void sumsq_wide_add(struct view_row *r, uint64_t c) {
  if (!r->sumsq_wide) {
    r->sumsq_wide = true;
    r->sumsq = (long double)r->sumsq_int;
    r->sumsq_int = UINT64_MAX;
  }
  r->sumsq += (long double)c * (long double)c;
}

static inline __attribute__((always_inline)) void row_add(struct views *w, struct view_row *r, uint64_t c) {
  r->count++;
  if (!c) return;                 /* xenalyze counts it, but not in the average or the sample */
  if (r->timed == r->next_sample) {
    /* In the first lap every exit is kept, in order: where there is room, inline. */
    if (r->timed < r->cap && r->timed + 1 < VIEW_SAMPLE) {
      r->sample[r->timed] = c;
      r->nsample = (uint32_t)r->timed + 1;
      r->next_sample = r->timed + 1;
    } else {
      sample_store(w, r, c);
    }
  }
  if (c < r->min) r->min = c;   /* UINT64_MAX until the first timed exit */
  if (c > r->max) r->max = c;
  r->timed++;
  r->cycles += c;
  uint64_t sq = c * c;
  if (c <= UINT32_MAX && sq <= UINT64_MAX - r->sumsq_int) r->sumsq_int += sq;
  else sumsq_wide_add(r, c);
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

/* views_breakdown of a cause of this type, aux and operand. */
static inline unsigned breakdown_of(unsigned reason, unsigned type, unsigned aux, uint64_t a, uint64_t *key) {
  *key = 0;
  switch (type) {
  case EV_CR_WRITE: case EV_CR_READ: *key = aux * 2u + (type == EV_CR_WRITE); return VD_CR;
  case EV_CLTS: *key = CRKEY_CLTS; return VD_CR;
  case EV_LMSW: *key = CRKEY_LMSW; return VD_CR;
  case EV_DR_WRITE: case EV_DR_READ: *key = aux * 2u + (type == EV_DR_READ); return VD_DR;
  case EV_RDMSR: case EV_WRMSR: *key = a & 0xffffffffu; return VD_MSR;
  case EV_IO: *key = (a & 0xffff) | (uint64_t)(aux & IO_AUX_OUT) << 16; return VD_PORT;
  case EV_EXC: case EV_INTR: *key = a & 0xff; return VD_VECTOR;
  case EV_TOUCH:
    if ((reason & 0xffff) != EXIT_REASON_EXCEPTION_NMI) return VD_REASON;
    *key = 14;
    return VD_VECTOR;
  case EV_CPUID: *key = a & 0xffffffffu; return VD_LEAF;
  default: return VD_REASON;
  }
}

unsigned views_breakdown(unsigned reason, const struct trace_event *ev, uint64_t *key) {
  *key = 0;
  return ev ? breakdown_of(reason, ev->type, ev->aux, ev->a, key) : VD_REASON;
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
  uint64_t key;
  unsigned dim = views_breakdown(reason, cause, &key);
  views_add_keyed(w, vcpu, reason, dim, key, cr3, clock, cycles);
}

/* views_add_keyed, inlined into views_add_notes' loop (a call an exit showed in its profile). */
static inline __attribute__((always_inline)) void add_keyed(struct views *w, unsigned vcpu, unsigned reason,
                                                            unsigned dim, uint64_t key, uint64_t cr3, uint64_t clock,
                                                            uint64_t cycles) {
  if (w->vcpu >= 0 && vcpu != (unsigned)w->vcpu) return;
  reason &= 0xffff;
  w->exits++;
  w->cycles += cycles;
  row_add(w, reason_row(w, reason), cycles);
  if (dim != VD_REASON) row_add(w, hot_row(w, dim, reason, key), cycles);
  if (vcpu < TRACE_VCPU_MAX) {
    row_add(w, cr3_row(w, vcpu, cr3), cycles);
    row_add(w, direct_row(w, &w->vcpu_row[vcpu], VD_VCPU, 0, vcpu), cycles);
  } else {
    row_add(w, hot_row(w, VD_CR3, 0, cr3), cycles);
    row_add(w, row_of(w, VD_VCPU, 0, vcpu), cycles);
  }
  if (w->interval) bucket_add(w, w->interval_events ? w->events : clock, reason, cycles);
}

void views_add_keyed(struct views *w, unsigned vcpu, unsigned reason, unsigned dim, uint64_t key,
                     uint64_t cr3, uint64_t clock, uint64_t cycles) {
  add_keyed(w, vcpu, reason, dim, key, cr3, clock, cycles);
}

/* ---- a lean import's exits ---- */

void exit_note_reader_init(struct exit_note_reader *r, int domain, int vcpu) {
  memset(r, 0, sizeof *r);
  r->domain = domain;
  r->vcpu = vcpu;
  for (unsigned v = 0; v < TRACE_VCPU_MAX; v++) r->keep[v] = vcpu < 0 || (int)v == vcpu;
}

/* A vCPU named: kept by its domain and its vCPU there. */
static void note_vcpu(struct exit_note_reader *r, const struct exit_note *n) {
  int dom = (int)(n->clock >> 16), vid = (int)(n->clock & 0xffff);
  r->keep[n->vcpu] = (r->domain < 0 || dom == r->domain) && (r->vcpu < 0 || vid == r->vcpu);
}

void views_add_notes(struct views *w, struct exit_note_reader *r, const struct exit_note *notes, size_t n) {
  if (!n) return;                              /* notes may be NULL then: no pointer arithmetic on it */
  for (const struct exit_note *x = notes, *end = notes + n; x != end; x++) {
    unsigned v = x->vcpu;
    if (x->kind != EXIT_NOTE_EXIT) {
      if (x->kind == EXIT_NOTE_CR3) r->cr3[v] = x->clock;
      else note_vcpu(r, x);
      continue;
    }
    if (x->type == EV_CR_WRITE && x->aux == 3) r->cr3[v] = x->a;   /* the importer sends no other note for it */
    if (!r->keep[v]) continue;
    uint64_t key = 0;
    unsigned dim = x->type == EXIT_NOTE_NO_CAUSE ? VD_REASON : breakdown_of(x->reason, x->type, x->aux, x->a, &key);
    add_keyed(w, v, x->reason, dim, key, r->cr3[v], x->clock, x->cycles);
  }
}

/* The recorded side.  A measured exit is caused by its vCPU's preceding
** record, kept as a pointer into the block while it is fed and copied into
** w->last at the block's end (not copied at every record). */
static void feed_block(struct views *w, const struct trace_event *evs, size_t n) {
  if (!n) return;                              /* evs may be NULL then: no pointer arithmetic on it */
  const struct trace_event *cause[TRACE_VCPU_MAX];
  for (unsigned v = 0; v < w->nvcpus; v++) cause[v] = &w->last[v];
  for (const struct trace_event *ev = evs, *end = evs + n; ev != end; ev++) {
    unsigned v = ev->vcpu;
    for (; w->nvcpus <= v; w->nvcpus++) cause[w->nvcpus] = &w->last[w->nvcpus];
    w->clock[v] += ev->cycles;
    switch (ev->type) {
    case EV_RUN: case EV_MARK: continue;
    case EV_MEASURED:
      w->clock[v] += ev->a;
      views_add(w, v, MEASURED_REASON(ev->b), (ev->aux & MEASURED_ALONE) ? NULL : cause[v], w->cr3[v], w->clock[v],
                ev->a);
      continue;
    case EV_INIT: case EV_CR_WRITE:
      if (ev->aux == 3) w->cr3[v] = ev->a;
      break;
    default: break;
    }
    cause[v] = ev;
    w->events++;
  }
  for (unsigned v = 0; v < w->nvcpus; v++)
    if (cause[v] != &w->last[v]) w->last[v] = *cause[v];
}

void views_feed(struct views *w, const struct trace_event *ev) { feed_block(w, ev, 1); }

void views_feed_block(struct views *const *w, unsigned nw, const struct trace_event *evs, size_t n) {
  for (unsigned m = 0; m < nw; m++) feed_block(w[m], evs, n);
}

uint64_t views_elapsed(const struct views *w) {
  uint64_t m = 0;
  for (unsigned v = 0; v < w->nvcpus; v++)
    if (w->clock[v] > m) m = w->clock[v];
  return m;
}
