/* EPT: guest frames are mapped on first use.  Each first touch of a
** guest-physical page (a data page, or a guest page-table page read by the
** walk) is an EPT violation whose handler allocates the missing EPT
** paging-structure pages and installs the entry (KVM tdp_page_fault). */
#include "mmu_int.h"
#include "models/counters.h"

static void touch_frame(struct mmu *m, unsigned vcpu, uint64_t gfn, uint64_t gla, uint32_t qual) {
  if (!hset_add(&m->ept_map, gfn)) return;
  struct work w;
  work_clear(&w);
  for (unsigned level = 1; level <= 4; level++)
    if (hset_add(&m->ept_tables, ((uint64_t)level << 56) | (gfn >> (9 * level)))) work_add(&w, PP_SHADOW_ALLOC, 1);
  work_add(&w, PP_SHADOW_INSTALL, 1);
  m->ctr[CTR_EPT_VIOLATIONS]++;
  struct mmu_fault f = { .kind = MMU_FAULT_EPT_VIOLATION, .gla = gla, .gpa = gfn << 12,
                         .ept_qual = qual | EPT_QUAL_GLA_VALID };
  m->sink->fault(m->sink, vcpu, &f, &w);
}

/* A TLB miss under EPT: the two-dimensional walk reads each guest
** page-table page through EPT, then the data page. */
void ept_walk(struct mmu *m, const struct mmu_ctx *c, uint64_t va, bool write) {
  for (unsigned level = m->glevels; level >= 1; level--) {
    struct gpt_key k = gpt_table_of(m->paging, c->cr3, va, level);
    touch_frame(m, c->vcpu, gpt_table_gfn(&k), va, EPT_QUAL_READ);   /* the walker reads a guest table */
  }
  touch_frame(m, c->vcpu, gpt_data_gfn(m->paging, c->cr3, va), va,
              (write ? EPT_QUAL_WRITE : EPT_QUAL_READ) | EPT_QUAL_GLA_FINAL);
}
