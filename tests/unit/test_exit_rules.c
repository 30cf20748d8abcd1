/* CR shadowing (MOV to/from CR0/CR4, CLTS, LMSW) and CR3-target values, in the
** style of kvm-unit-tests' cr_shadowing test: SDM 25.1.3 and 25.3,
** exit qualifications from 27.2.1 table 27-3 (docs/sources.md). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "vmx_fixture.h"
#include "sim/replay/engine.h"
#include "sim/config/policy.h"
#include "sim/config/profile.h"

/* Fails with the whole message when needle is not in haystack. */
static void assert_contains(const char *haystack, const char *needle) {
  if (!strstr(haystack, needle))
    fail_msg("expected \"%s\" in: \"%s\"", needle, haystack);
}

/* ------------------------------------------------------------------------ */
/* MOV from CR0/CR4: never exits; owned bits read from the shadow            */

static void cr0_read_returns_shadow_bits_for_owned_positions(void **state) {
  (void)state;
  uint64_t cr0 = CR0_PG | CR0_PE | CR0_TS;   /* real TS = 1 */
  uint64_t mask = CR0_TS | CR0_MP;           /* host owns TS and MP */
  uint64_t shadow = CR0_MP;                  /* guest believes TS = 0, MP = 1 */
  assert_int_equal(cr_read_value(cr0, mask, shadow), CR0_PG | CR0_PE | CR0_MP);
}

static void cr4_read_returns_shadow_bits_for_owned_positions(void **state) {
  (void)state;
  uint64_t cr4 = CR4_PAE | CR4_PGE | (1ull << 13);      /* real: VMXE forced on */
  uint64_t mask = CR4_PGE | (1ull << 13);
  uint64_t shadow = CR4_PGE;                            /* guest sees VMXE = 0 */
  assert_int_equal(cr_read_value(cr4, mask, shadow), CR4_PAE | CR4_PGE);
}

static void cr_read_with_no_owned_bits_returns_the_real_register(void **state) {
  (void)state;
  assert_int_equal(cr_read_value(0x80050033, 0, ~0ull), 0x80050033);
}

static void cr_read_with_every_bit_owned_returns_the_shadow(void **state) {
  (void)state;
  assert_int_equal(cr_read_value(0x80050033, ~0ull, 0x11), 0x11);
}

static void mov_from_cr0_and_cr4_never_exit(void **state) {
  (void)state;
  set(VMCS_CR0_GUEST_HOST_MASK, ~0ull);
  set(VMCS_CR4_GUEST_HOST_MASK, ~0ull);
  set(VMCS_CPU_BASED_VM_EXEC_CONTROL, ~0ull);
  struct exit_decision d = decide(EV_CR_READ, 0, 0, GPR_RSI);
  assert_false(d.exits);
  assert_int_equal(d.why, WHY_CR_READ_NEVER);
  d = decide(EV_CR_READ, 4, 0, GPR_RSI);
  assert_false(d.exits);
  assert_int_equal(d.why, WHY_CR_READ_NEVER);
}

/* ------------------------------------------------------------------------ */
/* MOV to CR0/CR4: exits iff mask & (value ^ shadow) != 0                    */

static void cr0_write_exits_when_owned_bit_differs_from_shadow(void **state) {
  (void)state;
  set(VMCS_CR0_GUEST_HOST_MASK, CR0_TS);
  set(VMCS_CR0_READ_SHADOW, CR0_PG | CR0_PE);
  set(VMCS_GUEST_CR0, CR0_PG | CR0_PE);
  struct exit_decision d = decide(EV_CR_WRITE, 0, CR0_PG | CR0_PE | CR0_TS, GPR_RSI);
  assert_true(d.exits);
  assert_int_equal(d.reason, EXIT_REASON_CR_ACCESS);
  assert_int_equal(d.why, WHY_CR_OWNED_DIFFERS);
  assert_int_equal(d.detail, CR0_TS);
}

static void mov_rsi_to_cr0_exit_qualification_is_0x600(void **state) {
  (void)state;
  set(VMCS_CR0_GUEST_HOST_MASK, ~0ull);
  struct exit_decision d = decide(EV_CR_WRITE, 0, CR0_PE, GPR_RSI);
  assert_true(d.exits);
  assert_int_equal(d.qual, 0x600);
}

static void cr4_write_exits_when_owned_bit_differs_from_shadow(void **state) {
  (void)state;
  set(VMCS_CR4_GUEST_HOST_MASK, CR4_PGE);
  set(VMCS_CR4_READ_SHADOW, CR4_PAE);
  set(VMCS_GUEST_CR4, CR4_PAE | (1ull << 13));
  struct exit_decision d = decide(EV_CR_WRITE, 4, CR4_PAE | CR4_PGE, GPR_RSI);
  assert_true(d.exits);
  assert_int_equal(d.reason, EXIT_REASON_CR_ACCESS);
  assert_int_equal(d.detail, CR4_PGE);
}

static void mov_rsi_to_cr4_exit_qualification_is_0x604(void **state) {
  (void)state;
  set(VMCS_CR4_GUEST_HOST_MASK, ~0ull);
  struct exit_decision d = decide(EV_CR_WRITE, 4, CR4_PGE, GPR_RSI);
  assert_true(d.exits);
  assert_int_equal(d.qual, 0x604);
}

static void cr_write_qualification_carries_the_gpr_in_bits_11_8(void **state) {
  (void)state;
  set(VMCS_CR4_GUEST_HOST_MASK, ~0ull);
  set(VMCS_CR0_GUEST_HOST_MASK, ~0ull);
  assert_int_equal(decide(EV_CR_WRITE, 4, CR4_PGE, GPR_R15).qual, 0xf04);
  assert_int_equal(decide(EV_CR_WRITE, 0, CR0_PE, GPR_RAX).qual, 0x000);
  assert_int_equal(decide(EV_CR_WRITE, 0, CR0_PE, 3 /* rbx */).qual, 0x300);
}

