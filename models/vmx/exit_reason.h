/* Basic VM-exit reasons with their SDM numbers (appendix C) and Linux names (docs/sources.md). */
#ifndef VMXSIM_EXIT_REASON_H
#define VMXSIM_EXIT_REASON_H

#include <stdbool.h>

/* X(NAME as Linux prints it, SDM number) */
#define EXIT_REASONS(X)                                                        \
  X(EXCEPTION_NMI, 0) X(EXTERNAL_INTERRUPT, 1) X(TRIPLE_FAULT, 2)               \
  X(INIT_SIGNAL, 3) X(SIPI_SIGNAL, 4) X(IO_SMI, 5) X(OTHER_SMI, 6)              \
  X(INTERRUPT_WINDOW, 7) X(NMI_WINDOW, 8) X(TASK_SWITCH, 9) X(CPUID, 10)       \
  X(GETSEC, 11) X(HLT, 12) X(INVD, 13) X(INVLPG, 14) X(RDPMC, 15)              \
  X(RDTSC, 16) X(RSM, 17) X(VMCALL, 18) X(VMCLEAR, 19) X(VMLAUNCH, 20)          \
  X(VMPTRLD, 21) X(VMPTRST, 22) X(VMREAD, 23) X(VMRESUME, 24) X(VMWRITE, 25)    \
  X(VMOFF, 26) X(VMON, 27) X(CR_ACCESS, 28) X(DR_ACCESS, 29)                    \
  X(IO_INSTRUCTION, 30) X(MSR_READ, 31) X(MSR_WRITE, 32) X(INVALID_STATE, 33)   \
  X(MSR_LOAD_FAIL, 34) X(MWAIT_INSTRUCTION, 36) X(MONITOR_TRAP_FLAG, 37)        \
  X(MONITOR_INSTRUCTION, 39) X(PAUSE_INSTRUCTION, 40) X(MCE_DURING_VMENTRY, 41) \
  X(TPR_BELOW_THRESHOLD, 43) X(APIC_ACCESS, 44) X(EOI_INDUCED, 45)              \
  X(GDTR_IDTR, 46) X(LDTR_TR, 47) X(EPT_VIOLATION, 48) X(EPT_MISCONFIG, 49)     \
  X(INVEPT, 50) X(RDTSCP, 51) X(PREEMPTION_TIMER, 52) X(INVVPID, 53)            \
  X(WBINVD, 54) X(XSETBV, 55) X(APIC_WRITE, 56) X(RDRAND, 57) X(INVPCID, 58)    \
  X(VMFUNC, 59) X(ENCLS, 60) X(RDSEED, 61) X(PML_FULL, 62) X(XSAVES, 63)        \
  X(XRSTORS, 64)

enum exit_reason {
#define X(name, num) EXIT_REASON_##name = num,
  EXIT_REASONS(X)
#undef X
};

#define EXIT_REASON_MAX 65                   /* reasons are 0..64 */
#define EXIT_REASON_ENTRY_FAILURE (1u << 31) /* bit 31: VM-entry failure (SDM 24.9.1, 26.7) */

/* Is r the exit reason of a VMX instruction (SDM 25.1.2: VMCLEAR ... VMXON,
** INVEPT, INVVPID exit unconditionally in VMX non-root operation)? */
static inline bool exit_reason_is_vmx_instruction(unsigned long long r) {
  return (r >= EXIT_REASON_VMCLEAR && r <= EXIT_REASON_VMON) || r == EXIT_REASON_INVEPT || r == EXIT_REASON_INVVPID;
}

const char *exit_reason_name(unsigned reason);  /* NULL for unassigned numbers */
int exit_reason_by_name(const char *name);      /* -1 when unknown; case-insensitive */
/* NULL when a replay decides exits of this reason from a trace's events;
** otherwise why it cannot (what vmxsim does not model), for the measured
** beside simulated table: "not re-decided: <why>". */
const char *exit_reason_not_redecided(unsigned reason);

#endif
