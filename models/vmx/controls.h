/* VM-execution, VM-exit and VM-entry control bits (SDM Vol. 3C 25.6-25.8), one predicate each. */
#ifndef VMXSIM_CONTROLS_H
#define VMXSIM_CONTROLS_H

#include <stdbool.h>
#include "vmcs.h"

/* Pin-based controls (0x4000), SDM 25.6.1 */
#define PIN_EXT_INTR_EXITING     (1u << 0)
#define PIN_NMI_EXITING          (1u << 3)

/* Primary processor-based controls (0x4002), SDM 25.6.2 table 25-6 */
#define CPU_HLT_EXITING          (1u << 7)
#define CPU_INVLPG_EXITING       (1u << 9)
#define CPU_RDPMC_EXITING        (1u << 11)
#define CPU_RDTSC_EXITING        (1u << 12)
#define CPU_CR3_LOAD_EXITING     (1u << 15)
#define CPU_CR3_STORE_EXITING    (1u << 16)
#define CPU_CR8_LOAD_EXITING     (1u << 19)
#define CPU_CR8_STORE_EXITING    (1u << 20)
#define CPU_TPR_SHADOW           (1u << 21)
#define CPU_MOV_DR_EXITING       (1u << 23)
#define CPU_UNCOND_IO_EXITING    (1u << 24)
#define CPU_USE_IO_BITMAPS       (1u << 25)
#define CPU_USE_MSR_BITMAPS      (1u << 28)
#define CPU_PAUSE_EXITING        (1u << 30)
#define CPU_ACTIVATE_SECONDARY   (1u << 31)

/* Secondary processor-based controls (0x401E), SDM 25.6.2 table 25-7 */
#define SEC_ENABLE_EPT           (1u << 1)
#define SEC_ENABLE_VPID          (1u << 5)
#define SEC_WBINVD_EXITING       (1u << 6)
#define SEC_UNRESTRICTED_GUEST   (1u << 7)

/* VM-exit controls (0x400C) bit 2 and VM-entry controls (0x4012) bit 2.
** Old Linux headers say 0x2: the SDM, Bochs and modern Linux say 0x4. */
#define EXIT_SAVE_DEBUG_CONTROLS  (1u << 2)
#define ENTRY_LOAD_DEBUG_CONTROLS (1u << 2)

/* IA32_VMX_MISC bits 24:16: number of CR3-target values supported (SDM A.6). */
#define VMX_MISC_CR3_TARGETS(misc) (((misc) >> 16) & 0x1ff)

static inline bool cpu_ctl(const struct vmcs *v, uint32_t bit) {
  return (vmcs_peek(v, VMCS_CPU_BASED_VM_EXEC_CONTROL) & bit) != 0;
}
/* Secondary controls apply only when "activate secondary controls" is set (SDM 25.6.2). */
static inline bool sec_ctl(const struct vmcs *v, uint32_t bit) {
  return cpu_ctl(v, CPU_ACTIVATE_SECONDARY) &&
         (vmcs_peek(v, VMCS_SECONDARY_VM_EXEC_CONTROL) & bit) != 0;
}
static inline bool pin_ctl(const struct vmcs *v, uint32_t bit) {
  return (vmcs_peek(v, VMCS_PIN_BASED_VM_EXEC_CONTROL) & bit) != 0;
}
static inline bool ept_enabled(const struct vmcs *v)  { return sec_ctl(v, SEC_ENABLE_EPT); }
static inline bool vpid_enabled(const struct vmcs *v) { return sec_ctl(v, SEC_ENABLE_VPID); }
static inline bool save_debug_controls(const struct vmcs *v) {
  return (vmcs_peek(v, VMCS_VM_EXIT_CONTROLS) & EXIT_SAVE_DEBUG_CONTROLS) != 0;
}
static inline bool load_debug_controls(const struct vmcs *v) {
  return (vmcs_peek(v, VMCS_VM_ENTRY_CONTROLS) & ENTRY_LOAD_DEBUG_CONTROLS) != 0;
}

#endif