static void cr4_write_does_not_exit_when_owned_bits_equal_shadow(void **state) {
  (void)state;
  set(VMCS_CR4_GUEST_HOST_MASK, CR4_PGE | CR4_PAE);
  set(VMCS_CR4_READ_SHADOW, CR4_PAE | CR4_PGE);
  /* Only guest-owned bits (DE, TSD) change: no exit. */
  struct exit_decision d = decide(EV_CR_WRITE, 4, CR4_PAE | CR4_PGE | CR4_DE | CR4_TSD, GPR_RSI);
  assert_false(d.exits);
  assert_int_equal(d.why, WHY_CR_OWNED_SAME);
}

static void cr0_write_compares_with_the_shadow_not_the_real_cr0(void **state) {
  (void)state;
  /* Real TS = 1 (host lazily switched the FPU), guest believes TS = 0. */
  set(VMCS_CR0_GUEST_HOST_MASK, CR0_TS);
  set(VMCS_CR0_READ_SHADOW, CR0_PG | CR0_PE);
  set(VMCS_GUEST_CR0, CR0_PG | CR0_PE | CR0_TS);
  /* Writing TS = 0 equals the shadow: no exit although it differs from real CR0. */
  assert_false(decide(EV_CR_WRITE, 0, CR0_PG | CR0_PE, GPR_RSI).exits);
  /* Writing TS = 1 equals the real CR0 but differs from the shadow: exit. */
  assert_true(decide(EV_CR_WRITE, 0, CR0_PG | CR0_PE | CR0_TS, GPR_RSI).exits);
}

static void cr_write_with_no_owned_bits_never_exits(void **state) {
  (void)state;
  set(VMCS_CR0_GUEST_HOST_MASK, 0);
  set(VMCS_CR4_GUEST_HOST_MASK, 0);
  set(VMCS_CR0_READ_SHADOW, 0);
  set(VMCS_CR4_READ_SHADOW, 0);
  assert_false(decide(EV_CR_WRITE, 0, ~0ull, GPR_RSI).exits);
  assert_false(decide(EV_CR_WRITE, 4, ~0ull, GPR_RSI).exits);
}

static void cr_write_exits_on_an_owned_bit_above_bit_31(void **state) {
  (void)state;
  set(VMCS_CR4_GUEST_HOST_MASK, 1ull << 40);
  struct exit_decision d = decide(EV_CR_WRITE, 4, 1ull << 40, GPR_RSI);
  assert_true(d.exits);
  assert_int_equal(d.detail, 1ull << 40);
}

static void cr_write_without_exit_keeps_owned_bits_and_takes_the_rest(void **state) {
  (void)state;
  uint64_t cr = CR0_PG | CR0_PE | CR0_TS;          /* owned TS = 1 in the real CR0 */
  uint64_t mask = CR0_TS | CR0_WP;
  uint64_t val = CR0_PG | CR0_PE | CR0_MP | CR0_WP; /* TS = 0, WP = 1: owned, ignored */
  assert_int_equal(cr_write_no_exit(cr, mask, val), CR0_PG | CR0_PE | CR0_MP | CR0_TS);
  assert_int_equal(cr_write_no_exit(0, 0, 0x1234), 0x1234);
  assert_int_equal(cr_write_no_exit(0xff, ~0ull, 0), 0xff);
}

static void cr4_write_without_exit_updates_guest_cr4_but_not_the_shadow(void **state) {
  (void)state;
  static struct policy p;
  static struct vcpu v;
  char err[512];
  char *sets[] = { "cr4_guest_host_mask=0x20" };            /* host owns PAE only */
  assert_int_equal(policy_resolve(&p, "nocache", sets, 1, err, sizeof err), 0);
  p.paging = PAGING_EPT;                                     /* no forced shadow bits */
  vcpu_setup(&v, 0, &p);
  uint64_t shadow = vmcs_peek(&v.vmx.vmcs, VMCS_CR4_READ_SHADOW);
  uint64_t real = vmcs_peek(&v.vmx.vmcs, VMCS_GUEST_CR4);
  struct trace_event ev = { .type = EV_CR_WRITE, .aux = 4, .a = (shadow & CR4_PAE) | CR4_DE, .b = GPR_RSI };
  struct exit_decision d = vmx_decide(&v.vmx, &ev);
  assert_false(d.exits);
  struct vmx_native r = { 0 };
  vcpu_no_exit(&v, &ev, ev.a, &r);
  assert_int_equal(vmcs_peek(&v.vmx.vmcs, VMCS_GUEST_CR4), cr_write_no_exit(real, 0x20, ev.a));
  assert_int_equal(vmcs_peek(&v.vmx.vmcs, VMCS_CR4_READ_SHADOW), shadow);
}

