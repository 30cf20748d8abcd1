/* EPT, a paging mode (struct paging_ops): guest frames are mapped on first use.  Each first touch of a
** guest-physical page (a data page, or a guest page-table page read by the
** walk) is an EPT violation whose handler allocates the missing EPT
** paging-structure pages and installs the entry (KVM tdp_page_fault).
**
** Guest memory is not recorded, so a page is given its guest frame when it is
** first touched, in that order from EPT_FIRST_GFN, as a guest kernel hands out
** pages of its RAM: frames stay together, and a new EPT page table is needed
** once per 2 MiB of frames, a new page directory once per GiB.  (A hash of the
** page's identity spread frames over 2^39 and made almost every violation
** allocate three paging-structure pages.)  The pages mapped are a set of
** runs of pages (pageset.h): a touch of 2^20 pages is 2^20 violations, but
** its pages take one range, not 2^20 entries. */
#include "mmu_int.h"
#include "models/counters.h"
#include "models/vmx/controls.h"
#include "models/vmx/exit.h"

/* The EPT paging-structure page of `level` that maps gfn holds 2^(9 * level)
** frames (SDM 28.2.2: 9 bits of the guest-physical address per level, level 4
** the root).  Frames are handed out in order (first_touch), so that page is
** new exactly when gfn is the first frame under it: the first of all (whose
** root exists already), or the first past a multiple of 2^(9 * level).  This
** counts what a set of the pages allocated counted, without the set. */
static bool table_is_new(unsigned level, uint64_t gfn) {
  if (gfn == EPT_FIRST_GFN) return level < 4;
  return gfn >> (9 * level) != (gfn - 1) >> (9 * level);
}

/* The root exists before the first violation: KVM allocates it when the MMU
** loads (mmu_alloc_roots() from kvm_mmu_load(); tdp_page_fault() asserts a
** valid root_hpa, Linux 2.6.27 arch/x86/kvm/mmu.c), so no violation pays
** for it. */
static void init(struct mmu *m) {
  pageset_init(&m->ept.map);
  m->ept.next_gfn = EPT_FIRST_GFN;
  m->ept.tables = 1;
}

static void destroy(struct mmu *m) { pageset_free(&m->ept.map); }

/* The first frame past what the guest can address.  32-bit paging translates
** to 32-bit physical addresses (SDM 4.3; PSE-36's larger ones only for 4-MByte
** pages, which traces do not use), so its frames end at 4 GiB; PAE and 4-level
** paging reach MAXPHYADDR bits, at most 52 (SDM 4.1.4), far past any trace. */
static uint64_t ept_gfn_end(unsigned paging) { return paging == PAGING_32 ? 1ull << (32 - 12) : 1ull << (52 - 12); }

/* The frame for `page` if this touch maps it (a violation), else 0.
** A trace that touches more pages than the guest's memory can hold is a guest
** that reused frames, which a trace does not record: the frames go on, so the
** replay finishes, and the run is refused (mmu_failure). */
static uint64_t first_touch(struct mmu *m, const struct gpt_key *page) {
  if (!pageset_add(&m->ept.map, page)) return 0;
  if (m->ept.next_gfn >= ept_gfn_end(m->paging) && !m->ept.out_of_frames) {
    m->ept.out_of_frames = true;
    m->failed_ev = m->guest_ev;
  }
  return m->ept.next_gfn++;
}

static const char *failure(const struct mmu *m) {
  if (!m->ept.out_of_frames) return NULL;
  return m->paging == PAGING_32
           ? "it touches more distinct pages than a guest with 32-bit paging has frames below 4 GiB "
             "(1,044,480 from 16 MiB on): EPT gives each page first touched a frame of its own"
           : "it touches more distinct pages than a guest has frames below 2^52";
}

static void touch_frame(struct mmu *m, unsigned vcpu, const struct gpt_key *page, uint64_t gla, uint32_t qual) {
  uint64_t gfn = first_touch(m, page);
  if (!gfn) return;
  struct work w;
  work_clear(&w);
  for (unsigned level = 1; level <= 4; level++)
    if (table_is_new(level, gfn)) {
      m->ept.tables++;
      work_add(&w, PP_SHADOW_ALLOC, 1);
    }
  work_add(&w, PP_SHADOW_INSTALL, 1);
  m->ctr[CTR_EPT_VIOLATIONS]++;
  struct mmu_fault f = { .kind = MMU_FAULT_EPT_VIOLATION, .gla = gla, .gpa = gfn << 12,
                         .ept_qual = qual | EPT_QUAL_GLA_VALID };
  m->sink->fault(m->sink, vcpu, &f, &w);
}

/* A TLB miss under EPT: the two-dimensional walk reads each guest
** page-table page through EPT, then the data page. */
static void walk(struct mmu *m, const struct mmu_ctx *c, uint64_t va, bool write) {
  for (unsigned level = m->glevels; level >= 1; level--) {
    struct gpt_key k = gpt_table_of(m->paging, c->cr3, va, level);
    touch_frame(m, c->vcpu, &k, va, EPT_QUAL_READ);   /* the walker reads a guest table */
  }
  struct gpt_key data = gpt_data_key(m->paging, c->cr3, va);
  touch_frame(m, c->vcpu, &data, va, (write ? EPT_QUAL_WRITE : EPT_QUAL_READ) | EPT_QUAL_GLA_FINAL);
}

static struct mmu_fault fault(uint64_t gla, uint64_t gpa, bool write) {
  return (struct mmu_fault){ .kind = MMU_FAULT_EPT_VIOLATION, .gla = gla, .gpa = gpa,
                             .ept_qual = (write ? EPT_QUAL_WRITE : EPT_QUAL_READ) | EPT_QUAL_GLA_VALID | EPT_QUAL_GLA_FINAL };
}

static void print(const struct mmu *m, FILE *f) {
  fprintf(f, "EPT: %llu guest frames mapped, %llu EPT paging-structure pages\n",
          (unsigned long long)pageset_pages(&m->ept.map), (unsigned long long)m->ept.tables);
}

static const char *describe(enum mmu_topic t, uint64_t arg) {
  (void)arg;
  switch (t) {
  case MMU_WHY_NO_TOUCH_EXIT:   return "no exit: EPT already maps every page touched";
  case MMU_WHY_NO_PTWRITE_EXIT: return "no exit: under EPT the guest's page tables are not write-protected";
  case MMU_GUEST_CR3_IS:        return "";     /* the guest's own CR3 */
  }
  return "";
}

/* No CR3, INVLPG or #PF exits: the processor walks the guest's own tables,
** and GUEST_CR3 holds the guest's CR3. */
const struct paging_ops paging_ept = {
  .name = "ept",
  .vmx = { .secondary = SEC_ENABLE_EPT, .guest_cr3_direct = true },
  /* a miss only a VM-transition flush caused costs the whole two-dimensional
  ** walk; any other the 2-D walk's extra references */
  .miss_virt_price = PP_TLB_MISS_2D, .miss_native_price = PP_TLB_MISS_2D_EXTRA,
  .init = init, .destroy = destroy, .miss = walk, .fault = fault, .failure = failure,
  .print = print, .describe = describe,
};
