/* Shadow paging, a paging mode (struct paging_ops): hidden page faults that
** fill shadow entries, trapped guest page-table writes (and the write
** flooding that zaps a shadow page), INVLPG, and zaps; the roots are
** mmu_roots*.c's.  KVM's paging_tmpl.h and mmu.c of 2007 are the model. */
#include "mmu_int.h"
#include "models/alloc.h"
#include "models/counters.h"
#include "models/vmx/controls.h"
#include "models/vmx/exit.h"

#include <stdlib.h>

/* Where the answer for vpn under root is remembered (struct present_memo). */
static inline struct present_memo *shadow_present_memo(const struct mmu *m, uint32_t root, uint64_t vpn) {
  return &m->sh.present_memo[((vpn ^ (uint64_t)root << 40) * 0x9e3779b97f4a7c15ull) >> (64 - PRESENT_MEMO_BITS)];
}
static inline unsigned shadow_root_index(const struct mmu *m, uint64_t va) {
  return m->sh.nroots == 1 ? 0 : (unsigned)((va >> 30) & 3);
}

static bool is_root_page(const struct mmu *m, const struct spt_page *pg) {
  return pg->level == m->sh.slevels && pg->gkey.level == gpt_guest_levels(m->paging) - (m->paging == PAGING_PAE);
}

/* The present entries of a shadow page: installed leaves, or live links. */
static unsigned present_entries(const struct spt_pool *p, const struct spt_page *pg) {
  unsigned n = 0;
  if (pg->level == 1) {
    for (unsigned i = 0; i < SPT_ENTRIES / 64; i++) n += (unsigned)__builtin_popcountll(pg->present[i]);
    return n;
  }
  for (unsigned e = 0; e < SPT_ENTRIES; e++) {
    const struct spt_link *l = &pg->links[e];
    n += l->serial && p->page[l->slot].live && p->page[l->slot].serial == l->serial;
  }
  return n;
}

/* The caching KVM's kvm_mmu_zap_page (Linux 2.6.20 drivers/kvm/mmu.c) also
** drops, for each present entry the 512-entry scan finds, its reverse-map
** entry (rmap_remove, a leaf) or its parent-PTE record (a child), and flushes
** the TLB after a page table (vmx_flush_tlb: a VMREAD and a VMWRITE of
** GUEST_CR3). */
static void zap_caching_work(const struct mmu *m, const struct spt_page *pg, struct work *w) {
  work_add(w, PP_RMAP_REMOVE, present_entries(&m->sh.pool, pg));
  if (pg->level == 1) {
    work_add(w, PP_VMREAD, 1);
    work_add(w, PP_VMWRITE, 1);
  }
}

bool shadow_note_zap(struct mmu *m, const struct spt_page *pg, struct work *w) {
  m->ctr[CTR_SHADOW_ZAPPED]++;
  if (w) work_add(w, PP_SHADOW_ZAP, 1);
  if (w && m->sh.caching) zap_caching_work(m, pg, w);
  return is_root_page(m, pg) && m->sink->root_zapped(m->sink, pg->gkey.owner);
}

/* Linux maps its kernel half with large pages (4 MB under 32-bit paging,
** 2 MB otherwise), which KVM shadows with "metaphysical" page tables: they
** shadow no guest page table, so nothing is write-protected for them
** (kvm_mmu_get_page's metaphysical role, paging_tmpl.h fetch). */
static bool shadows_a_guest_table(const struct spt_page *pg) {
  return !(pg->level == 1 && pg->gkey.owner == GPT_KERNEL_OWNER);
}

void shadow_note_new_page(const struct mmu *m, const struct spt_page *pg, struct work *w) {
  if (w && m->sh.caching && shadows_a_guest_table(pg)) work_add(w, PP_RMAP_WRITE_PROTECT, 1);
}

