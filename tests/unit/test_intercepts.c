/* The instruction-intercept table: which guest instruction exits under which
** control, with which reason number and qualification (SDM 25.1-25.2, 27.2.1;
** docs/sources.md).  I/O and MSR bitmaps, exception bitmap, #PF filter. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "vmx_fixture.h"

/* I/O aux: bit 0 OUT, bits 3:1 size in bytes. */
static uint8_t io_aux(unsigned size, int out) { return (uint8_t)(size << 1 | (out ? IO_AUX_OUT : 0)); }

static void io_bit(unsigned port, int on) {
  if (on) S.io_bitmap[port >> 3] |= (uint8_t)(1u << (port & 7));
  else S.io_bitmap[port >> 3] &= (uint8_t)~(1u << (port & 7));
}

/* MSR bitmap: read-low 0, read-high 1024, write-low 2048, write-high 3072 (SDM 24.6.9). */
static void msr_bit(uint32_t msr, int write) {
  unsigned base = (write ? 2048 : 0) + (msr >= 0xc0000000u ? 1024 : 0), bit = msr & 0x1fff;
  S.msr_bitmap[base + bit / 8] |= (uint8_t)(1u << (bit % 8));
}

/* One row of the table: the event exits with `reason` and `qual` when the
** control is set and does not exit when it is clear. */
struct row {
  const char *what;
  uint8_t type, aux;
  uint64_t a, b;
  enum vmcs_field field;     /* control field holding the bit */
  uint32_t bit;
  unsigned reason;
  uint64_t qual;
};

static void check_row(const struct row *r) {
  memset(&S, 0, sizeof S);
  if (r->field == VMCS_SECONDARY_VM_EXEC_CONTROL) set(VMCS_CPU_BASED_VM_EXEC_CONTROL, CPU_ACTIVATE_SECONDARY);
  struct exit_decision d = decide(r->type, r->aux, r->a, r->b);
  if (d.exits) fail_msg("%s: exits (reason %u) with the control clear", r->what, d.reason);
  assert_int_equal(d.why, WHY_CONTROL_CLEAR);
  set(r->field, vmcs_peek(&S.vmcs, r->field) | r->bit);
  d = decide(r->type, r->aux, r->a, r->b);
  if (!d.exits) fail_msg("%s: no exit with the control set", r->what);
  if (d.reason != r->reason) fail_msg("%s: reason %u, expected %u", r->what, d.reason, r->reason);
  if (d.qual != r->qual)
    fail_msg("%s: qualification 0x%llx, expected 0x%llx", r->what, (unsigned long long)d.qual,
             (unsigned long long)r->qual);
  /* MOV to CR3 with the control set is decided by the CR3-target search. */
  assert_int_equal(d.why, r->type == EV_CR_WRITE && r->aux == 3 ? WHY_CR3_NO_TARGET : WHY_CONTROL_SET);
}

#define CPU VMCS_CPU_BASED_VM_EXEC_CONTROL
#define SEC VMCS_SECONDARY_VM_EXEC_CONTROL
#define PIN VMCS_PIN_BASED_VM_EXEC_CONTROL

static void hlt_exits_iff_hlt_exiting(void **state) {
  (void)state;
  check_row(&(struct row){ "hlt", EV_HLT, 0, 0, 0, CPU, CPU_HLT_EXITING, 12, 0 });
}

static void invlpg_exits_iff_invlpg_exiting_with_the_linear_address_as_qualification(void **state) {
  (void)state;
  check_row(&(struct row){ "invlpg", EV_INVLPG, 0, 0xffff880012345000ull, 0, CPU, CPU_INVLPG_EXITING, 14,
                           0xffff880012345000ull });
}

static void rdtsc_exits_iff_rdtsc_exiting(void **state) {
  (void)state;
  check_row(&(struct row){ "rdtsc", EV_RDTSC, 0, 0, 0, CPU, CPU_RDTSC_EXITING, 16, 0 });
}

static void rdpmc_exits_iff_rdpmc_exiting(void **state) {
  (void)state;
  check_row(&(struct row){ "rdpmc", EV_RDPMC, 0, 1, 0, CPU, CPU_RDPMC_EXITING, 15, 0 });
}

static void pause_exits_iff_pause_exiting(void **state) {
  (void)state;
  check_row(&(struct row){ "pause", EV_PAUSE, 0, 0, 0, CPU, CPU_PAUSE_EXITING, 40, 0 });
}

