/* A growable open-addressing set of nonzero 64-bit keys (linear probing):
** the scattered pages of the EPT mapped-page set (pageset.h). */
#ifndef VMXSIM_HSET_H
#define VMXSIM_HSET_H

#include <stdbool.h>
#include <stdint.h>

struct hset {
  uint64_t *key;       /* 0 = empty; callers' key 0 is stored as ~0 */
  uint64_t cap, used;
};

void hset_init(struct hset *s);
void hset_free(struct hset *s);
/* Adds k; returns true if it was not there before. */
bool hset_add(struct hset *s, uint64_t k);
/* Removes k; returns true if it was there. */
bool hset_remove(struct hset *s, uint64_t k);

static inline uint64_t hset_slot(uint64_t k, uint64_t cap) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  return k & (cap - 1);
}

/* Inline: the EPT walk asks it for every page of a TLB miss. */
static inline bool hset_has(const struct hset *s, uint64_t k) {
  if (!k) k = ~0ull;
  uint64_t i = hset_slot(k, s->cap);
  while (s->key[i] && s->key[i] != k) i = (i + 1) & (s->cap - 1);
  return s->key[i] != 0;
}

#endif