/* kvm-unit-tests vmx_tests.c cr_shadowing, stage by stage: the host owns
** CR0.TS|MP and CR4.TSD|DE; the guest reads and writes both registers. */
static void cr_shadowing_sequence_as_in_kvm_unit_tests(void **state) {
  (void)state;
  const uint64_t cr0 = CR0_PG | CR0_PE | CR0_WP | (1ull << 5) | CR0_MP;   /* MP = 1, TS = 0 */
  const uint64_t cr4 = CR4_PAE | CR4_PGE | (1ull << 13);                 /* TSD = DE = 0 */
  const uint64_t own0 = CR0_TS | CR0_MP, own4 = CR4_TSD | CR4_DE;
  set(VMCS_GUEST_CR0, cr0);
  set(VMCS_GUEST_CR4, cr4);
  set(VMCS_CR0_GUEST_HOST_MASK, own0);
  set(VMCS_CR4_GUEST_HOST_MASK, own4);
  /* stage 1: shadows equal the real owned bits: reads see the truth, writes
  ** of the same value do not exit */
  set(VMCS_CR0_READ_SHADOW, cr0 & own0);
  set(VMCS_CR4_READ_SHADOW, cr4 & own4);
  assert_int_equal(cr_read_value(cr0, own0, cr0 & own0), cr0);
  assert_int_equal(cr_read_value(cr4, own4, cr4 & own4), cr4);
  assert_false(decide(EV_CR_WRITE, 0, cr0, GPR_RSI).exits);
  assert_false(decide(EV_CR_WRITE, 4, cr4, GPR_RSI).exits);
  /* stage 2: the host flips the shadows of the owned bits */
  uint64_t sh0 = (cr0 ^ own0) & own0, sh4 = (cr4 ^ own4) & own4;
  set(VMCS_CR0_READ_SHADOW, sh0);
  set(VMCS_CR4_READ_SHADOW, sh4);
  assert_int_equal(cr_read_value(cr0, own0, sh0), (cr0 & ~own0) | sh0);
  assert_int_equal(cr_read_value(cr4, own4, sh4), (cr4 & ~own4) | sh4);
  /* writing back the real value now differs from the shadow: exits */
  struct exit_decision d = decide(EV_CR_WRITE, 0, cr0, GPR_RSI);
  assert_true(d.exits);
  assert_int_equal(d.qual, 0x600);
  assert_int_equal(d.detail, own0);
  d = decide(EV_CR_WRITE, 4, cr4, GPR_RSI);
  assert_true(d.exits);
  assert_int_equal(d.qual, 0x604);
  assert_int_equal(d.detail, own4);
  /* writing back what it read (shadow bits) does not exit */
  assert_false(decide(EV_CR_WRITE, 0, (cr0 & ~own0) | sh0, GPR_RSI).exits);
  assert_false(decide(EV_CR_WRITE, 4, (cr4 & ~own4) | sh4, GPR_RSI).exits);
  /* flipping a single owned bit (TS alone, DE alone) exits */
  assert_true(decide(EV_CR_WRITE, 0, ((cr0 & ~own0) | sh0) ^ CR0_TS, GPR_RSI).exits);
  assert_true(decide(EV_CR_WRITE, 4, ((cr4 & ~own4) | sh4) ^ CR4_DE, GPR_RSI).exits);
  /* MOV from CR0/CR4 never exits */
  assert_false(decide(EV_CR_READ, 0, 0, GPR_RSI).exits);
  assert_false(decide(EV_CR_READ, 4, 0, GPR_RSI).exits);
}

/* ------------------------------------------------------------------------ */
/* MOV to/from CR3 and CR8 qualifications                                   */

static void mov_rax_to_cr3_exit_qualification_is_0x3(void **state) {
  (void)state;
  set(VMCS_CPU_BASED_VM_EXEC_CONTROL, CPU_CR3_LOAD_EXITING);
  struct exit_decision d = decide(EV_CR_WRITE, 3, 0x1000, GPR_RAX);
  assert_true(d.exits);
  assert_int_equal(d.reason, EXIT_REASON_CR_ACCESS);
  assert_int_equal(d.qual, 0x3);
}

static void mov_cr3_to_rax_exit_qualification_is_0x13(void **state) {
  (void)state;
  set(VMCS_CPU_BASED_VM_EXEC_CONTROL, CPU_CR3_STORE_EXITING);
  struct exit_decision d = decide(EV_CR_READ, 3, 0, GPR_RAX);
  assert_true(d.exits);
  assert_int_equal(d.reason, EXIT_REASON_CR_ACCESS);
  assert_int_equal(d.qual, 0x13);
}

static void mov_rax_to_cr8_exit_qualification_is_0x8(void **state) {
  (void)state;
  set(VMCS_CPU_BASED_VM_EXEC_CONTROL, CPU_CR8_LOAD_EXITING);
  struct exit_decision d = decide(EV_CR_WRITE, 8, 2, GPR_RAX);
  assert_true(d.exits);
  assert_int_equal(d.reason, EXIT_REASON_CR_ACCESS);
  assert_int_equal(d.qual, 0x8);
}

static void mov_cr8_to_rax_exit_qualification_is_0x18(void **state) {
  (void)state;
  set(VMCS_CPU_BASED_VM_EXEC_CONTROL, CPU_CR8_STORE_EXITING);
  struct exit_decision d = decide(EV_CR_READ, 8, 0, GPR_RAX);
  assert_true(d.exits);
  assert_int_equal(d.reason, EXIT_REASON_CR_ACCESS);
  assert_int_equal(d.qual, 0x18);
}

/* SDM 29.3, 29.1.2: with "use TPR shadow", MOV to CR8 writes VTPR; a new TPR below
** TPR_THRESHOLD then causes a trap-like exit: the write has already happened. */
static void mov_to_cr8_below_the_tpr_threshold_exits_after_the_write(void **state) {
  (void)state;
  static struct policy p;
  static struct vcpu v;
  char err[1024] = "";
  char *sets[] = { "tpr_shadow=true" };
  uint64_t ctr[CTR_COUNT] = { 0 };
  struct work w;
  work_clear(&w);
  assert_int_equal(policy_resolve(&p, "shadowcache", sets, 1, err, sizeof err), 0);
  vcpu_setup(&v, 0, &p);
  vcpu_init_reg(&v, 8, 5);
  vmcs_poke(&v.vmx.vmcs, VMCS_TPR_THRESHOLD, 4);
  vmcs_poke(&v.vmx.vmcs, VMCS_VM_EXIT_INSTRUCTION_LEN, 4);          /* mov %rax,%cr8 */
  struct trace_event ev = { .type = EV_CR_WRITE, .aux = 8, .a = 2, .b = GPR_RAX };
  struct exit_decision d = vmx_decide(&v.vmx, &ev);
  assert_true(d.exits);
  assert_int_equal(d.reason, EXIT_REASON_TPR_BELOW_THRESHOLD);
  uint64_t rip = vmcs_peek(&v.vmx.vmcs, VMCS_GUEST_RIP);
  struct vcpu_result r = { 0 };
  vcpu_exit_begin(&v, d.reason, d.qual, &w, ctr);
  struct vmx_exit_info xi = vmx_exit_info_of(&d);
  vcpu_handle_exit(&v, &ev, &xi, &r);
  vcpu_exit_end(&v, &w, ctr);
  print_message("TPR after the exit %llu (expected 2)\n", (unsigned long long)v.vmx.cr8);
  assert_int_equal(v.vmx.cr8, 2);
  assert_int_equal(vmcs_peek(&v.vmx.vmcs, VMCS_GUEST_RIP), rip);   /* trap-like: nothing to skip */
}

