/* Guest page-table geometry: which guest page-table pages a linear address
** goes through, and how shadow pages (KVM's "role": level and quadrant) map
** onto them, for 32-bit two-level, PAE and 64-bit four-level guests.
**
** Guest memory is not recorded: a guest page-table page is named by its
** owner (the CR3 of its address space, or 0 for the kernel half that all
** address spaces share, as Linux does), its level and the address bits above
** the range it maps.  Pure functions only.
*/
#ifndef VMXSIM_GPT_H
#define VMXSIM_GPT_H

#include <stdbool.h>
#include <stdint.h>

#define GPT_MAX_LEVELS 4
#define GPT_KERNEL_OWNER 0ull         /* owner of the shared kernel-half tables */

/* A guest page-table page: (owner, level, index of the range it maps); with
** level 0, a data page (gpt_data_key). */
struct gpt_key {
  uint64_t owner;      /* CR3 of the address space, or GPT_KERNEL_OWNER */
  uint64_t index;      /* linear address >> (bits mapped by one table at this level) */
  uint8_t  level;      /* 1 = page table ... 4 = PML4 (guest's own numbering); 0 = data */
};

/* One level of a shadow walk: the shadow page it reads and the entry in it. */
struct gpt_step {
  struct gpt_key gkey; /* guest page-table page this shadow page shadows */
  uint8_t  level;      /* shadow level (1 = leaf) */
  uint8_t  quadrant;   /* KVM role.quadrant: which part of a larger guest table */
  uint16_t entry;      /* index of the entry in the 512-entry shadow page */
};

/* Shadow levels walked for a translation (64: 4, PAE and 32-bit: 2 below the
** PAE root, which is not a shadow page) and guest levels the hypervisor reads
** on a fault (4, 3, 2). */
unsigned gpt_shadow_levels(unsigned paging);
unsigned gpt_guest_levels(unsigned paging);
/* Roots per address space: 1 for 64-bit; 4 for PAE/32-bit (one per GiB quadrant). */
unsigned gpt_roots(unsigned paging);

/* Fills steps[0..gpt_shadow_levels) from the root downwards for address va in
** the address space whose CR3 is cr3. */
void gpt_walk(unsigned paging, uint64_t cr3, uint64_t va, struct gpt_step *steps);
/* The root step for root number i (0..gpt_roots-1) of address space cr3. */
void gpt_root(unsigned paging, uint64_t cr3, unsigned i, struct gpt_step *step);
/* The guest page-table page holding the entry that maps va at guest level. */
struct gpt_key gpt_table_of(unsigned paging, uint64_t cr3, uint64_t va, unsigned level);
/* Kernel half: addresses every address space shares. */
bool gpt_is_kernel(unsigned paging, uint64_t va);
/* The data page holding va, named as a page-table page is but at level 0
** (owner, page number), so the two never meet: EPT gives each its guest frame
** on first touch (mmu_ept.c). */
struct gpt_key gpt_data_key(unsigned paging, uint64_t cr3, uint64_t va);
bool gpt_key_eq(const struct gpt_key *a, const struct gpt_key *b);
uint64_t gpt_key_hash(const struct gpt_key *k);

#endif
