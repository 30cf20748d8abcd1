/* The segment memo in the MMU (models/mmu/seg_memo.h): where segments start,
** are compared, recorded and end. */
#include "mmu_int.h"
#include "models/counters.h"

static uint64_t mix(uint64_t v) {
  v ^= v >> 33;
  v *= 0xff51afd7ed558ccdull;
  v ^= v >> 33;
  return v;
}

/* Everything a fault-free segment's outcome depends on besides its touches. */
static uint64_t start_key(const struct mmu *m, const struct mmu_ctx *c) {
  const struct mmu_vcpu *mv = &m->v[c->vcpu];
  uint64_t h = mix(tlb_fingerprint(&mv->tlb) ^ c->cr3);
  h = mix(h ^ (m->sh.pool.gen << 1 | c->pge));
  for (unsigned i = 0; i < m->sh.nroots; i++) h = mix(h ^ mv->cur.slot[i]);
  if (c->vcpu) h = mix(h ^ c->vcpu);               /* vCPU 0's starts as with one vCPU */
  return h ? h : 1;                                /* 0 marks an empty way */
}

static void start(struct mmu *m, const struct mmu_ctx *c) {
  struct seg_memo *s = m->seg;
  uint64_t key = start_key(m, c);
  s->cr3 = c->cr3;
  s->pge = c->pge;
  s->vcpu = c->vcpu;
  if ((s->cur = seg_find(s, key))) {
    s->mode = SEG_MATCH;
    s->i = 0;
  } else if (seg_seen_before(s, key)) {
    s->mode = SEG_RECORD;
    seg_record_start(s, key, m->sh.pool.gen, m->ctr[CTR_SHADOW_FAULTS]);
  } else {
    s->mode = SEG_OFF;
  }
}

/* The record's outcome, as its touches would have had it. */
static void apply(struct mmu *m, unsigned vcpu, const struct seg *g) {
  tlb_snap_restore(&m->v[vcpu].tlb, &g->end);
  m->ctr[CTR_TLB_MISSES] += g->virt + g->native;
  m->ctr[CTR_TLB_MISSES_VIRT] += g->virt;
  if (g->virt) m->sink->guest_ops(m->sink, vcpu, PP_TLB_MISS_NATIVE, (uint32_t)g->virt);
}

/* Ends the comparison: the whole record applied, or the touches compared so
** far replayed (the TLB is still as at the start, the pool unchanged). */
static void settle_match(struct mmu *m, unsigned vcpu) {
  struct seg_memo *s = m->seg;
  const struct seg *g = s->cur;
  s->mode = SEG_OFF;
  if (s->i == g->n) {
    apply(m, vcpu, g);
    s->applied++;
    return;
  }
  s->replayed++;
  struct mmu_ctx c = { .vcpu = vcpu, .cr3 = s->cr3, .pge = s->pge };
  for (uint32_t k = 0; k < s->i; k++) {
    struct trace_event ev = { .type = EV_TOUCH, .vcpu = (uint16_t)vcpu, .aux = (uint8_t)g->t[k].aux,
                              .a = g->t[k].a, .b = g->t[k].b };
    mmu_touch_plain(m, &c, &ev);
  }
}

bool mmu_seg_touch(struct mmu *m, const struct mmu_ctx *c, const struct trace_event *ev) {
  struct seg_memo *s = m->seg;
  if (s->mode == SEG_IDLE) start(m, c);
  switch (s->mode) {
  case SEG_MATCH: {
    const struct seg *g = s->cur;
    if (s->i < g->n) {
      const struct seg_touch *t = &g->t[s->i];
      if (t->a == ev->a && t->b == ev->b && t->aux == ev->aux) {
        s->i++;
        return true;
      }
    }
    settle_match(m, c->vcpu);
    return false;
  }
  case SEG_RECORD:
    if (!seg_record_touch(s, ev->a, (uint32_t)ev->b, ev->aux)) s->mode = SEG_OFF;
    return false;
  default:
    return false;
  }
}

void mmu_seg_count(struct mmu *m, uint32_t virt, uint32_t native) {
  struct seg_memo *s = m->seg;
  s->rec.virt += virt;
  s->rec.native += native;
  if (s->rec.virt + s->rec.native >= 1u << 31) s->mode = SEG_OFF;   /* charged at once as a 32-bit count */
}

/* Keeps the recording: a record's copy that a TLB still reads (any vCPU's
** that had it put back) is copied into that TLB before it is replaced. */
static void keep(struct mmu *m) {
  struct seg_memo *s = m->seg;
  struct seg *v = seg_record_victim(s);
  if (!v) return;
  for (unsigned i = 0; i < m->nvcpu; i++)
    if (m->v[i].tlb.shared == &v->end) tlb_unshare(&m->v[i].tlb);
  seg_record_keep(s, v, &m->v[s->vcpu].tlb);
}

void mmu_seg_end(struct mmu *m) {
  struct seg_memo *s = m->seg;
  if (s->mode == SEG_MATCH) settle_match(m, s->vcpu);
  else if (s->mode == SEG_RECORD && s->rec.n && m->sh.pool.gen == s->gen && m->ctr[CTR_SHADOW_FAULTS] == s->faults)
    keep(m);
  s->mode = SEG_IDLE;
}
