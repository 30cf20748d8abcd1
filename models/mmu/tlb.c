/* A per-vCPU set-associative TLB with ghost entries (see tlb.h). */
#include "tlb.h"
#include "models/alloc.h"

#include <stdlib.h>
#include <string.h>

#define WAYS 4

void tlb_init(struct tlb *t, unsigned entries) {
  memset(t, 0, sizeof *t);
  t->sets = 1;
  /* 64-bit product: in 32 bits it wraps to 0 from 2^29 sets on and the loop never ends */
  while ((uint64_t)t->sets * 2 * WAYS <= (entries ? entries : WAYS)) t->sets *= 2;
  t->e = xcalloc((size_t)t->sets * WAYS, sizeof *t->e);
  t->next = xcalloc(t->sets, 1);
}

void tlb_free(struct tlb *t) {
  free(t->e);
  free(t->next);
  t->e = NULL;
  t->next = NULL;
}

static uint32_t set_of(const struct tlb *t, uint64_t vpn) {
  return (uint32_t)((vpn ^ (vpn >> 11)) & (t->sets - 1));
}

static uint64_t gens_of(const struct tlb *t) { return (uint64_t)t->gen_all << 32 | t->gen_nonglobal; }

/* A global entry needs only gen_all current; any other both generations. */
static uint64_t gens_mask(bool global) { return global ? ~0ull << 32 : ~0ull; }

static bool natively_valid(const struct tlb *t, const struct tlb_entry *e) {
  uint64_t mask = gens_mask(e->flags & TLB_GLOBAL);
  return (e->flags & TLB_VALID) && (e->gens & mask) == (gens_of(t) & mask);
}

enum tlb_result tlb_access(struct tlb *t, uint64_t va, uint64_t space, bool global) {
  uint64_t vpn = va >> 12, tag = global ? 0 : space, mask = gens_mask(global), gens = gens_of(t) & mask;
  unsigned flags = TLB_VALID | (global ? TLB_GLOBAL : 0);
  uint32_t set = set_of(t, vpn);
  struct tlb_entry *e = &t->e[(size_t)set * WAYS];
  for (unsigned w = 0; w < WAYS; w++) {
    if (e[w].vpn != vpn || e[w].space != tag || e[w].flags != flags || (e[w].gens & mask) != gens) continue;
    if (e[w].gen_vm == t->gen_vm) return TLB_HIT;
    e[w].gen_vm = t->gen_vm;                /* dropped by a VM transition: natively a hit */
    t->version++;
    return TLB_MISS_VIRT;
  }
  t->version++;
  unsigned w = t->next[set];
  t->next[set] = (uint8_t)((w + 1) % WAYS);
  e[w] = (struct tlb_entry){ vpn, tag, gens_of(t), t->gen_vm, (uint8_t)flags };
  return TLB_MISS_NATIVE;
}

void tlb_invlpg(struct tlb *t, uint64_t va) {
  uint64_t vpn = va >> 12;
  struct tlb_entry *e = &t->e[(size_t)set_of(t, vpn) * WAYS];
  for (unsigned w = 0; w < WAYS; w++)
    if (e[w].vpn == vpn) e[w].flags &= (uint8_t)~TLB_VALID;
  t->version++;
}

void tlb_flush_nonglobal(struct tlb *t) { t->gen_nonglobal++; t->version++; }
void tlb_flush_all(struct tlb *t) { t->gen_all++; t->gen_nonglobal++; t->version++; }
void tlb_flush_vm(struct tlb *t) { t->gen_vm++; t->version++; }

void tlb_print(const struct tlb *t, FILE *f) {
  unsigned valid = 0, dropped = 0, global = 0;
  for (size_t i = 0; i < (size_t)t->sets * WAYS; i++) {
    const struct tlb_entry *e = &t->e[i];
    if (!natively_valid(t, e)) continue;
    if (e->gen_vm == t->gen_vm) { valid++; global += (e->flags & TLB_GLOBAL) != 0; } else dropped++;
  }
  fprintf(f, "TLB: %u entries (%u sets x %d ways), %u valid (%u global), %u dropped by VM transitions\n",
          t->sets * WAYS, t->sets, WAYS, valid, global, dropped);
}
