/* The VM's memory-management model: its interface, the paging modes' table,
** guest memory events and requests (see mmu.h and models/mmu/README.md). */
#include "mmu_int.h"
#include "models/alloc.h"
#include "models/counters.h"

#include <stdlib.h>
#include <string.h>

/* The paging modes, indexed by the paging knob (enum mmu_paging,
** models/knobs.h); their names are the knob's values.  A mode is one file
** defining its struct paging_ops and a row here. */
extern const struct paging_ops paging_shadow, paging_ept;
static const struct paging_ops *const paging_modes[] = {
  [PAGING_SHADOW] = &paging_shadow,
  [PAGING_EPT]    = &paging_ept,
};
#define NMODES (sizeof paging_modes / sizeof *paging_modes)

static const struct paging_ops *paging_for(const struct policy *p) { return paging_modes[p->paging]; }

const struct paging_vmx *mmu_paging_vmx(const struct policy *p) { return &paging_for(p)->vmx; }

const char *const *mmu_paging_names(void) {
  static const char *names[NMODES + 1];
  for (size_t i = 0; i < NMODES; i++) names[i] = paging_modes[i]->name;
  return names;
}

struct mmu *mmu_create(const struct policy *p, unsigned paging, unsigned nvcpu, struct mmu_sink *sink,
                       uint64_t *counters) {
  struct mmu *m = xcalloc(1, sizeof *m);
  m->ops = paging_for(p);
  m->pol = p;
  m->paging = paging;
  m->nvcpu = nvcpu;
  m->sink = sink;
  m->ctr = counters;
  m->glevels = gpt_guest_levels(paging);
  m->v = xcalloc(nvcpu, sizeof *m->v);
  for (unsigned i = 0; i < nvcpu; i++) tlb_init(&m->v[i].tlb, p->tlb_entries);
  m->ops->init(m);
  if (m->ops->seg_memo) m->seg = seg_create(&m->v[0].tlb);   /* every vCPU's TLB has the same size */
  return m;
}

unsigned mmu_min_pool(const struct policy *p, unsigned paging, unsigned nvcpu) {
  const struct paging_ops *ops = paging_for(p);
  return ops->min_pool ? ops->min_pool(p, paging, nvcpu) : 0;
}

/* Frees the segment memo; the TLBs stop reading a record's copy first. */
static void seg_drop(struct mmu *m) {
  if (!m->seg) return;
  for (unsigned i = 0; i < m->nvcpu; i++) tlb_unshare(&m->v[i].tlb);
  seg_destroy(m->seg);
  m->seg = NULL;
}

void mmu_destroy(struct mmu *m) {
  seg_drop(m);
  for (unsigned i = 0; i < m->nvcpu; i++) tlb_free(&m->v[i].tlb);
  m->ops->destroy(m);
  free(m->v);
  free(m);
}

/* A touch of `pages` pages from va: the TLB misses it takes relative to
** native are charged (the trace's cycles already hold native misses;
** virtualization adds what the paging mode prices), and each miss's walk may
** fault. */
static void touch_pages(struct mmu *m, const struct mmu_ctx *c, uint64_t va, uint64_t pages, bool write) {
  struct tlb *t = &m->v[c->vcpu].tlb;
  const struct paging_ops *ops = m->ops;
  uint32_t virt = 0, native = 0;
  for (uint64_t i = 0; i < pages; i++, va += 1ull << 12) {
    bool global = c->pge && gpt_is_kernel(m->paging, va);
    enum tlb_result r = tlb_access(t, va, c->cr3, global);
    if (r == TLB_HIT) continue;
    if (r == TLB_MISS_VIRT) virt++; else native++;
    ops->miss(m, c, va, write);
  }
  if (!virt && !native) return;
  if (m->seg && m->seg->mode == SEG_RECORD) mmu_seg_count(m, virt, native);
  m->ctr[CTR_TLB_MISSES] += virt + native;
  m->ctr[CTR_TLB_MISSES_VIRT] += virt;
  /* only misses cost the guest */
  if (virt) m->sink->guest_ops(m->sink, c->vcpu, ops->miss_virt_price, virt);
  if (native && ops->miss_native_price != MMU_NO_PRICE) m->sink->guest_ops(m->sink, c->vcpu, ops->miss_native_price, native);
}

static struct touch_memo *memo_set(struct mmu_vcpu *mv, uint64_t va) {
  return &mv->memo[((va >> 12) * 0x9e3779b97f4a7c15ull) >> (64 - TOUCH_MEMO_BITS) & ~1u];
}

static bool memo_hit(const struct touch_memo *tm, const struct trace_event *ev, uint64_t cr3, uint64_t vp) {
  return tm->a == ev->a && tm->version_pge == vp && tm->b == ev->b && tm->cr3 == cr3;
}

/* Everything but a remembered touch: kept out of line so that the check
** for one stays small enough to be inlined into the engine's loop. */
static __attribute__((noinline)) void guest_event(struct mmu *m, const struct mmu_ctx *c, const struct trace_event *ev) {
  if (ev->type == EV_PTWRITE) {                /* the segment has ended (mmu_guest_event) */
    if (m->ops->pt_write) m->ops->pt_write(m, c, ev->a, ev->aux);
    return;
  }
  struct mmu_vcpu *mv = &m->v[c->vcpu];
  uint64_t version = mv->tlb.version;
  touch_pages(m, c, ev->a, ev->b ? ev->b : 1, ev->aux & TOUCH_AUX_WRITE);
  if (mv->tlb.version != version) return;
  /* the older way of the set makes room: a stale entry first */
  uint64_t vp = version << 1 | c->pge;
  struct touch_memo *set = memo_set(mv, ev->a);
  struct touch_memo *w = set[0].version_pge >> 1 != version ? &set[0] : set[1].version_pge >> 1 != version ? &set[1]
                       : &set[mv->memo_next++ & 1];
  *w = (struct touch_memo){ ev->a, ev->b, c->cr3, vp };
}

