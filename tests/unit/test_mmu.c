/* Unit tests of the MMU models: geometry, the shadow pool, and the policies on small traces
** (roots, CR3 cache, flooding, TLB flushes). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/mmu/gpt.h"
#include "models/mmu/spt.h"
#include "models/mmu/tlb.h"
#include "models/hv/cr3cache.h"
#include "models/vmx/exit_reason.h"
#include "sim/replay/engine.h"
#include "mmu_vm.h"

/* ---- geometry ---- */

static void kernel_tables_are_shared_and_user_tables_private(void **state) {
  (void)state;
  struct gpt_key a = gpt_table_of(PAGING_64, space(1), KERNEL_TEXT, 1);
  struct gpt_key b = gpt_table_of(PAGING_64, space(2), KERNEL_TEXT, 1);
  struct gpt_key c = gpt_table_of(PAGING_64, space(1), USER_CODE, 1);
  struct gpt_key d = gpt_table_of(PAGING_64, space(2), USER_CODE, 1);
  assert_true(gpt_key_eq(&a, &b));
  assert_false(gpt_key_eq(&c, &d));
  struct gpt_key r1 = gpt_table_of(PAGING_64, space(1), KERNEL_TEXT, 4);
  struct gpt_key r2 = gpt_table_of(PAGING_64, space(2), KERNEL_TEXT, 4);
  assert_false(gpt_key_eq(&r1, &r2));          /* every address space has its own root */
  assert_true(gpt_is_kernel(PAGING_32, 0xc0100000));
  assert_false(gpt_is_kernel(PAGING_32, 0xbfff0000));
}

static void paging_modes_have_their_levels_and_roots(void **state) {
  (void)state;
  assert_int_equal(gpt_shadow_levels(PAGING_64), 4);
  assert_int_equal(gpt_guest_levels(PAGING_64), 4);
  assert_int_equal(gpt_guest_levels(PAGING_PAE), 3);
  assert_int_equal(gpt_guest_levels(PAGING_32), 2);
  assert_int_equal(gpt_roots(PAGING_64), 1);
  assert_int_equal(gpt_roots(PAGING_32), 4);
  /* a 32-bit guest page table (4 MiB) is shadowed by two pages: quadrant = va[21] */
  struct gpt_step lo[GPT_MAX_LEVELS], hi[GPT_MAX_LEVELS];
  gpt_walk(PAGING_32, space(1), 0x00400000, lo);
  gpt_walk(PAGING_32, space(1), 0x00600000, hi);
  assert_true(gpt_key_eq(&lo[1].gkey, &hi[1].gkey));
  assert_int_equal(lo[1].quadrant, 0);
  assert_int_equal(hi[1].quadrant, 1);
}

/* gpt_root gives the first step of the walk of the root's first address,
** computed alone (a root switch needs no more). */
static void root_step_is_the_walks_first_step(void **state) {
  (void)state;
  const unsigned modes[] = { PAGING_64, PAGING_PAE, PAGING_32 };
  const uint64_t cr3s[] = { 0, 0x1000, 0x1436000, 0xfffff000, 0x7ffffffff000ull };
  unsigned compared = 0;
  for (unsigned m = 0; m < 3; m++)
    for (unsigned c = 0; c < 5; c++)
      for (unsigned i = 0; i < gpt_roots(modes[m]); i++) {
        struct gpt_step path[GPT_MAX_LEVELS], root;
        gpt_walk(modes[m], cr3s[c], modes[m] == PAGING_64 ? 0 : (uint64_t)i << 30, path);
        gpt_root(modes[m], cr3s[c], i, &root);
        bool same = gpt_key_eq(&root.gkey, &path[0].gkey) && root.level == path[0].level &&
                    root.quadrant == path[0].quadrant && root.entry == path[0].entry;
        if (!same)
          print_message("paging %u cr3 0x%llx root %u: root step level %u quadrant %u entry %u index 0x%llx, "
                        "walk's first (expected) level %u quadrant %u entry %u index 0x%llx\n",
                        modes[m], (unsigned long long)cr3s[c], i, root.level, root.quadrant, root.entry,
                        (unsigned long long)root.gkey.index, path[0].level, path[0].quadrant, path[0].entry,
                        (unsigned long long)path[0].gkey.index);
        assert_true(same);
        compared++;
      }
  print_message("%u root steps equal the walk's first step (expected 45)\n", compared);
  assert_int_equal(compared, 45);
}

