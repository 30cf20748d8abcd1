/* A per-vCPU TLB: the right order of magnitude, not a cache simulator.
**
** Set-associative (4 ways, round-robin replacement within a set), entries
** tagged with the address space unless global (kernel pages with CR4.PGE).
** Since the trace's native cycles already include the misses the guest takes
** natively, the model separates two kinds of miss: a *native* miss (the
** entry was never there, or the guest itself flushed it: CR3 write, INVLPG,
** CR4.PGE toggle) and a *virtualization* miss (the entry was dropped by a VM
** exit/entry flush without VPID).  Dropped entries stay as "ghosts" so the
** two can be told apart.
*/
#ifndef VMXSIM_TLB_H
#define VMXSIM_TLB_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum tlb_result { TLB_HIT, TLB_MISS_NATIVE, TLB_MISS_VIRT };

/* Flushes are O(1): each bumps a generation, and an entry is valid only if
** the generations it was filled in are still current. */
#define TLB_VALID  0x1u  /* cleared by INVLPG */
#define TLB_GLOBAL 0x2u  /* survives CR3 writes (CR3 0 is an address space like any other) */
struct tlb_entry {
  uint64_t vpn;          /* virtual page number */
  uint64_t space;        /* CR3 of the address space; 0 for global entries */
  uint64_t gens;         /* gen_all << 32 | gen_nonglobal when it was filled: one compare */
  uint32_t gen_vm;
  uint8_t flags;         /* TLB_VALID, TLB_GLOBAL */
};

struct tlb {
  struct tlb_entry *e;   /* [sets * 4] */
  uint32_t sets;
  uint8_t *next;         /* [sets] round-robin way */
  uint32_t gen_all;      /* flushes of everything (CR4.PGE toggle) */
  uint32_t gen_nonglobal;/* flushes of non-global entries (CR3 write, and every full flush) */
  uint32_t gen_vm;       /* VM transitions without VPID */
  uint64_t version;      /* bumped by every change, so a caller can tell the TLB is as it was */
};

void tlb_init(struct tlb *t, unsigned entries);
void tlb_free(struct tlb *t);
/* Looks va up in address space `space`; on a miss fills the entry (global
** when `global`) and says which kind of miss it was. */
enum tlb_result tlb_access(struct tlb *t, uint64_t va, uint64_t space, bool global);
void tlb_invlpg(struct tlb *t, uint64_t va);
void tlb_flush_nonglobal(struct tlb *t);   /* MOV to CR3 without PCID */
void tlb_flush_all(struct tlb *t);         /* CR4.PGE toggle */
void tlb_flush_vm(struct tlb *t);          /* VM exit/entry without VPID: entries become ghosts */
void tlb_print(const struct tlb *t, FILE *f);

#endif
