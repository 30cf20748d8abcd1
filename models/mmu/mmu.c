/* The VM's memory-management model: shadow paging with its pool, roots and
** CR3-cache side, EPT, and the TLBs (see mmu.h and models/mmu/README.md). */
#include "mmu.h"
#include "hset.h"
#include "spt.h"
#include "tlb.h"
#include "models/vmx/exit_reason.h"
#include "models/counters.h"
#include "models/alloc.h"
#include "models/event.h"

#include <stdlib.h>
#include <string.h>

#define MAX_ROOTS 4
#define MAX_PREV 8

/* A set of shadow roots for one address space (1 for 64-bit, 4 for PAE/32-bit). */
struct root_set {
  bool used;                    /* false: no roots (0 is a valid guest CR3) */
  uint64_t cr3;                 /* guest CR3 */
  uint32_t slot[MAX_ROOTS];
  uint64_t serial[MAX_ROOTS];
};

struct mmu_vcpu {
  struct root_set cur;
  struct root_set prev[MAX_PREV];   /* previous roots, most recent first */
  unsigned nprev;
  struct tlb tlb;
};

struct mmu {
  const struct policy *pol;
  unsigned paging, nvcpu, nroots, slevels, glevels;
  struct vcpu *vcpus;              /* the VM's vCPUs, for VM-wide CR3-cache clears */
  struct mmu_vcpu *v;
  struct spt_pool pool;
  struct hset ept_map;             /* guest frames mapped in EPT */
  struct hset ept_tables;          /* EPT paging-structure pages allocated */
  uint64_t *ctr;                   /* the engine's counters */
  struct work *evict_work;         /* where evictions during a handler are charged */
};

static bool ept(const struct mmu *m) { return m->pol->paging == PAGING_EPT; }

static void clear_cr3_caches(struct mmu *m) {
  if (!m->pol->cr3_cache) return;
  for (unsigned i = 0; i < m->nvcpu; i++) vcpu_cr3t_clear(&m->vcpus[i]);
  m->ctr[CTR_CR3_CACHE_CLEARS]++;
}

static bool is_root_page(const struct mmu *m, const struct spt_page *pg) {
  return pg->level == m->slevels && pg->gkey.level == gpt_guest_levels(m->paging) - (m->paging == PAGING_PAE);
}

/* The 2008 CR3 cache is cleared when a shadow root it names is zapped.
** Returns true if it cleared the cache. */
static bool on_zap(struct mmu *m, const struct spt_page *pg, struct work *w) {
  m->ctr[CTR_SHADOW_ZAPPED]++;
  if (w) work_add(w, PP_SHADOW_ZAP, 1);
  if (!m->pol->cr3_cache || !is_root_page(m, pg)) return false;
  for (unsigned i = 0; i < m->nvcpu; i++)
    for (unsigned s = 0; s < 4; s++)
      if (vmcs_peek(&m->vcpus[i].vmx.vmcs, (enum vmcs_field)(VMCS_CR3_TARGET_VALUE0 + s)) &&
          m->vcpus[i].cr3t_guest[s] == pg->gkey.owner) { clear_cr3_caches(m); return true; }
  return false;
}

static void on_evict(void *arg, struct spt_pool *p, uint32_t slot) {
  struct mmu *m = arg;
  m->ctr[CTR_SHADOW_EVICTED]++;
  on_zap(m, &p->page[slot], m->evict_work);
}

struct mmu *mmu_create(const struct policy *p, unsigned paging, unsigned nvcpu, struct vcpu *vcpus,
                       uint64_t *counters) {
  struct mmu *m = xcalloc(1, sizeof *m);
  m->pol = p;
  m->paging = paging;
  m->nvcpu = nvcpu;
  m->vcpus = vcpus;
  m->ctr = counters;
  m->nroots = gpt_roots(paging);
  m->slevels = gpt_shadow_levels(paging);
  m->glevels = gpt_guest_levels(paging);
  m->v = xcalloc(nvcpu, sizeof *m->v);
  for (unsigned i = 0; i < nvcpu; i++) tlb_init(&m->v[i].tlb, p->tlb_entries);
  spt_init(&m->pool, p->shadow_pages_max, p->shadow_eviction == EVICT_LRU, p->shadow_refill,
           p->refill_low, p->refill_high, on_evict, m);
  hset_init(&m->ept_map);
  hset_init(&m->ept_tables);
  return m;
}

