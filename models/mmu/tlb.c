/* A per-vCPU set-associative TLB with ghost entries (see tlb.h). */
#include "tlb.h"
#include "models/alloc.h"

#include <stdlib.h>
#include <string.h>

#define WAYS 4

static uint64_t next_hash(uint32_t set, unsigned way);

void tlb_init(struct tlb *t, unsigned entries) {
  memset(t, 0, sizeof *t);
  t->sets = 1;
  /* 64-bit product: in 32 bits it wraps to 0 from 2^29 sets on and the loop never ends */
  while ((uint64_t)t->sets * 2 * WAYS <= (entries ? entries : WAYS)) t->sets *= 2;
  t->e = t->own_e = xcalloc((size_t)t->sets * WAYS, sizeof *t->e);
  t->next = t->own_next = xcalloc(t->sets, 1);
  for (uint32_t s = 0; s < t->sets; s++) t->fp.next ^= next_hash(s, 0);
}

void tlb_free(struct tlb *t) {
  free(t->own_e);
  free(t->own_next);
  t->e = t->own_e = NULL;
  t->next = t->own_next = NULL;
  t->shared = NULL;
}

void tlb_unshare(struct tlb *t) {
  if (!t->shared) return;
  memcpy(t->own_e, t->e, (size_t)t->sets * WAYS * sizeof *t->e);
  memcpy(t->own_next, t->next, t->sets);
  t->e = t->own_e;
  t->next = t->own_next;
  t->shared = NULL;
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

/* ---- the fingerprint (struct tlb_fp) ---- */

static uint64_t mix64(uint64_t v) {
  v ^= v >> 31;
  v *= 0x7fb5d329728ea185ull;
  v ^= v >> 27;
  v *= 0x81dadef4bc2dd44dull;
  return v ^ (v >> 33);
}

/* Position and page hashed apart: folded into one word they could cancel
** (page V at position P against page V ^ d << 40 at P ^ d). */
static uint64_t entry_hash(size_t pos, const struct tlb_entry *e) {
  return mix64(mix64(mix64(mix64(e->vpn) ^ pos) ^ e->space) ^ e->flags);
}

static uint64_t next_hash(uint32_t set, unsigned way) { return mix64((uint64_t)set << 2 | way | 1ull << 62); }

/* Adds or removes (XOR) t's entry pos in fp, in the class it is in; an entry
** no longer valid is in none. */
static void fp_xor(const struct tlb *t, struct tlb_fp *fp, size_t pos) {
  const struct tlb_entry *e = &t->e[pos];
  if (!natively_valid(t, e)) return;
  fp->cls[(e->flags & TLB_GLOBAL) != 0][e->gen_vm != t->gen_vm] ^= entry_hash(pos, e);
}

static void fp_toggle(struct tlb *t, size_t pos) { fp_xor(t, &t->fp, pos); }

static uint64_t fp_value(const struct tlb_fp *fp) {
  uint64_t h = fp->next;
  for (int g = 0; g < 2; g++)
    for (int d = 0; d < 2; d++) h = mix64(h ^ fp->cls[g][d]);
  return h;
}

/* The fingerprint from the entries themselves, for the tests of the one kept up to date. */
uint64_t tlb_fingerprint_scan(const struct tlb *t) {
  struct tlb_fp fp = { 0 };
  for (uint32_t set = 0; set < t->sets; set++) {
    fp.next ^= next_hash(set, t->next[set]);
    for (unsigned w = 0; w < WAYS; w++) fp_xor(t, &fp, (size_t)set * WAYS + w);
  }
  return fp_value(&fp);
}

uint64_t tlb_fingerprint(const struct tlb *t) { return fp_value(&t->fp); }

size_t tlb_bytes(const struct tlb *t) { return (size_t)t->sets * (WAYS * sizeof *t->e + 1); }

void tlb_snap_take(const struct tlb *t, struct tlb_snap *s) {
  if (!s->e) {
    s->e = xmalloc((size_t)t->sets * WAYS * sizeof *s->e);
    s->next = xmalloc(t->sets);
  }
  memcpy(s->e, t->e, (size_t)t->sets * WAYS * sizeof *s->e);
  memcpy(s->next, t->next, t->sets);
  s->gen_all = t->gen_all;
  s->gen_nonglobal = t->gen_nonglobal;
  s->gen_vm = t->gen_vm;
  s->fp = t->fp;
}

void tlb_snap_restore(struct tlb *t, const struct tlb_snap *s) {
  t->e = s->e;                     /* read in place until written (tlb_unshare) */
  t->next = s->next;
  t->shared = s;
  t->gen_all = s->gen_all;         /* the entries' generations are relative to these */
  t->gen_nonglobal = s->gen_nonglobal;
  t->gen_vm = s->gen_vm;
  t->fp = s->fp;
  t->version++;
}

void tlb_snap_free(struct tlb_snap *s) {
  free(s->e);
  free(s->next);
  s->e = NULL;
  s->next = NULL;
}

/* Set `set`'s ways, to be written: a TLB that reads a snapshot in place copies it first. */
static struct tlb_entry *writable_set(struct tlb *t, uint32_t set) {
  tlb_unshare(t);
  return &t->e[(size_t)set * WAYS];
}

enum tlb_result tlb_access(struct tlb *t, uint64_t va, uint64_t space, bool global) {
  uint64_t vpn = va >> 12, tag = global ? 0 : space, mask = gens_mask(global), gens = gens_of(t) & mask;
  unsigned flags = TLB_VALID | (global ? TLB_GLOBAL : 0);
  uint32_t set = set_of(t, vpn);
  struct tlb_entry *e = &t->e[(size_t)set * WAYS];
  for (unsigned w = 0; w < WAYS; w++) {
    if (e[w].vpn != vpn || e[w].space != tag || e[w].flags != flags || (e[w].gens & mask) != gens) continue;
    if (e[w].gen_vm == t->gen_vm) return TLB_HIT;
    e = writable_set(t, set);
    uint64_t h = entry_hash((size_t)set * WAYS + w, &e[w]);
    t->fp.cls[global][1] ^= h;              /* from dropped to valid */
    t->fp.cls[global][0] ^= h;
    e[w].gen_vm = t->gen_vm;                /* dropped by a VM transition: natively a hit */
    t->version++;
    return TLB_MISS_VIRT;
  }
  t->version++;
  e = writable_set(t, set);
  unsigned w = t->next[set];
  size_t pos = (size_t)set * WAYS + w;
  fp_toggle(t, pos);                        /* the entry replaced leaves its class */
  t->fp.next ^= next_hash(set, w) ^ next_hash(set, (w + 1) % WAYS);
  t->next[set] = (uint8_t)((w + 1) % WAYS);
  e[w] = (struct tlb_entry){ vpn, tag, gens_of(t), t->gen_vm, (uint8_t)flags };
  fp_toggle(t, pos);
  return TLB_MISS_NATIVE;
}

void tlb_invlpg(struct tlb *t, uint64_t va) {
  uint64_t vpn = va >> 12;
  uint32_t set = set_of(t, vpn);
  struct tlb_entry *e = writable_set(t, set);
  size_t base = (size_t)set * WAYS;
  for (unsigned w = 0; w < WAYS; w++)
    if (e[w].vpn == vpn) {
      fp_toggle(t, base + w);
      e[w].flags &= (uint8_t)~TLB_VALID;
    }
  t->version++;
}

void tlb_flush_nonglobal(struct tlb *t) {
  t->gen_nonglobal++;
  t->version++;
  t->fp.cls[0][0] = t->fp.cls[0][1] = 0;   /* every non-global entry is invalid now */
}

void tlb_flush_all(struct tlb *t) {
  t->gen_all++;
  t->gen_nonglobal++;
  t->version++;
  memset(t->fp.cls, 0, sizeof t->fp.cls);
}

void tlb_flush_vm(struct tlb *t) {
  t->gen_vm++;
  t->version++;
  for (int g = 0; g < 2; g++) {            /* every valid entry is dropped now */
    t->fp.cls[g][1] ^= t->fp.cls[g][0];
    t->fp.cls[g][0] = 0;
  }
}

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
