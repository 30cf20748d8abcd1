/* The hypervisor's side of the guest's timer and spin loops (see vcpu.h):
** KVM's emulation of the TSC-deadline timer with a host hrtimer or with the
** VMX-preemption timer (lapic_timer), and its per-vCPU PAUSE-loop window
** (ple_gap, ple_window, ple_window_grow, ple_window_shrink, ple_window_max).
** docs/sources.md lists the KVM commits followed. */
#include "vcpu.h"
#include "models/vmx/controls.h"
#include "models/vmx/exit_reason.h"

#include <stdio.h>

/* KVM's hv_timer ("KVM: x86: support using the vmx preemption timer for tsc
** deadline timer", 2016): where the CPU has the VMX-preemption timer KVM
** keeps the guest's deadline in it.  KVM since 2019 leaves the pin control
** set for the vCPU's life and "soft-disables" the timer with a value of all
** ones when no deadline is armed, as a VMWRITE to the pin controls costs
** more than one to the timer value. */
uint64_t vcpu_timer_pin_controls(const struct policy *p) {
  return p->lapic_timer == LAPIC_TIMER_PREEMPTION ? PIN_PREEMPTION_TIMER : 0;
}

/* KVM: ple_gap = 0 means no PAUSE-loop exiting (kvm_pause_in_guest). */
uint64_t vcpu_ple_secondary(const struct policy *p) {
  return p->ple_gap ? SEC_PAUSE_LOOP_EXITING : 0;
}

void vcpu_timer_setup(struct vcpu *v, const struct policy *p) {
  struct vmcs *c = &v->vmx.vmcs;
  if (p->lapic_timer == LAPIC_TIMER_PREEMPTION) {
    vmcs_poke(c, VMCS_VMX_PREEMPTION_TIMER_VALUE, 0xffffffffu);
    v->timer_soft_disabled = true;
  }
  if (p->ple_gap) {
    vmcs_poke(c, VMCS_PLE_GAP, p->ple_gap);
    vmcs_poke(c, VMCS_PLE_WINDOW, p->ple_window);
    v->ple_window = p->ple_window;
  }
}

/* KVM intercepts every write of IA32_TSC_DEADLINE (kvm_set_lapic_tscdeadline_msr):
** the new deadline replaces the old; 0 disarms the timer (SDM Vol. 3A
** 10.5.4.1 "TSC-Deadline Mode"). */
void vcpu_tsc_deadline_write(struct vcpu *v, uint64_t deadline) {
  v->tsc_deadline = deadline;
}

void vcpu_timer_expired(struct vcpu *v) {
  v->tsc_deadline = 0;
}

/* KVM's __grow_ple_window (arch/x86/kvm/x86.h): a factor below the base
** window multiplies, one at or above it adds, 0 resets to the base; capped
** at ple_window_max. */
static uint32_t grown(uint32_t val, uint32_t base, uint32_t modifier, uint32_t max) {
  if (modifier < 1) return base;
  uint64_t ret = modifier < base ? (uint64_t)val * modifier : (uint64_t)val + modifier;
  return ret < max ? (uint32_t)ret : max;
}

/* __shrink_ple_window: divides or subtracts likewise, 0 resets to the base;
** never below min (vmx.c passes the base window).  KVM's unsigned
** subtraction would wrap below 0; it stops at 0, then at min. */
static uint32_t shrunk(uint32_t val, uint32_t base, uint32_t modifier, uint32_t min) {
  if (modifier < 1) return base;
  uint32_t ret = modifier < base ? val / modifier : (val > modifier ? val - modifier : 0);
  return ret > min ? ret : min;
}

static void set_window(struct vcpu *v, uint32_t window) {
  if (window == v->ple_window) return;
  v->ple_window = window;
  v->ple_window_dirty = true;
}

/* KVM's handle_pause: grow_ple_window (unless PAUSE runs in the guest), then
** kvm_vcpu_on_spin yields to another vCPU. */
void vcpu_ple_exit(struct vcpu *v) {
  const struct policy *p = v->pol;
  if (!p->ple_gap) return;
  set_window(v, grown(v->ple_window, p->ple_window, p->ple_window_grow, p->ple_window_max));
}

