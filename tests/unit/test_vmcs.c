/* VMCS field encodings, widths, read-only-ness, lookups, masking and access
** counting (SDM appendix B and 24.11.2; docs/sources.md, "VMCS field encodings"). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "models/vmx/vmcs.h"

/* Expected values written out by hand from the SDM appendix B tables, not
** computed from the encoding, so a wrong encoding or a wrong decoder shows. */
struct expect {
  enum vmcs_field f;
  const char *name;
  uint32_t enc;
  unsigned bits;       /* 16, 32, 64 (natural = 64 on a 64-bit host) */
  unsigned width;      /* enum vmcs_width */
  unsigned type;       /* enum vmcs_type */
};

static const struct expect table[] = {
  { VMCS_VIRTUAL_PROCESSOR_ID,        "VIRTUAL_PROCESSOR_ID",        0x0000, 16, VMCS_W16,      VMCS_T_CONTROL },
  { VMCS_POSTED_INTR_NV,              "POSTED_INTR_NV",              0x0002, 16, VMCS_W16,      VMCS_T_CONTROL },
  { VMCS_GUEST_INTR_STATUS,           "GUEST_INTR_STATUS",           0x0810, 16, VMCS_W16,      VMCS_T_GUEST },
  { VMCS_IO_BITMAP_A,                 "IO_BITMAP_A",                 0x2000, 64, VMCS_W64,      VMCS_T_CONTROL },
  { VMCS_IO_BITMAP_B,                 "IO_BITMAP_B",                 0x2002, 64, VMCS_W64,      VMCS_T_CONTROL },
  { VMCS_MSR_BITMAP,                  "MSR_BITMAP",                  0x2004, 64, VMCS_W64,      VMCS_T_CONTROL },
  { VMCS_EPT_POINTER,                 "EPT_POINTER",                 0x201A, 64, VMCS_W64,      VMCS_T_CONTROL },
  { VMCS_EOI_EXIT_BITMAP0,            "EOI_EXIT_BITMAP0",            0x201C, 64, VMCS_W64,      VMCS_T_CONTROL },
  { VMCS_EOI_EXIT_BITMAP1,            "EOI_EXIT_BITMAP1",            0x201E, 64, VMCS_W64,      VMCS_T_CONTROL },
  { VMCS_EOI_EXIT_BITMAP2,            "EOI_EXIT_BITMAP2",            0x2020, 64, VMCS_W64,      VMCS_T_CONTROL },
  { VMCS_EOI_EXIT_BITMAP3,            "EOI_EXIT_BITMAP3",            0x2022, 64, VMCS_W64,      VMCS_T_CONTROL },
  { VMCS_TERTIARY_VM_EXEC_CONTROL,    "TERTIARY_VM_EXEC_CONTROL",    0x2034, 64, VMCS_W64,      VMCS_T_CONTROL },
  { VMCS_GUEST_PHYSICAL_ADDRESS,      "GUEST_PHYSICAL_ADDRESS",      0x2400, 64, VMCS_W64,      VMCS_T_RODATA },
  { VMCS_VMCS_LINK_POINTER,           "VMCS_LINK_POINTER",           0x2800, 64, VMCS_W64,      VMCS_T_GUEST },
  { VMCS_GUEST_IA32_DEBUGCTL,         "GUEST_IA32_DEBUGCTL",         0x2802, 64, VMCS_W64,      VMCS_T_GUEST },
  { VMCS_PIN_BASED_VM_EXEC_CONTROL,   "PIN_BASED_VM_EXEC_CONTROL",   0x4000, 32, VMCS_W32,      VMCS_T_CONTROL },
  { VMCS_CPU_BASED_VM_EXEC_CONTROL,   "CPU_BASED_VM_EXEC_CONTROL",   0x4002, 32, VMCS_W32,      VMCS_T_CONTROL },
  { VMCS_EXCEPTION_BITMAP,            "EXCEPTION_BITMAP",            0x4004, 32, VMCS_W32,      VMCS_T_CONTROL },
  { VMCS_PAGE_FAULT_ERROR_CODE_MASK,  "PAGE_FAULT_ERROR_CODE_MASK",  0x4006, 32, VMCS_W32,      VMCS_T_CONTROL },
  { VMCS_PAGE_FAULT_ERROR_CODE_MATCH, "PAGE_FAULT_ERROR_CODE_MATCH", 0x4008, 32, VMCS_W32,      VMCS_T_CONTROL },
  { VMCS_CR3_TARGET_COUNT,            "CR3_TARGET_COUNT",            0x400A, 32, VMCS_W32,      VMCS_T_CONTROL },
  { VMCS_VM_EXIT_CONTROLS,            "VM_EXIT_CONTROLS",            0x400C, 32, VMCS_W32,      VMCS_T_CONTROL },
  { VMCS_VM_ENTRY_CONTROLS,           "VM_ENTRY_CONTROLS",           0x4012, 32, VMCS_W32,      VMCS_T_CONTROL },
  { VMCS_VM_ENTRY_INTR_INFO_FIELD,    "VM_ENTRY_INTR_INFO_FIELD",    0x4016, 32, VMCS_W32,      VMCS_T_CONTROL },
  { VMCS_TPR_THRESHOLD,               "TPR_THRESHOLD",               0x401C, 32, VMCS_W32,      VMCS_T_CONTROL },
  { VMCS_SECONDARY_VM_EXEC_CONTROL,   "SECONDARY_VM_EXEC_CONTROL",   0x401E, 32, VMCS_W32,      VMCS_T_CONTROL },
  { VMCS_PLE_GAP,                     "PLE_GAP",                     0x4020, 32, VMCS_W32,      VMCS_T_CONTROL },
  { VMCS_PLE_WINDOW,                  "PLE_WINDOW",                  0x4022, 32, VMCS_W32,      VMCS_T_CONTROL },
  { VMCS_VM_INSTRUCTION_ERROR,        "VM_INSTRUCTION_ERROR",        0x4400, 32, VMCS_W32,      VMCS_T_RODATA },
  { VMCS_VM_EXIT_REASON,              "VM_EXIT_REASON",              0x4402, 32, VMCS_W32,      VMCS_T_RODATA },
  { VMCS_VM_EXIT_INTR_INFO,           "VM_EXIT_INTR_INFO",           0x4404, 32, VMCS_W32,      VMCS_T_RODATA },
  { VMCS_VM_EXIT_INTR_ERROR_CODE,     "VM_EXIT_INTR_ERROR_CODE",     0x4406, 32, VMCS_W32,      VMCS_T_RODATA },
  { VMCS_VM_EXIT_INSTRUCTION_LEN,     "VM_EXIT_INSTRUCTION_LEN",     0x440C, 32, VMCS_W32,      VMCS_T_RODATA },
  { VMCS_VMX_INSTRUCTION_INFO,        "VMX_INSTRUCTION_INFO",        0x440E, 32, VMCS_W32,      VMCS_T_RODATA },
  { VMCS_VMX_PREEMPTION_TIMER_VALUE,  "VMX_PREEMPTION_TIMER_VALUE",  0x482E, 32, VMCS_W32,      VMCS_T_GUEST },
  { VMCS_CR0_GUEST_HOST_MASK,         "CR0_GUEST_HOST_MASK",         0x6000, 64, VMCS_WNATURAL, VMCS_T_CONTROL },
  { VMCS_CR4_GUEST_HOST_MASK,         "CR4_GUEST_HOST_MASK",         0x6002, 64, VMCS_WNATURAL, VMCS_T_CONTROL },
  { VMCS_CR0_READ_SHADOW,             "CR0_READ_SHADOW",             0x6004, 64, VMCS_WNATURAL, VMCS_T_CONTROL },
  { VMCS_CR4_READ_SHADOW,             "CR4_READ_SHADOW",             0x6006, 64, VMCS_WNATURAL, VMCS_T_CONTROL },
  { VMCS_CR3_TARGET_VALUE0,           "CR3_TARGET_VALUE0",           0x6008, 64, VMCS_WNATURAL, VMCS_T_CONTROL },
  { VMCS_CR3_TARGET_VALUE1,           "CR3_TARGET_VALUE1",           0x600A, 64, VMCS_WNATURAL, VMCS_T_CONTROL },
  { VMCS_CR3_TARGET_VALUE2,           "CR3_TARGET_VALUE2",           0x600C, 64, VMCS_WNATURAL, VMCS_T_CONTROL },
  { VMCS_CR3_TARGET_VALUE3,           "CR3_TARGET_VALUE3",           0x600E, 64, VMCS_WNATURAL, VMCS_T_CONTROL },
  { VMCS_EXIT_QUALIFICATION,          "EXIT_QUALIFICATION",          0x6400, 64, VMCS_WNATURAL, VMCS_T_RODATA },
  { VMCS_GUEST_LINEAR_ADDRESS,        "GUEST_LINEAR_ADDRESS",        0x640A, 64, VMCS_WNATURAL, VMCS_T_RODATA },
  { VMCS_GUEST_CR0,                   "GUEST_CR0",                   0x6800, 64, VMCS_WNATURAL, VMCS_T_GUEST },
  { VMCS_GUEST_CR3,                   "GUEST_CR3",                   0x6802, 64, VMCS_WNATURAL, VMCS_T_GUEST },
  { VMCS_GUEST_CR4,                   "GUEST_CR4",                   0x6804, 64, VMCS_WNATURAL, VMCS_T_GUEST },
  { VMCS_GUEST_DR7,                   "GUEST_DR7",                   0x681A, 64, VMCS_WNATURAL, VMCS_T_GUEST },
  { VMCS_GUEST_RSP,                   "GUEST_RSP",                   0x681C, 64, VMCS_WNATURAL, VMCS_T_GUEST },
  { VMCS_GUEST_RIP,                   "GUEST_RIP",                   0x681E, 64, VMCS_WNATURAL, VMCS_T_GUEST },
  { VMCS_GUEST_RFLAGS,                "GUEST_RFLAGS",                0x6820, 64, VMCS_WNATURAL, VMCS_T_GUEST },
  { VMCS_HOST_CR0,                    "HOST_CR0",                    0x6C00, 64, VMCS_WNATURAL, VMCS_T_HOST },
  { VMCS_HOST_CR3,                    "HOST_CR3",                    0x6C02, 64, VMCS_WNATURAL, VMCS_T_HOST },
  { VMCS_HOST_CR4,                    "HOST_CR4",                    0x6C04, 64, VMCS_WNATURAL, VMCS_T_HOST },
  { VMCS_HOST_RSP,                    "HOST_RSP",                    0x6C14, 64, VMCS_WNATURAL, VMCS_T_HOST },
  { VMCS_HOST_RIP,                    "HOST_RIP",                    0x6C16, 64, VMCS_WNATURAL, VMCS_T_HOST },
};
#define NTABLE (sizeof table / sizeof table[0])