/* ---- the pool ---- */

static struct gpt_key key(uint64_t i) { return (struct gpt_key){ .owner = 1, .index = i, .level = 1 }; }

static uint32_t evicted[64];
static unsigned nevicted;
static void record_evict(void *arg, struct spt_pool *p, uint32_t slot) {
  (void)arg;
  evicted[nevicted++] = (uint32_t)p->page[slot].gkey.index;
}

static void pool_evicts_oldest_allocation_first(void **state) {
  (void)state;
  struct spt_pool p;
  nevicted = 0;
  spt_init(&p, 4, false, false, 0, 0, record_evict, NULL);
  for (uint64_t i = 0; i < 4; i++) spt_alloc(&p, &(struct gpt_key){ key(i).owner, i, 1 }, 1, 0);
  spt_touch(&p, spt_find(&p, &(struct gpt_key){ 1, 0, 1 }, 1, 0));   /* FIFO: use does not matter */
  for (uint64_t i = 4; i < 7; i++) {
    spt_reserve(&p, 1);
    assert_int_not_equal(spt_alloc(&p, &(struct gpt_key){ 1, i, 1 }, 1, 0), SPT_NONE);
  }
  assert_int_equal(p.used, 4);
  assert_int_equal(nevicted, 3);
  assert_int_equal(evicted[0], 0);
  assert_int_equal(evicted[1], 1);
  assert_int_equal(evicted[2], 2);
  spt_destroy(&p);
}

static void lru_pool_keeps_recently_used_pages(void **state) {
  (void)state;
  struct spt_pool p;
  nevicted = 0;
  spt_init(&p, 3, true, false, 0, 0, record_evict, NULL);
  for (uint64_t i = 0; i < 3; i++) spt_alloc(&p, &(struct gpt_key){ 1, i, 1 }, 1, 0);
  spt_touch(&p, spt_find(&p, &(struct gpt_key){ 1, 0, 1 }, 1, 0));
  spt_reserve(&p, 1);
  spt_alloc(&p, &(struct gpt_key){ 1, 3, 1 }, 1, 0);
  assert_int_equal(nevicted, 1);
  assert_int_equal(evicted[0], 1);
  spt_destroy(&p);
}

static void pinned_pages_are_never_evicted(void **state) {
  (void)state;
  struct spt_pool p;
  nevicted = 0;
  spt_init(&p, 3, false, false, 0, 0, record_evict, NULL);
  uint32_t root = spt_alloc(&p, &(struct gpt_key){ 1, 0, 4 }, 4, 0);
  p.page[root].pins = 1;
  for (uint64_t i = 1; i < 10; i++) {
    spt_reserve(&p, 1);
    spt_alloc(&p, &(struct gpt_key){ 1, i, 1 }, 1, 0);
  }
  assert_int_not_equal(spt_find(&p, &(struct gpt_key){ 1, 0, 4 }, 4, 0), SPT_NONE);
  for (unsigned i = 0; i < nevicted; i++) assert_int_not_equal(evicted[i], 0);
  spt_destroy(&p);
}

static void refill_zaps_until_high_water_mark(void **state) {
  (void)state;
  struct spt_pool p;
  nevicted = 0;
  spt_init(&p, 40, false, true, 5, 25, record_evict, NULL);
  for (uint64_t i = 0; i < 36; i++) { spt_reserve(&p, 1); spt_alloc(&p, &(struct gpt_key){ 1, i, 1 }, 1, 0); }
  assert_int_equal(nevicted, 0);               /* 4 free: below 5 only now */
  spt_reserve(&p, 1);
  assert_int_equal(p.cap - p.used, 25);        /* 2007 KVM: zap oldest until 25 free */
  assert_int_equal(nevicted, 21);
  assert_int_equal(evicted[0], 0);
  spt_destroy(&p);
}

static void a_link_to_a_reused_slot_is_absent(void **state) {
  (void)state;
  struct spt_pool p;
  spt_init(&p, 4, false, false, 0, 0, NULL, NULL);
  uint32_t parent = spt_alloc(&p, &(struct gpt_key){ 1, 0, 2 }, 2, 0);
  uint32_t child = spt_alloc(&p, &(struct gpt_key){ 1, 0, 1 }, 1, 0);
  spt_link(&p, parent, 7, child);
  assert_true(spt_linked(&p, parent, 7, child));
  spt_free(&p, child);
  uint32_t again = spt_alloc(&p, &(struct gpt_key){ 1, 9, 1 }, 1, 0);
  assert_int_equal(again, child);              /* same slot, new page */
  assert_false(spt_linked(&p, parent, 7, again));
  spt_destroy(&p);
}

