/* Unit tests of the MMU models: shadow pool, roots, CR3 cache, flooding, EPT. */
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
#include "sim/core/engine.h"

#define KERNEL_TEXT 0xffffffff81000000ull
#define USER_CODE   0x400000ull

/* ---- a tiny VM driven by hand-made events ---- */

struct vm {
  struct policy pol;
  struct profile prof;
  struct engine e;
};

static void vm_start(struct vm *vm, const char *policy, const char *const *sets, int nsets, unsigned paging) {
  char err[512];
  assert_int_equal(policy_resolve(&vm->pol, policy, (char *const *)sets, nsets, err, sizeof err), 0);
  /* EPT policies need a CPU with EPT (the 2007 Core 2 has none). */
  assert_int_equal(profile_load(&vm->prof, strstr(policy, "ept") ? "nehalem-2009" : "core2-2007", err, sizeof err), 0);
  assert_int_equal(engine_init(&vm->e, &vm->pol, &vm->prof, 1, paging, err, sizeof err), 0);
}

static void vm_stop(struct vm *vm) {
  engine_free(&vm->e);
  profile_free(&vm->prof);
}

static void ev(struct vm *vm, unsigned type, unsigned aux, uint64_t a, uint64_t b) {
  struct trace_event e = { .type = (uint8_t)type, .aux = (uint8_t)aux, .a = a, .b = b };
  engine_step(&vm->e, &e);
}

static void init_cr3(struct vm *vm, uint64_t cr3) { ev(vm, EV_INIT, 3, cr3, 0); }
static void cr3w(struct vm *vm, uint64_t cr3) { ev(vm, EV_CR_WRITE, 3, cr3, 0); }
static void touch(struct vm *vm, uint64_t va, uint64_t pages) { ev(vm, EV_TOUCH, 0, va, pages); }
static uint64_t ctr(const struct vm *vm, enum counter c) { return vm->e.st.counter[c]; }
static uint64_t exits(const struct vm *vm, unsigned reason) { return vm->e.st.row[reason].count; }
static uint64_t cr3_exits(const struct vm *vm) { return vm->e.st.row[STAT_CR_BASE + CRSUB_CR3W].count; }

/* What the REPL's `info shadow` prints for the VM now (malloc'd). */
static char *shadow_text(struct vm *vm) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  mmu_print_shadow(vm->e.mmu, f);
  fclose(f);
  return text;
}

static uint64_t space(unsigned i) { return 0x10000000ull + (uint64_t)i * 0x100000; }

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