/* KVM's vmx_sched_in: shrink_ple_window each time the vCPU's thread is
** scheduled in.  The model knows the thread slept only after an HLT exit
** blocked it; a directed yield on a PLE exit may or may not let another
** task run, which the trace does not say, so it shrinks nothing. */
void vcpu_wake(struct vcpu *v) {
  const struct policy *p = v->pol;
  v->blocked = false;
  if (!p->ple_gap) return;
  set_window(v, shrunk(v->ple_window, p->ple_window, p->ple_window_shrink, p->ple_window));
}

/* vmx_vcpu_run writes a changed window (ple_window_dirty); vmx_update_hv_timer
** writes the preemption timer's value at every entry while a deadline is
** armed, all ones once when none is.  KVM writes the deadline's distance from
** the host's TSC at entry, scaled by IA32_VMX_MISC[4:0]; the model keeps no
** TSC and writes the deadline's low 32 bits instead: the trace says when the
** timer expires (virq-timer), so no decision reads the value. */
void vcpu_timer_entry(struct vcpu *v) {
  struct vmcs *c = &v->vmx.vmcs;
  if (v->ple_window_dirty) {
    vmcs_write(c, VMCS_PLE_WINDOW, v->ple_window);
    v->ple_window_dirty = false;
  }
  if (!pin_ctl(c, PIN_PREEMPTION_TIMER)) return;
  if (v->tsc_deadline) {
    vmcs_write(c, VMCS_VMX_PREEMPTION_TIMER_VALUE, v->tsc_deadline & 0xffffffffu);
    v->timer_soft_disabled = false;
  } else if (!v->timer_soft_disabled) {
    vmcs_write(c, VMCS_VMX_PREEMPTION_TIMER_VALUE, 0xffffffffu);
    v->timer_soft_disabled = true;
  }
}

/* ---- what a policy makes of a recording's timer and PLE exits ---- */

/* A recorded PLE exit holds no spin length (kvm_exit records the reason
** only): the spin ran at least the recording host's window, a window the
** recording does not hold either.  With no PLE (KVM: ple_gap=0) and no
** PAUSE exiting the spin runs on in the guest (SDM 25.1.3). */
const char *ple_removed_by(const struct policy *p) {
  if (p->pause_exiting || p->ple_gap) return NULL;
  return "PAUSE-loop exiting is off (ple_gap=0): the spin runs on in the guest, where its cycles stay (its length "
         "is not recorded, so they are not replayed; SDM 25.1.3)";
}

/* With PLE on, whether a recorded spin exits depends on its length: a
** window at or below the recording host's exits at least once per recorded
** exit (the same loop runs past it), if the gap lets the loop's PAUSEs be
** one loop as they were; a larger window may let the spin end first.  Neither the length nor
** the recording's window is recorded: not re-decided. */
const char *ple_not_redecided(const struct policy *p, uint64_t measured, char *buf, size_t n) {
  if (p->pause_exiting || !p->ple_gap) return NULL;
  snprintf(buf, n, "the spin's length is not recorded: with ple_window=%u at or below the recording host's window "
           "and ple_gap=%u at or above its gap (KVM's defaults 4096, grown on each PLE exit, and 128) at least %llu "
           "exit%s (one per recorded exit), else unknown (SDM 25.1.3)", (unsigned)p->ple_window, (unsigned)p->ple_gap,
           (unsigned long long)measured, measured == 1 ? "" : "s");
  return buf;
}

/* A recording made with the host's hrtimer took the guest's deadline as an
** EXTERNAL_INTERRUPT exit (the host's timer interrupt); its importer marks
** those it can tell as the timer's arrival, which the VMX-preemption timer
** takes as a PREEMPTION_TIMER exit instead (SDM 25.5.1). */
const char *timer_fewer_by(const struct policy *p, unsigned reason) {
  if (reason != EXIT_REASON_EXTERNAL_INTERRUPT || p->lapic_timer != LAPIC_TIMER_PREEMPTION) return NULL;
  return "the guest's timer expiries among them are PREEMPTION_TIMER exits (lapic_timer=preemption, SDM 25.5.1)";
}
