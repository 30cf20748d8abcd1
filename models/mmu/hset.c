/* A growable open-addressing set of nonzero 64-bit keys. */
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

static uint64_t slot(uint64_t k, uint64_t cap) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  return k & (cap - 1);
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
  uint64_t i = slot(k, s->cap);
  while (s->key[i] && s->key[i] != k) i = (i + 1) & (s->cap - 1);
  if (s->key[i]) return false;
  s->key[i] = k;
  s->used++;
  return true;
}