/* ---- policies on small traces ---- */

static void second_touch_of_a_page_costs_nothing_extra(void **state) {
  (void)state;
  struct vm vm;
  vm_start(&vm, "shadowcache", NULL, 0, PAGING_64);
  init_cr3(&vm, space(1));
  touch(&vm, USER_CODE, 1);
  uint64_t faults = ctr(&vm, CTR_SHADOW_FAULTS), allocs = ctr(&vm, CTR_SHADOW_ALLOCATED);
  assert_int_equal(faults, 1);
  assert_int_equal(allocs, 4);                 /* root, L3, L2, L1 */
  touch(&vm, USER_CODE, 1);
  assert_int_equal(ctr(&vm, CTR_SHADOW_FAULTS), faults);
  assert_int_equal(ctr(&vm, CTR_SHADOW_ALLOCATED), allocs);
  vm_stop(&vm);
}

static void shared_kernel_tables_are_shadowed_once(void **state) {
  (void)state;
  struct vm vm;
  vm_start(&vm, "shadowcache", NULL, 0, PAGING_64);
  init_cr3(&vm, space(0));
  touch(&vm, KERNEL_TEXT, 1);
  assert_int_equal(ctr(&vm, CTR_SHADOW_ALLOCATED), 4);
  for (unsigned i = 1; i <= 5; i++) {
    cr3w(&vm, space(i));
    touch(&vm, KERNEL_TEXT, 1);
  }
  /* each new address space adds its root only; kernel L3-L1 stay shared */
  assert_int_equal(ctr(&vm, CTR_SHADOW_ALLOCATED), 4 + 5);
  assert_int_equal(ctr(&vm, CTR_SHADOW_FAULTS), 1 + 5);   /* one fault per root to link the shared L3 */
  vm_stop(&vm);
}

static void nocache_discards_everything_on_each_switch(void **state) {
  (void)state;
  struct vm vm;
  vm_start(&vm, "nocache", NULL, 0, PAGING_64);
  init_cr3(&vm, space(0));
  touch(&vm, KERNEL_TEXT, 2);
  touch(&vm, USER_CODE, 1);
  uint64_t allocs = ctr(&vm, CTR_SHADOW_ALLOCATED);
  for (unsigned i = 0; i < 4; i++) {
    cr3w(&vm, space(i % 2 ? 0 : 1));
    assert_int_equal(vm.e.mmu ? ctr(&vm, CTR_SHADOW_ZAPPED) : 0, allocs + (uint64_t)i * allocs);
    touch(&vm, KERNEL_TEXT, 2);
    touch(&vm, USER_CODE, 1);
  }
  assert_int_equal(ctr(&vm, CTR_SHADOW_FAULTS), 5 * 3);
  assert_int_equal(ctr(&vm, CTR_ROOT_HITS), 0);
  vm_stop(&vm);
}

static void shadowcache_keeps_pages_across_switches(void **state) {
  (void)state;
  struct vm vm;
  vm_start(&vm, "shadowcache", NULL, 0, PAGING_64);
  init_cr3(&vm, space(0));
  for (unsigned i = 0; i < 10; i++) {
    cr3w(&vm, space(i % 2));
    touch(&vm, KERNEL_TEXT, 2);
    touch(&vm, USER_CODE, 1);
  }
  assert_int_equal(ctr(&vm, CTR_SHADOW_ZAPPED), 0);
  assert_int_equal(cr3_exits(&vm), 10);
  /* roots load lazily at the first entry that needs them, so the first
  ** switch to each address space builds its root */
  assert_int_equal(ctr(&vm, CTR_ROOT_MISSES), 2);
  assert_int_equal(ctr(&vm, CTR_ROOT_HITS), 8);
  vm_stop(&vm);
}