/* ------------------------------------------------------------------------ */
/* CLTS                                                                      */

static void clts_exits_when_ts_is_owned_and_set_in_the_shadow(void **state) {
  (void)state;
  set(VMCS_CR0_GUEST_HOST_MASK, CR0_TS);
  set(VMCS_CR0_READ_SHADOW, CR0_TS | CR0_PE);
  struct exit_decision d = decide(EV_CLTS, 0, 0, 0);
  assert_true(d.exits);
  assert_int_equal(d.reason, EXIT_REASON_CR_ACCESS);
  assert_int_equal(d.why, WHY_CLTS_TS_OWNED_SET);
  assert_int_equal(d.qual, 0x20);
}

static void clts_does_not_exit_and_leaves_ts_when_owned_and_clear_in_the_shadow(void **state) {
  (void)state;
  set(VMCS_CR0_GUEST_HOST_MASK, CR0_TS);
  set(VMCS_CR0_READ_SHADOW, CR0_PE);
  struct exit_decision d = decide(EV_CLTS, 0, 0, 0);
  assert_false(d.exits);
  assert_int_equal(d.why, WHY_CLTS_TS_OWNED_CLEAR);
  /* The real TS (host lazy FPU) stays set. */
  assert_int_equal(clts_no_exit(CR0_PE | CR0_TS, CR0_TS), CR0_PE | CR0_TS);
  assert_int_equal(clts_no_exit(CR0_PE, CR0_TS), CR0_PE);
}

static void clts_clears_ts_without_exit_when_ts_is_guest_owned(void **state) {
  (void)state;
  set(VMCS_CR0_GUEST_HOST_MASK, ~CR0_TS);
  set(VMCS_CR0_READ_SHADOW, CR0_TS);   /* shadow TS set, but TS is not owned */
  struct exit_decision d = decide(EV_CLTS, 0, 0, 0);
  assert_false(d.exits);
  assert_int_equal(d.why, WHY_CLTS_TS_GUEST);
  assert_int_equal(clts_no_exit(CR0_PG | CR0_PE | CR0_TS, ~CR0_TS), CR0_PG | CR0_PE);
}

/* ------------------------------------------------------------------------ */
/* LMSW                                                                      */

static void lmsw_exits_when_it_sets_an_owned_pe_that_the_shadow_has_clear(void **state) {
  (void)state;
  set(VMCS_CR0_GUEST_HOST_MASK, CR0_PE);
  set(VMCS_CR0_READ_SHADOW, 0);
  struct exit_decision d = decide(EV_LMSW, 0, 0x1, 0);
  assert_true(d.exits);
  assert_int_equal(d.reason, EXIT_REASON_CR_ACCESS);
  assert_int_equal(d.why, WHY_LMSW_SETS_OWNED_PE);
  assert_int_equal(d.qual, 0x30 | (0x1ull << 16));
}

static void lmsw_does_not_exit_when_it_would_clear_an_owned_pe(void **state) {
  (void)state;
  /* LMSW cannot clear PE, so clearing an owned PE is not an exit condition. */
  set(VMCS_CR0_GUEST_HOST_MASK, CR0_PE);
  set(VMCS_CR0_READ_SHADOW, CR0_PE);
  assert_false(decide(EV_LMSW, 0, 0x0, 0).exits);
}

static void lmsw_does_not_exit_when_owned_pe_is_already_set_in_the_shadow(void **state) {
  (void)state;
  set(VMCS_CR0_GUEST_HOST_MASK, CR0_PE);
  set(VMCS_CR0_READ_SHADOW, CR0_PE);
  assert_false(decide(EV_LMSW, 0, 0x1, 0).exits);
}

static void lmsw_does_not_exit_when_pe_is_not_owned(void **state) {
  (void)state;
  set(VMCS_CR0_GUEST_HOST_MASK, ~CR0_PE & 0xe);   /* owns MP, EM, TS */
  set(VMCS_CR0_READ_SHADOW, 0);
  assert_false(decide(EV_LMSW, 0, 0x1, 0).exits);
}

static void lmsw_exits_when_an_owned_bit_3_1_differs_from_the_shadow(void **state) {
  (void)state;
  for (unsigned bit = 1; bit <= 3; bit++) {
    memset(&S, 0, sizeof S);
    set(VMCS_CR0_GUEST_HOST_MASK, 1ull << bit);
    set(VMCS_CR0_READ_SHADOW, 0);
    struct exit_decision d = decide(EV_LMSW, 0, 1u << bit, 0);
    assert_true(d.exits);
    assert_int_equal(d.detail, 1ull << bit);
    assert_int_equal(d.qual, 0x30 | ((uint64_t)(1u << bit) << 16));
    /* clearing it differs from a set shadow bit too */
    set(VMCS_CR0_READ_SHADOW, 1ull << bit);
    assert_true(decide(EV_LMSW, 0, 0, 0).exits);
    /* equal to the shadow: no exit */
    assert_false(decide(EV_LMSW, 0, 1u << bit, 0).exits);
  }
}

static void lmsw_ignores_owned_bits_above_3(void **state) {
  (void)state;
  /* LMSW only loads bits 3:0; owned ET, NE, WP never make it exit. */
  set(VMCS_CR0_GUEST_HOST_MASK, ~0xfull);
  set(VMCS_CR0_READ_SHADOW, 0);
  assert_false(decide(EV_LMSW, 0, 0xfff0, 0).exits);
}

static void lmsw_does_not_exit_when_only_guest_owned_bits_change(void **state) {
  (void)state;
  set(VMCS_CR0_GUEST_HOST_MASK, CR0_TS);
  set(VMCS_CR0_READ_SHADOW, CR0_PE);
  assert_false(decide(EV_LMSW, 0, 0x3 /* PE|MP */, 0).exits);
}

static void lmsw_with_memory_operand_sets_qualification_bit_6(void **state) {
  (void)state;
  set(VMCS_CR0_GUEST_HOST_MASK, CR0_TS);
  set(VMCS_CR0_READ_SHADOW, 0);
  struct exit_decision d = decide(EV_LMSW, 1, 0x8, 0);
  assert_true(d.exits);
  assert_int_equal(d.qual, 0x70 | (0x8ull << 16));
}