unsigned mmu_min_pool(const struct policy *p, unsigned paging, unsigned nvcpu) {
  if (p->paging == PAGING_EPT) return 0;
  unsigned prev = p->prev_roots < MAX_PREV ? p->prev_roots : MAX_PREV;
  return (nvcpu * (1 + prev) + 1) * gpt_roots(paging);
}

void mmu_destroy(struct mmu *m) {
  for (unsigned i = 0; i < m->nvcpu; i++) tlb_free(&m->v[i].tlb);
  free(m->v);
  spt_destroy(&m->pool);
  hset_free(&m->ept_map);
  hset_free(&m->ept_tables);
  free(m);
}

/* ---- roots ---- */

static bool root_set_live(const struct mmu *m, const struct root_set *r) {
  if (!r->used) return false;
  for (unsigned i = 0; i < m->nroots; i++)
    if (r->slot[i] == SPT_NONE || !m->pool.page[r->slot[i]].live || m->pool.page[r->slot[i]].serial != r->serial[i])
      return false;
  return true;
}

static void pin_set(struct mmu *m, struct root_set *r, int delta) {
  if (!root_set_live(m, r)) return;
  for (unsigned i = 0; i < m->nroots; i++) m->pool.page[r->slot[i]].pins += (uint32_t)delta;
}

/* Finds or builds the roots of address space cr3 (KVM mmu_alloc_roots).
** Returns true if every root was already in the pool. */
static bool build_roots(struct mmu *m, uint64_t cr3, struct root_set *r, struct work *w) {
  bool all_found = true;
  spt_reserve(&m->pool, m->nroots);
  r->used = true;
  r->cr3 = cr3;
  for (unsigned i = 0; i < m->nroots; i++) {
    struct gpt_step st;
    gpt_root(m->paging, cr3, i, &st);
    uint32_t s = spt_find(&m->pool, &st.gkey, st.level, st.quadrant);
    if (s == SPT_NONE) {
      all_found = false;
      s = spt_alloc(&m->pool, &st.gkey, st.level, st.quadrant);
      if (s != SPT_NONE) {
        m->ctr[CTR_SHADOW_ALLOCATED]++;
        if (w) work_add(w, PP_SHADOW_ALLOC, 1);
      }
    }
    r->slot[i] = s;
    r->serial[i] = s == SPT_NONE ? 0 : m->pool.page[s].serial;
    if (s != SPT_NONE) spt_touch(&m->pool, s);
  }
  return all_found;
}

static uint64_t root_hpa(const struct root_set *r) {
  return SHADOW_ROOT_HPA_BASE + ((uint64_t)r->slot[0] << 12);
}

/* Previous-roots cache (modern KVM kvm_mmu_new_pgd): look cr3 up among the
** previous roots, most recent first.  Hit: it becomes current and the old
** current becomes the most recent previous root.  Miss: the old current is
** kept as the most recent previous root (the least recent is dropped when
** prev_roots are already kept).  Previous roots stay pinned. */
static bool prev_roots_switch(struct mmu *m, struct mmu_vcpu *mv, uint64_t cr3) {
  unsigned keep = m->pol->prev_roots < MAX_PREV ? m->pol->prev_roots : MAX_PREV;
  for (unsigned i = 0; i < mv->nprev; i++) {
    if (mv->prev[i].cr3 != cr3 || !root_set_live(m, &mv->prev[i])) continue;
    struct root_set hit = mv->prev[i];
    memmove(&mv->prev[i], &mv->prev[i + 1], (mv->nprev - i - 1) * sizeof *mv->prev);
    mv->nprev--;
    if (mv->cur.used) {
      memmove(&mv->prev[1], &mv->prev[0], mv->nprev * sizeof *mv->prev);
      mv->prev[0] = mv->cur;
      mv->nprev++;
    }
    mv->cur = hit;
    return true;
  }
  if (!mv->cur.used || keep == 0) return false;
  if (mv->nprev == keep) pin_set(m, &mv->prev[--mv->nprev], -1);
  memmove(&mv->prev[1], &mv->prev[0], mv->nprev * sizeof *mv->prev);
  mv->prev[0] = mv->cur;
  mv->nprev++;
  memset(&mv->cur, 0, sizeof mv->cur);
  return false;
}