static void every_field_is_listed_once_in_the_expected_table(void **state) {
  (void)state;
  assert_int_equal(NTABLE, VMCS_FIELD_COUNT);
  for (size_t i = 0; i < NTABLE; i++) assert_int_equal(table[i].f, i);
}

static void every_field_has_the_sdm_encoding_and_name(void **state) {
  (void)state;
  for (size_t i = 0; i < NTABLE; i++) {
    assert_string_equal(vmcs_name(table[i].f), table[i].name);
    assert_int_equal(vmcs_encoding(table[i].f), table[i].enc);
  }
}

static void every_field_width_is_derived_from_encoding_bits_14_13(void **state) {
  (void)state;
  for (size_t i = 0; i < NTABLE; i++) {
    uint32_t enc = vmcs_encoding(table[i].f);
    assert_int_equal(vmcs_enc_width(enc), table[i].width);
    assert_int_equal(vmcs_width_bits(table[i].f), table[i].bits);
  }
}

static void every_field_type_and_read_only_ness_is_derived_from_encoding_bits_11_10(void **state) {
  (void)state;
  for (size_t i = 0; i < NTABLE; i++) {
    uint32_t enc = vmcs_encoding(table[i].f);
    assert_int_equal(vmcs_enc_type(enc), table[i].type);
    assert_int_equal(vmcs_enc_readonly(enc), table[i].type == VMCS_T_RODATA);
  }
}

