/* Unit tests of the MMU models: an address space whose CR3 is 0, the exit information of
** the faults the MMU raises, EPT frames, local-APIC accesses and IPIs, and the shadow roots
** of 32- and 64-bit guests. */
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
