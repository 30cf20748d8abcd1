/* Shadow paging: hidden page faults that fill shadow entries, trapped guest
** page-table writes (and the write flooding that zaps a shadow page), INVLPG,
** and zaps.  KVM's paging_tmpl.h and mmu.c of 2007 are the model. */
#include "mmu_int.h"
#include "models/counters.h"
#include "models/vmx/exit.h"

static bool is_root_page(const struct mmu *m, const struct spt_page *pg) {
  return pg->level == m->slevels && pg->gkey.level == gpt_guest_levels(m->paging) - (m->paging == PAGING_PAE);
}

bool shadow_note_zap(struct mmu *m, const struct spt_page *pg, struct work *w) {
  m->ctr[CTR_SHADOW_ZAPPED]++;
  if (w) work_add(w, PP_SHADOW_ZAP, 1);
  return is_root_page(m, pg) && m->sink->root_zapped(m->sink, pg->gkey.owner);
}

void shadow_on_evict(void *arg, struct spt_pool *p, uint32_t slot) {
  struct mmu *m = arg;
  m->ctr[CTR_SHADOW_EVICTED]++;
  shadow_note_zap(m, &p->page[slot], m->evict_work);
}

/* Is va mapped all the way down from shadow root page `page`?  Follows the
** links the way the hardware walker does (a link names exactly the child the
** guest table structure implies), so no hash lookup is needed. */
static bool walk(const struct mmu *m, uint32_t page, uint64_t va) {
  const struct spt_pool *p = &m->pool;
  for (unsigned level = m->slevels; level > 1; level--) {
    const struct spt_link *l = &p->page[page].links[(va >> (12 + 9 * (level - 1))) & 511];
    if (!l->serial || !p->page[l->slot].live || p->page[l->slot].serial != l->serial) return false;
    page = l->slot;
  }
  return spt_leaf_present(p, page, (va >> 12) & 511);
}

/* Is va mapped all the way down the current shadow tables?  Answers found
** while the pool is as it is are remembered (struct present_memo). */
static bool present(const struct mmu *m, const struct mmu_vcpu *mv, uint64_t va, unsigned root_i) {
  uint32_t page = mv->cur.slot[root_i];
  if (page == SPT_NONE) return false;
  uint64_t vpn = va >> 12;
  struct present_memo *pm = shadow_present_memo(m, page, vpn);
  if (pm->gen == m->pool.gen && pm->vpn == vpn && pm->root == page) return true;
  if (!walk(m, page, va)) return false;
  *pm = (struct present_memo){ vpn, m->pool.gen, page };
  return true;
}

/* The hypervisor's side of a hidden page fault (KVM's paging_tmpl.h fetch):
** walk the guest tables, allocate the missing shadow pages, link them and
** install the leaf entry.  A fault through a page ends its write flooding. */
static void fill(struct mmu *m, struct mmu_vcpu *mv, const struct gpt_step *path, unsigned root_i, struct work *w) {
  bool hint = m->pol->memslot_hint;
  work_add(w, hint ? PP_GUEST_PTE_READ_FAST : PP_GUEST_PTE_READ, m->glevels);
  work_add(w, hint ? PP_MEMSLOT_LOOKUP_FAST : PP_MEMSLOT_LOOKUP, m->glevels);
  m->ctr[CTR_GUEST_WALKS]++;
  m->evict_work = w;
  spt_reserve(&m->pool, m->slevels);
  m->evict_work = NULL;
  uint32_t page = mv->cur.slot[root_i];
  if (page == SPT_NONE || !roots_live(m, &mv->cur)) return;
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
void shadow_access(struct mmu *m, const struct mmu_ctx *c, uint64_t va, bool write) {
  struct mmu_vcpu *mv = &m->v[c->vcpu];
  unsigned ri = shadow_root_index(m, va);
  if (present(m, mv, va, ri)) return;
  struct gpt_step path[GPT_MAX_LEVELS];
  gpt_walk(m->paging, c->cr3, va, path);
  /* A not-present #PF: the shadow tables lack the entry the guest's own
  ** tables have (a "hidden" fault, which the shadow MMU fills). */
  struct work w;
  work_clear(&w);
  fill(m, mv, path, ri, &w);
  m->ctr[CTR_SHADOW_FAULTS]++;
  struct mmu_fault f = { .kind = MMU_FAULT_PF, .gla = va,
                         .pfec = (write ? PFEC_WRITE : 0) | (gpt_is_kernel(m->paging, va) ? 0 : PFEC_USER) };
  m->sink->fault(m->sink, c->vcpu, &f, &w);
}

/* A guest write to a page-table entry: under shadow paging the page is
** write-protected when shadowed, so the write faults, is emulated, and the
** shadow entry updated; repeated writes without a fault through the page
** ("flooding") zap it, as 2007 KVM did. */
void shadow_pt_write(struct mmu *m, const struct mmu_ctx *c, uint64_t va, unsigned level) {
  struct gpt_key k = gpt_table_of(m->paging, c->cr3, va, level);
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
    gpt_walk(m->paging, c->cr3, va, path);
    uint32_t leaf = spt_find(&m->pool, &path[m->slevels - 1].gkey, 1, path[m->slevels - 1].quadrant);
    if (leaf != SPT_NONE && spt_leaf_present(&m->pool, leaf, path[m->slevels - 1].entry))
      work_add(&w, PP_SHADOW_INSTALL, 1);                      /* update the shadow PTE in place */
  }
  bool zapped = false, cleared = false;
  for (unsigned i = 0; i < nhit; i++) {
    struct spt_page *pg = &m->pool.page[hit[i]];
    if (++pg->writes >= m->pol->flood_threshold && m->pol->flood_threshold && !pg->pins) {
      cleared |= shadow_note_zap(m, pg, &w);
      m->ctr[CTR_FLOOD_ZAPS]++;
      spt_free(&m->pool, hit[i]);
      zapped = true;
    }
  }
  if (zapped && !cleared) m->sink->pt_zapped(m->sink);   /* the 2008 CR3 cache was cleared on such zaps */
  /* A write to a write-protected page: a present, kernel-mode write #PF. */
  struct mmu_fault f = { .kind = MMU_FAULT_PF, .gla = va, .pfec = PFEC_PRESENT | PFEC_WRITE };
  m->sink->fault(m->sink, c->vcpu, &f, &w);
}

/* KVM invlpg: drop the shadow leaf entry of va. */
void shadow_invlpg(struct mmu *m, const struct mmu_ctx *c, uint64_t va) {
  struct gpt_step path[GPT_MAX_LEVELS];
  gpt_walk(m->paging, c->cr3, va, path);
  const struct gpt_step *leaf = &path[m->slevels - 1];
  uint32_t s = spt_find(&m->pool, &leaf->gkey, 1, leaf->quadrant);
  if (s != SPT_NONE) spt_leaf_set(&m->pool, s, leaf->entry, false);
}
