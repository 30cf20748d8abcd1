/* The EPT mapped-page set: pages alone in a hash set, runs as ranges (see pageset.h). */
#include "pageset.h"
#include "models/alloc.h"

#include <stdlib.h>
#include <string.h>

void pageset_init(struct pageset *s) {
  memset(s, 0, sizeof *s);
  hset_init(&s->alone);
  s->root = PAGESET_NONE;
}

void pageset_free(struct pageset *s) {
  hset_free(&s->alone);
  free(s->range);
  s->range = NULL;
  s->nrange = s->range_cap = 0;
  s->root = PAGESET_NONE;
}

size_t pageset_bytes(const struct pageset *s) {
  return sizeof *s + s->alone.cap * sizeof *s->alone.key + s->range_cap * sizeof *s->range;
}

/* ---- the ranges: an AVL tree by (owner, level, lo) ---- */

/* <0, 0, >0 as range r starts before, at or after page k. */
static int range_cmp(const struct pageset_range *r, const struct gpt_key *k) {
  if (r->owner != k->owner) return r->owner < k->owner ? -1 : 1;
  if (r->level != k->level) return r->level < k->level ? -1 : 1;
  return r->lo < k->index ? -1 : r->lo > k->index;
}

static unsigned height(const struct pageset *s, uint32_t t) { return t == PAGESET_NONE ? 0 : s->range[t].height; }

static void set_height(struct pageset *s, uint32_t t) {
  unsigned l = height(s, s->range[t].left), r = height(s, s->range[t].right);
  s->range[t].height = (uint8_t)(1 + (l > r ? l : r));
}

static uint32_t rotate_right(struct pageset *s, uint32_t t) {
  uint32_t l = s->range[t].left;
  s->range[t].left = s->range[l].right;
  s->range[l].right = t;
  set_height(s, t);
  set_height(s, l);
  return l;
}

static uint32_t rotate_left(struct pageset *s, uint32_t t) {
  uint32_t r = s->range[t].right;
  s->range[t].right = s->range[r].left;
  s->range[r].left = t;
  set_height(s, t);
  set_height(s, r);
  return r;
}

static uint32_t rebalance(struct pageset *s, uint32_t t) {
  set_height(s, t);
  struct pageset_range *n = &s->range[t];
  int skew = (int)height(s, n->left) - (int)height(s, n->right);
  if (skew > 1) {
    if (height(s, s->range[n->left].left) < height(s, s->range[n->left].right)) n->left = rotate_left(s, n->left);
    return rotate_right(s, t);
  }
  if (skew < -1) {
    if (height(s, s->range[n->right].right) < height(s, s->range[n->right].left)) n->right = rotate_right(s, n->right);
    return rotate_left(s, t);
  }
  return t;
}

/* Inserts node n below t (the array does not move meanwhile); the depth is
** at most 1.44 log2 of the ranges, so the recursion stays shallow. */
static uint32_t insert_below(struct pageset *s, uint32_t t, uint32_t n) {
  if (t == PAGESET_NONE) return n;
  const struct gpt_key k = { .owner = s->range[n].owner, .index = s->range[n].lo, .level = s->range[n].level };
  if (range_cmp(&s->range[t], &k) > 0) s->range[t].left = insert_below(s, s->range[t].left, n);
  else s->range[t].right = insert_below(s, s->range[t].right, n);
  return rebalance(s, t);
}

static void range_insert(struct pageset *s, const struct gpt_key *k, uint64_t lo, uint64_t hi) {
  if (s->nrange == s->range_cap) {
    s->range_cap = s->range_cap ? 2 * s->range_cap : 16;
    s->range = xrealloc(s->range, s->range_cap * sizeof *s->range);
  }
  uint32_t n = s->nrange++;
  s->range[n] = (struct pageset_range){ .owner = k->owner, .lo = lo, .hi = hi, .left = PAGESET_NONE,
                                        .right = PAGESET_NONE, .level = k->level, .height = 1 };
  s->root = insert_below(s, s->root, n);
}

/* The range of k's owner and level that starts last at or before k, or NULL. */
static struct pageset_range *range_before(struct pageset *s, const struct gpt_key *k) {
  struct pageset_range *best = NULL;
  for (uint32_t t = s->root; t != PAGESET_NONE;) {
    struct pageset_range *r = &s->range[t];
    if (range_cmp(r, k) <= 0) {
      best = r;
      t = r->right;
    } else {
      t = r->left;
    }
  }
  return best && best->owner == k->owner && best->level == k->level ? best : NULL;
}

static struct pageset_seen *seen_of(struct pageset *s, const struct gpt_key *k) {
  uint64_t h = (k->owner * 0x9e3779b97f4a7c15ull) ^ ((k->index >> 9) + k->level) * 0xbf58476d1ce4e5b9ull;
  return &s->seen[h >> (64 - PAGESET_SEEN_BITS)];
}

/* ---- runs of new pages ---- */

/* The streak of k's owner and level, or the least recently used one, freed. */
static struct pageset_streak *streak_of(struct pageset *s, const struct gpt_key *k) {
  struct pageset_streak *lru = &s->streak[0];
  for (unsigned i = 0; i < PAGESET_STREAKS; i++) {
    struct pageset_streak *t = &s->streak[i];
    if (t->used && t->owner == k->owner && t->level == k->level) return t;
    if (t->used < lru->used) lru = t;
  }
  *lru = (struct pageset_streak){ .owner = k->owner, .level = k->level };
  return lru;
}

/* A new page that no range ends just before: kept alone, until it makes its
** streak PAGESET_RUN_MIN long; then the streak's pages become a range. */
static void add_new(struct pageset *s, const struct gpt_key *k) {
  struct pageset_streak *t = streak_of(s, k);
  if (!t->used || t->next != k->index) t->start = k->index;
  t->next = k->index + 1;
  t->used = ++s->clock;
  if (t->next - t->start < PAGESET_RUN_MIN) {
    hset_add(&s->alone, gpt_key_hash(k));
    return;
  }
  for (uint64_t i = t->start; i < k->index; i++) {
    const struct gpt_key page = { .owner = k->owner, .index = i, .level = k->level };
    hset_remove(&s->alone, gpt_key_hash(&page));
  }
  range_insert(s, k, t->start, t->next);
  t->used = 0;                 /* the range goes on by itself */
}

bool pageset_add(struct pageset *s, const struct gpt_key *k) {
  if (hset_has(&s->alone, gpt_key_hash(k))) return false;
  if (s->root != PAGESET_NONE) {
    struct pageset_seen *seen = seen_of(s, k);
    if (seen->owner == k->owner && seen->level == k->level && seen->lo <= k->index && k->index < seen->hi)
      return false;
    struct pageset_range *r = range_before(s, k);
    if (r && k->index < r->hi) {
      *seen = (struct pageset_seen){ .owner = r->owner, .lo = r->lo, .hi = r->hi, .level = r->level };
      return false;
    }
    if (r && k->index == r->hi) {     /* the range goes on */
      r->hi++;
      s->pages++;
      return true;
    }
  }
  add_new(s, k);
  s->pages++;
  return true;
}