static void drop_prev(struct mmu *m, struct mmu_vcpu *mv) {
  for (unsigned i = 0; i < mv->nprev; i++) pin_set(m, &mv->prev[i], -1);
  mv->nprev = 0;
}

/* nocache: January 2007 KVM dropped every shadow page on each CR3 switch. */
static void zap_everything(struct mmu *m, struct work *w) {
  for (unsigned i = 0; i < m->nvcpu; i++) {
    drop_prev(m, &m->v[i]);
    pin_set(m, &m->v[i].cur, -1);
    memset(&m->v[i].cur, 0, sizeof m->v[i].cur);
  }
  for (uint32_t s = m->pool.oldest, next; s != SPT_NONE; s = next) {
    next = m->pool.page[s].newer;
    on_zap(m, &m->pool.page[s], w);
    spt_free(&m->pool, s);
  }
}

/* A CR3 switch the hypervisor handles (exit) or the hardware does (CR3-target hit). */
static void switch_roots(struct mmu *m, struct vcpu *v, uint64_t cr3, bool exited, struct work *w) {
  struct mmu_vcpu *mv = &m->v[v->id];
  if (exited && !m->pol->shadow_cache) zap_everything(m, w);
  if (mv->cur.cr3 == cr3 && root_set_live(m, &mv->cur)) {
    if (exited) { m->ctr[CTR_ROOT_HITS]++; work_add(w, PP_ROOT_SWITCH, 1); }
    return;
  }
  if (exited && m->pol->prev_roots && prev_roots_switch(m, mv, cr3)) {
    m->ctr[CTR_ROOT_HITS]++;
    m->ctr[CTR_PREV_ROOT_HITS]++;
    for (unsigned i = 0; i < m->nroots; i++) spt_touch(&m->pool, mv->cur.slot[i]);   /* LRU: a root switch uses it */
  } else {
    if (mv->cur.used) pin_set(m, &mv->cur, -1);
    struct work *charge = exited ? w : NULL;
    m->evict_work = charge;
    bool found = build_roots(m, cr3, &mv->cur, charge);
    m->evict_work = NULL;
    pin_set(m, &mv->cur, +1);
    if (exited) {
      work_add(w, PP_ROOT_SWITCH, 1);
      m->ctr[found ? CTR_ROOT_HITS : CTR_ROOT_MISSES]++;
    }
  }
  if (!exited) {
    /* Roots loaded at VM entry (or by a CR3-target hit): the VMCS holds the root. */
    vmcs_poke(&v->vmx.vmcs, VMCS_GUEST_CR3, root_hpa(&mv->cur));
    return;
  }
  vmcs_write(&v->vmx.vmcs, VMCS_GUEST_CR3, root_hpa(&mv->cur));
  if (m->pol->cr3_cache) vcpu_cr3t_fill(v, cr3, root_hpa(&mv->cur));
}

/* Roots are loaded lazily for the vCPU's current CR3 (KVM mmu_load on entry),
** e.g. for the initial CR3 of the trace: no exit, nothing charged. */
static void ensure_roots(struct mmu *m, struct vcpu *v) {
  if (m->v[v->id].cur.cr3 != v->guest_cr3 || !root_set_live(m, &m->v[v->id].cur))
    switch_roots(m, v, v->guest_cr3, false, NULL);
}

/* ---- shadow faults ---- */

/* Is va mapped all the way down the current shadow tables?  Follows the links
** the way the hardware walker does (a link names exactly the child the guest
** table structure implies), so no hash lookup is needed on this hot path. */
static bool shadow_present(const struct mmu *m, const struct mmu_vcpu *mv, uint64_t va, unsigned root_i) {
  const struct spt_pool *p = &m->pool;
  uint32_t page = mv->cur.slot[root_i];
  if (page == SPT_NONE) return false;
  for (unsigned level = m->slevels; level > 1; level--) {
    const struct spt_link *l = &p->page[page].links[(va >> (12 + 9 * (level - 1))) & 511];
    if (!l->serial || !p->page[l->slot].live || p->page[l->slot].serial != l->serial) return false;
    page = l->slot;
  }
  return spt_leaf_present(p, page, (va >> 12) & 511);
}