static void wbinvd_exits_iff_secondary_wbinvd_exiting(void **state) {
  (void)state;
  check_row(&(struct row){ "wbinvd", EV_WBINVD, 0, 0, 0, SEC, SEC_WBINVD_EXITING, 54, 0 });
}

static void wbinvd_exiting_is_ignored_without_activate_secondary_controls(void **state) {
  (void)state;
  set(SEC, SEC_WBINVD_EXITING);
  set(CPU, 0);
  assert_false(decide(EV_WBINVD, 0, 0, 0).exits);
  set(CPU, CPU_ACTIVATE_SECONDARY);
  assert_true(decide(EV_WBINVD, 0, 0, 0).exits);
}

static void mov_from_cr3_exits_iff_cr3_store_exiting(void **state) {
  (void)state;
  check_row(&(struct row){ "mov %cr3,%rax", EV_CR_READ, 3, 0, GPR_RAX, CPU, CPU_CR3_STORE_EXITING, 28, 0x13 });
}

static void mov_to_cr3_exits_iff_cr3_load_exiting(void **state) {
  (void)state;
  check_row(&(struct row){ "mov %rax,%cr3", EV_CR_WRITE, 3, 0x1000, GPR_RAX, CPU, CPU_CR3_LOAD_EXITING, 28, 0x3 });
}

static void cr3_load_and_store_exiting_are_independent(void **state) {
  (void)state;
  set(CPU, CPU_CR3_LOAD_EXITING);
  assert_false(decide(EV_CR_READ, 3, 0, GPR_RAX).exits);
  set(CPU, CPU_CR3_STORE_EXITING);
  assert_false(decide(EV_CR_WRITE, 3, 0x1000, GPR_RAX).exits);
}

static void mov_to_cr8_exits_iff_cr8_load_exiting(void **state) {
  (void)state;
  check_row(&(struct row){ "mov %rax,%cr8", EV_CR_WRITE, 8, 0xf, GPR_RAX, CPU, CPU_CR8_LOAD_EXITING, 28, 0x8 });
}

static void mov_from_cr8_exits_iff_cr8_store_exiting(void **state) {
  (void)state;
  check_row(&(struct row){ "mov %cr8,%rax", EV_CR_READ, 8, 0, GPR_RAX, CPU, CPU_CR8_STORE_EXITING, 28, 0x18 });
}

static void mov_to_dr_exits_iff_mov_dr_exiting_with_dr_and_gpr_in_qualification(void **state) {
  (void)state;
  /* mov %rbx,%dr7: 7 | 0 << 4 | 3 << 8 */
  check_row(&(struct row){ "mov %rbx,%dr7", EV_DR_WRITE, 7, 0x401, GPR_RBX, CPU, CPU_MOV_DR_EXITING, 29, 0x307 });
  check_row(&(struct row){ "mov %rax,%dr0", EV_DR_WRITE, 0, 0x1000, GPR_RAX, CPU, CPU_MOV_DR_EXITING, 29, 0x000 });
}

static void mov_from_dr_exits_iff_mov_dr_exiting_with_direction_bit_4(void **state) {
  (void)state;
  /* mov %dr6,%rcx: 6 | 1 << 4 | 1 << 8 */
  check_row(&(struct row){ "mov %dr6,%rcx", EV_DR_READ, 6, 0, GPR_RCX, CPU, CPU_MOV_DR_EXITING, 29, 0x116 });
  check_row(&(struct row){ "mov %dr3,%r12", EV_DR_READ, 3, 0, 12, CPU, CPU_MOV_DR_EXITING, 29, 0xc13 });
}

static void in_exits_iff_unconditional_io_exiting(void **state) {
  (void)state;
  /* inb $0x60: size 1 -> 0, IN -> bit 3, port << 16 */
  check_row(&(struct row){ "inb 0x60", EV_IO, io_aux(1, 0), 0x60, 0, CPU, CPU_UNCOND_IO_EXITING, 30,
                           0x0 | 1u << 3 | 0x60ull << 16 });
}

