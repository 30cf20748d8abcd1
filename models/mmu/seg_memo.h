/* The segment memo: whole passes of touches between two exits, remembered.
**
** Under shadow paging without VPID every VM exit drops the TLB's entries, so
** a loop that exits once a pass (lat_ctx: a CR3 write per context switch)
** refills the TLB the same way every pass.  A segment is the touches a vCPU
** makes between two MMU events that are not touches (a VM transition, a
** request such as a CR3 switch, a page-table write) or other events of the
** vCPU that may change what a touch does (an instruction, an INIT record).
** From the same start (the TLB's fingerprint, CR3, CR4.PGE, the shadow
** pool's generation and the current roots) the same touches have the same
** outcome: the misses they take (virtualization and native) and the TLB
** they leave; nothing else changes when no touch faults.
**
** A segment seen a second time from the same start is recorded; later ones
** are only compared with the record, touch by touch, and at the end its
** misses are counted and charged at once and its TLB is put back.  A touch
** that differs, or a segment that ends early, replays the touches already
** compared, so every count and cycle is the plain computation's.  A
** segment is one vCPU's: any event of another vCPU that reaches the MMU (a
** touch too) ends it first, as does any instruction or INIT record, so no
** other vCPU can change the pool (a fault) or be charged while one is
** compared or recorded (a native run, mark or system call adds only its own
** vCPU's native cycles); the vCPU's number is part of the start, and a
** record is only put back into that vCPU's TLB.  Memory: at most SEG_BYTES_MAX
** of TLB copies and SEG_TOUCHES_KEPT touches (4 MiB, in arrays with room
** for up to twice as many) per engine.
**
** The start is trusted by its 64-bit hash: two starts that differ and hash
** alike (about 2^-64 for a pair) would take each other's record.  The
** fingerprint is an XOR of entry hashes, so a collision could be built on
** purpose, but none comes by chance. */
#ifndef VMXSIM_SEG_MEMO_H
#define VMXSIM_SEG_MEMO_H

#include <stdbool.h>
#include <stdint.h>
#include "tlb.h"

#define SEG_SETS        128
#define SEG_WAYS        4
#define SEG_SEEN        4096          /* starts seen once, direct-mapped */
#define SEG_TOUCHES_MAX 4096          /* longer segments are not remembered */
#define SEG_BYTES_MAX   (8u << 20)    /* of TLB copies */
#define SEG_TOUCHES_KEPT (1u << 18)   /* touches in all the records (16 bytes each) */

struct seg_touch { uint64_t a; uint32_t b; uint32_t aux; };

struct seg {
  uint64_t key;                 /* the start; 0: an empty way */
  uint64_t used;                /* when last matched or recorded (LRU within the set) */
  struct seg_touch *t;
  uint32_t n, cap;
  uint64_t virt, native;        /* the TLB misses of its touches */
  struct tlb_snap end;          /* the TLB after them */
};

enum seg_mode {
  SEG_IDLE,                     /* at a boundary: the next touch starts a segment */
  SEG_MATCH,                    /* comparing with cur; the TLB is still as at the start */
  SEG_RECORD,                   /* replaying and recording into rec */
  SEG_OFF                       /* replaying, not recording, until the next boundary */
};

struct seg_memo {
  struct seg *way;              /* [SEG_SETS * SEG_WAYS] */
  uint64_t *seen;               /* [SEG_SEEN] */
  unsigned snaps, snaps_max;    /* TLB copies allocated, and the bound */
  uint64_t touches;             /* touches in the records kept */
  uint64_t clock;
  enum seg_mode mode;
  struct seg *cur;              /* SEG_MATCH: the record compared with */
  uint32_t i;                   /* SEG_MATCH: touches compared */
  struct seg rec;               /* SEG_RECORD: the segment so far */
  uint64_t gen, faults;         /* SEG_RECORD: the pool's generation and the shadow faults at the start */
  uint64_t applied, replayed;   /* segments taken whole from a record, and compared then replayed */
  uint64_t cr3;                 /* the segment's address space and CR4.PGE (a boundary may have changed the vCPU's) */
  bool pge;
  unsigned vcpu;                /* whose segment it is (SEG_MATCH, SEG_RECORD, SEG_OFF) */
};

/* NULL when a TLB this size would not fit SEG_BYTES_MAX a few times over. */
struct seg_memo *seg_create(const struct tlb *t);
void seg_destroy(struct seg_memo *s);
/* The record of key, or NULL. */
struct seg *seg_find(struct seg_memo *s, uint64_t key);
/* Whether a segment from key should be recorded: true the second time a
** start is seen (the first time it is only noted). */
bool seg_seen_before(struct seg_memo *s, uint64_t key);
/* Starts recording from key. */
void seg_record_start(struct seg_memo *s, uint64_t key, uint64_t gen, uint64_t faults);
/* Adds a touch to the recording; false when the segment is too long to keep. */
bool seg_record_touch(struct seg_memo *s, uint64_t a, uint32_t b, uint32_t aux);
/* The record the recording would replace, or NULL when it cannot be kept:
** every TLB that shares that record's copy must stop (tlb_unshare) before
** seg_record_keep. */
struct seg *seg_record_victim(struct seg_memo *s);
/* Keeps the recording in v (from seg_record_victim) with t, the recording
** vCPU's TLB, as it is now. */
void seg_record_keep(struct seg_memo *s, struct seg *v, struct tlb *t);

#endif