static void cr3_cache_of_four_removes_switch_exits_for_up_to_four_spaces(void **state) {
  (void)state;
  for (unsigned n = 1; n <= 6; n++) {
    struct vm vm;
    vm_start(&vm, "cr3cache", NULL, 0, PAGING_64);
    init_cr3(&vm, space(100));
    cycle(&vm, n, 4 * n);                          /* warm-up */
    uint64_t before = cr3_exits(&vm);
    cycle(&vm, n, 8 * n);
    uint64_t steady = cr3_exits(&vm) - before;
    print_message("%u address spaces: %llu CR3 exits in %u switches after warm-up (expected %u)\n", n,
                  (unsigned long long)steady, 8 * n, n <= 4 ? 0 : 8 * n);
    /* round-robin replacement: N <= 4 all hit; N > 4 every switch misses */
    assert_int_equal(steady, n <= 4 ? 0 : 8 * n);
    vm_stop(&vm);
  }
}

static void shadowcache_exits_on_every_cr3_write_and_ept_on_none(void **state) {
  (void)state;
  struct vm vm;
  vm_start(&vm, "shadowcache", NULL, 0, PAGING_64);
  init_cr3(&vm, space(0));
  cycle(&vm, 3, 30);
  assert_int_equal(cr3_exits(&vm), 30);
  vm_stop(&vm);
  vm_start(&vm, "ept", NULL, 0, PAGING_64);
  init_cr3(&vm, space(0));
  cycle(&vm, 3, 30);
  assert_int_equal(cr3_exits(&vm), 0);
  assert_int_equal(exits(&vm, EXIT_REASON_EXCEPTION_NMI), 0);
  /* first touch of each guest-physical page (3 data pages + their table pages) */
  assert_true(ctr(&vm, CTR_EPT_VIOLATIONS) > 0);
  uint64_t v = ctr(&vm, CTR_EPT_VIOLATIONS);
  cycle(&vm, 3, 30);
  assert_int_equal(ctr(&vm, CTR_EPT_VIOLATIONS), v);
  vm_stop(&vm);
}

static void prevroots_serves_recent_spaces_from_its_cache(void **state) {
  (void)state;
  struct vm vm;
  vm_start(&vm, "prevroots", NULL, 0, PAGING_64);
  init_cr3(&vm, space(0));
  cycle(&vm, 4, 40);                               /* current + 3 previous cover 4 spaces */
  assert_int_equal(cr3_exits(&vm), 40);            /* CR3 writes still exit */
  assert_int_equal(ctr(&vm, CTR_ROOT_MISSES), 4);  /* the first switch to each space */
  assert_int_equal(ctr(&vm, CTR_PREV_ROOT_HITS), 40 - 4);
  vm_stop(&vm);
}

static void repeated_page_table_writes_zap_the_page(void **state) {
  (void)state;
  struct vm vm;
  vm_start(&vm, "cr3cache", NULL, 0, PAGING_64);
  init_cr3(&vm, space(0));
  cycle(&vm, 2, 4);
  touch(&vm, USER_CODE, 1);
  uint64_t clears = ctr(&vm, CTR_CR3_CACHE_CLEARS);
  for (int i = 0; i < 3; i++) ev(&vm, EV_PTWRITE, 1, USER_CODE, 0);
  assert_int_equal(ctr(&vm, CTR_PTE_WRITES_EMULATED), 3);
  assert_int_equal(exits(&vm, EXIT_REASON_EXCEPTION_NMI), ctr(&vm, CTR_SHADOW_FAULTS) + 3);
  assert_int_equal(ctr(&vm, CTR_FLOOD_ZAPS), 1);
  assert_int_equal(ctr(&vm, CTR_CR3_CACHE_CLEARS), clears + 1);
  ev(&vm, EV_PTWRITE, 1, USER_CODE, 0);            /* no longer shadowed: a plain write */
  assert_int_equal(ctr(&vm, CTR_PTE_WRITES_EMULATED), 3);
  uint64_t faults = ctr(&vm, CTR_SHADOW_FAULTS);
  touch(&vm, USER_CODE, 1);          /* the exits flushed the TLB and the table is no longer shadowed */
  assert_int_equal(ctr(&vm, CTR_SHADOW_FAULTS), faults + 1);
  touch(&vm, USER_CODE, 1);          /* shadowed again: no fault */
  assert_int_equal(ctr(&vm, CTR_SHADOW_FAULTS), faults + 1);
  ev(&vm, EV_INVLPG, 0, USER_CODE, 0);   /* KVM drops the shadow leaf entry */
  touch(&vm, USER_CODE, 1);
  assert_int_equal(ctr(&vm, CTR_SHADOW_FAULTS), faults + 2);
  vm_stop(&vm);
}