static void cycle(struct vm *vm, unsigned n, unsigned switches) {
  for (unsigned i = 0; i < switches; i++) {
    cr3w(vm, space(i % n));
    touch(vm, USER_CODE, 1);
  }
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

/* ---- an address space whose CR3 is 0 (a trace without "@init cr3") ---- */

static void an_address_space_whose_cr3_is_0_keeps_its_shadow_pages(void **state) {
  (void)state;
  struct vm vm;
  vm_start(&vm, "shadowcache", NULL, 0, PAGING_64);
  init_cr3(&vm, 0);
  for (int i = 0; i < 3; i++) {
    touch(&vm, USER_CODE, 1);
    ev(&vm, EV_CPUID, 0, 0, 0);                  /* the exit flushes the TLB: the next touch walks */
  }
  uint64_t faults = ctr(&vm, CTR_SHADOW_FAULTS), allocs = ctr(&vm, CTR_SHADOW_ALLOCATED);
  print_message("cr3 0: %llu shadow faults (expected 1), %llu pages allocated (expected 4)\n",
                (unsigned long long)faults, (unsigned long long)allocs);
  assert_int_equal(faults, 1);
  assert_int_equal(allocs, 4);
  vm_stop(&vm);
}

static void prevroots_keeps_the_roots_of_cr3_0_as_a_previous_root(void **state) {
  (void)state;
  struct vm vm;
  vm_start(&vm, "prevroots", NULL, 0, PAGING_64);
  init_cr3(&vm, 0);
  touch(&vm, USER_CODE, 1);                      /* roots of cr3 0 load at the first entry */
  for (int i = 0; i < 10; i++) {
    cr3w(&vm, space(1));
    touch(&vm, USER_CODE, 1);
    cr3w(&vm, 0);
    touch(&vm, USER_CODE, 1);
  }
  uint64_t hits = ctr(&vm, CTR_PREV_ROOT_HITS), misses = ctr(&vm, CTR_ROOT_MISSES);
  print_message("prev_root_hits %llu (expected 19), root_misses %llu (expected 1)\n",
                (unsigned long long)hits, (unsigned long long)misses);
  assert_int_equal(hits, 19);
  assert_int_equal(misses, 1);
  vm_stop(&vm);
}

static void a_cr3_write_flushes_non_global_entries_of_address_space_0(void **state) {
  (void)state;
  struct tlb t;
  tlb_init(&t, 64);
  assert_int_equal(tlb_access(&t, 0x1000, 0, false), TLB_MISS_NATIVE);
  tlb_flush_nonglobal(&t);
  enum tlb_result r = tlb_access(&t, 0x1000, 0, false);
  print_message("access after a CR3 write: %d (expected TLB_MISS_NATIVE = %d)\n", r, TLB_MISS_NATIVE);
  assert_int_equal(r, TLB_MISS_NATIVE);
  assert_int_equal(tlb_access(&t, KERNEL_TEXT, 0, true), TLB_MISS_NATIVE);
  tlb_flush_nonglobal(&t);
  assert_int_equal(tlb_access(&t, KERNEL_TEXT, 0, true), TLB_HIT);   /* a global entry survives */
  tlb_free(&t);
}

static void clearing_the_cr3_cache_also_drops_a_cached_cr3_0(void **state) {
  (void)state;
  struct vm vm;
  vm_start(&vm, "cr3cache", NULL, 0, PAGING_64);
  init_cr3(&vm, space(1));
  touch(&vm, USER_CODE, 1);
  for (unsigned i = 2; i <= 5; i++) {            /* fill all four slots */
    cr3w(&vm, space(i));
    touch(&vm, USER_CODE, 1);
  }
  cr3w(&vm, 0);                  /* 0 matches no target now: exits and is cached in slot 0 */
  assert_int_equal(cr3_exits(&vm), 5);
  assert_int_not_equal(vm.e.vcpu[0].cr3c->operand(&vm.e.vcpu[0], 0), 0);
  touch(&vm, USER_CODE, 1);
  for (int i = 0; i < 3; i++) ev(&vm, EV_PTWRITE, 1, USER_CODE, 0);   /* flooding clears the cache */
  assert_int_equal(ctr(&vm, CTR_CR3_CACHE_CLEARS), 1);
  uint64_t op = vm.e.vcpu[0].cr3c->operand(&vm.e.vcpu[0], 0), target0 = vmcs_peek(&vm.e.vcpu[0].vmx.vmcs, VMCS_CR3_TARGET_VALUE0);
  print_message("after the clear the guest loads 0x%llx for cr3 0 (expected 0), CR3_TARGET_VALUE0 0x%llx (expected 0)\n",
                (unsigned long long)op, (unsigned long long)target0);
  assert_int_equal(op, 0);
  assert_int_equal(target0, 0);
  vm_stop(&vm);
}

static void evicting_the_root_of_an_uncached_cr3_0_does_not_clear_the_cr3_cache(void **state) {
  (void)state;
  const char *sets[] = { "shadow_pages_max=8", "shadow_refill=false" };
  struct vm vm;
  vm_start(&vm, "cr3cache", sets, 2, PAGING_64);
  init_cr3(&vm, 0);
  touch(&vm, USER_CODE, 1);
  cr3w(&vm, space(1));                           /* caches space(1); cr3 0 is not cached */
  for (unsigned i = 0; i < 16; i++) touch(&vm, USER_CODE + ((uint64_t)i << 21), 1);
  assert_true(ctr(&vm, CTR_SHADOW_EVICTED) >= 4);   /* cr3 0's pages, root included, are gone */
  uint64_t clears = ctr(&vm, CTR_CR3_CACHE_CLEARS);
  print_message("cr3_cache_clears %llu (expected 0)\n", (unsigned long long)clears);
  assert_int_equal(clears, 0);
  vm_stop(&vm);
}

static void flooding_a_32_bit_guest_page_table_zaps_the_shadow_page_of_the_written_half(void **state) {
  (void)state;
  /* A 32-bit guest page table (4 MiB) is shadowed by two pages, one per 2 MiB
  ** half (quadrant = va[21]).  Writes to entries of the upper half flood the
  ** guest page, so the shadow page that holds those entries must go. */
  struct vm vm;
  vm_start(&vm, "shadowcache", NULL, 0, PAGING_32);
  init_cr3(&vm, space(0));
  touch(&vm, 0x08000000, 1);                     /* lower half: quadrant 0 */
  touch(&vm, 0x08200000, 1);                     /* upper half: quadrant 1 */
  assert_int_equal(ctr(&vm, CTR_SHADOW_FAULTS), 2);
  for (int i = 0; i < 3; i++) ev(&vm, EV_PTWRITE, 1, 0x08200000, 0);
  assert_int_equal(ctr(&vm, CTR_PTE_WRITES_EMULATED), 3);
  touch(&vm, 0x08200000, 1);
  uint64_t faults = ctr(&vm, CTR_SHADOW_FAULTS), zaps = ctr(&vm, CTR_FLOOD_ZAPS);
  print_message("after flooding: %llu shadow faults (expected 3: the upper half was zapped), %llu flood zaps (expected 2)\n",
                (unsigned long long)faults, (unsigned long long)zaps);
  assert_int_equal(faults, 3);
  assert_int_equal(zaps, 2);                     /* every shadow page of the flooded guest page */
  vm_stop(&vm);
}

static void an_exiting_cr4_write_that_sets_a_guest_owned_pge_flushes_the_tlb(void **state) {
  (void)state;
  /* ept+cr4mask: PGE is guest-owned, MCE host-owned.  The guest clears PGE
  ** without an exit (the read shadow keeps the stale PGE = 1), then sets PGE
  ** and MCE: the write exits, and it changes PGE, so it flushes every TLB
  ** entry (SDM Vol. 3A 4.10.4.1).  The handler must compare with the guest's CR4,
  ** not with the read shadow. */
  struct vm vm;
  vm_start(&vm, "ept+cr4mask", NULL, 0, PAGING_64);
  init_cr3(&vm, space(0));
  ev(&vm, EV_INIT, 4, CR4_PAE | CR4_PGE, 0);
  assert_false(vm.e.vcpu[0].vmx.vmcs.f[VMCS_CR4_GUEST_HOST_MASK] & CR4_PGE);
  ev(&vm, EV_CR_WRITE, 4, CR4_PAE, 0);                         /* no exit */
  assert_int_equal(vm.e.st.total_exits, 0);
  touch(&vm, USER_CODE, 1);
  uint64_t flushes = ctr(&vm, CTR_TLB_FLUSHES), exits0 = vm.e.st.total_exits;
  ev(&vm, EV_CR_WRITE, 4, CR4_PAE | CR4_PGE | (1ull << 6), 0);   /* sets PGE and MCE: exits */
  assert_int_equal(vm.e.st.total_exits, exits0 + 1);
  uint64_t d = ctr(&vm, CTR_TLB_FLUSHES) - flushes;
  print_message("TLB flushes by the exiting CR4 write: %llu (expected 1)\n", (unsigned long long)d);
  assert_int_equal(d, 1);
  vm_stop(&vm);
}

static void vmwrites_that_clear_the_cr3_cache_in_a_flood_exit_are_charged_to_it(void **state) {
  (void)state;
  struct vm vm;
  vm_start(&vm, "cr3cache", NULL, 0, PAGING_64);
  init_cr3(&vm, space(0));
  cycle(&vm, 2, 4);                              /* two slots filled */
  touch(&vm, USER_CODE, 1);
  for (int i = 0; i < 2; i++) ev(&vm, EV_PTWRITE, 1, USER_CODE, 0);
  uint64_t writes = ctr(&vm, CTR_VMWRITES), vmm = vm.e.st.vmm_cycles;
  ev(&vm, EV_PTWRITE, 1, USER_CODE, 0);          /* floods: zaps the page and clears both slots */
  assert_int_equal(ctr(&vm, CTR_CR3_CACHE_CLEARS), 1);
  uint64_t d = ctr(&vm, CTR_VMWRITES) - writes;
  print_message("VMWRITEs charged to the flooding exit: %llu (expected 2, one per cleared CR3-target value)\n",
                (unsigned long long)d);
  assert_int_equal(d, 2);
  assert_int_equal(vm.e.st.vmm_cycles - vmm, vm.e.last.cycles);
  assert_true(vm.e.last.cycles >= vm.prof.p[PP_VM_ROUNDTRIP] + 2 * vm.prof.p[PP_VMWRITE]);
  vm_stop(&vm);
}

static void under_lru_a_previous_root_hit_makes_the_root_most_recently_used(void **state) {
  (void)state;
  /* README: under LRU a page becomes most recent when a fault or root switch
  ** uses it.  A pool of 3 pages holds only roots here; building the fourth
  ** root evicts the least recently used unpinned one. */
  const char *sets[] = { "prev_roots=1", "shadow_eviction=lru", "shadow_pages_max=3", "shadow_refill=false" };
  struct vm vm;
  vm_start(&vm, "prevroots", sets, 4, PAGING_64);
  init_cr3(&vm, space(1));
  ev(&vm, EV_PTWRITE, 1, USER_CODE, 0);          /* a guest event: the root of space 1 loads */
  cr3w(&vm, space(2));
  cr3w(&vm, space(1));                           /* previous-root hit: space 1's root is used */
  assert_int_equal(ctr(&vm, CTR_PREV_ROOT_HITS), 1);
  cr3w(&vm, space(3));                           /* space 2 drops out of the previous roots */
  cr3w(&vm, space(4));                           /* space 1 drops out; one root is evicted */
  assert_int_equal(ctr(&vm, CTR_SHADOW_EVICTED), 1);
  char *text = shadow_text(&vm);
  char s1[64], s2[64];
  snprintf(s1, sizeof s1, "cr3 0x%llx", (unsigned long long)space(1));
  snprintf(s2, sizeof s2, "cr3 0x%llx", (unsigned long long)space(2));
  print_message("pool after the eviction (expected: space 1's root kept, space 2's evicted):\n%s", text);
  assert_non_null(strstr(text, s1));
  assert_null(strstr(text, s2));
  free(text);
  vm_stop(&vm);
}

/* ---- exit information of the faults the MMU raises (SDM 27.2.1, 27.2.2) ---- */

static uint64_t vmcs_of(const struct vm *vm, enum vmcs_field f) { return vmcs_peek(&vm->e.vcpu[0].vmx.vmcs, f); }

static void a_hidden_shadow_fault_records_vector_14_its_error_code_and_the_address(void **state) {
  (void)state;
  struct vm vm;
  vm_start(&vm, "shadowcache", NULL, 0, PAGING_64);
  init_cr3(&vm, space(1));
  ev(&vm, EV_TOUCH, TOUCH_AUX_WRITE, USER_CODE + 0x3000, 1);     /* a user-mode write to a page not yet shadowed */
  uint64_t info = vmcs_of(&vm, VMCS_VM_EXIT_INTR_INFO), code = vmcs_of(&vm, VMCS_VM_EXIT_INTR_ERROR_CODE);
  print_message("exit reason %llu, interruption info 0x%llx (expected 0x80000b0e), error code 0x%llx (expected 0x6), "
                "qualification 0x%llx\n", (unsigned long long)vmcs_of(&vm, VMCS_VM_EXIT_REASON), (unsigned long long)info,
                (unsigned long long)code, (unsigned long long)vmcs_of(&vm, VMCS_EXIT_QUALIFICATION));
  assert_int_equal(vmcs_of(&vm, VMCS_VM_EXIT_REASON), EXIT_REASON_EXCEPTION_NMI);
  assert_int_equal(info, 0x80000b0e);        /* valid, error code delivered, hardware exception, vector 14 */
  assert_int_equal(code, PFEC_WRITE | PFEC_USER);
  assert_int_equal(vmcs_of(&vm, VMCS_EXIT_QUALIFICATION), USER_CODE + 0x3000);
  ev(&vm, EV_TOUCH, 0, KERNEL_TEXT + 0x5000, 1);                /* a kernel-mode read */
  assert_int_equal(vmcs_of(&vm, VMCS_VM_EXIT_INTR_ERROR_CODE), 0);
  vm_stop(&vm);
}

static void a_write_to_a_shadowed_guest_table_is_a_present_write_fault(void **state) {
  (void)state;
  struct vm vm;
  vm_start(&vm, "shadowcache", NULL, 0, PAGING_64);
  init_cr3(&vm, space(1));
  touch(&vm, USER_CODE, 1);                                     /* shadows the guest's tables for USER_CODE */
  ev(&vm, EV_PTWRITE, 1, USER_CODE, 0);
  print_message("error code 0x%llx (expected 0x3: present, write)\n",
                (unsigned long long)vmcs_of(&vm, VMCS_VM_EXIT_INTR_ERROR_CODE));
  assert_int_equal(vmcs_of(&vm, VMCS_VM_EXIT_INTR_ERROR_CODE), PFEC_PRESENT | PFEC_WRITE);
  assert_int_equal(vmcs_of(&vm, VMCS_EXIT_QUALIFICATION), USER_CODE);
  vm_stop(&vm);
}

static void an_ept_violation_records_the_access_and_both_addresses(void **state) {
  (void)state;
  struct vm vm;
  vm_start(&vm, "ept", NULL, 0, PAGING_64);
  init_cr3(&vm, space(1));
  ev(&vm, EV_TOUCH, TOUCH_AUX_WRITE, USER_CODE, 1);
  /* The last violation is the data page itself (the guest tables come first). */
  uint64_t qual = vmcs_of(&vm, VMCS_EXIT_QUALIFICATION);
  uint64_t want = EPT_QUAL_WRITE | EPT_QUAL_GLA_VALID | EPT_QUAL_GLA_FINAL;
  print_message("qualification 0x%llx (expected 0x%llx), GPA 0x%llx, GLA 0x%llx\n", (unsigned long long)qual,
                (unsigned long long)want, (unsigned long long)vmcs_of(&vm, VMCS_GUEST_PHYSICAL_ADDRESS),
                (unsigned long long)vmcs_of(&vm, VMCS_GUEST_LINEAR_ADDRESS));
  assert_int_equal(vmcs_of(&vm, VMCS_VM_EXIT_REASON), EXIT_REASON_EPT_VIOLATION);
  assert_int_equal(qual, want);
  /* Frames go in first-touch order: the four guest tables, then the page. */
  assert_int_equal(vmcs_of(&vm, VMCS_GUEST_PHYSICAL_ADDRESS), (EPT_FIRST_GFN + 4) << 12);
  assert_int_equal(vmcs_of(&vm, VMCS_GUEST_LINEAR_ADDRESS), USER_CODE);
  assert_int_equal(vmcs_of(&vm, VMCS_VM_EXIT_INTR_INFO) >> 31, 0);   /* no interruption information */
  vm_stop(&vm);
}

/* The EPT frames and paging-structure pages after the events so far, as the
** REPL's `info shadow` shows them. */
static void expect_ept_pages(struct vm *vm, unsigned frames, unsigned tables) {
  char *text = shadow_text(vm), want[128];
  snprintf(want, sizeof want, "EPT: %u guest frames mapped, %u EPT paging-structure pages\n", frames, tables);
  print_message("actual   %sexpected %s", text, want);
  assert_string_equal(text, want);
  free(text);
}

static void ept_frames_are_given_in_first_touch_order_and_share_tables(void **state) {
  (void)state;
  struct vm vm;
  vm_start(&vm, "ept", NULL, 0, PAGING_64);
  init_cr3(&vm, space(1));
  /* 4 guest tables and 40 pages: 44 frames from 16 MiB, all in one 2 MiB
  ** region, so one EPT table per level (SDM 28.2.2); a hash of each page's
  ** identity gave them 130-odd. */
  touch(&vm, USER_CODE, 40);
  assert_int_equal(ctr(&vm, CTR_EPT_VIOLATIONS), 44);
  expect_ept_pages(&vm, 44, 4);
  touch(&vm, USER_CODE, 40);                   /* mapped already: no violation */
  assert_int_equal(ctr(&vm, CTR_EPT_VIOLATIONS), 44);
  /* 500 more pages (one more guest page table): frames up to 16 MiB + 545
  ** pages cross into the next 2 MiB, which needs a second EPT page table. */
  touch(&vm, USER_CODE + 40 * 4096ull, 500);
  assert_int_equal(ctr(&vm, CTR_EPT_VIOLATIONS), 545);
  expect_ept_pages(&vm, 545, 5);
  vm_stop(&vm);
}

static void a_32_bit_guest_touching_more_pages_than_4_gib_holds_is_refused(void **state) {
  (void)state;
  /* 32-bit paging reaches 4 GiB of physical memory (SDM 4.3): 1,044,480 frames
  ** from 16 MiB.  One address space of 1,040,000 pages (and its 1,016 guest
  ** page tables and directory) fits; 4,000 more pages in a second one do not. */
  struct vm vm;
  vm_start(&vm, "ept", NULL, 0, PAGING_32);
  init_cr3(&vm, space(1));
  touch(&vm, 0, 1040000);
  engine_settle(&vm.e);
  const char *why = engine_failure(&vm.e);
  print_message("after %llu EPT violations: %s (expected no failure)\n",
                (unsigned long long)ctr(&vm, CTR_EPT_VIOLATIONS), why ? why : "no failure");
  assert_null(why);
  cr3w(&vm, space(2));
  touch(&vm, 0, 4000);
  engine_settle(&vm.e);
  why = engine_failure(&vm.e);
  print_message("after %llu EPT violations: %s (expected a failure naming 4 GiB)\n",
                (unsigned long long)ctr(&vm, CTR_EPT_VIOLATIONS), why ? why : "no failure");
  assert_non_null(why);
  assert_non_null(strstr(why, "4 GiB"));
  vm_stop(&vm);
  /* the same pages under 64-bit paging fit */
  vm_start(&vm, "ept", NULL, 0, PAGING_64);
  init_cr3(&vm, space(1));
  touch(&vm, 0, 1040000);
  cr3w(&vm, space(2));
  touch(&vm, 0, 4000);
  engine_settle(&vm.e);
  assert_null(engine_failure(&vm.e));
  vm_stop(&vm);
}

static void a_shadow_fault_goes_through_the_pfec_mask_and_match_rule(void **state) {
  (void)state;
  /* SDM 25.2: with bit 14 set, a #PF whose error code fails the mask/match
  ** test does not exit; one that passes does. */
  static struct vmx_cpu s;
  memset(&s, 0, sizeof s);
  vmcs_poke(&s.vmcs, VMCS_EXCEPTION_BITMAP, 1u << 14);
  vmcs_poke(&s.vmcs, VMCS_PAGE_FAULT_ERROR_CODE_MASK, PFEC_PRESENT);
  vmcs_poke(&s.vmcs, VMCS_PAGE_FAULT_ERROR_CODE_MATCH, PFEC_PRESENT);   /* only present faults exit */
  struct exit_decision absent = vmx_decide_page_fault(&s, 0x1000, PFEC_WRITE);
  struct exit_decision present = vmx_decide_page_fault(&s, 0x2000, PFEC_PRESENT | PFEC_WRITE);
  print_message("not-present fault exits: %d (expected 0); present fault exits: %d (expected 1), qualification 0x%llx\n",
                absent.exits, present.exits, (unsigned long long)present.qual);
  assert_false(absent.exits);
  assert_true(present.exits);
  assert_int_equal(present.qual, 0x2000);
  assert_int_equal(present.intr_error, PFEC_PRESENT | PFEC_WRITE);
}

/* ---- local-APIC accesses and IPIs between vCPUs ---- */

static void ev_on(struct vm *vm, unsigned vcpu, unsigned type, unsigned aux, uint64_t a, uint64_t b, uint32_t cycles) {
  struct trace_event e = { .type = (uint8_t)type, .aux = (uint8_t)aux, .vcpu = (uint16_t)vcpu, .cycles = cycles,
                           .a = a, .b = b };
  engine_step(&vm->e, &e);
}

static void vm_start_cpu(struct vm *vm, const char *policy, const char *set, const char *cpu, unsigned nvcpu) {
  char err[512];
  char *sets[] = { (char *)set };
  assert_int_equal(policy_resolve(&vm->pol, policy, sets, set ? 1 : 0, err, sizeof err), 0);
  assert_int_equal(profile_load(&vm->prof, cpu, err, sizeof err), 0);
  if (engine_init(&vm->e, &vm->pol, &vm->prof, nvcpu, PAGING_64, err, sizeof err)) fail_msg("%s", err);
}

static void an_apic_access_exits_as_apic_access_with_flexpriority_and_faults_without(void **state) {
  (void)state;
  struct vm vm;
  vm_start_cpu(&vm, "shadowcache", "apic_access_virt=true", "core2-2008", 1);
  ev_on(&vm, 0, EV_APIC, APIC_AUX_WRITE, APIC_EOI, 0, 0);
  uint64_t qual = vmcs_of(&vm, VMCS_EXIT_QUALIFICATION);
  print_message("with virtualize APIC accesses: reason %llu (expected 44), qualification 0x%llx (expected 0x10b0)\n",
                (unsigned long long)vmcs_of(&vm, VMCS_VM_EXIT_REASON), (unsigned long long)qual);
  assert_int_equal(exits(&vm, EXIT_REASON_APIC_ACCESS), 1);
  assert_int_equal(qual, 0x10b0);              /* offset 0xb0, access type 1: linear write */
  vm_stop(&vm);
  vm_start_cpu(&vm, "shadowcache", NULL, "core2-2008", 1);
  ev_on(&vm, 0, EV_APIC, APIC_AUX_WRITE, APIC_EOI, 0, 0);
  print_message("without it: reason %llu (expected 0: an MMIO #PF), error code 0x%llx (expected 0x2)\n",
                (unsigned long long)vmcs_of(&vm, VMCS_VM_EXIT_REASON),
                (unsigned long long)vmcs_of(&vm, VMCS_VM_EXIT_INTR_ERROR_CODE));
  assert_int_equal(exits(&vm, EXIT_REASON_EXCEPTION_NMI), 1);
  assert_int_equal(vmcs_of(&vm, VMCS_VM_EXIT_INTR_ERROR_CODE), PFEC_WRITE);
  vm_stop(&vm);
}

static void an_ipi_wakes_a_halted_vcpu_at_the_senders_time(void **state) {
  (void)state;
  struct vm vm;
  vm_start_cpu(&vm, "shadowcache", NULL, "core2-2008", 2);
  ev_on(&vm, 1, EV_HLT, 0, 0, 0, 100);                      /* vCPU 1 idles at cycle 100 */
  ev_on(&vm, 0, EV_RUN, 0, 0, 0, 1000000);                  /* vCPU 0 works on */
  uint64_t before = vm.e.vcpu_cycles[1];
  ev_on(&vm, 0, EV_APIC, APIC_AUX_WRITE, APIC_ICR, 1ull << 56 | 0xfd, 0);   /* reschedule IPI to vCPU 1 */
  print_message("vCPU 1 clock before the IPI %llu, after %llu, vCPU 0 at %llu\n", (unsigned long long)before,
                (unsigned long long)vm.e.vcpu_cycles[1], (unsigned long long)vm.e.vcpu_cycles[0]);
  assert_false(vm.e.vcpu[1].halted);
  assert_true(vm.e.vcpu_cycles[1] >= 1000000);              /* it woke when the IPI was sent */
  assert_int_equal(vm.e.vcpu_cycles[1], vm.e.vcpu_cycles[0]);
  vm_stop(&vm);
}

/* GUEST_CR3 and GUEST_CR4 as the processor must have them under shadow
** paging: a 32-bit or PAE guest runs on PAE tables, entered through a PDPT
** that CR3 can address outside IA-32e mode (below 4 GiB, SDM 4.4.1), with
** CR4.PAE set in the real register while the guest reads its own. */
static void shadow_roots_of_32_bit_guests_are_pae_tables_below_4_gib(void **state) {
  (void)state;
  static const unsigned modes[] = { PAGING_32, PAGING_PAE };
  for (size_t m = 0; m < 2; m++) {
    struct vm vm;
    vm_start(&vm, "cr3cache", NULL, 0, modes[m]);
    ev(&vm, EV_INIT, 4, CR4_PGE | (modes[m] == PAGING_PAE ? CR4_PAE : 0), 0);
    init_cr3(&vm, space(0));
    uint64_t roots[3];
    for (unsigned i = 0; i < 3; i++) {
      cr3w(&vm, space(i + 1));
      touch(&vm, USER_CODE, 1);
      roots[i] = vmcs_of(&vm, VMCS_GUEST_CR3);
      print_message("paging %u, address space %u: GUEST_CR3 0x%llx (expected below 4 GiB, 32-byte aligned)\n",
                    modes[m], i + 1, (unsigned long long)roots[i]);
      assert_true(roots[i] < (1ull << 32));
      assert_int_equal(roots[i] % 32, 0);
      for (unsigned j = 0; j < i; j++) assert_int_not_equal(roots[i], roots[j]);
    }
    /* the cached roots are target values, and a hit still loads one */
    assert_int_equal(vmcs_of(&vm, VMCS_CR3_TARGET_VALUE0), roots[0]);
    uint64_t before = cr3_exits(&vm);
    cr3w(&vm, space(1));
    assert_int_equal(cr3_exits(&vm), before);
    assert_int_equal(vmcs_of(&vm, VMCS_GUEST_CR3), roots[0]);
    uint64_t real = vmcs_of(&vm, VMCS_GUEST_CR4), shadow = vmcs_of(&vm, VMCS_CR4_READ_SHADOW);
    uint64_t reads = cr_read_value(real, vmcs_of(&vm, VMCS_CR4_GUEST_HOST_MASK), shadow);
    print_message("paging %u: GUEST_CR4 0x%llx (expected PAE set), the guest reads 0x%llx\n", modes[m],
                  (unsigned long long)real, (unsigned long long)reads);
    assert_true(real & CR4_PAE);
    assert_int_equal(reads & CR4_PAE, modes[m] == PAGING_PAE ? CR4_PAE : 0);
    vm_stop(&vm);
  }
}

static void a_64_bit_guests_shadow_root_and_an_ept_guests_cr4_are_its_own(void **state) {
  (void)state;
  struct vm vm;
  vm_start(&vm, "shadowcache", NULL, 0, PAGING_64);
  init_cr3(&vm, space(0));
  cr3w(&vm, space(1));
  print_message("64-bit guest: GUEST_CR3 0x%llx (expected a shadow page from 0x%llx)\n",
                (unsigned long long)vmcs_of(&vm, VMCS_GUEST_CR3), (unsigned long long)SHADOW_ROOT_HPA_BASE);
  assert_true(vmcs_of(&vm, VMCS_GUEST_CR3) >= SHADOW_ROOT_HPA_BASE);
  assert_int_equal(vmcs_of(&vm, VMCS_GUEST_CR3) % 4096, 0);
  vm_stop(&vm);
  vm_start(&vm, "ept", NULL, 0, PAGING_32);
  ev(&vm, EV_INIT, 4, CR4_PGE, 0);
  init_cr3(&vm, space(0));
  print_message("32-bit guest under EPT: GUEST_CR4 0x%llx (expected PAE clear), GUEST_CR3 0x%llx (its own)\n",
                (unsigned long long)vmcs_of(&vm, VMCS_GUEST_CR4), (unsigned long long)vmcs_of(&vm, VMCS_GUEST_CR3));
  assert_int_equal(vmcs_of(&vm, VMCS_GUEST_CR4) & CR4_PAE, 0);
  assert_int_equal(vmcs_of(&vm, VMCS_GUEST_CR3), space(0));
  vm_stop(&vm);
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
    cmocka_unit_test(counters_are_deterministic),
    cmocka_unit_test(vm_transitions_flush_the_tlb_unless_vpid),
    cmocka_unit_test(an_address_space_whose_cr3_is_0_keeps_its_shadow_pages),
    cmocka_unit_test(prevroots_keeps_the_roots_of_cr3_0_as_a_previous_root),
    cmocka_unit_test(a_cr3_write_flushes_non_global_entries_of_address_space_0),
    cmocka_unit_test(clearing_the_cr3_cache_also_drops_a_cached_cr3_0),
    cmocka_unit_test(evicting_the_root_of_an_uncached_cr3_0_does_not_clear_the_cr3_cache),
    cmocka_unit_test(flooding_a_32_bit_guest_page_table_zaps_the_shadow_page_of_the_written_half),
    cmocka_unit_test(an_exiting_cr4_write_that_sets_a_guest_owned_pge_flushes_the_tlb),
    cmocka_unit_test(vmwrites_that_clear_the_cr3_cache_in_a_flood_exit_are_charged_to_it),
    cmocka_unit_test(under_lru_a_previous_root_hit_makes_the_root_most_recently_used),
    cmocka_unit_test(a_hidden_shadow_fault_records_vector_14_its_error_code_and_the_address),
    cmocka_unit_test(a_write_to_a_shadowed_guest_table_is_a_present_write_fault),
    cmocka_unit_test(an_ept_violation_records_the_access_and_both_addresses),
    cmocka_unit_test(ept_frames_are_given_in_first_touch_order_and_share_tables),
    cmocka_unit_test(a_32_bit_guest_touching_more_pages_than_4_gib_holds_is_refused),
    cmocka_unit_test(a_shadow_fault_goes_through_the_pfec_mask_and_match_rule),
    cmocka_unit_test(an_apic_access_exits_as_apic_access_with_flexpriority_and_faults_without),
    cmocka_unit_test(an_ipi_wakes_a_halted_vcpu_at_the_senders_time),
    cmocka_unit_test(shadow_roots_of_32_bit_guests_are_pae_tables_below_4_gib),
    cmocka_unit_test(a_64_bit_guests_shadow_root_and_an_ept_guests_cr4_are_its_own),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
