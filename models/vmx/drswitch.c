/* Debug-register switching between host and guest around VM exits (see drswitch.h). */
#include "drswitch.h"
#include "controls.h"
#include "models/counters.h"

/* DR0-3 and DR6: the registers software switches (DR7 goes through the VMCS). */
static const unsigned switched[] = { 0, 1, 2, 3, 6 };
#define NSWITCHED 5

void dr_hw_exit(struct vcpu *v) {
  struct vmcs *c = &v->vmx.vmcs;
  if (save_debug_controls(c)) {          /* SDM 28.3.1: save DR7 and DEBUGCTL first */
    vmcs_poke(c, VMCS_GUEST_DR7, v->hw_dr[7]);
    vmcs_poke(c, VMCS_GUEST_IA32_DEBUGCTL, v->hw_debugctl);
    v->guest_dr[7] = v->hw_dr[7];
  }
  v->hw_dr[7] = DR7_RESET;               /* SDM 28.3.1: every VM exit loads DR7 = 0x400 */
  v->hw_debugctl = 0;                    /* ... and IA32_DEBUGCTL = 0 */
}

void dr_hw_entry(struct vcpu *v) {
  if (load_debug_controls(&v->vmx.vmcs)) { /* SDM 27.3.1.1: DR7 and DEBUGCTL from the VMCS */
    v->hw_dr[7] = vmcs_peek(&v->vmx.vmcs, VMCS_GUEST_DR7);
    v->hw_debugctl = vmcs_peek(&v->vmx.vmcs, VMCS_GUEST_IA32_DEBUGCTL);
  }
}

static void read_back_guest(struct vcpu *v, struct work *w, uint64_t counters[]) {
  for (unsigned i = 0; i < NSWITCHED; i++) v->guest_dr[switched[i]] = v->hw_dr[switched[i]];
  work_add(w, PP_DR_READ, NSWITCHED);
  counters[CTR_DR_GUEST_SAVES] += NSWITCHED;
  v->guest_dr_live = false;
}

static void restore_host(struct vcpu *v, struct work *w, uint64_t counters[]) {
  for (unsigned i = 0; i < NSWITCHED; i++) v->hw_dr[switched[i]] = v->host_dr[switched[i]];
  v->hw_dr[7] = v->host_dr[7];
  work_add(w, PP_DR_WRITE, NSWITCHED + 1);
  counters[CTR_DR_HOST_RESTORES] += NSWITCHED + 1;
}

void dr_after_exit(struct vcpu *v, struct work *w, uint64_t counters[]) {
  const struct policy *p = v->pol;
  bool was_live = v->guest_dr_live;
  if (was_live) read_back_guest(v, w, counters);
  if (v->dr_wont_exit) {                 /* KVM: intercept MOV DR again */
    v->dr_wont_exit = false;
    struct vmcs *c = &v->vmx.vmcs;
    vmcs_write(c, VMCS_CPU_BASED_VM_EXEC_CONTROL,
               vmcs_peek(c, VMCS_CPU_BASED_VM_EXEC_CONTROL) | CPU_MOV_DR_EXITING);
  }
  if (p->dr_switch == DR_EAGER || p->host_debugged || was_live) restore_host(v, w, counters);
}

static bool guest_needs_drs(const struct vcpu *v) {
  const struct policy *p = v->pol;
  /* Without MOV-DR exiting the hypervisor cannot see the guest use its DRs,
  ** so it must switch them on every round trip. */
  return v->dr_wont_exit || (v->guest_dr[7] & DR7_ENABLE_MASK) || !p->mov_dr_exiting;
}

void dr_before_entry(struct vcpu *v, struct work *w, uint64_t counters[]) {
  if (v->pol->dr_switch == DR_EAGER) {   /* save host DR0-3, DR6, DR7 on every entry */
    work_add(w, PP_DR_READ, NSWITCHED + 1);
    counters[CTR_DR_HOST_SAVES] += NSWITCHED + 1;
  }
  if (guest_needs_drs(v)) {
    for (unsigned i = 0; i < NSWITCHED; i++) v->hw_dr[switched[i]] = v->guest_dr[switched[i]];
    work_add(w, PP_DR_WRITE, NSWITCHED);
    counters[CTR_DR_GUEST_LOADS] += NSWITCHED;
    v->guest_dr_live = true;
  }
}

void dr_stop_intercepting(struct vcpu *v) {
  struct vmcs *c = &v->vmx.vmcs;
  vmcs_write(c, VMCS_CPU_BASED_VM_EXEC_CONTROL,
             vmcs_peek(c, VMCS_CPU_BASED_VM_EXEC_CONTROL) & ~(uint64_t)CPU_MOV_DR_EXITING);
  v->dr_wont_exit = true;
}

int dr_resolve(uint64_t cr4, unsigned dr, bool write, uint64_t value, unsigned *fault) {
  dr &= 7;
  if (dr == 4 || dr == 5) {
    if (cr4 & CR4_DE) { *fault = DR_FAULT_UD; return -1; }
    dr += 2;                             /* aliases of DR6/DR7 when CR4.DE = 0 */
  }
  if (write && (dr == 6 || dr == 7) && (value >> 32)) { *fault = DR_FAULT_GP; return -1; }
  return (int)dr;
}

/* Natively the processor checks its real CR4; a faulting MOV DR (#UD, #GP:
** not intercepted) changes no register. */
void dr_guest_write(struct vcpu *v, unsigned dr, uint64_t value) {
  unsigned fault;
  int n = dr_resolve(vmcs_peek(&v->vmx.vmcs, VMCS_GUEST_CR4), dr, true, value, &fault);
  if (n < 0) return;
  v->hw_dr[n] = value;
  v->guest_dr[n] = value;
}

void dr_guest_read(struct vcpu *v, unsigned dr) {
  unsigned fault;
  int n = dr_resolve(vmcs_peek(&v->vmx.vmcs, VMCS_GUEST_CR4), dr, false, 0, &fault);
  if (n >= 0 && v->hw_dr[n] != v->guest_dr[n]) v->dr_mismatches++;
}