static void small_pool_evicts_but_never_the_current_root(void **state) {
  (void)state;
  const char *sets[] = { "shadow_pages_max=8", "shadow_refill=false" };
  struct vm vm;
  vm_start(&vm, "shadowcache", sets, 2, PAGING_64);
  init_cr3(&vm, space(0));
  for (unsigned i = 0; i < 64; i++) touch(&vm, USER_CODE + ((uint64_t)i << 21), 1);   /* a new L1 each */
  assert_true(ctr(&vm, CTR_SHADOW_EVICTED) > 0);
  assert_true(vm.e.mmu != NULL);
  touch(&vm, USER_CODE, 1);
  assert_int_equal(ctr(&vm, CTR_ROOT_MISSES), 0);
  vm_stop(&vm);
}

/* The cycles of the exit of a first touch of va in a fresh 64-bit VM. */
static uint64_t first_fault_cycles(const char *policy, uint64_t va, struct profile *prof) {
  struct vm vm;
  vm_start(&vm, policy, NULL, 0, PAGING_64);
  init_cr3(&vm, space(0));
  touch(&vm, va, 1);
  assert_int_equal(exits(&vm, EXIT_REASON_EXCEPTION_NMI), 1);
  uint64_t cycles = vm.e.st.row[EXIT_REASON_EXCEPTION_NMI].cycles;
  *prof = vm.prof;
  prof->json = NULL;                 /* the VM owns (and frees) the loaded text */
  vm_stop(&vm);
  return cycles;
}

/* Linux 2.6.20 drivers/kvm/mmu.c: the caching KVM tops up its object caches,
** looks each missing shadow page up in its hash (and the target frame in
** set_pte_common), write-protects each guest page table it starts shadowing
** and records the new leaf in the reverse map; the discarding KVM did none of
** it.  A kernel page table shadows a large page (metaphysical): not protected. */
static void the_caching_kvm_prices_its_fault_bookkeeping_and_the_discarding_kvm_does_not(void **state) {
  (void)state;
  struct profile p;
  uint64_t user_nocache = first_fault_cycles("nocache", USER_CODE, &p);
  uint64_t user_cache = first_fault_cycles("shadowcache", USER_CODE, &p);
  /* L3, L2 and L1 are new (the root was built with no exit): 3 links, 3 protected tables */
  uint64_t common = p.p[PP_MMU_CACHE_TOPUP] + 4 * p.p[PP_MMU_PAGE_LOOKUP] + p.p[PP_RMAP_ADD];
  assert_int_equal(user_cache - user_nocache, common + 3 * p.p[PP_RMAP_WRITE_PROTECT]);
  uint64_t kernel_nocache = first_fault_cycles("nocache", KERNEL_TEXT, &p);
  uint64_t kernel_cache = first_fault_cycles("shadowcache", KERNEL_TEXT, &p);
  assert_int_equal(kernel_cache - kernel_nocache, common + 2 * p.p[PP_RMAP_WRITE_PROTECT]);
}

/* The cycles of the exit whose write floods the guest page table of
** USER_CODE after `leaves` of its pages were mapped. */
static uint64_t flood_zap_cycles(const char *policy, unsigned leaves, struct profile *prof) {
  struct vm vm;
  vm_start(&vm, policy, NULL, 0, PAGING_64);
  init_cr3(&vm, space(0));
  touch(&vm, USER_CODE, leaves);
  for (int i = 0; i < 3; i++) ev(&vm, EV_PTWRITE, 1, USER_CODE, 0);
  assert_int_equal(ctr(&vm, CTR_FLOOD_ZAPS), 1);
  uint64_t cycles = vm.e.last.cycles;
  *prof = vm.prof;
  prof->json = NULL;
  vm_stop(&vm);
  return cycles;
}