static void out_exits_iff_unconditional_io_exiting_with_size_and_port(void **state) {
  (void)state;
  check_row(&(struct row){ "outw 0x3f8", EV_IO, io_aux(2, 1), 0x3f8, 0, CPU, CPU_UNCOND_IO_EXITING, 30,
                           0x1 | 0x3f8ull << 16 });
  check_row(&(struct row){ "outl 0xcf8", EV_IO, io_aux(4, 1), 0xcf8, 0, CPU, CPU_UNCOND_IO_EXITING, 30,
                           0x3 | 0xcf8ull << 16 });
  check_row(&(struct row){ "inl 0xcfc", EV_IO, io_aux(4, 0), 0xcfc, 0, CPU, CPU_UNCOND_IO_EXITING, 30,
                           0x3 | 1u << 3 | 0xcfcull << 16 });
}

static void external_interrupt_exits_iff_pin_based_external_interrupt_exiting(void **state) {
  (void)state;
  check_row(&(struct row){ "intr 0x20", EV_INTR, 0, 0x20, 0, PIN, PIN_EXT_INTR_EXITING, 1, 0 });
}

static void cpuid_vmcall_and_xsetbv_always_exit(void **state) {
  (void)state;
  /* every control clear */
  struct exit_decision d = decide(EV_CPUID, 0, 0, 0);
  assert_true(d.exits);
  assert_int_equal(d.reason, 10);
  assert_int_equal(d.why, WHY_ALWAYS);
  d = decide(EV_VMCALL, 0, 0, 0);
  assert_true(d.exits);
  assert_int_equal(d.reason, 18);
  d = decide(EV_XSETBV, 0, 0, 7);
  assert_true(d.exits);
  assert_int_equal(d.reason, 55);
  /* and every control set changes nothing */
  set(CPU, ~0ull);
  set(SEC, ~0ull);
  set(PIN, ~0ull);
  assert_int_equal(decide(EV_CPUID, 0, 0, 0).reason, 10);
  assert_int_equal(decide(EV_VMCALL, 0, 0, 0).reason, 18);
  assert_int_equal(decide(EV_XSETBV, 0, 0, 7).reason, 55);
}

static void guest_memory_events_are_not_instruction_exits(void **state) {
  (void)state;
  set(CPU, ~0ull);
  assert_false(decide(EV_TOUCH, 0, 0x1000, 1).exits);
  assert_false(decide(EV_RUN, 0, 0, 0).exits);
  assert_int_equal(decide(EV_SYSCALL, 0, 0, 0).why, WHY_NOT_AN_INSTRUCTION);
}

static void exit_reason_numbers_and_names_follow_the_sdm(void **state) {
  (void)state;
  static const struct { unsigned n; const char *name; } r[] = {
    { 0, "EXCEPTION_NMI" }, { 1, "EXTERNAL_INTERRUPT" }, { 2, "TRIPLE_FAULT" }, { 10, "CPUID" },
    { 12, "HLT" }, { 13, "INVD" }, { 14, "INVLPG" }, { 15, "RDPMC" }, { 16, "RDTSC" },
    { 18, "VMCALL" }, { 28, "CR_ACCESS" }, { 29, "DR_ACCESS" }, { 30, "IO_INSTRUCTION" },
    { 31, "MSR_READ" }, { 32, "MSR_WRITE" }, { 36, "MWAIT_INSTRUCTION" }, { 37, "MONITOR_TRAP_FLAG" },
    { 39, "MONITOR_INSTRUCTION" }, { 40, "PAUSE_INSTRUCTION" }, { 43, "TPR_BELOW_THRESHOLD" },
    { 48, "EPT_VIOLATION" }, { 49, "EPT_MISCONFIG" }, { 54, "WBINVD" }, { 55, "XSETBV" }, { 64, "XRSTORS" },
  };
  for (size_t i = 0; i < sizeof r / sizeof r[0]; i++) {
    assert_string_equal(exit_reason_name(r[i].n), r[i].name);
    assert_int_equal(exit_reason_by_name(r[i].name), r[i].n);
  }
  assert_null(exit_reason_name(35));
  assert_null(exit_reason_name(38));
  assert_null(exit_reason_name(42));
  assert_null(exit_reason_name(65));
  assert_int_equal(exit_reason_by_name("cr_access"), 28);
  assert_int_equal(exit_reason_by_name("NOPE"), -1);
  assert_int_equal(EXIT_REASON_ENTRY_FAILURE, 0x80000000u);
}