static void vm_exit_reason_0x4402_is_32_bit_read_only_data(void **state) {
  (void)state;
  assert_int_equal(vmcs_encoding(VMCS_VM_EXIT_REASON), 0x4402);
  assert_int_equal(vmcs_enc_width(0x4402), VMCS_W32);
  assert_int_equal(vmcs_width_bits(VMCS_VM_EXIT_REASON), 32);
  assert_true(vmcs_enc_readonly(0x4402));
}

static void guest_cr0_0x6800_is_natural_width_guest_state(void **state) {
  (void)state;
  assert_int_equal(vmcs_encoding(VMCS_GUEST_CR0), 0x6800);
  assert_int_equal(vmcs_enc_width(0x6800), VMCS_WNATURAL);
  assert_int_equal(vmcs_enc_type(0x6800), VMCS_T_GUEST);
  assert_false(vmcs_enc_readonly(0x6800));
  assert_int_equal(vmcs_width_bits(VMCS_GUEST_CR0), 64);
}

static void ept_pointer_0x201a_is_a_64_bit_control(void **state) {
  (void)state;
  assert_int_equal(vmcs_encoding(VMCS_EPT_POINTER), 0x201A);
  assert_int_equal(vmcs_enc_width(0x201A), VMCS_W64);
  assert_int_equal(vmcs_enc_type(0x201A), VMCS_T_CONTROL);
  assert_false(vmcs_enc_readonly(0x201A));
  assert_int_equal(vmcs_width_bits(VMCS_EPT_POINTER), 64);
}