/* kvm_mmu_zap_page of the caching KVM drops the reverse-map entry of every
** present leaf of a zapped page table (rmap_remove); the discarding KVM's
** zap costs the same whatever the page held. */
static void a_zap_by_the_caching_kvm_removes_each_present_leaf_from_the_reverse_map(void **state) {
  (void)state;
  struct profile p;
  uint64_t one = flood_zap_cycles("shadowcache", 1, &p), three = flood_zap_cycles("shadowcache", 3, &p);
  assert_int_equal(three - one, 2 * p.p[PP_RMAP_REMOVE]);
  assert_int_equal(flood_zap_cycles("nocache", 3, &p), flood_zap_cycles("nocache", 1, &p));
  /* and the TLB flush after a page table: a VMREAD and a VMWRITE of GUEST_CR3 */
  assert_int_equal(one - flood_zap_cycles("nocache", 1, &p),
                   p.p[PP_RMAP_REMOVE] + p.p[PP_VMREAD] + p.p[PP_VMWRITE]);
}

static void counters_are_deterministic(void **state) {
  (void)state;
  uint64_t first[CTR_COUNT], vmm = 0;
  for (int run = 0; run < 2; run++) {
    struct vm vm;
    vm_start(&vm, "shadowcache", NULL, 0, PAGING_32);
    init_cr3(&vm, space(0));
    for (unsigned i = 0; i < 200; i++) {
      cr3w(&vm, space(i % 7));
      touch(&vm, 0xc1000000 + ((uint64_t)(i % 13) << 12), 1);
      touch(&vm, 0x08048000 + ((uint64_t)(i % 5) << 22), 3);
    }
    if (run == 0) { memcpy(first, vm.e.st.counter, sizeof first); vmm = vm.e.st.vmm_cycles; }
    else {
      assert_memory_equal(first, vm.e.st.counter, sizeof first);
      assert_int_equal(vmm, vm.e.st.vmm_cycles);
    }
    vm_stop(&vm);
  }
}

static void vm_transitions_flush_the_tlb_unless_vpid(void **state) {
  (void)state;
  struct tlb t;
  tlb_init(&t, 64);
  assert_int_equal(tlb_access(&t, 0x1000, 1, false), TLB_MISS_NATIVE);
  assert_int_equal(tlb_access(&t, 0x1000, 1, false), TLB_HIT);
  tlb_flush_vm(&t);
  assert_int_equal(tlb_access(&t, 0x1000, 1, false), TLB_MISS_VIRT);
  assert_int_equal(tlb_access(&t, KERNEL_TEXT, 1, true), TLB_MISS_NATIVE);
  tlb_flush_nonglobal(&t);
  assert_int_equal(tlb_access(&t, KERNEL_TEXT, 2, true), TLB_HIT);     /* global survives CR3 writes */
  assert_int_equal(tlb_access(&t, 0x1000, 1, false), TLB_MISS_NATIVE);
  tlb_flush_all(&t);
  assert_int_equal(tlb_access(&t, KERNEL_TEXT, 2, true), TLB_MISS_NATIVE);
  tlb_free(&t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(kernel_tables_are_shared_and_user_tables_private),
    cmocka_unit_test(paging_modes_have_their_levels_and_roots),
    cmocka_unit_test(root_step_is_the_walks_first_step),
    cmocka_unit_test(pool_evicts_oldest_allocation_first),
    cmocka_unit_test(lru_pool_keeps_recently_used_pages),
    cmocka_unit_test(pinned_pages_are_never_evicted),
    cmocka_unit_test(refill_zaps_until_high_water_mark),
    cmocka_unit_test(a_link_to_a_reused_slot_is_absent),
    cmocka_unit_test(second_touch_of_a_page_costs_nothing_extra),
    cmocka_unit_test(shared_kernel_tables_are_shadowed_once),
    cmocka_unit_test(nocache_discards_everything_on_each_switch),
    cmocka_unit_test(shadowcache_keeps_pages_across_switches),
    cmocka_unit_test(cr3_cache_of_four_removes_switch_exits_for_up_to_four_spaces),
    cmocka_unit_test(shadowcache_exits_on_every_cr3_write_and_ept_on_none),
    cmocka_unit_test(prevroots_serves_recent_spaces_from_its_cache),
    cmocka_unit_test(repeated_page_table_writes_zap_the_page),
    cmocka_unit_test(small_pool_evicts_but_never_the_current_root),
    cmocka_unit_test(the_caching_kvm_prices_its_fault_bookkeeping_and_the_discarding_kvm_does_not),
    cmocka_unit_test(a_zap_by_the_caching_kvm_removes_each_present_leaf_from_the_reverse_map),
    cmocka_unit_test(counters_are_deterministic),
    cmocka_unit_test(vm_transitions_flush_the_tlb_unless_vpid),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