static void lmsw_qualification_carries_the_whole_16_bit_source(void **state) {
  (void)state;
  set(VMCS_CR0_GUEST_HOST_MASK, CR0_MP);
  set(VMCS_CR0_READ_SHADOW, 0);
  struct exit_decision d = decide(EV_LMSW, 0, 0xabc2, 0);
  assert_true(d.exits);
  assert_int_equal(d.qual, 0x30 | (0xabc2ull << 16));
}

static void lmsw_can_set_pe_but_never_clear_it(void **state) {
  (void)state;
  /* PE guest-owned: set from 0, never cleared from 1. */
  assert_int_equal(lmsw_no_exit(CR0_PG, 0, 0x1) & CR0_PE, CR0_PE);
  assert_int_equal(lmsw_no_exit(CR0_PG | CR0_PE, 0, 0x0) & CR0_PE, CR0_PE);
  assert_int_equal(lmsw_no_exit(0, 0, 0x0) & CR0_PE, 0);
}

static void lmsw_without_exit_keeps_owned_bits_and_loads_the_rest_of_3_0(void **state) {
  (void)state;
  uint64_t cr0 = CR0_PG | CR0_WP | (1ull << 5) | (1ull << 4) | CR0_TS;   /* TS = 1 real */
  uint64_t mask = CR0_TS;
  /* src: PE, MP, EM set, TS clear (owned: keeps 1), bits 15:4 junk (ignored). */
  uint64_t got = lmsw_no_exit(cr0, mask, 0xfff7);
  assert_int_equal(got, CR0_PG | CR0_WP | (1ull << 5) | (1ull << 4) | CR0_TS | CR0_EM | CR0_MP | CR0_PE);
  /* unowned MP/EM/TS are cleared by a zero source; PE stays. */
  assert_int_equal(lmsw_no_exit(CR0_PE | CR0_MP | CR0_EM | CR0_TS, 0, 0), CR0_PE);
}

/* ------------------------------------------------------------------------ */
/* CR3-target values                                                         */

static const uint64_t targets[4] = { 0x1000, 0x2000, 0x3000, 0x4000 };

static void program_targets(unsigned count) {
  set(VMCS_CPU_BASED_VM_EXEC_CONTROL, CPU_CR3_LOAD_EXITING);
  set(VMCS_CR3_TARGET_COUNT, count);
  for (unsigned i = 0; i < 4; i++) set((enum vmcs_field)(VMCS_CR3_TARGET_VALUE0 + i), targets[i]);
}

static void cr3_write_never_exits_when_cr3_load_exiting_is_clear(void **state) {
  (void)state;
  program_targets(0);
  set(VMCS_CPU_BASED_VM_EXEC_CONTROL, 0);
  struct exit_decision d = decide(EV_CR_WRITE, 3, 0x5000, GPR_RAX);
  assert_false(d.exits);
  assert_int_equal(d.why, WHY_CONTROL_CLEAR);
}

static void cr3_write_always_exits_with_target_count_0(void **state) {
  (void)state;
  program_targets(0);
  for (unsigned i = 0; i < 4; i++) {
    struct exit_decision d = decide(EV_CR_WRITE, 3, targets[i], GPR_RAX);
    assert_true(d.exits);
    assert_int_equal(d.why, WHY_CR3_NO_TARGET);
    assert_int_equal(d.qual, 0x3);
  }
  assert_true(decide(EV_CR_WRITE, 3, 0, GPR_RAX).exits);
}

static void cr3_write_matching_one_of_the_first_n_targets_does_not_exit(void **state) {
  (void)state;
  for (unsigned n = 1; n <= 4; n++) {
    memset(&S, 0, sizeof S);
    program_targets(n);
    for (unsigned i = 0; i < n; i++) {
      struct exit_decision d = decide(EV_CR_WRITE, 3, targets[i], GPR_RAX);
      if (d.exits) fail_msg("count %u: target %u (0x%llx) exited", n, i, (unsigned long long)targets[i]);
      assert_int_equal(d.why, WHY_CR3_TARGET_HIT);
      assert_int_equal(d.detail, i);
    }
  }
}

static void cr3_write_matching_a_target_beyond_the_count_exits(void **state) {
  (void)state;
  for (unsigned n = 1; n <= 4; n++) {
    memset(&S, 0, sizeof S);
    program_targets(n);
    for (unsigned i = n; i < 4; i++) {
      struct exit_decision d = decide(EV_CR_WRITE, 3, targets[i], GPR_RAX);
      if (!d.exits) fail_msg("count %u: target %u (0x%llx) beyond the count did not exit", n, i,
                             (unsigned long long)targets[i]);
      assert_int_equal(d.reason, EXIT_REASON_CR_ACCESS);
      assert_int_equal(d.detail, n);
    }
    assert_true(decide(EV_CR_WRITE, 3, 0x5000, GPR_RAX).exits);
  }
}

static void cr3_target_compare_uses_all_64_bits(void **state) {
  (void)state;
  program_targets(4);
  /* bit 63 (PCID "no flush") set in the operand only */
  assert_true(decide(EV_CR_WRITE, 3, targets[0] | (1ull << 63), GPR_RAX).exits);
  /* high bits 47:32 */
  assert_true(decide(EV_CR_WRITE, 3, targets[1] | 0x100000000000ull, GPR_RAX).exits);
  assert_true(decide(EV_CR_WRITE, 3, targets[2] | (1ull << 32), GPR_RAX).exits);
  /* a target with bit 63 set matches only the identical operand */
  set(VMCS_CR3_TARGET_VALUE3, 0x4000 | (1ull << 63));
  assert_true(decide(EV_CR_WRITE, 3, 0x4000, GPR_RAX).exits);
  assert_false(decide(EV_CR_WRITE, 3, 0x4000 | (1ull << 63), GPR_RAX).exits);
  /* a shadow root above 4 GiB matches exactly */
  set(VMCS_CR3_TARGET_VALUE2, SHADOW_ROOT_HPA_BASE + 0x3000);
  assert_false(decide(EV_CR_WRITE, 3, SHADOW_ROOT_HPA_BASE + 0x3000, GPR_RAX).exits);
  assert_true(decide(EV_CR_WRITE, 3, 0x3000, GPR_RAX).exits);
}