static void control_bits_are_at_their_sdm_positions(void **state) {
  (void)state;
  assert_int_equal(CPU_HLT_EXITING, 1u << 7);
  assert_int_equal(CPU_INVLPG_EXITING, 1u << 9);
  assert_int_equal(CPU_RDPMC_EXITING, 1u << 11);
  assert_int_equal(CPU_RDTSC_EXITING, 1u << 12);
  assert_int_equal(CPU_CR3_LOAD_EXITING, 1u << 15);
  assert_int_equal(CPU_CR3_STORE_EXITING, 1u << 16);
  assert_int_equal(CPU_CR8_LOAD_EXITING, 1u << 19);
  assert_int_equal(CPU_CR8_STORE_EXITING, 1u << 20);
  assert_int_equal(CPU_TPR_SHADOW, 1u << 21);
  assert_int_equal(CPU_MOV_DR_EXITING, 1u << 23);
  assert_int_equal(CPU_UNCOND_IO_EXITING, 1u << 24);
  assert_int_equal(CPU_USE_IO_BITMAPS, 1u << 25);
  assert_int_equal(CPU_USE_MSR_BITMAPS, 1u << 28);
  assert_int_equal(CPU_PAUSE_EXITING, 1u << 30);
  assert_int_equal(CPU_ACTIVATE_SECONDARY, 1u << 31);
  assert_int_equal(SEC_ENABLE_EPT, 1u << 1);
  assert_int_equal(SEC_ENABLE_VPID, 1u << 5);
  assert_int_equal(SEC_WBINVD_EXITING, 1u << 6);
  assert_int_equal(SEC_UNRESTRICTED_GUEST, 1u << 7);
  assert_int_equal(PIN_EXT_INTR_EXITING, 1u << 0);
  assert_int_equal(VMX_MISC_CR3_TARGETS(0x403c0ull | (4ull << 16)), 4);
}

/* ------------------------------------------------------------------------ */
/* I/O bitmaps                                                               */

static void io_port_with_its_bitmap_bit_set_exits(void **state) {
  (void)state;
  set(CPU, CPU_USE_IO_BITMAPS);
  io_bit(0x70, 1);
  struct exit_decision d = decide(EV_IO, io_aux(1, 1), 0x70, 0);
  assert_true(d.exits);
  assert_int_equal(d.reason, EXIT_REASON_IO_INSTRUCTION);
  assert_int_equal(d.why, WHY_BITMAP_SET);
  assert_int_equal(d.qual, 0x70ull << 16);
  assert_false(decide(EV_IO, io_aux(1, 1), 0x71, 0).exits);
  assert_false(decide(EV_IO, io_aux(1, 1), 0x6f, 0).exits);
}

static void io_port_in_bitmap_b_exits_per_its_bit(void **state) {
  (void)state;
  set(CPU, CPU_USE_IO_BITMAPS);
  io_bit(0x8000, 1);
  io_bit(0xfffe, 1);
  assert_true(decide(EV_IO, io_aux(1, 0), 0x8000, 0).exits);
  assert_true(decide(EV_IO, io_aux(1, 0), 0xfffe, 0).exits);
  assert_false(decide(EV_IO, io_aux(1, 0), 0x8001, 0).exits);
  assert_false(decide(EV_IO, io_aux(1, 0), 0x7fff, 0).exits);
}

static void unconditional_io_exiting_is_ignored_when_io_bitmaps_are_used(void **state) {
  (void)state;
  set(CPU, CPU_USE_IO_BITMAPS | CPU_UNCOND_IO_EXITING);
  struct exit_decision d = decide(EV_IO, io_aux(1, 0), 0x60, 0);
  assert_false(d.exits);
  assert_int_equal(d.why, WHY_BITMAP_CLEAR);
}

static void io_without_bitmaps_or_unconditional_exiting_does_not_exit(void **state) {
  (void)state;
  memset(S.io_bitmap, 0xff, sizeof S.io_bitmap);  /* bitmaps not in use: ignored */
  assert_false(decide(EV_IO, io_aux(1, 0), 0x60, 0).exits);
}

