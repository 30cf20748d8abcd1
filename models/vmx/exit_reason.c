/* Exit-reason names, indexed by SDM number. */
#include "exit_reason.h"

#include <stddef.h>
#include <strings.h>

static const char *const names[EXIT_REASON_MAX] = {
#define X(name, num) [num] = #name,
  EXIT_REASONS(X)
#undef X
};

const char *exit_reason_name(unsigned reason) {
  return reason < EXIT_REASON_MAX ? names[reason] : NULL;
}

int exit_reason_by_name(const char *name) {
  for (int i = 0; i < EXIT_REASON_MAX; i++)
    if (names[i] && strcasecmp(names[i], name) == 0) return i;
  return -1;
}

/* Why the model never decides an exit of this reason, so that a replay of a
** recording cannot say how many it would take: what vmxsim does not model.
** Every other reason is decided by models/vmx/exit.c or the MMU from some
** trace event (docs/sources.md, "Exits a replay decides"). */
const char *exit_reason_not_redecided(unsigned reason) {
  switch (reason) {
  case EXIT_REASON_INIT_SIGNAL: case EXIT_REASON_SIPI_SIGNAL:
    return "INIT and start-up IPIs between vCPUs are not modelled";
  case EXIT_REASON_IO_SMI: case EXIT_REASON_OTHER_SMI: case EXIT_REASON_RSM:
    return "system-management interrupts are not modelled";
  case EXIT_REASON_GETSEC: case EXIT_REASON_INVD: case EXIT_REASON_RDRAND: case EXIT_REASON_RDSEED:
  case EXIT_REASON_XSAVES: case EXIT_REASON_XRSTORS: case EXIT_REASON_ENCLS: case EXIT_REASON_VMFUNC:
    return "no trace event stands for this instruction";
  case EXIT_REASON_GDTR_IDTR: case EXIT_REASON_LDTR_TR:
    return "descriptor-table exiting is not modelled";
  case EXIT_REASON_INVALID_STATE: case EXIT_REASON_MSR_LOAD_FAIL: case EXIT_REASON_MCE_DURING_VMENTRY:
    return "failed VM entries are not modelled";
  case EXIT_REASON_MONITOR_TRAP_FLAG:
    return "the monitor trap flag (a host debugger's single steps) is not modelled";
  case EXIT_REASON_EPT_MISCONFIG:
    return "MMIO to an emulated device: the EPT model maps no device memory";
  case EXIT_REASON_PML_FULL:
    return "page-modification logging is not modelled";
  }
  return reason < EXIT_REASON_MAX && names[reason] ? NULL : "not a VMX exit reason vmxsim knows";
}
