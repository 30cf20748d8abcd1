/* VM-execution, VM-exit and VM-entry control bits (SDM 24.6-24.8), one list
** each, generating the bit constants and their names (for explanations and
** for the capability checks at VM entry), and one predicate per control. */
#ifndef VMXSIM_CONTROLS_H
#define VMXSIM_CONTROLS_H

#include <stdbool.h>
#include <stdint.h>
#include "vmcs.h"

/* X(NAME, bit, "name as the SDM spells it") */

/* Pin-based controls (0x4000), SDM 24.6.1 */
#define PIN_CONTROLS(X)                                        \
  X(EXT_INTR_EXITING,   0, "external-interrupt exiting")       \
  X(NMI_EXITING,        3, "NMI exiting")                      \
  X(VIRTUAL_NMIS,       5, "virtual NMIs")                     \
  X(PREEMPTION_TIMER,   6, "activate VMX-preemption timer")    \
  X(POSTED_INTR,        7, "process posted interrupts")

/* Primary processor-based controls (0x4002), SDM 24.6.2 table 24-6 */
#define CPU_CONTROLS(X)                                        \
  X(INTR_WINDOW_EXITING, 2, "interrupt-window exiting")        \
  X(HLT_EXITING,        7, "HLT exiting")                      \
  X(INVLPG_EXITING,     9, "INVLPG exiting")                   \
  X(MWAIT_EXITING,     10, "MWAIT exiting")                    \
  X(RDPMC_EXITING,     11, "RDPMC exiting")                    \
  X(RDTSC_EXITING,     12, "RDTSC exiting")                    \
  X(CR3_LOAD_EXITING,  15, "CR3-load exiting")                 \
  X(CR3_STORE_EXITING, 16, "CR3-store exiting")                \
  X(ACTIVATE_TERTIARY, 17, "activate tertiary controls")       \
  X(CR8_LOAD_EXITING,  19, "CR8-load exiting")                 \
  X(CR8_STORE_EXITING, 20, "CR8-store exiting")                \
  X(TPR_SHADOW,        21, "use TPR shadow")                   \
  X(NMI_WINDOW_EXITING, 22, "NMI-window exiting")              \
  X(MOV_DR_EXITING,    23, "MOV-DR exiting")                   \
  X(UNCOND_IO_EXITING, 24, "unconditional I/O exiting")        \
  X(USE_IO_BITMAPS,    25, "use I/O bitmaps")                  \
  X(USE_MSR_BITMAPS,   28, "use MSR bitmaps")                  \
  X(MONITOR_EXITING,   29, "MONITOR exiting")                  \
  X(PAUSE_EXITING,     30, "PAUSE exiting")                    \
  X(ACTIVATE_SECONDARY, 31, "activate secondary controls")

/* Secondary processor-based controls (0x401E), SDM 24.6.2 table 24-7 */
#define SEC_CONTROLS(X)                                        \
  X(APIC_ACCESS,        0, "virtualize APIC accesses")         \
  X(ENABLE_EPT,         1, "enable EPT")                       \
  X(ENABLE_RDTSCP,      3, "enable RDTSCP")                    \
  X(VIRT_X2APIC,        4, "virtualize x2APIC mode")           \
  X(ENABLE_VPID,        5, "enable VPID")                      \
  X(WBINVD_EXITING,     6, "WBINVD exiting")                   \
  X(UNRESTRICTED_GUEST, 7, "unrestricted guest")               \
  X(APIC_REGISTER_VIRT, 8, "APIC-register virtualization")     \
  X(VIRTUAL_INTR_DELIVERY, 9, "virtual-interrupt delivery")    \
  X(PAUSE_LOOP_EXITING, 10, "PAUSE-loop exiting")              \
  X(ENABLE_INVPCID,    12, "enable INVPCID")

/* Tertiary processor-based controls (0x2034, 64 bits), SDM 24.6.2 table 24-8 */
#define TER_CONTROLS(X)                                        \
  X(IPI_VIRT,           4, "IPI virtualization")

enum {
#define X(name, bit, text) PIN_##name = 1u << bit,
  PIN_CONTROLS(X)
#undef X
};
enum {
#define X(name, bit, text) CPU_##name = 1u << bit,
  CPU_CONTROLS(X)
#undef X
};
enum {
#define X(name, bit, text) SEC_##name = 1u << bit,
  SEC_CONTROLS(X)
#undef X
};
enum {
#define X(name, bit, text) TER_##name = 1u << bit,
  TER_CONTROLS(X)
#undef X
};

/* The field a control bit belongs to, for names and capability checks. */
enum control_field { CTL_PIN, CTL_CPU, CTL_SEC, CTL_TER };
/* "HLT exiting" for bit CPU_HLT_EXITING of CTL_CPU; NULL for a bit not listed. */
const char *control_name(enum control_field f, uint32_t bit);

/* VM-exit controls (0x400C) bit 2 and VM-entry controls (0x4012) bit 2.
** Old Linux headers say 0x2: the SDM, Bochs and modern Linux say 0x4. */
#define EXIT_SAVE_DEBUG_CONTROLS  (1u << 2)
/* VM-exit control bit 15 (SDM 24.7.1): the processor acknowledges the
** interrupt controller at an external-interrupt exit; posted interrupts need it. */
#define EXIT_ACK_INTR_ON_EXIT     (1u << 15)
#define ENTRY_LOAD_DEBUG_CONTROLS (1u << 2)

/* IA32_VMX_MISC bits 24:16: number of CR3-target values supported (SDM A.6). */
#define VMX_MISC_CR3_TARGETS(misc) (((misc) >> 16) & 0x1ff)

static inline bool cpu_ctl(const struct vmcs *v, uint32_t bit) {
  return (vmcs_peek(v, VMCS_CPU_BASED_VM_EXEC_CONTROL) & bit) != 0;
}
/* Secondary controls apply only when "activate secondary controls" is set (SDM 24.6.2). */
static inline bool sec_ctl(const struct vmcs *v, uint32_t bit) {
  return cpu_ctl(v, CPU_ACTIVATE_SECONDARY) &&
         (vmcs_peek(v, VMCS_SECONDARY_VM_EXEC_CONTROL) & bit) != 0;
}
/* Tertiary controls apply only when "activate tertiary controls" is set (SDM 24.6.2). */
static inline bool ter_ctl(const struct vmcs *v, uint64_t bit) {
  return cpu_ctl(v, CPU_ACTIVATE_TERTIARY) &&
         (vmcs_peek(v, VMCS_TERTIARY_VM_EXEC_CONTROL) & bit) != 0;
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