static unsigned root_index(const struct mmu *m, uint64_t va) {
  return m->nroots == 1 ? 0 : (unsigned)((va >> 30) & 3);
}

/* The hypervisor's side of a hidden page fault (KVM's paging_tmpl.h fetch):
** walk the guest tables, allocate the missing shadow pages, link them and
** install the leaf entry.  A fault through a page ends its write flooding. */
static void shadow_fill(struct mmu *m, struct mmu_vcpu *mv, const struct gpt_step *path, unsigned root_i,
                        struct work *w) {
  bool hint = m->pol->memslot_hint;
  work_add(w, hint ? PP_GUEST_PTE_READ_FAST : PP_GUEST_PTE_READ, m->glevels);
  work_add(w, hint ? PP_MEMSLOT_LOOKUP_FAST : PP_MEMSLOT_LOOKUP, m->glevels);
  m->ctr[CTR_GUEST_WALKS]++;
  m->evict_work = w;
  spt_reserve(&m->pool, m->slevels);
  m->evict_work = NULL;
  uint32_t page = mv->cur.slot[root_i];
  if (page == SPT_NONE || !root_set_live(m, &mv->cur)) return;
  m->pool.page[page].writes = 0;
  for (unsigned i = 0; i + 1 < m->slevels; i++) {
    const struct gpt_step *c = &path[i + 1];
    uint32_t child = spt_find(&m->pool, &c->gkey, c->level, c->quadrant);
    if (child == SPT_NONE) {
      child = spt_alloc(&m->pool, &c->gkey, c->level, c->quadrant);
      if (child == SPT_NONE) return;      /* every page pinned: nothing can be cached */
      m->ctr[CTR_SHADOW_ALLOCATED]++;
      work_add(w, PP_SHADOW_ALLOC, 1);
    }
    spt_touch(&m->pool, child);
    m->pool.page[child].writes = 0;
    if (!spt_linked(&m->pool, page, path[i].entry, child)) {
      spt_link(&m->pool, page, path[i].entry, child);
      work_add(w, PP_SHADOW_INSTALL, 1);
    }
    page = child;
  }
  spt_leaf_set(&m->pool, page, path[m->slevels - 1].entry, true);
  work_add(w, PP_SHADOW_INSTALL, 1);
}

/* One page access under shadow paging. */
static void shadow_access(struct mmu *m, struct vcpu *v, uint64_t va, struct mmu_sink *sink) {
  struct mmu_vcpu *mv = &m->v[v->id];
  unsigned ri = root_index(m, va);
  if (shadow_present(m, mv, va, ri)) return;
  struct gpt_step path[GPT_MAX_LEVELS];
  gpt_walk(m->paging, v->guest_cr3, va, path);
  /* SDM 26.2: the #PF is intercepted (exception bitmap bit 14 under shadow
  ** paging); the exit qualification is the faulting linear address. */
  struct work w;
  work_clear(&w);
  shadow_fill(m, mv, path, ri, &w);
  m->ctr[CTR_SHADOW_FAULTS]++;
  sink->exit(sink, v, EXIT_REASON_EXCEPTION_NMI, va, &w);
}

/* ---- EPT ---- */

/* Maps one guest frame in EPT on first use: an EPT violation whose handler
** allocates any missing EPT paging-structure pages and installs the entry. */
static void ept_touch_frame(struct mmu *m, struct vcpu *v, uint64_t gfn, struct mmu_sink *sink) {
  if (!hset_add(&m->ept_map, gfn)) return;
  struct work w;
  work_clear(&w);
  for (unsigned level = 1; level <= 4; level++)
    if (hset_add(&m->ept_tables, ((uint64_t)level << 56) | (gfn >> (9 * level)))) {
      work_add(&w, PP_SHADOW_ALLOC, 1);
    }
  work_add(&w, PP_SHADOW_INSTALL, 1);
  m->ctr[CTR_EPT_VIOLATIONS]++;
  sink->exit(sink, v, EXIT_REASON_EPT_VIOLATION, 0, &w);
}