/* A touch as it is computed: the touch memo, then the TLB and the shadow tables. */
static inline void touch_plain(struct mmu *m, const struct mmu_ctx *c, const struct trace_event *ev) {
  /* A touch that hit on every page while the TLB was as it is: it does nothing again. */
  if (ev->type == EV_TOUCH) {
    struct mmu_vcpu *mv = &m->v[c->vcpu];
    uint64_t vp = mv->tlb.version << 1 | c->pge;
    struct touch_memo *set = memo_set(mv, ev->a);
    if (memo_hit(&set[0], ev, c->cr3, vp) || memo_hit(&set[1], ev, c->cr3, vp)) return;
  }
  guest_event(m, c, ev);
}

void mmu_touch_plain(struct mmu *m, const struct mmu_ctx *c, const struct trace_event *ev) { touch_plain(m, c, ev); }

/* always_inline: with link-time optimisation, into the engine's loop */
__attribute__((always_inline)) inline void mmu_guest_event(struct mmu *m, const struct mmu_ctx *c, const struct trace_event *ev) {
  struct seg_memo *s = m->seg;
  if (s && ev->type == EV_TOUCH) {
    /* the next touch of a record being compared: nothing else to do (the
    ** roots cannot have changed since the segment started) */
    if (s->mode == SEG_MATCH && s->vcpu == c->vcpu && s->i < s->cur->n) {
      const struct seg_touch *t = &s->cur->t[s->i];
      if (t->a == ev->a && t->b == ev->b && t->aux == ev->aux) {
        s->i++;
        return;
      }
    }
    /* another vCPU's segment ends before this vCPU does anything, its roots
    ** too (the segment memo is shadow paging's: struct paging_ops) */
    if (s->mode != SEG_IDLE && s->vcpu != c->vcpu) mmu_seg_end(m);
    roots_ensure(m, c);
    if (mmu_seg_touch(m, c, ev)) return;
    touch_plain(m, c, ev);
    return;
  }
  if (s) mmu_seg_end(m);       /* a page-table write: the segment ends before the roots are looked at */
  if (m->ops->prepare) m->ops->prepare(m, c);
  m->guest_ev = ev;            /* e.g. an EPT first touch past the guest's frames names its record */
  touch_plain(m, c, ev);
  m->guest_ev = NULL;
}

void mmu_settle(struct mmu *m) {
  if (m->seg) mmu_seg_end(m);
}

bool mmu_seg_stats(const struct mmu *m, uint64_t *applied, uint64_t *replayed) {
  *applied = m->seg ? m->seg->applied : 0;
  *replayed = m->seg ? m->seg->replayed : 0;
  return m->seg != NULL;
}

void mmu_stepwise(struct mmu *m) {
  if (!m->seg) return;
  mmu_seg_end(m);
  seg_drop(m);
}

void mmu_request(struct mmu *m, const struct mmu_ctx *c, enum mmu_request req, uint64_t arg, bool exited,
                 struct work *w) {
  struct mmu_vcpu *mv = &m->v[c->vcpu];
  if (m->seg) mmu_seg_end(m);
  switch (req) {
  case MMU_CR3_SWITCH:
    tlb_flush_nonglobal(&mv->tlb);    /* MOV to CR3 without PCID */
    m->ctr[CTR_TLB_FLUSHES]++;
    if (m->ops->cr3_switch) m->ops->cr3_switch(m, c, arg, exited, w);
    break;
  case MMU_INVLPG:
    tlb_invlpg(&mv->tlb, arg);
    if (exited && m->ops->invlpg) m->ops->invlpg(m, c, arg);
    break;
  case MMU_FLUSH_ALL:
    tlb_flush_all(&mv->tlb);
    m->ctr[CTR_TLB_FLUSHES]++;
    if (exited && m->ops->flush_all) m->ops->flush_all(m, w);
    break;
  case MMU_NONE:
    break;
  }
}

struct mmu_fault mmu_mmio_fault(const struct mmu *m, uint64_t gla, uint64_t gpa, bool write) {
  return m->ops->fault(gla, gpa, write);
}

const char *mmu_failure(const struct mmu *m) { return m->ops->failure ? m->ops->failure(m) : NULL; }

const struct trace_event *mmu_failure_event(const struct mmu *m) { return m->failed_ev; }

void mmu_on_vm_transition(struct mmu *m, unsigned vcpu) {
  if (m->seg) mmu_seg_end(m);
  if (m->pol->vpid) return;
  /* Without VPID, VM exits and entries flush all linear translations (SDM 28.3.3.1). */
  tlb_flush_vm(&m->v[vcpu].tlb);
  m->ctr[CTR_TLB_FLUSHES]++;
}

/* the REPL steps: no segment is pending (mmu_stepwise) */
void mmu_print_shadow(const struct mmu *m, FILE *f) { m->ops->print(m, f); }

const char *mmu_describe(const struct mmu *m, enum mmu_topic t, uint64_t arg) { return m->ops->describe(t, arg); }

void mmu_print_tlb(const struct mmu *m, unsigned vcpu, FILE *f) { tlb_print(&m->v[vcpu].tlb, f); }
