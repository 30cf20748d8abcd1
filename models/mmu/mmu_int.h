/* Internals shared by the MMU's files (mmu.c, mmu_shadow.c, mmu_roots*.c,
** mmu_ept.c); nothing outside models/mmu includes this. */
#ifndef VMXSIM_MMU_INT_H
#define VMXSIM_MMU_INT_H

#include "mmu.h"
#include "hset.h"
#include "spt.h"
#include "tlb.h"

#define MAX_ROOTS 4
#define MAX_PREV 8

/* A set of shadow roots for one address space (1 for 64-bit, 4 for PAE/32-bit). */
struct root_set {
  bool used;                    /* false: no roots (0 is a valid guest CR3) */
  uint64_t cr3;                 /* guest CR3 */
  uint32_t slot[MAX_ROOTS];
  uint64_t serial[MAX_ROOTS];
};

/* A touch whose pages all hit in the TLB changed nothing, so while the TLB
** stays as it was (its version) the same touch hits again: such touches are
** remembered per vCPU, by address. */
#define TOUCH_MEMO_BITS 7
#define TOUCH_MEMO (1u << TOUCH_MEMO_BITS)
struct touch_memo {
  uint64_t a, b, cr3, version;
  bool pge;
};

struct mmu_vcpu {
  struct touch_memo memo[TOUCH_MEMO];
  struct root_set cur;
  struct root_set prev[MAX_PREV];   /* previous roots, most recent first */
  unsigned nprev;
  struct tlb tlb;
};

/* How the hypervisor manages shadow roots across guest CR3 switches: one
** scheme per file (mmu_roots.c: shadowcache, the base every scheme shares;
** mmu_roots_nocache.c; mmu_roots_prev.c), chosen from the knobs by the table
** in mmu_roots.c.  Both hooks may be NULL. */
struct root_scheme {
  const char *name;
  /* A CR3 exit begins: e.g. nocache drops every shadow page. */
  void (*on_cr3_exit)(struct mmu *m, struct work *w);
  /* A CR3 exit finds cr3's roots without building them (the previous-roots
  ** cache); true on a hit, with the roots made current. */
  bool (*reuse)(struct mmu *m, struct mmu_vcpu *mv, uint64_t cr3);
};

struct mmu {
  const struct policy *pol;
  const struct root_scheme *roots;
  unsigned paging, nvcpu, nroots, slevels, glevels;
  struct mmu_vcpu *v;
  struct spt_pool pool;
  struct hset ept_map;             /* guest frames mapped in EPT */
  struct hset ept_tables;          /* EPT paging-structure pages allocated */
  uint64_t *ctr;                   /* the engine's counters */
  struct mmu_sink *sink;
  struct work *evict_work;         /* where evictions during a handler are charged */
};

static inline bool mmu_ept(const struct mmu *m) { return m->pol->paging == PAGING_EPT; }

/* mmu_roots.c */
const struct root_scheme *roots_scheme_for(const struct policy *p);
bool roots_live(const struct mmu *m, const struct root_set *r);
void roots_pin(struct mmu *m, struct root_set *r, int delta);
void roots_switch(struct mmu *m, const struct mmu_ctx *c, uint64_t cr3, bool exited, struct work *w);
void roots_ensure(struct mmu *m, const struct mmu_ctx *c);
/* mmu_roots_prev.c: unpins and forgets a vCPU's previous roots. */
void roots_drop_prev(struct mmu *m, struct mmu_vcpu *mv);

/* mmu_shadow.c */
void shadow_on_evict(void *arg, struct spt_pool *p, uint32_t slot);
/* Accounts for a shadow page about to be freed (counter, work, CR3 cache);
** true if the CR3 cache was cleared because of it. */
bool shadow_note_zap(struct mmu *m, const struct spt_page *pg, struct work *w);
void shadow_access(struct mmu *m, const struct mmu_ctx *c, uint64_t va, bool write);
void shadow_pt_write(struct mmu *m, const struct mmu_ctx *c, uint64_t va, unsigned level);
void shadow_invlpg(struct mmu *m, const struct mmu_ctx *c, uint64_t va);

/* mmu_ept.c */
void ept_walk(struct mmu *m, const struct mmu_ctx *c, uint64_t va, bool write);

#endif