/* A TLB miss under EPT: the two-dimensional walk reads each guest
** page-table page through EPT, then the data page. */
static void ept_walk(struct mmu *m, struct vcpu *v, uint64_t va, struct mmu_sink *sink) {
  for (unsigned level = m->glevels; level >= 1; level--) {
    struct gpt_key k = gpt_table_of(m->paging, v->guest_cr3, va, level);
    ept_touch_frame(m, v, gpt_table_gfn(&k), sink);
  }
  ept_touch_frame(m, v, gpt_data_gfn(m->paging, v->guest_cr3, va), sink);
}

/* ---- guest events ---- */

static bool global_page(const struct mmu *m, const struct vcpu *v, uint64_t va) {
  return gpt_is_kernel(m->paging, va) && (vmcs_peek(&v->vmx.vmcs, VMCS_GUEST_CR4) & CR4_PGE);
}

/* Charges the TLB miss relative to native: the trace's cycles already hold
** native misses; virtualization adds the 2-D walk's extra references, and a
** full walk for entries only a VM-transition flush removed. */
static void charge_tlb(struct mmu *m, enum tlb_result r, struct work *g) {
  if (r == TLB_HIT) return;
  m->ctr[CTR_TLB_MISSES]++;
  if (r == TLB_MISS_VIRT) {
    m->ctr[CTR_TLB_MISSES_VIRT]++;
    work_add(g, ept(m) ? PP_TLB_MISS_2D : PP_TLB_MISS_NATIVE, 1);
  } else if (ept(m)) {
    work_add(g, PP_TLB_MISS_2D_EXTRA, 1);
  }
}

static void touch_page(struct mmu *m, struct vcpu *v, uint64_t va, struct work *g, struct mmu_sink *sink) {
  enum tlb_result r = tlb_access(&m->v[v->id].tlb, va, v->guest_cr3, global_page(m, v, va));
  charge_tlb(m, r, g);
  if (r == TLB_HIT) return;
  if (ept(m)) ept_walk(m, v, va, sink);
  else shadow_access(m, v, va, sink);
}

/* A guest write to a page-table entry: under shadow paging the page is
** write-protected when shadowed, so the write faults, is emulated, and the
** shadow entry updated; repeated writes without a fault through the page
** ("flooding") zap it, as 2007 KVM did. */
static void pt_write(struct mmu *m, struct vcpu *v, uint64_t va, unsigned level, struct mmu_sink *sink) {
  struct gpt_key k = gpt_table_of(m->paging, v->guest_cr3, va, level);
  if (level < 1 || level > m->slevels) return;   /* e.g. the PAE PDPT: not shadowed */
  /* Every shadow page of the guest page (one per quadrant for 32-bit guests)
  ** sees the write: KVM counts flooding per shadow page of the gfn. */
  uint32_t hit[4];
  unsigned nhit = 0;
  for (unsigned q = 0; q < 4; q++)
    if ((hit[nhit] = spt_find(&m->pool, &k, level, q)) != SPT_NONE) nhit++;
  if (!nhit) return;                                           /* not shadowed: a plain write */
  struct work w;
  work_clear(&w);
  work_add(&w, PP_PTE_EMULATE, 1);
  m->ctr[CTR_PTE_WRITES_EMULATED]++;
  if (level == 1) {
    struct gpt_step path[GPT_MAX_LEVELS];
    gpt_walk(m->paging, v->guest_cr3, va, path);
    uint32_t leaf = spt_find(&m->pool, &path[m->slevels - 1].gkey, 1, path[m->slevels - 1].quadrant);
    if (leaf != SPT_NONE && spt_leaf_present(&m->pool, leaf, path[m->slevels - 1].entry))
      work_add(&w, PP_SHADOW_INSTALL, 1);                      /* update the shadow PTE in place */
  }
  bool zapped = false, cleared = false;
  for (unsigned i = 0; i < nhit; i++) {
    struct spt_page *pg = &m->pool.page[hit[i]];
    if (++pg->writes >= m->pol->flood_threshold && m->pol->flood_threshold && !pg->pins) {
      cleared |= on_zap(m, pg, &w);
      m->ctr[CTR_FLOOD_ZAPS]++;
      spt_free(&m->pool, hit[i]);
      zapped = true;
    }
  }
  if (zapped && !cleared) clear_cr3_caches(m);   /* the 2008 CR3 cache was cleared on such zaps */
  sink->exit(sink, v, EXIT_REASON_EXCEPTION_NMI, va, &w);
}