static void multi_byte_io_spanning_a_set_bit_exits(void **state) {
  (void)state;
  set(CPU, CPU_USE_IO_BITMAPS);
  io_bit(0x401, 1);
  /* outw to 0x400 touches 0x400-0x401; outl to 0x3fe touches 0x3fe-0x401 */
  struct exit_decision d = decide(EV_IO, io_aux(2, 1), 0x400, 0);
  assert_true(d.exits);
  assert_int_equal(d.qual, 0x1 | 0x400ull << 16);
  d = decide(EV_IO, io_aux(4, 1), 0x3fe, 0);
  assert_true(d.exits);
  assert_int_equal(d.qual, 0x3 | 0x3feull << 16);
  /* outl to 0x3fc touches 0x3fc-0x3ff only; a byte access to 0x400 neither */
  assert_false(decide(EV_IO, io_aux(4, 1), 0x3fc, 0).exits);
  assert_false(decide(EV_IO, io_aux(1, 1), 0x400, 0).exits);
}

static void multi_byte_io_spanning_bitmaps_a_and_b_exits(void **state) {
  (void)state;
  set(CPU, CPU_USE_IO_BITMAPS);
  io_bit(0x8000, 1);
  assert_true(decide(EV_IO, io_aux(2, 0), 0x7fff, 0).exits);
  assert_false(decide(EV_IO, io_aux(2, 0), 0x7ffe, 0).exits);
}

static void io_wrapping_past_port_ffff_exits(void **state) {
  (void)state;
  set(CPU, CPU_USE_IO_BITMAPS);   /* every bit clear */
  assert_true(decide(EV_IO, io_aux(2, 0), 0xffff, 0).exits);
  assert_false(decide(EV_IO, io_aux(1, 0), 0xffff, 0).exits);
}

/* ------------------------------------------------------------------------ */
/* MSR bitmaps                                                               */

static void every_rdmsr_and_wrmsr_exits_without_msr_bitmaps(void **state) {
  (void)state;
  static const uint32_t msrs[] = { 0x10, 0x174, 0x1fff, 0xc0000080, 0xc0000100, 0x40000000 };
  for (size_t i = 0; i < sizeof msrs / sizeof msrs[0]; i++) {
    struct exit_decision d = decide(EV_RDMSR, 0, msrs[i], 0);
    assert_true(d.exits);
    assert_int_equal(d.reason, EXIT_REASON_MSR_READ);
    d = decide(EV_WRMSR, 0, msrs[i], 1);
    assert_true(d.exits);
    assert_int_equal(d.reason, EXIT_REASON_MSR_WRITE);
  }
}

static void msr_bitmap_decides_per_msr_and_per_direction(void **state) {
  (void)state;
  set(CPU, CPU_USE_MSR_BITMAPS);
  msr_bit(0x10, 0);            /* TSC: reads exit */
  msr_bit(0xc0000080, 1);      /* EFER: writes exit */
  msr_bit(0x1fff, 1);
  msr_bit(0xc0001fff, 0);
  struct exit_decision d = decide(EV_RDMSR, 0, 0x10, 0);
  assert_true(d.exits);
  assert_int_equal(d.reason, EXIT_REASON_MSR_READ);
  assert_int_equal(d.why, WHY_BITMAP_SET);
  assert_false(decide(EV_WRMSR, 0, 0x10, 0).exits);
  d = decide(EV_WRMSR, 0, 0xc0000080, 0);
  assert_true(d.exits);
  assert_int_equal(d.reason, EXIT_REASON_MSR_WRITE);
  assert_false(decide(EV_RDMSR, 0, 0xc0000080, 0).exits);
  /* low and high ranges are separate: 0x80 has no bit set */
  assert_false(decide(EV_WRMSR, 0, 0x80, 0).exits);
  assert_false(decide(EV_RDMSR, 0, 0x11, 0).exits);
  /* edges of both ranges */
  assert_true(decide(EV_WRMSR, 0, 0x1fff, 0).exits);
  assert_false(decide(EV_RDMSR, 0, 0x1fff, 0).exits);
  assert_true(decide(EV_RDMSR, 0, 0xc0001fff, 0).exits);
  assert_false(decide(EV_WRMSR, 0, 0xc0001fff, 0).exits);
  assert_false(decide(EV_RDMSR, 0, 0, 0).exits);
  assert_false(decide(EV_RDMSR, 0, 0xc0000000, 0).exits);
}