static void encoding_0x0000_is_a_16_bit_control(void **state) {
  (void)state;
  assert_int_equal(vmcs_field_by_encoding(0x0000), VMCS_VIRTUAL_PROCESSOR_ID);
  assert_int_equal(vmcs_enc_width(0x0000), VMCS_W16);
  assert_int_equal(vmcs_enc_type(0x0000), VMCS_T_CONTROL);
  assert_int_equal(vmcs_width_bits(VMCS_VIRTUAL_PROCESSOR_ID), 16);
}

static void only_read_only_data_fields_are_read_only(void **state) {
  (void)state;
  /* Exit information (type 1) is read-only; control, guest and host state are not. */
  assert_true(vmcs_enc_readonly(vmcs_encoding(VMCS_EXIT_QUALIFICATION)));
  assert_true(vmcs_enc_readonly(vmcs_encoding(VMCS_VM_INSTRUCTION_ERROR)));
  assert_true(vmcs_enc_readonly(vmcs_encoding(VMCS_GUEST_PHYSICAL_ADDRESS)));
  assert_false(vmcs_enc_readonly(vmcs_encoding(VMCS_CR0_READ_SHADOW)));
  assert_false(vmcs_enc_readonly(vmcs_encoding(VMCS_GUEST_DR7)));
  assert_false(vmcs_enc_readonly(vmcs_encoding(VMCS_HOST_CR3)));
}

static void encodings_are_unique_and_name_full_fields(void **state) {
  (void)state;
  for (int i = 0; i < VMCS_FIELD_COUNT; i++) {
    uint32_t enc = vmcs_encoding((enum vmcs_field)i);
    assert_int_equal(enc & 1, 0);                           /* bit 0: high-half access */
    assert_int_equal(vmcs_field_by_encoding(enc), i);       /* unique: finds itself first */
  }
}

static void field_lookup_by_name_round_trips_and_ignores_case(void **state) {
  (void)state;
  for (int i = 0; i < VMCS_FIELD_COUNT; i++)
    assert_int_equal(vmcs_field_by_name(vmcs_name((enum vmcs_field)i)), i);
  assert_int_equal(vmcs_field_by_name("guest_cr4"), VMCS_GUEST_CR4);
  assert_int_equal(vmcs_field_by_name("Cr3_Target_Count"), VMCS_CR3_TARGET_COUNT);
}

static void unknown_names_and_encodings_are_not_found(void **state) {
  (void)state;
  assert_int_equal(vmcs_field_by_name("GUEST_CR5"), -1);
  assert_int_equal(vmcs_field_by_name(""), -1);
  assert_int_equal(vmcs_field_by_name("GUEST_CR"), -1);
  assert_int_equal(vmcs_field_by_encoding(0x6806), -1);
  assert_int_equal(vmcs_field_by_encoding(0xffff), -1);
}