/* A CPU that supports every control vmxsim uses, with 4 CR3-target values. */
static const struct vmx_caps ALL_CAPS = { .pin_allowed1 = ~0u, .cpu_allowed1 = ~0u, .sec_allowed1 = ~0u, .ter_allowed1 = ~0ull, .cr3_targets = 4 };

static void cr3_target_count_5_fails_vm_entry_with_error_7(void **state) {
  (void)state;
  static struct policy p;
  static struct vcpu v;
  char err[512], msg[512] = "";
  char *sets[] = { "cr3_target_count=5" };
  assert_int_equal(policy_resolve(&p, "nocache", sets, 1, err, sizeof err), 0);
  vcpu_setup(&v, 0, &p);
  assert_int_equal(vmcs_peek(&v.vmx.vmcs, VMCS_CR3_TARGET_COUNT), 5);
  assert_int_equal(vmx_entry_check(&v.vmx, &ALL_CAPS, msg, sizeof msg), 7);
  assert_contains(msg, "CR3_TARGET_COUNT");
  assert_contains(msg, "IA32_VMX_MISC");
  assert_contains(msg, "error 7");
}

static void cr3_target_counts_0_to_4_pass_the_vm_entry_check(void **state) {
  (void)state;
  static struct policy p;
  static struct vcpu v;
  for (unsigned n = 0; n <= 4; n++) {
    char err[512], set_n[64], msg[512] = "";
    snprintf(set_n, sizeof set_n, "cr3_target_count=%u", n);
    char *sets[] = { set_n };
    assert_int_equal(policy_resolve(&p, "nocache", sets, 1, err, sizeof err), 0);
    vcpu_setup(&v, 0, &p);
    unsigned e = vmx_entry_check(&v.vmx, &ALL_CAPS, msg, sizeof msg);
    if (e) fail_msg("count %u: error %u: %s", n, e, msg);
  }
}

/* engine_init with a policy spec and a CPU profile; returns its code, message in err. */
static int start_on(const char *spec, const char *set, const char *cpu, char *err, size_t errlen) {
  static struct policy p;
  static struct profile pr;
  static struct engine e;
  char *sets[] = { (char *)set };
  assert_int_equal(policy_resolve(&p, spec, sets, set ? 1 : 0, err, errlen), 0);
  assert_int_equal(profile_load(&pr, cpu, err, errlen), 0);
  int rc = engine_init(&e, &p, &pr, 1, PAGING_64, err, errlen);
  if (rc == 0) engine_free(&e);
  profile_free(&pr);
  return rc;
}

static void ept_on_a_cpu_without_secondary_controls_fails_vm_entry_naming_the_control(void **state) {
  (void)state;
  char err[1024] = "";
  int rc = start_on("ept", NULL, "core2-2007", err, sizeof err);
  print_message("ept on core2-2007: exit code %d (expected %d): %s\n", rc, EXIT_VMENTRY, err);
  assert_int_equal(rc, EXIT_VMENTRY);
  assert_contains(err, "error 7");
  assert_contains(err, "\"enable EPT\"");
  assert_contains(err, "core2-2007");
}

static void vpid_on_a_cpu_without_it_fails_vm_entry_naming_the_control(void **state) {
  (void)state;
  char err[1024] = "";
  int rc = start_on("shadowcache", "vpid=true", "core2-2008", err, sizeof err);
  print_message("vpid on core2-2008: exit code %d: %s\n", rc, err);
  assert_int_equal(rc, EXIT_VMENTRY);
  assert_contains(err, "\"enable VPID\"");
  assert_contains(err, "IA32_VMX_PROCBASED_CTLS2 allowed-1 bit 5");
}

static void a_secondary_control_is_not_checked_while_secondary_controls_are_off(void **state) {
  (void)state;
  /* SDM 26.2.1.1: with "activate secondary controls" 0 the processor acts as
  ** if every secondary control were 0, and does not check them. */
  static struct policy p;
  static struct vcpu v;
  char err[512], msg[512] = "";
  assert_int_equal(policy_resolve(&p, "shadowcache", NULL, 0, err, sizeof err), 0);
  vcpu_setup(&v, 0, &p);
  vmcs_poke(&v.vmx.vmcs, VMCS_SECONDARY_VM_EXEC_CONTROL, SEC_ENABLE_EPT);
  struct vmx_caps none = { .pin_allowed1 = ~0u, .cpu_allowed1 = ~(uint32_t)CPU_ACTIVATE_SECONDARY, .cr3_targets = 4 };
  assert_int_equal(vmx_entry_check(&v.vmx, &none, msg, sizeof msg), 0);
  vmcs_poke(&v.vmx.vmcs, VMCS_CPU_BASED_VM_EXEC_CONTROL,
            vmcs_peek(&v.vmx.vmcs, VMCS_CPU_BASED_VM_EXEC_CONTROL) | CPU_ACTIVATE_SECONDARY);
  assert_int_equal(vmx_entry_check(&v.vmx, &none, msg, sizeof msg), 7);
}

static void a_shadow_paging_policy_sets_no_secondary_control(void **state) {
  (void)state;
  /* KVM activates secondary controls only for a control it uses, so shadow
  ** paging runs on the first VT-x CPUs. */
  static struct policy p;
  static struct vcpu v;
  char err[512];
  assert_int_equal(policy_resolve(&p, "cr3cache+lazydr", NULL, 0, err, sizeof err), 0);
  vcpu_setup(&v, 0, &p);
  assert_false(cpu_ctl(&v.vmx.vmcs, CPU_ACTIVATE_SECONDARY));
  assert_int_equal(start_on("cr3cache+lazydr", NULL, "core2-2007", err, sizeof err), 0);
}

