/* A growable open-addressing set of nonzero 64-bit keys (see hset.h). */
#include "hset.h"
#include "models/alloc.h"

#include <stdlib.h>

void hset_init(struct hset *s) {
  s->cap = 1024;
  s->used = 0;
  s->key = xcalloc(s->cap, sizeof *s->key);
}

void hset_free(struct hset *s) {
  free(s->key);
  s->key = NULL;
  s->cap = s->used = 0;
}

static void grow(struct hset *s) {
  struct hset old = *s;
  s->cap *= 2;
  s->used = 0;
  s->key = xcalloc(s->cap, sizeof *s->key);
  for (uint64_t i = 0; i < old.cap; i++)
    if (old.key[i]) hset_add(s, old.key[i]);
  free(old.key);
}

bool hset_add(struct hset *s, uint64_t k) {
  if (!k) k = ~0ull;
  if (2 * (s->used + 1) > s->cap) grow(s);
  uint64_t i = hset_slot(k, s->cap);
  while (s->key[i] && s->key[i] != k) i = (i + 1) & (s->cap - 1);
  if (s->key[i]) return false;
  s->key[i] = k;
  s->used++;
  return true;
}

/* Backward-shift deletion: the keys after the hole in its cluster move back
** into it when the hole lies between their home slot and where they are, so
** that every key stays reachable from its home without tombstones. */
bool hset_remove(struct hset *s, uint64_t k) {
  if (!k) k = ~0ull;
  uint64_t mask = s->cap - 1, hole = hset_slot(k, s->cap);
  while (s->key[hole] && s->key[hole] != k) hole = (hole + 1) & mask;
  if (!s->key[hole]) return false;
  for (uint64_t j = (hole + 1) & mask; s->key[j]; j = (j + 1) & mask) {
    uint64_t home = hset_slot(s->key[j], s->cap);
    if (((j - home) & mask) >= ((j - hole) & mask)) {
      s->key[hole] = s->key[j];
      hole = j;
    }
  }
  s->key[hole] = 0;
  s->used--;
  return true;
}