static void msrs_outside_the_bitmap_ranges_always_exit(void **state) {
  (void)state;
  set(CPU, CPU_USE_MSR_BITMAPS);   /* every bitmap bit clear */
  static const uint32_t out[] = { 0x2000, 0x40000000, 0xbfffffff, 0xc0002000, 0xc0010000, 0xffffffff };
  for (size_t i = 0; i < sizeof out / sizeof out[0]; i++) {
    struct exit_decision d = decide(EV_RDMSR, 0, out[i], 0);
    if (!d.exits) fail_msg("rdmsr 0x%x did not exit", out[i]);
    assert_int_equal(d.reason, EXIT_REASON_MSR_READ);
    assert_int_equal(d.why, WHY_MSR_OUT_OF_RANGE);
    d = decide(EV_WRMSR, 0, out[i], 0);
    if (!d.exits) fail_msg("wrmsr 0x%x did not exit", out[i]);
    assert_int_equal(d.reason, EXIT_REASON_MSR_WRITE);
  }
}

/* ------------------------------------------------------------------------ */
/* Exceptions                                                                */

static void exception_exits_iff_its_exception_bitmap_bit_is_set(void **state) {
  (void)state;
  set(VMCS_EXCEPTION_BITMAP, (1u << 6) | (1u << 13));   /* #UD, #GP */
  struct exit_decision d = decide(EV_EXC, 0, 6, 0);
  assert_true(d.exits);
  assert_int_equal(d.reason, EXIT_REASON_EXCEPTION_NMI);
  assert_int_equal(d.detail, 6);
  assert_true(decide(EV_EXC, 0, 13, 0).exits);
  assert_false(decide(EV_EXC, 0, 1, 0).exits);
  assert_false(decide(EV_EXC, 0, 3, 0).exits);
  set(VMCS_EXCEPTION_BITMAP, 1u << 31);
  assert_true(decide(EV_EXC, 0, 31, 0).exits);
  assert_false(decide(EV_EXC, 0, 6, 0).exits);
}

static void page_fault_with_matching_pfec_exits_iff_bitmap_bit_14_is_set(void **state) {
  (void)state;
  /* mask = P, match = P: faults on present pages match */
  set(VMCS_PAGE_FAULT_ERROR_CODE_MASK, 0x1);
  set(VMCS_PAGE_FAULT_ERROR_CODE_MATCH, 0x1);
  set(VMCS_EXCEPTION_BITMAP, 1u << 14);
  assert_true(decide(EV_EXC, 0, 14, 0x3).exits);
  set(VMCS_EXCEPTION_BITMAP, 0);
  assert_false(decide(EV_EXC, 0, 14, 0x3).exits);
}

static void page_fault_with_non_matching_pfec_exits_iff_bitmap_bit_14_is_clear(void **state) {
  (void)state;
  set(VMCS_PAGE_FAULT_ERROR_CODE_MASK, 0x1);
  set(VMCS_PAGE_FAULT_ERROR_CODE_MATCH, 0x1);
  set(VMCS_EXCEPTION_BITMAP, 1u << 14);
  struct exit_decision d = decide(EV_EXC, 0, 14, 0x2);   /* not-present write: no match */
  assert_false(d.exits);
  assert_int_equal(d.why, WHY_PF_FILTERED);
  set(VMCS_EXCEPTION_BITMAP, 0);
  d = decide(EV_EXC, 0, 14, 0x2);
  assert_true(d.exits);
  assert_int_equal(d.reason, EXIT_REASON_EXCEPTION_NMI);
  assert_int_equal(d.why, WHY_PF_FILTERED);
}

static void page_fault_with_zero_mask_and_match_follows_bit_14(void **state) {
  (void)state;
  set(VMCS_EXCEPTION_BITMAP, 1u << 14);
  for (uint32_t pfec = 0; pfec < 32; pfec++) assert_true(decide(EV_EXC, 0, 14, pfec).exits);
  set(VMCS_EXCEPTION_BITMAP, 0);
  for (uint32_t pfec = 0; pfec < 32; pfec++) assert_false(decide(EV_EXC, 0, 14, pfec).exits);
}

static void page_fault_with_impossible_match_inverts_bit_14_for_every_pfec(void **state) {
  (void)state;
  /* mask 0, match 0xffffffff: never matches, so bit 14 = 0 means every #PF exits */
  set(VMCS_PAGE_FAULT_ERROR_CODE_MASK, 0);
  set(VMCS_PAGE_FAULT_ERROR_CODE_MATCH, 0xffffffff);
  set(VMCS_EXCEPTION_BITMAP, 0);
  for (uint32_t pfec = 0; pfec < 32; pfec++) assert_true(decide(EV_EXC, 0, 14, pfec).exits);
  set(VMCS_EXCEPTION_BITMAP, 1u << 14);
  for (uint32_t pfec = 0; pfec < 32; pfec++) assert_false(decide(EV_EXC, 0, 14, pfec).exits);
}

