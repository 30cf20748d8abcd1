/* Internals shared by the MMU's files (mmu.c, mmu_shadow.c, mmu_roots*.c,
** mmu_ept.c); nothing outside models/mmu includes this. */
#ifndef VMXSIM_MMU_INT_H
#define VMXSIM_MMU_INT_H

#include "mmu.h"
#include "pageset.h"
#include "spt.h"
#include "tlb.h"
#include "seg_memo.h"

#define MAX_ROOTS 4
#define MAX_PREV KNOB_PREV_ROOTS_MAX   /* the prev_roots knob's maximum */

/* A set of shadow roots for one address space (1 for 64-bit, 4 for PAE/32-bit). */
struct root_set {
  bool used;                    /* false: no roots (0 is a valid guest CR3) */
  uint64_t cr3;                 /* guest CR3 */
  uint32_t slot[MAX_ROOTS];
  uint64_t serial[MAX_ROOTS];
};

/* A touch whose pages all hit in the TLB changed nothing, so while the TLB
** stays as it was (its version) the same touch hits again: such touches are
** remembered per vCPU, by address (two ways per set). */
#define TOUCH_MEMO_BITS 8
#define TOUCH_MEMO (1u << TOUCH_MEMO_BITS)
struct touch_memo {
  uint64_t a, b, cr3;
  uint64_t version_pge;             /* the TLB's version << 1 | CR4.PGE */
};

struct mmu_vcpu {
  struct touch_memo memo[TOUCH_MEMO];
  unsigned memo_next;               /* which way of a full set is replaced */
  uint64_t roots_ok_gen;            /* pool generation at which cur was last found live; 0: to check */
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

/* The shadow walk's answers: a page found mapped all the way down from a
** root stays so while the pool is unchanged (its generation). */
#define PRESENT_MEMO_BITS 12
struct present_memo {
  uint64_t vpn, gen;
  uint32_t root;
};

struct mmu {
  bool ept;                        /* the policy's paging is EPT (read on every touch) */
  struct present_memo *present_memo;   /* [1 << PRESENT_MEMO_BITS], shadow paging */
  const struct policy *pol;
  const struct root_scheme *roots;
  unsigned paging, nvcpu, nroots, slevels, glevels;
  struct mmu_vcpu *v;
  struct spt_pool pool;
  struct pageset ept_map;          /* guest pages mapped in EPT: data pages (level 0) and page-table pages */
  uint64_t ept_next_gfn;           /* the frame the next first touch gets (mmu_ept.c) */
  bool ept_out_of_frames;          /* a first touch was given a frame past the guest's memory */
  const struct trace_event *guest_ev;   /* the guest event being replayed under EPT, or NULL */
  const struct trace_event *failed_ev;  /* guest_ev when ept_out_of_frames was set (mmu_failure_event) */
  uint64_t ept_tables;             /* EPT paging-structure pages allocated, the root included */
  uint64_t *ctr;                   /* the engine's counters */
  struct mmu_sink *sink;
  struct work *evict_work;         /* where evictions during a handler are charged */
  struct seg_memo *seg;            /* shadow paging (seg_memo.h); NULL otherwise */
};

static inline bool mmu_ept(const struct mmu *m) { return m->ept; }

/* mmu_roots.c */
const struct root_scheme *roots_scheme_for(const struct policy *p);
void roots_pin(struct mmu *m, struct root_set *r, int delta);
void roots_switch(struct mmu *m, const struct mmu_ctx *c, uint64_t cr3, bool exited, struct work *w);

static inline bool roots_live(const struct mmu *m, const struct root_set *r) {
  if (!r->used) return false;
  for (unsigned i = 0; i < m->nroots; i++)
    if (r->slot[i] == SPT_NONE || !m->pool.page[r->slot[i]].live || m->pool.page[r->slot[i]].serial != r->serial[i])
      return false;
  return true;
}

/* Roots are loaded lazily for the vCPU's current CR3 (KVM mmu_load on entry),
** e.g. for the initial CR3 of the trace: no exit, nothing charged. */
static inline void roots_ensure(struct mmu *m, const struct mmu_ctx *c) {
  struct mmu_vcpu *mv = &m->v[c->vcpu];
  if (mv->cur.cr3 == c->cr3) {
    /* roots found live stay so while the pool is unchanged (roots_switch and
    ** zaps of everything change cur and reset roots_ok_gen) */
    if (mv->roots_ok_gen == m->pool.gen) return;
    if (roots_live(m, &mv->cur)) { mv->roots_ok_gen = m->pool.gen; return; }
  }
  roots_switch(m, c, c->cr3, false, NULL);
}
/* mmu_roots_prev.c: unpins and forgets a vCPU's previous roots. */
void roots_drop_prev(struct mmu *m, struct mmu_vcpu *mv);

/* mmu.c: a touch without the segment memo (it replays compared touches with it) */
void mmu_touch_plain(struct mmu *m, const struct mmu_ctx *c, const struct trace_event *ev);

/* mmu_seg_use.c: the segment memo (seg_memo.h).  mmu_seg_touch is true when the touch
** was taken by a comparison with a record (nothing more to do for it); the
** touch is the segment's vCPU's (mmu_guest_event ends another's first). */
bool mmu_seg_touch(struct mmu *m, const struct mmu_ctx *c, const struct trace_event *ev);
void mmu_seg_count(struct mmu *m, uint32_t virt, uint32_t native);
void mmu_seg_end(struct mmu *m);

/* mmu_shadow.c */
/* Is va known to be mapped all the way down the current shadow tables? (a
** remembered answer: struct present_memo) */
static inline struct present_memo *shadow_present_memo(const struct mmu *m, uint32_t root, uint64_t vpn) {
  return &m->present_memo[((vpn ^ (uint64_t)root << 40) * 0x9e3779b97f4a7c15ull) >> (64 - PRESENT_MEMO_BITS)];
}
static inline unsigned shadow_root_index(const struct mmu *m, uint64_t va) {
  return m->nroots == 1 ? 0 : (unsigned)((va >> 30) & 3);
}
static inline bool shadow_known_present(const struct mmu *m, unsigned vcpu, uint64_t va) {
  uint32_t root = m->v[vcpu].cur.slot[shadow_root_index(m, va)];
  const struct present_memo *pm = shadow_present_memo(m, root, va >> 12);
  return pm->gen == m->pool.gen && pm->vpn == va >> 12 && pm->root == root && root != SPT_NONE;
}
void shadow_on_evict(void *arg, struct spt_pool *p, uint32_t slot);
/* Accounts for a shadow page about to be freed (counter, work, CR3 cache);
** true if the CR3 cache was cleared because of it. */
bool shadow_note_zap(struct mmu *m, const struct spt_page *pg, struct work *w);
void shadow_access(struct mmu *m, const struct mmu_ctx *c, uint64_t va, bool write);
void shadow_pt_write(struct mmu *m, const struct mmu_ctx *c, uint64_t va, unsigned level);
void shadow_invlpg(struct mmu *m, const struct mmu_ctx *c, uint64_t va);

/* mmu_ept.c */
void ept_load_root(struct mmu *m);
void ept_walk(struct mmu *m, const struct mmu_ctx *c, uint64_t va, bool write);

#endif