static void every_profile_runs_ept_exactly_when_it_states_the_capability(void **state) {
  (void)state;
  for (const char *const *n = profile_names(); *n; n++) {
    static struct profile pr;
    char err[1024];
    assert_int_equal(profile_load(&pr, *n, err, sizeof err), 0);
    bool has = pr.p[PP_CAP_SECONDARY] && pr.p[PP_CAP_EPT] && pr.p[PP_CAP_VPID];
    profile_free(&pr);
    int rc = start_on("ept", NULL, *n, err, sizeof err);
    print_message("%s: vmx.ept %d, ept policy exit code %d\n", *n, has, rc);
    assert_int_equal(rc, has ? 0 : EXIT_VMENTRY);
  }
}

static void engine_init_refuses_cr3_target_count_5_on_every_cpu_profile(void **state) {
  (void)state;
  static struct policy p;
  static struct profile pr;
  static struct engine e;
  char err[1024];
  char *sets[] = { "cr3_target_count=5" };
  assert_int_equal(policy_resolve(&p, "cr3cache", sets, 1, err, sizeof err), 0);
  assert_int_equal(profile_load(&pr, "core2-2007", err, sizeof err), 0);
  err[0] = 0;
  assert_int_not_equal(engine_init(&e, &p, &pr, 1, 0, err, sizeof err), 0);
  assert_contains(err, "CR3_TARGET_COUNT");
  assert_contains(err, "IA32_VMX_MISC");
  profile_free(&pr);
  for (const char *const *n = profile_names(); *n; n++) {
    if (profile_load(&pr, *n, err, sizeof err)) fail_msg("profile %s: %s", *n, err);
    err[0] = 0;
    if (engine_init(&e, &p, &pr, 2, 0, err, sizeof err) != EXIT_VMENTRY) fail_msg("profile %s: count 5 not refused with EXIT_VMENTRY", *n);
    assert_contains(err, "CR3_TARGET_COUNT");
    profile_free(&pr);
  }
}

static void engine_init_accepts_cr3_target_count_4(void **state) {
  (void)state;
  static struct policy p;
  static struct profile pr;
  static struct engine e;
  char err[1024] = "";
  assert_int_equal(policy_resolve(&p, "cr3cache", NULL, 0, err, sizeof err), 0);
  assert_int_equal(p.cr3_target_count, 4);
  assert_int_equal(profile_load(&pr, "core2-2007", err, sizeof err), 0);
  if (engine_init(&e, &p, &pr, 1, 0, err, sizeof err)) fail_msg("engine_init: %s", err);
  engine_free(&e);
  profile_free(&pr);
}

/* ------------------------------------------------------------------------ */
/* Exceptions and NMIs (SDM 25.2)                                            */

static void vectors_above_31_are_not_exceptions_and_ignore_the_exception_bitmap(void **state) {
  (void)state;
  set(VMCS_EXCEPTION_BITMAP, 0xffffffff);
  for (unsigned vec = 32; vec < 256; vec++) {
    struct exit_decision d = decide(EV_EXC, 0, vec, 0);
    if (d.exits) fail_msg("vector %u: exits with reason %u (expected no exit: only vectors 0-31 index the bitmap)",
                          vec, d.reason);
  }
}

static void an_nmi_exits_per_nmi_exiting_not_the_exception_bitmap(void **state) {
  (void)state;
  set(VMCS_EXCEPTION_BITMAP, 0);
  set(VMCS_PIN_BASED_VM_EXEC_CONTROL, PIN_NMI_EXITING);
  struct exit_decision d = decide(EV_EXC, 0, 2, 0);
  print_message("NMI with NMI exiting, bitmap bit 2 clear: exits %d (expected 1)\n", d.exits);
  assert_true(d.exits);
  assert_int_equal(d.reason, EXIT_REASON_EXCEPTION_NMI);
  set(VMCS_EXCEPTION_BITMAP, 1u << 2);
  set(VMCS_PIN_BASED_VM_EXEC_CONTROL, 0);
  d = decide(EV_EXC, 0, 2, 0);
  print_message("NMI without NMI exiting, bitmap bit 2 set: exits %d (expected 0)\n", d.exits);
  assert_false(d.exits);
}

/* ------------------------------------------------------------------------ */
/* Emulated CLTS and LMSW keep the guest's own CR0 bits                      */

static struct vcpu EV;
static struct policy EP;

/* A vCPU whose CR0 mask leaves MP to the guest; the guest clears MP without an exit. */
static void vcpu_with_guest_owned_mp(void) {
  char err[1024] = "";
  char *sets[] = { "cr0_guest_host_mask=0xfffffffffffffffd" };
  assert_int_equal(policy_resolve(&EP, "nocache", sets, 1, err, sizeof err), 0);
  vcpu_setup(&EV, 0, &EP);
  vcpu_init_reg(&EV, 0, CR0_PG | CR0_PE | CR0_TS | CR0_MP);
}

static bool run_event(struct trace_event ev) {
  uint64_t ctr[CTR_COUNT] = { 0 };
  struct work w;
  work_clear(&w);
  struct exit_decision d = vmx_decide(&EV.vmx, &ev);
  struct vcpu_result r = { 0 };
  if (!d.exits) {
    struct vmx_native n = { 0 };
    vcpu_no_exit(&EV, &ev, ev.a, &n);
    return false;
  }
  vcpu_exit_begin(&EV, d.reason, d.qual, &w, ctr);
  struct vmx_exit_info xi = vmx_exit_info_of(&d);
  vcpu_handle_exit(&EV, &ev, &xi, &r);
  vcpu_exit_end(&EV, &w, ctr);
  return true;
}

static void emulated_clts_keeps_a_guest_owned_bit_the_guest_changed(void **state) {
  (void)state;
  vcpu_with_guest_owned_mp();
  assert_false(run_event((struct trace_event){ .type = EV_CR_WRITE, .aux = 0, .a = CR0_PG | CR0_PE | CR0_TS }));
  assert_false(vmcs_peek(&EV.vmx.vmcs, VMCS_GUEST_CR0) & CR0_MP);
  assert_true(run_event((struct trace_event){ .type = EV_CLTS }));   /* TS owned and set in the shadow */
  uint64_t cr0 = vmcs_peek(&EV.vmx.vmcs, VMCS_GUEST_CR0);
  print_message("CR0 after the emulated CLTS 0x%llx: MP %d (expected 0), TS %d (expected 0)\n",
                (unsigned long long)cr0, (int)(cr0 >> 1 & 1), (int)(cr0 >> 3 & 1));
  assert_false(cr0 & CR0_MP);
  assert_false(cr0 & CR0_TS);
}

