/* The fixture of the exit-rule tests (test_exit_rules.c, test_intercepts.c):
** one zeroed VMX state per test, VMCS writes, and the exit decision for one
** guest event.  Include it after <cmocka.h>. */
#ifndef VMXSIM_TEST_VMX_FIXTURE_H
#define VMXSIM_TEST_VMX_FIXTURE_H

#include <stdint.h>
#include <string.h>

#include "models/vmx/controls.h"
#include "models/vmx/exit.h"
#include "models/vmx/exit_reason.h"

/* General-purpose register numbers as the SDM's exit qualifications encode them. */
#define GPR_RAX 0
#define GPR_RCX 1
#define GPR_RBX 3
#define GPR_RSI 6
#define GPR_R15 15

static struct vmx_cpu S;

/* cmocka setup: every test starts from an all-zero VMCS (nothing intercepted). */
static inline int reset(void **state) {
  (void)state;
  memset(&S, 0, sizeof S);
  return 0;
}

static inline void set(enum vmcs_field f, uint64_t v) { vmcs_poke(&S.vmcs, f, v); }

static inline struct exit_decision decide(uint8_t type, uint8_t aux, uint64_t a, uint64_t b) {
  struct trace_event ev = { .type = type, .aux = aux, .a = a, .b = b };
  return vmx_decide(&S, &ev);
}

#endif
