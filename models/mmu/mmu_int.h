/* Internals shared by the MMU's files (mmu.c, mmu_shadow.c, mmu_roots*.c,
** mmu_ept.c, mmu_seg_use.c); nothing outside models/mmu includes this. */
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
  /* shadow paging: the roots (mmu_roots*.c) */
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

/* Shadow paging's state (mmu_shadow.c, mmu_roots*.c; the roots of each vCPU
** are in struct mmu_vcpu). */
struct shadow_state {
  struct present_memo *present_memo;   /* [1 << PRESENT_MEMO_BITS] */
  const struct root_scheme *roots;
  unsigned nroots, slevels;
  struct spt_pool pool;
  struct work *evict_work;         /* where evictions during a handler are charged */
  /* The caching KVM's bookkeeping is priced (reverse map, page hash, object
  ** caches, write protection: Linux 2.6.20 drivers/kvm/mmu.c); the
  ** discarding KVM (r4204) had none of it. */
  bool caching;
};

/* EPT's state (mmu_ept.c). */
struct ept_state {
  struct pageset map;              /* guest pages mapped: data pages (level 0) and page-table pages */
  uint64_t next_gfn;               /* the frame the next first touch gets */
  bool out_of_frames;              /* a first touch was given a frame past the guest's memory */
  uint64_t tables;                 /* EPT paging-structure pages allocated, the root included */
};

/* A paging mode: how the hypervisor makes the guest's linear addresses
** translate, by shadow tables it keeps in step with the guest's
** (mmu_shadow.c) or by a second level of tables the processor walks
** (mmu_ept.c).  One const instance per file, chosen once by mmu_create from
** the paging knob through the table in mmu.c.  Hooks marked "NULL:" may be
** NULL. */
struct paging_ops {
  const char *name;                /* the paging knob's value */
  struct paging_vmx vmx;           /* what the VMCS gets (mmu.h) */
  /* the segment memo applies (seg_memo.h): a segment's start is the shadow
  ** roots and pool, so only for a mode with them */
  bool seg_memo;
  void (*init)(struct mmu *m);     /* sets up the mode's state */
  void (*destroy)(struct mmu *m);
  /* The fewest shadow pages a policy can run with (mmu_min_pool); NULL: 0. */
  unsigned (*min_pool)(const struct policy *p, unsigned paging, unsigned nvcpu);
  /* Before a guest memory action, makes the vCPU's translation current
  ** (shadow paging: the roots, loaded lazily); NULL: nothing to do. */
  void (*prepare)(struct mmu *m, const struct mmu_ctx *c);
  /* A TLB miss on va: the mode's walk, which may fault (through the sink). */
  void (*miss)(struct mmu *m, const struct mmu_ctx *c, uint64_t va, bool write);
  /* What a TLB miss costs the guest beyond the trace's own cycles (which
  ** hold the misses it took natively): one that only a VM-transition flush
  ** caused, and any other (MMU_NO_PRICE: nothing). */
  enum profile_param miss_virt_price, miss_native_price;
  /* A guest write to a page-table entry; NULL: the guest's tables are not write-protected. */
  void (*pt_write)(struct mmu *m, const struct mmu_ctx *c, uint64_t va, unsigned level);
  /* The mode's part of a CR3 switch, after the TLB's; NULL: none. */
  void (*cr3_switch)(struct mmu *m, const struct mmu_ctx *c, uint64_t cr3, bool exited, struct work *w);
  /* A handler's INVLPG of va, after the TLB's; NULL: none. */
  void (*invlpg)(struct mmu *m, const struct mmu_ctx *c, uint64_t va);
  /* A handler's flush of every translation (a paging bit of CR4 changed),
  ** after the TLB's; NULL: none. */
  void (*flush_all)(struct mmu *m, struct work *w);
  /* The fault of an access to a guest-physical page the hypervisor never maps. */
  struct mmu_fault (*fault)(uint64_t gla, uint64_t gpa, bool write);
  /* Why the replay so far cannot stand for a real guest, or NULL; NULL: never. */
  const char *(*failure)(const struct mmu *m);
  /* For the REPL: the mode's state, and what it says about itself (mmu.h). */
  void (*print)(const struct mmu *m, FILE *f);
  const char *(*describe)(enum mmu_topic t, uint64_t arg);
};

/* A miss that costs nothing beyond the trace's own cycles (struct paging_ops). */
#define MMU_NO_PRICE PP_COUNT

struct mmu {
  const struct paging_ops *ops;    /* the paging mode */
  struct seg_memo *seg;            /* the segment memo (seg_memo.h) when the mode has one, else NULL */
  const struct policy *pol;
  unsigned paging, nvcpu, glevels;
  struct mmu_vcpu *v;
  struct shadow_state sh;          /* shadow paging's (paging_shadow) */
  struct ept_state ept;            /* EPT's (paging_ept) */
  const struct trace_event *guest_ev;   /* the guest event being replayed, or NULL */
  const struct trace_event *failed_ev;  /* guest_ev when the replay first failed (mmu_failure_event) */
  uint64_t *ctr;                   /* the engine's counters */
  struct mmu_sink *sink;
};

/* mmu_roots.c */
const struct root_scheme *roots_scheme_for(const struct policy *p);
void roots_pin(struct mmu *m, struct root_set *r, int delta);
void roots_switch(struct mmu *m, const struct mmu_ctx *c, uint64_t cr3, bool exited, struct work *w);

static inline bool roots_live(const struct mmu *m, const struct root_set *r) {
  if (!r->used) return false;
  for (unsigned i = 0; i < m->sh.nroots; i++)
    if (r->slot[i] == SPT_NONE || !m->sh.pool.page[r->slot[i]].live || m->sh.pool.page[r->slot[i]].serial != r->serial[i])
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
    if (mv->roots_ok_gen == m->sh.pool.gen) return;
    if (roots_live(m, &mv->cur)) { mv->roots_ok_gen = m->sh.pool.gen; return; }
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
void shadow_on_evict(void *arg, struct spt_pool *p, uint32_t slot);
/* The caching KVM's work for a shadow page it has just created: write-protect
** the guest page table it shadows, unless it shadows none (metaphysical). */
void shadow_note_new_page(const struct mmu *m, const struct spt_page *pg, struct work *w);
/* Accounts for a shadow page about to be freed (counter, work, CR3 cache);
** true if the CR3 cache was cleared because of it. */
bool shadow_note_zap(struct mmu *m, const struct spt_page *pg, struct work *w);

#endif