static void pfec_mask_and_match_apply_only_to_page_faults(void **state) {
  (void)state;
  set(VMCS_PAGE_FAULT_ERROR_CODE_MASK, 0x1);
  set(VMCS_PAGE_FAULT_ERROR_CODE_MATCH, 0x1);
  set(VMCS_EXCEPTION_BITMAP, 1u << 13);
  assert_true(decide(EV_EXC, 0, 13, 0x0).exits);   /* #GP error code is not filtered */
}

static void explanations_name_the_deciding_control(void **state) {
  (void)state;
  char buf[256];
  set(CPU, CPU_HLT_EXITING);
  struct trace_event ev = { .type = EV_HLT };
  struct exit_decision d = vmx_decide(&S, &ev);
  vmx_explain(&d, &ev, buf, sizeof buf);
  if (!strstr(buf, "HLT exiting")) fail_msg("explanation: %s", buf);
  set(CPU, 0);
  d = vmx_decide(&S, &ev);
  vmx_explain(&d, &ev, buf, sizeof buf);
  if (!strstr(buf, "no exit") || !strstr(buf, "HLT exiting")) fail_msg("explanation: %s", buf);
}

#define T(name) cmocka_unit_test_setup(name, reset)

int main(void) {
  const struct CMUnitTest tests[] = {
    T(hlt_exits_iff_hlt_exiting),
    T(invlpg_exits_iff_invlpg_exiting_with_the_linear_address_as_qualification),
    T(rdtsc_exits_iff_rdtsc_exiting),
    T(rdpmc_exits_iff_rdpmc_exiting),
    T(pause_exits_iff_pause_exiting),
    T(wbinvd_exits_iff_secondary_wbinvd_exiting),
    T(wbinvd_exiting_is_ignored_without_activate_secondary_controls),
    T(mov_from_cr3_exits_iff_cr3_store_exiting),
    T(mov_to_cr3_exits_iff_cr3_load_exiting),
    T(cr3_load_and_store_exiting_are_independent),
    T(mov_to_cr8_exits_iff_cr8_load_exiting),
    T(mov_from_cr8_exits_iff_cr8_store_exiting),
    T(mov_to_dr_exits_iff_mov_dr_exiting_with_dr_and_gpr_in_qualification),
    T(mov_from_dr_exits_iff_mov_dr_exiting_with_direction_bit_4),
    T(in_exits_iff_unconditional_io_exiting),
    T(out_exits_iff_unconditional_io_exiting_with_size_and_port),
    T(external_interrupt_exits_iff_pin_based_external_interrupt_exiting),
    T(cpuid_vmcall_and_xsetbv_always_exit),
    T(guest_memory_events_are_not_instruction_exits),
    T(exit_reason_numbers_and_names_follow_the_sdm),
    T(control_bits_are_at_their_sdm_positions),
    T(io_port_with_its_bitmap_bit_set_exits),
    T(io_port_in_bitmap_b_exits_per_its_bit),
    T(unconditional_io_exiting_is_ignored_when_io_bitmaps_are_used),
    T(io_without_bitmaps_or_unconditional_exiting_does_not_exit),
    T(multi_byte_io_spanning_a_set_bit_exits),
    T(multi_byte_io_spanning_bitmaps_a_and_b_exits),
    T(io_wrapping_past_port_ffff_exits),
    T(every_rdmsr_and_wrmsr_exits_without_msr_bitmaps),
    T(msr_bitmap_decides_per_msr_and_per_direction),
    T(msrs_outside_the_bitmap_ranges_always_exit),
    T(exception_exits_iff_its_exception_bitmap_bit_is_set),
    T(page_fault_with_matching_pfec_exits_iff_bitmap_bit_14_is_set),
    T(page_fault_with_non_matching_pfec_exits_iff_bitmap_bit_14_is_clear),
    T(page_fault_with_zero_mask_and_match_follows_bit_14),
    T(page_fault_with_impossible_match_inverts_bit_14_for_every_pfec),
    T(pfec_mask_and_match_apply_only_to_page_faults),
    T(explanations_name_the_deciding_control),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