static void emulated_lmsw_keeps_the_guest_cr0_outside_bits_3_0(void **state) {
  (void)state;
  /* LMSW loads bits 3:0 only: a guest-owned bit above 3 the guest changed
  ** natively (NE here) must survive the emulation. */
  char err[1024] = "";
  char *sets[] = { "cr0_guest_host_mask=0xffffffffffffffdf" };   /* NE (bit 5) guest-owned */
  assert_int_equal(policy_resolve(&EP, "ept", sets, 1, err, sizeof err), 0);
  vcpu_setup(&EV, 0, &EP);
  vcpu_init_reg(&EV, 0, CR0_PG | CR0_PE | (1ull << 5));
  assert_false(run_event((struct trace_event){ .type = EV_CR_WRITE, .aux = 0, .a = CR0_PG | CR0_PE }));
  assert_true(run_event((struct trace_event){ .type = EV_LMSW, .a = CR0_PE | CR0_TS }));   /* sets owned TS */
  uint64_t cr0 = vmcs_peek(&EV.vmx.vmcs, VMCS_GUEST_CR0);
  print_message("CR0 after the emulated LMSW 0x%llx: NE %d (expected 0), TS %d (expected 1)\n",
                (unsigned long long)cr0, (int)(cr0 >> 5 & 1), (int)(cr0 >> 3 & 1));
  assert_false(cr0 & (1ull << 5));
  assert_true(cr0 & CR0_TS);
}

#define T(name) cmocka_unit_test_setup(name, reset)

int main(void) {
  const struct CMUnitTest tests[] = {
    T(cr0_read_returns_shadow_bits_for_owned_positions),
    T(cr4_read_returns_shadow_bits_for_owned_positions),
    T(cr_read_with_no_owned_bits_returns_the_real_register),
    T(cr_read_with_every_bit_owned_returns_the_shadow),
    T(mov_from_cr0_and_cr4_never_exit),
    T(cr0_write_exits_when_owned_bit_differs_from_shadow),
    T(mov_rsi_to_cr0_exit_qualification_is_0x600),
    T(cr4_write_exits_when_owned_bit_differs_from_shadow),
    T(mov_rsi_to_cr4_exit_qualification_is_0x604),
    T(cr_write_qualification_carries_the_gpr_in_bits_11_8),
    T(cr4_write_does_not_exit_when_owned_bits_equal_shadow),
    T(cr0_write_compares_with_the_shadow_not_the_real_cr0),
    T(cr_write_with_no_owned_bits_never_exits),
    T(cr_write_exits_on_an_owned_bit_above_bit_31),
    T(cr_write_without_exit_keeps_owned_bits_and_takes_the_rest),
    T(cr4_write_without_exit_updates_guest_cr4_but_not_the_shadow),
    T(cr_shadowing_sequence_as_in_kvm_unit_tests),
    T(mov_rax_to_cr3_exit_qualification_is_0x3),
    T(mov_cr3_to_rax_exit_qualification_is_0x13),
    T(mov_rax_to_cr8_exit_qualification_is_0x8),
    T(mov_cr8_to_rax_exit_qualification_is_0x18),
    T(mov_to_cr8_below_the_tpr_threshold_exits_after_the_write),
    T(clts_exits_when_ts_is_owned_and_set_in_the_shadow),
    T(clts_does_not_exit_and_leaves_ts_when_owned_and_clear_in_the_shadow),
    T(clts_clears_ts_without_exit_when_ts_is_guest_owned),
    T(lmsw_exits_when_it_sets_an_owned_pe_that_the_shadow_has_clear),
    T(lmsw_does_not_exit_when_it_would_clear_an_owned_pe),
    T(lmsw_does_not_exit_when_owned_pe_is_already_set_in_the_shadow),
    T(lmsw_does_not_exit_when_pe_is_not_owned),
    T(lmsw_exits_when_an_owned_bit_3_1_differs_from_the_shadow),
    T(lmsw_ignores_owned_bits_above_3),
    T(lmsw_does_not_exit_when_only_guest_owned_bits_change),
    T(lmsw_with_memory_operand_sets_qualification_bit_6),
    T(lmsw_qualification_carries_the_whole_16_bit_source),
    T(lmsw_can_set_pe_but_never_clear_it),
    T(lmsw_without_exit_keeps_owned_bits_and_loads_the_rest_of_3_0),
    T(cr3_write_never_exits_when_cr3_load_exiting_is_clear),
    T(cr3_write_always_exits_with_target_count_0),
    T(cr3_write_matching_one_of_the_first_n_targets_does_not_exit),
    T(cr3_write_matching_a_target_beyond_the_count_exits),
    T(cr3_target_compare_uses_all_64_bits),
    T(cr3_target_count_5_fails_vm_entry_with_error_7),
    T(cr3_target_counts_0_to_4_pass_the_vm_entry_check),
    T(engine_init_refuses_cr3_target_count_5_on_every_cpu_profile),
    T(engine_init_accepts_cr3_target_count_4),
    T(ept_on_a_cpu_without_secondary_controls_fails_vm_entry_naming_the_control),
    T(vpid_on_a_cpu_without_it_fails_vm_entry_naming_the_control),
    T(a_secondary_control_is_not_checked_while_secondary_controls_are_off),
    T(a_shadow_paging_policy_sets_no_secondary_control),
    T(every_profile_runs_ept_exactly_when_it_states_the_capability),
    T(vectors_above_31_are_not_exceptions_and_ignore_the_exception_bitmap),
    T(an_nmi_exits_per_nmi_exiting_not_the_exception_bitmap),
    T(emulated_clts_keeps_a_guest_owned_bit_the_guest_changed),
    T(emulated_lmsw_keeps_the_guest_cr0_outside_bits_3_0),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