void mmu_guest_event(struct mmu *m, struct vcpu *v, const struct trace_event *ev, struct mmu_sink *sink) {
  if (!ept(m)) ensure_roots(m, v);
  if (ev->type == EV_PTWRITE) {
    if (!ept(m)) pt_write(m, v, ev->a, ev->aux, sink);
    return;
  }
  struct work g;
  work_clear(&g);
  uint64_t pages = ev->b ? ev->b : 1, misses = m->ctr[CTR_TLB_MISSES];
  for (uint64_t i = 0; i < pages; i++) touch_page(m, v, ev->a + (i << 12), &g, sink);
  if (m->ctr[CTR_TLB_MISSES] != misses) sink->guest(sink, v, &g);   /* only misses cost the guest */
}

void mmu_request(struct mmu *m, struct vcpu *v, enum mmu_request req, uint64_t arg, bool exited,
                 struct work *w, struct mmu_sink *sink) {
  (void)sink;
  struct mmu_vcpu *mv = &m->v[v->id];
  switch (req) {
  case MMU_CR3_SWITCH:
    tlb_flush_nonglobal(&mv->tlb);    /* MOV to CR3 without PCID */
    m->ctr[CTR_TLB_FLUSHES]++;
    if (!ept(m)) switch_roots(m, v, arg, exited, w);
    break;
  case MMU_INVLPG:
    tlb_invlpg(&mv->tlb, arg);
    if (!ept(m) && exited) {          /* KVM invlpg: drop the shadow leaf entry */
      struct gpt_step path[GPT_MAX_LEVELS];
      gpt_walk(m->paging, v->guest_cr3, arg, path);
      const struct gpt_step *leaf = &path[m->slevels - 1];
      uint32_t s = spt_find(&m->pool, &leaf->gkey, 1, leaf->quadrant);
      if (s != SPT_NONE) spt_leaf_set(&m->pool, s, leaf->entry, false);
    }
    break;
  case MMU_FLUSH_ALL:
    tlb_flush_all(&mv->tlb);
    m->ctr[CTR_TLB_FLUSHES]++;
    if (!ept(m) && exited) work_add(w, PP_ROOT_SWITCH, 1);   /* KVM reloads the MMU context */
    break;
  case MMU_FLUSH_NONGLOBAL:
    tlb_flush_nonglobal(&mv->tlb);
    m->ctr[CTR_TLB_FLUSHES]++;
    break;
  case MMU_NONE:
    break;
  }
}

void mmu_on_vm_transition(struct mmu *m, struct vcpu *v, struct mmu_sink *sink) {
  (void)sink;
  if (m->pol->vpid) return;
  /* Without VPID, VM exits and entries flush all linear translations (SDM 28.3.3.1). */
  tlb_flush_vm(&m->v[v->id].tlb);
  m->ctr[CTR_TLB_FLUSHES]++;
}

void mmu_print_shadow(const struct mmu *m, FILE *f) {
  if (ept(m)) {
    fprintf(f, "EPT: %llu guest frames mapped, %llu EPT paging-structure pages\n",
            (unsigned long long)m->ept_map.used, (unsigned long long)m->ept_tables.used);
    return;
  }
  spt_print(&m->pool, f, 8);
  for (unsigned i = 0; i < m->nvcpu; i++) {
    const struct mmu_vcpu *mv = &m->v[i];
    fprintf(f, "vCPU %u: current root cr3 0x%llx", i, (unsigned long long)mv->cur.cr3);
    for (unsigned p = 0; p < mv->nprev; p++) fprintf(f, "%s0x%llx", p ? ", " : "; previous ", (unsigned long long)mv->prev[p].cr3);
    fprintf(f, "\n");
  }
}

void mmu_print_tlb(const struct mmu *m, const struct vcpu *v, FILE *f) { tlb_print(&m->v[v->id].tlb, f); }
