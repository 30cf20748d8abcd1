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
#include <stddef.h>
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

/* What the TLB holds, as a hash kept up to date by every change (see
** tlb_fingerprint): per class of entry (global or not, valid since the last
** VM transition or dropped by it) the XOR of a hash of each valid entry's
** position and content, and the XOR of the round-robin ways.  Entries that
** are no longer valid are left out: they can never hit again, and the way
** replaced next does not depend on what a way holds. */
struct tlb_fp {
  uint64_t cls[2][2];    /* [global][dropped] */
  uint64_t next;
};

struct tlb_snap;
struct tlb {
  struct tlb_entry *e;   /* [sets * 4]: own_e, or a snapshot's entries while it is shared */
  uint32_t sets;
  uint8_t *next;         /* [sets] round-robin way: own_next, or the snapshot's */
  struct tlb_entry *own_e;
  uint8_t *own_next;
  const struct tlb_snap *shared;   /* the snapshot put back and not written since, or NULL */
  uint32_t gen_all;      /* flushes of everything (CR4.PGE toggle) */
  uint32_t gen_nonglobal;/* flushes of non-global entries (CR3 write, and every full flush) */
  uint32_t gen_vm;       /* VM transitions without VPID */
  uint64_t version;      /* bumped by every change, so a caller can tell the TLB is as it was */
  struct tlb_fp fp;
};

/* A copy of a TLB's state, to be put back later (models/mmu/seg_memo.h). */
struct tlb_snap {
  struct tlb_entry *e;
  uint8_t *next;
  uint32_t gen_all, gen_nonglobal, gen_vm;
  struct tlb_fp fp;
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

/* A hash of what the TLB holds and how it will replace: two TLBs with the
** same fingerprint answer every later sequence of accesses and flushes the
** same way (up to a 64-bit hash collision). */
uint64_t tlb_fingerprint(const struct tlb *t);
uint64_t tlb_fingerprint_scan(const struct tlb *t);   /* computed from the entries: the same value */
/* The state in s (allocated on first use) and back: a TLB put back from a
** snapshot behaves as the one the snapshot was taken of (its version still
** grows, so remembered touches are not taken for current).  It reads the
** snapshot's entries in place until it first changes one (copy on write):
** call tlb_unshare before the snapshot is changed or freed. */
void tlb_snap_take(const struct tlb *t, struct tlb_snap *s);
void tlb_snap_restore(struct tlb *t, const struct tlb_snap *s);
void tlb_unshare(struct tlb *t);
void tlb_snap_free(struct tlb_snap *s);
size_t tlb_bytes(const struct tlb *t);      /* the size of a snapshot's copy */

#endif