static void values_are_masked_to_the_field_width(void **state) {
  (void)state;
  static struct vmcs v;
  const uint64_t val = 0xdeadbeefcafef00dull;
  memset(&v, 0, sizeof v);
  vmcs_write(&v, VMCS_VIRTUAL_PROCESSOR_ID, val);
  assert_int_equal(vmcs_peek(&v, VMCS_VIRTUAL_PROCESSOR_ID), 0xf00d);
  vmcs_write(&v, VMCS_CR3_TARGET_COUNT, val);
  assert_int_equal(vmcs_peek(&v, VMCS_CR3_TARGET_COUNT), 0xcafef00d);
  vmcs_poke(&v, VMCS_VM_EXIT_REASON, val);
  assert_int_equal(vmcs_peek(&v, VMCS_VM_EXIT_REASON), 0xcafef00d);
  vmcs_write(&v, VMCS_EPT_POINTER, val);
  assert_int_equal(vmcs_peek(&v, VMCS_EPT_POINTER), val);
  vmcs_poke(&v, VMCS_GUEST_CR0, val);
  assert_int_equal(vmcs_peek(&v, VMCS_GUEST_CR0), val);
  vmcs_poke(&v, VMCS_CR3_TARGET_VALUE3, val);
  assert_int_equal(vmcs_read(&v, VMCS_CR3_TARGET_VALUE3), val);
}

static void every_field_keeps_exactly_its_width(void **state) {
  (void)state;
  static struct vmcs v;
  memset(&v, 0, sizeof v);
  for (size_t i = 0; i < NTABLE; i++) {
    vmcs_poke(&v, table[i].f, ~0ull);
    uint64_t want = table[i].bits == 64 ? ~0ull : (1ull << table[i].bits) - 1;
    assert_int_equal(vmcs_peek(&v, table[i].f), want);
  }
}

static void vmread_and_vmwrite_are_counted(void **state) {
  (void)state;
  static struct vmcs v;
  memset(&v, 0, sizeof v);
  vmcs_write(&v, VMCS_GUEST_RIP, 0x1000);
  vmcs_write(&v, VMCS_GUEST_RSP, 0x2000);
  assert_int_equal(vmcs_read(&v, VMCS_GUEST_RIP), 0x1000);
  assert_int_equal(v.writes, 2);
  assert_int_equal(v.reads, 1);
}

static void peek_and_poke_are_not_counted(void **state) {
  (void)state;
  static struct vmcs v;
  memset(&v, 0, sizeof v);
  vmcs_poke(&v, VMCS_VM_EXIT_REASON, 10);
  vmcs_poke(&v, VMCS_EXIT_QUALIFICATION, 0x600);
  assert_int_equal(vmcs_peek(&v, VMCS_VM_EXIT_REASON), 10);
  assert_int_equal(vmcs_peek(&v, VMCS_EXIT_QUALIFICATION), 0x600);
  assert_int_equal(v.reads, 0);
  assert_int_equal(v.writes, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(every_field_is_listed_once_in_the_expected_table),
    cmocka_unit_test(every_field_has_the_sdm_encoding_and_name),
    cmocka_unit_test(every_field_width_is_derived_from_encoding_bits_14_13),
    cmocka_unit_test(every_field_type_and_read_only_ness_is_derived_from_encoding_bits_11_10),
    cmocka_unit_test(vm_exit_reason_0x4402_is_32_bit_read_only_data),
    cmocka_unit_test(guest_cr0_0x6800_is_natural_width_guest_state),
    cmocka_unit_test(ept_pointer_0x201a_is_a_64_bit_control),
    cmocka_unit_test(encoding_0x0000_is_a_16_bit_control),
    cmocka_unit_test(only_read_only_data_fields_are_read_only),
    cmocka_unit_test(encodings_are_unique_and_name_full_fields),
    cmocka_unit_test(field_lookup_by_name_round_trips_and_ignores_case),
    cmocka_unit_test(unknown_names_and_encodings_are_not_found),
    cmocka_unit_test(values_are_masked_to_the_field_width),
    cmocka_unit_test(every_field_keeps_exactly_its_width),
    cmocka_unit_test(vmread_and_vmwrite_are_counted),
    cmocka_unit_test(peek_and_poke_are_not_counted),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
