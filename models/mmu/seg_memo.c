/* The segment memo's store: recorded segments by start, a set-associative
** table with LRU replacement (see seg_memo.h). */
#include "seg_memo.h"
#include "models/alloc.h"

#include <stdlib.h>
#include <string.h>

struct seg_memo *seg_create(const struct tlb *t) {
  size_t bytes = tlb_bytes(t);
  if (bytes * 16 > SEG_BYTES_MAX) return NULL;
  struct seg_memo *s = xcalloc(1, sizeof *s);
  s->way = xcalloc(SEG_SETS * SEG_WAYS, sizeof *s->way);
  s->seen = xcalloc(SEG_SEEN, sizeof *s->seen);
  s->snaps_max = (unsigned)(SEG_BYTES_MAX / bytes);
  if (s->snaps_max > SEG_SETS * SEG_WAYS) s->snaps_max = SEG_SETS * SEG_WAYS;
  return s;
}

void seg_destroy(struct seg_memo *s) {
  if (!s) return;
  for (unsigned i = 0; i < SEG_SETS * SEG_WAYS; i++) {
    free(s->way[i].t);
    tlb_snap_free(&s->way[i].end);
  }
  free(s->rec.t);
  free(s->way);
  free(s->seen);
  free(s);
}

static struct seg *set_of(struct seg_memo *s, uint64_t key) { return &s->way[(key >> 40) % SEG_SETS * SEG_WAYS]; }

struct seg *seg_find(struct seg_memo *s, uint64_t key) {
  struct seg *w = set_of(s, key);
  for (unsigned i = 0; i < SEG_WAYS; i++)
    if (w[i].key == key) {
      w[i].used = ++s->clock;
      return &w[i];
    }
  return NULL;
}

bool seg_seen_before(struct seg_memo *s, uint64_t key) {
  uint64_t *slot = &s->seen[(key >> 20) % SEG_SEEN];
  if (*slot == key) return true;
  *slot = key;
  return false;
}

void seg_record_start(struct seg_memo *s, uint64_t key, uint64_t gen, uint64_t faults) {
  s->rec.key = key;
  s->rec.n = 0;
  s->rec.virt = s->rec.native = 0;
  s->gen = gen;
  s->faults = faults;
}

bool seg_record_touch(struct seg_memo *s, uint64_t a, uint32_t b, uint32_t aux) {
  struct seg *r = &s->rec;
  if (r->n == SEG_TOUCHES_MAX) return false;
  if (r->n == r->cap) r->t = xrealloc(r->t, (r->cap = r->cap ? 2 * r->cap : 64) * sizeof *r->t);
  r->t[r->n++] = (struct seg_touch){ a, b, aux };
  return true;
}

/* The way a new record takes: an empty one while copies may still be
** allocated, else the least recently used one that has a copy. */
static struct seg *victim(struct seg_memo *s, uint64_t key) {
  struct seg *w = set_of(s, key), *v = NULL;
  for (unsigned i = 0; i < SEG_WAYS; i++) {
    bool has_copy = w[i].end.e != NULL;
    if (!has_copy && s->snaps == s->snaps_max) continue;
    if (!has_copy) return &w[i];
    if (!v || w[i].used < v->used) v = &w[i];
  }
  return v;
}

struct seg *seg_record_victim(struct seg_memo *s) {
  struct seg *v = victim(s, s->rec.key);
  if (!v) return NULL;                  /* every copy is taken and none is in this set */
  if (s->touches - v->n + s->rec.n > SEG_TOUCHES_KEPT) return NULL;   /* the touches' bound */
  return v;
}

void seg_record_keep(struct seg_memo *s, struct seg *v, struct tlb *t) {
  s->touches = s->touches - v->n + s->rec.n;
  if (!v->end.e) s->snaps++;
  struct seg_touch *spare = v->t;       /* the record's touches move in; the victim's array is reused */
  uint32_t spare_cap = v->cap;
  v->key = s->rec.key;
  v->t = s->rec.t;
  v->cap = s->rec.cap;
  v->n = s->rec.n;
  v->virt = s->rec.virt;
  v->native = s->rec.native;
  v->used = ++s->clock;
  tlb_snap_take(t, &v->end);
  s->rec.t = spare;
  s->rec.cap = spare_cap;
  s->rec.n = 0;
}
