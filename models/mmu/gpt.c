/* Guest page-table geometry for 32-bit, PAE and 64-bit guests (see gpt.h). */
#include "gpt.h"
#include "models/event.h"

unsigned gpt_shadow_levels(unsigned paging) { return paging == PAGING_64 ? 4 : 2; }
unsigned gpt_guest_levels(unsigned paging) { return paging == PAGING_64 ? 4 : paging == PAGING_PAE ? 3 : 2; }
unsigned gpt_roots(unsigned paging) { return paging == PAGING_64 ? 1 : 4; }

bool gpt_is_kernel(unsigned paging, uint64_t va) {
  /* Linux: 64-bit kernel half from 0xffff800000000000; 3G/1G split otherwise. */
  return paging == PAGING_64 ? va >= 0xffff800000000000ull : (va & 0xffffffffull) >= 0xc0000000ull;
}

static uint64_t owner_of(unsigned paging, uint64_t cr3, uint64_t va) {
  return gpt_is_kernel(paging, va) ? GPT_KERNEL_OWNER : cr3;
}

static uint64_t canon(unsigned paging, uint64_t va) {
  return paging == PAGING_64 ? va & 0xffffffffffffull : va & 0xffffffffull;
}

/* Bits of linear address mapped by one guest table at `level`. */
static unsigned span_bits(unsigned paging, unsigned level) {
  if (paging == PAGING_32) return level == 1 ? 22 : 32;      /* 1024-entry tables */
  return 12 + 9 * level;                                      /* 512-entry tables */
}

struct gpt_key gpt_table_of(unsigned paging, uint64_t cr3, uint64_t va, unsigned level) {
  unsigned top = gpt_guest_levels(paging);
  struct gpt_key k = { .level = (uint8_t)level };
  if (level >= top) {                  /* the root table: one per address space */
    k.owner = cr3;
    k.index = 0;
  } else {
    k.owner = owner_of(paging, cr3, va);
    k.index = canon(paging, va) >> span_bits(paging, level);
  }
  return k;
}

void gpt_walk(unsigned paging, uint64_t cr3, uint64_t va, struct gpt_step *s) {
  uint64_t c = canon(paging, va);
  if (paging == PAGING_64) {
    for (unsigned i = 0; i < 4; i++) {
      unsigned level = 4 - i;
      s[i].gkey = gpt_table_of(paging, cr3, va, level);
      s[i].level = (uint8_t)level;
      s[i].quadrant = 0;
      s[i].entry = (uint16_t)((c >> (12 + 9 * (level - 1))) & 511);
    }
    return;
  }
  /* PAE and 32-bit guests are shadowed with PAE tables below a 4-entry PAE
  ** root: shadow PDs map 1 GiB, shadow PTs 2 MiB.  A 32-bit guest PD (4 GiB)
  ** is shadowed by 4 pages (quadrant = va[31:30]) and a guest PT (4 MiB) by
  ** 2 (quadrant = va[21]), as KVM's role.quadrant does. */
  bool two_level = paging == PAGING_32;
  s[0].gkey = gpt_table_of(paging, cr3, va, 2);
  s[0].level = 2;
  s[0].quadrant = two_level ? (uint8_t)((c >> 30) & 3) : 0;
  s[0].entry = (uint16_t)((c >> 21) & 511);
  s[1].gkey = gpt_table_of(paging, cr3, va, 1);
  s[1].level = 1;
  s[1].quadrant = two_level ? (uint8_t)((c >> 21) & 1) : 0;
  s[1].entry = (uint16_t)((c >> 12) & 511);
}

/* The first step of gpt_walk's path, alone: a root switch needs no more, and
** the whole walk was a quarter of a switch's instructions.  test_mmu.c checks
** it against the walk for every paging mode. */
void gpt_root(unsigned paging, uint64_t cr3, unsigned i, struct gpt_step *step) {
  uint64_t va = paging == PAGING_64 ? 0 : (uint64_t)i << 30, c = canon(paging, va);
  unsigned level = paging == PAGING_64 ? 4 : 2;
  step->gkey = gpt_table_of(paging, cr3, va, level);
  step->level = (uint8_t)level;
  step->quadrant = paging == PAGING_32 ? (uint8_t)((c >> 30) & 3) : 0;
  step->entry = (uint16_t)((c >> (12 + 9 * (level - 1))) & 511);
}

uint64_t gpt_key_hash(const struct gpt_key *k) {
  uint64_t h = k->owner * 0x9e3779b97f4a7c15ull ^ (k->index + 0x632be59bd9b4e019ull) * 0xbf58476d1ce4e5b9ull;
  h ^= (uint64_t)k->level << 59;
  h ^= h >> 31;
  return h * 0x94d049bb133111ebull;
}

bool gpt_key_eq(const struct gpt_key *a, const struct gpt_key *b) {
  return a->owner == b->owner && a->index == b->index && a->level == b->level;
}

struct gpt_key gpt_data_key(unsigned paging, uint64_t cr3, uint64_t va) {
  return (struct gpt_key){ .owner = owner_of(paging, cr3, va), .index = canon(paging, va) >> 12, .level = 0 };
}