void shadow_on_evict(void *arg, struct spt_pool *p, uint32_t slot) {
  struct mmu *m = arg;
  m->ctr[CTR_SHADOW_EVICTED]++;
  shadow_note_zap(m, &p->page[slot], m->sh.evict_work);
}

/* Is va mapped all the way down from shadow root page `page`?  Follows the
** links the way the hardware walker does (a link names exactly the child the
** guest table structure implies), so no hash lookup is needed. */
static bool walk(const struct mmu *m, uint32_t page, uint64_t va) {
  const struct spt_pool *p = &m->sh.pool;
  for (unsigned level = m->sh.slevels; level > 1; level--) {
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
  if (pm->gen == m->sh.pool.gen && pm->vpn == vpn && pm->root == page) return true;
  if (!walk(m, page, va)) return false;
  *pm = (struct present_memo){ vpn, m->sh.pool.gen, page };
  return true;
}

/* The hypervisor's side of a hidden page fault (KVM's paging_tmpl.h fetch):
** walk the guest tables, allocate the missing shadow pages, link them and
** install the leaf entry.  A fault through a page ends its write flooding. */
static void fill(struct mmu *m, struct mmu_vcpu *mv, const struct gpt_step *path, unsigned root_i, struct work *w) {
  bool hint = m->pol->memslot_hint;
  if (m->sh.caching) work_add(w, PP_MMU_CACHE_TOPUP, 1);     /* mmu_topup_memory_caches */
  work_add(w, hint ? PP_GUEST_PTE_READ_FAST : PP_GUEST_PTE_READ, m->glevels);
  work_add(w, hint ? PP_MEMSLOT_LOOKUP_FAST : PP_MEMSLOT_LOOKUP, m->glevels);
  m->ctr[CTR_GUEST_WALKS]++;
  m->sh.evict_work = w;
  spt_reserve(&m->sh.pool, m->sh.slevels);
  m->sh.evict_work = NULL;
  uint32_t page = mv->cur.slot[root_i];
  if (page == SPT_NONE || !roots_live(m, &mv->cur)) return;
  m->sh.pool.page[page].writes = 0;
  for (unsigned i = 0; i + 1 < m->sh.slevels; i++) {
    const struct gpt_step *c = &path[i + 1];
    uint32_t child = spt_find(&m->sh.pool, &c->gkey, c->level, c->quadrant);
    if (child == SPT_NONE) {
      child = spt_alloc(&m->sh.pool, &c->gkey, c->level, c->quadrant);
      if (child == SPT_NONE) return;      /* every page pinned: nothing can be cached */
      m->ctr[CTR_SHADOW_ALLOCATED]++;
      work_add(w, PP_SHADOW_ALLOC, 1);
      shadow_note_new_page(m, &m->sh.pool.page[child], w);
    }
    spt_touch(&m->sh.pool, child);
    m->sh.pool.page[child].writes = 0;
    if (!spt_linked(&m->sh.pool, page, path[i].entry, child)) {
      spt_link(&m->sh.pool, page, path[i].entry, child);
      work_add(w, PP_SHADOW_INSTALL, 1);
      /* KVM's fetch looks the child up only where the shadow entry is absent */
      if (m->sh.caching) work_add(w, PP_MMU_PAGE_LOOKUP, 1);
    }
    page = child;
  }
  spt_leaf_set(&m->sh.pool, page, path[m->sh.slevels - 1].entry, true);
  work_add(w, PP_SHADOW_INSTALL, 1);
  /* set_pte_common: is the target page itself shadowed (then map it
  ** read-only)?  And record the new entry in the reverse map. */
  if (m->sh.caching) {
    work_add(w, PP_MMU_PAGE_LOOKUP, 1);
    work_add(w, PP_RMAP_ADD, 1);
  }
}

/* A TLB miss under shadow paging: the shadow walk, and a hidden page fault
** when the page is not mapped all the way down. */
static void shadow_access(struct mmu *m, const struct mmu_ctx *c, uint64_t va, bool write) {
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
static void shadow_pt_write(struct mmu *m, const struct mmu_ctx *c, uint64_t va, unsigned level) {
  struct gpt_key k = gpt_table_of(m->paging, c->cr3, va, level);
  if (level < 1 || level > m->sh.slevels) return;   /* e.g. the PAE PDPT: not shadowed */
  /* Every shadow page of the guest page (one per quadrant for 32-bit guests)
  ** sees the write: KVM counts flooding per shadow page of the gfn. */
  uint32_t hit[4];
  unsigned nhit = 0;
  for (unsigned q = 0; q < 4; q++)
    if ((hit[nhit] = spt_find(&m->sh.pool, &k, level, q)) != SPT_NONE) nhit++;
  if (!nhit) return;                                           /* not shadowed: a plain write */
  struct work w;
  work_clear(&w);
  work_add(&w, PP_PTE_EMULATE, 1);
  m->ctr[CTR_PTE_WRITES_EMULATED]++;
  if (level == 1) {
    struct gpt_step path[GPT_MAX_LEVELS];
    gpt_walk(m->paging, c->cr3, va, path);
    uint32_t leaf = spt_find(&m->sh.pool, &path[m->sh.slevels - 1].gkey, 1, path[m->sh.slevels - 1].quadrant);
    if (leaf != SPT_NONE && spt_leaf_present(&m->sh.pool, leaf, path[m->sh.slevels - 1].entry))
      work_add(&w, PP_SHADOW_INSTALL, 1);                      /* update the shadow PTE in place */
  }
  bool zapped = false, cleared = false;
  for (unsigned i = 0; i < nhit; i++) {
    struct spt_page *pg = &m->sh.pool.page[hit[i]];
    if (++pg->writes >= m->pol->flood_threshold && m->pol->flood_threshold && !pg->pins) {
      cleared |= shadow_note_zap(m, pg, &w);
      m->ctr[CTR_FLOOD_ZAPS]++;
      spt_free(&m->sh.pool, hit[i]);
      zapped = true;
    }
  }
  if (zapped && !cleared) m->sink->pt_zapped(m->sink);   /* the 2008 CR3 cache was cleared on such zaps */
  /* A write to a write-protected page: a present, kernel-mode write #PF. */
  struct mmu_fault f = { .kind = MMU_FAULT_PF, .gla = va, .pfec = PFEC_PRESENT | PFEC_WRITE };
  m->sink->fault(m->sink, c->vcpu, &f, &w);
}

/* KVM invlpg: drop the shadow leaf entry of va. */
static void shadow_invlpg(struct mmu *m, const struct mmu_ctx *c, uint64_t va) {
  struct gpt_step path[GPT_MAX_LEVELS];
  gpt_walk(m->paging, c->cr3, va, path);
  const struct gpt_step *leaf = &path[m->sh.slevels - 1];
  uint32_t s = spt_find(&m->sh.pool, &leaf->gkey, 1, leaf->quadrant);
  if (s != SPT_NONE) spt_leaf_set(&m->sh.pool, s, leaf->entry, false);
}

static void prepare(struct mmu *m, const struct mmu_ctx *c) { roots_ensure(m, c); }

/* KVM reloads the MMU context. */
static void flush_all(struct mmu *m, struct work *w) {
  (void)m;
  work_add(w, PP_ROOT_SWITCH, 1);
}

/* Every vCPU pins the roots of its address space (and of its previous roots),
** and a switch must be able to build one more set of roots. */
static unsigned min_pool(const struct policy *p, unsigned paging, unsigned nvcpu) {
  unsigned prev = p->prev_roots < MAX_PREV ? p->prev_roots : MAX_PREV;
  return (nvcpu * (1 + prev) + 1) * gpt_roots(paging);
}

/* A not-present #PF. */
static struct mmu_fault fault(uint64_t gla, uint64_t gpa, bool write) {
  (void)gpa;
  return (struct mmu_fault){ .kind = MMU_FAULT_PF, .gla = gla, .pfec = write ? PFEC_WRITE : 0 };
}

static void init(struct mmu *m) {
  const struct policy *p = m->pol;
  m->sh.roots = roots_scheme_for(p);
  m->sh.nroots = gpt_roots(m->paging);
  m->sh.slevels = gpt_shadow_levels(m->paging);
  m->sh.caching = p->shadow_cache;
  m->sh.present_memo = xcalloc(1u << PRESENT_MEMO_BITS, sizeof *m->sh.present_memo);
  spt_init(&m->sh.pool, p->shadow_pages_max, p->shadow_eviction == EVICT_LRU, p->shadow_refill,
           p->refill_low, p->refill_high, shadow_on_evict, m);
}

static void destroy(struct mmu *m) {
  free(m->sh.present_memo);
  spt_destroy(&m->sh.pool);
}

/* Pool usage, the oldest pages and each vCPU's roots. */
static void print(const struct mmu *m, FILE *f) {
  spt_print(&m->sh.pool, f, 8);
  for (unsigned i = 0; i < m->nvcpu; i++) {
    const struct mmu_vcpu *mv = &m->v[i];
    fprintf(f, "vCPU %u: current root cr3 0x%llx", i, (unsigned long long)mv->cur.cr3);
    for (unsigned p = 0; p < mv->nprev; p++) fprintf(f, "%s0x%llx", p ? ", " : "; previous ", (unsigned long long)mv->prev[p].cr3);
    fprintf(f, "\n");
  }
}

static const char *describe(enum mmu_topic t, uint64_t arg) {
  switch (t) {
  case MMU_WHY_NO_TOUCH_EXIT:   return "no exit: the shadow tables already map every page touched";
  case MMU_WHY_NO_PTWRITE_EXIT: return "no exit: that guest page table is not shadowed, so it is not write-protected";
  /* Shadow roots for the first CR3 are built lazily, without a VMWRITE. */
  case MMU_GUEST_CR3_IS:        return arg ? ": the shadow root" : ": no CR3 exit has loaded a shadow root yet";
  }
  return "";
}

/* Shadow paging intercepts every guest #PF (KVM: the shadow MMU must see the
** faults that fill shadow entries), CR3 loads and stores and INVLPG, and keeps
** paging on in the real CR0 (PG, WP, PE, NE) and CR4.PAE: the shadow tables of
** a 32-bit guest are PAE tables (KVM's KVM_PMODE_VM_CR4_ALWAYS_ON, Linux
** 2.6.20 drivers/kvm/kvm.h; the guest's own PAE bit is host-owned,
** CR4_SHADOW_PAGING_OWNED, so it reads its own). */
const struct paging_ops paging_shadow = {
  .name = "shadow",
  .vmx = { .cpu_controls = CPU_CR3_LOAD_EXITING | CPU_CR3_STORE_EXITING | CPU_INVLPG_EXITING,
           .exceptions = 1u << 14,
           .cr0_forced = CR0_PG | CR0_WP | CR0_PE | (1ull << 5),
           .cr4_forced = CR4_PAE,
           .cr4_owned = CR4_SHADOW_PAGING_OWNED },
  .seg_memo = true,
  /* a miss only a VM-transition flush caused costs a full native walk; a
  ** native miss costs what it cost natively, which the trace's cycles hold */
  .miss_virt_price = PP_TLB_MISS_NATIVE, .miss_native_price = MMU_NO_PRICE,
  .init = init, .destroy = destroy, .min_pool = min_pool, .prepare = prepare, .miss = shadow_access,
  .pt_write = shadow_pt_write, .cr3_switch = roots_switch, .invlpg = shadow_invlpg, .flush_all = flush_all,
  .fault = fault, .print = print, .describe = describe,
};
