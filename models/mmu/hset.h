/* A growable open-addressing set of nonzero 64-bit keys (EPT mappings). */
#ifndef VMXSIM_HSET_H
#define VMXSIM_HSET_H

#include <stdbool.h>
#include <stdint.h>

struct hset {
  uint64_t *key;       /* 0 = empty; callers map key 0 to another value */
  uint64_t cap, used;
};

void hset_init(struct hset *s);
void hset_free(struct hset *s);
/* Adds k; returns true if it was not there before. */
bool hset_add(struct hset *s, uint64_t k);

#endif
