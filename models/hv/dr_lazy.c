/* Lazy debug-register switching (KVM since 2009-09, "KVM: Use thread debug
** register storage instead of kvm specific data", A. Kivity, 2009-09-01):
** the host's values are the thread's saved copy, restored only when the host
** thread is being debugged or the guest's values were loaded.  With MOV-DR
** exiting on, the guest's first MOV DR exits; KVM then stops intercepting MOV
** DR and loads the guest's registers on each entry until the next exit of any
** kind, where it reads them back and intercepts again. */
#include "dr.h"
#include "models/vmx/controls.h"

static void set_mov_dr_exiting(struct vcpu *v, bool on) {
  struct vmcs *c = &v->vmx.vmcs;
  uint64_t ctl = vmcs_peek(c, VMCS_CPU_BASED_VM_EXEC_CONTROL);
  vmcs_write(c, VMCS_CPU_BASED_VM_EXEC_CONTROL, on ? ctl | CPU_MOV_DR_EXITING : ctl & ~(uint64_t)CPU_MOV_DR_EXITING);
}

static void after_exit(struct vcpu *v, struct work *w, uint64_t counters[]) {
  bool was_live = v->guest_dr_live;
  if (was_live) dr_read_back_guest(v, w, counters);
  if (v->dr_wont_exit) {                 /* intercept MOV DR again */
    v->dr_wont_exit = false;
    set_mov_dr_exiting(v, true);
  }
  if (v->pol->host_debugged || was_live) dr_restore_host(v, w, counters);
}

static void before_entry(struct vcpu *v, struct work *w, uint64_t counters[]) {
  if (dr_guest_needs(v)) dr_load_guest(v, w, counters);
}

static bool mov_dr_exit(struct vcpu *v) {
  set_mov_dr_exiting(v, false);
  v->dr_wont_exit = true;
  return true;
}

const struct dr_scheme dr_lazy = { "lazy", after_exit, before_entry, mov_dr_exit };
