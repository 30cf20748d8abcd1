/* The hypervisor's virtual CPU: the processor it runs on (struct vmx_cpu), the
** guest state the VMCS does not hold, and the per-vCPU state of the
** hypervisor's mechanisms.  This is the hypervisor's side of every guest
** action: vcpu_setup programs the VMCS from a policy (as KVM's vmx_vcpu_setup
** does); an exit runs vcpu_exit_begin -> vcpu_handle_exit -> (MMU) -> vcpu_exit_end;
** an action that did not exit runs vcpu_no_exit.  Which mechanism does what
** is chosen once per vCPU from the policy's knobs, through the scheme tables
** of dr.h (debug registers) and cr3cache.h (the CR3 cache); emulate.h holds the
** exit handlers.  Costs are reported as work items (models/work.h). */
#ifndef VMXSIM_VCPU_H
#define VMXSIM_VCPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "models/knobs.h"
#include "models/vmx/cpu.h"
#include "models/vmx/exit.h"
#include "models/work.h"

struct dr_scheme;
struct cr3c_scheme;
struct paging_vmx;

/* The paravirtual CR3 cache's per-vCPU table (cr3cache_pv.c): the guest CR3 each
** CR3-target slot caches (the target value itself holds the shadow root). */
struct cr3c_table {
  uint64_t guest_cr3[4];
  unsigned next;             /* round-robin slot to fill next */
};

struct vcpu {
  unsigned id;
  struct vmx_cpu vmx;          /* the processor: VMCS, bitmaps, DR7, DEBUGCTL */
  const struct policy *pol;
  const struct dr_scheme *dr;      /* debug-register switching (dr.h) */
  const struct cr3c_scheme *cr3c;  /* CR3 cache (cr3cache.h) */
  const struct paging_vmx *paging; /* what the paging mode needs of the VMCS (models/mmu/mmu.h) */
  uint64_t guest_cr3;        /* the guest's CR3 (GUEST_CR3 holds the shadow root under shadow paging) */
  uint64_t guest_dr[8];      /* the guest's architectural debug registers */
  uint64_t host_dr[8];       /* the host thread's debug registers */
  bool guest_dr_live;        /* the physical DR0-3, DR6 hold the guest's values */
  bool dr_wont_exit;         /* KVM: MOV-DR exiting cleared until the next exit */
  uint64_t cr4_forced;       /* CR4 bits the paging mode forces host-owned beyond the policy's mask */
  struct cr3c_table cr3c_table;
  uint64_t dr_mismatches;    /* guest DR reads that saw a non-guest value: a switching bug */
  bool halted;               /* in HLT, waiting for an interrupt */
  bool irq_pending;          /* an interrupt for the guest, not yet injected (KVM's pending IRQ) */
  uint8_t irq_vector;
  bool nmi_pending;          /* an NMI for the guest, not yet injected */
  bool blocked;              /* halted by an HLT exit: the vCPU's thread sleeps in the host */
  uint64_t tsc_deadline;     /* the guest's IA32_TSC_DEADLINE (0: disarmed), timer.c */
  bool timer_soft_disabled;  /* KVM: VMX_PREEMPTION_TIMER_VALUE holds all ones, as no deadline is armed */
  uint32_t ple_window;       /* KVM's per-vCPU PAUSE-loop window (vmx->ple_window), timer.c */
  bool ple_window_dirty;     /* written to PLE_WINDOW at the next VM entry */
  bool x2apic;               /* the guest's local APIC is in x2APIC mode */
};

/* What the hypervisor's handler did with an exit. */
struct vcpu_result {
  enum mmu_request mmu;      /* follow-up for the MMU model */
  uint64_t mmu_arg;          /* new guest CR3, or the INVLPG address */
  unsigned stat_key;         /* breakdown row of the exit (stat key), or the reason */
  bool reexecute;            /* the instruction runs again natively after entry */
  bool halted;               /* HLT: the guest waits for an interrupt */
  bool mmio;                 /* the handler emulated an MMIO access (a local-APIC register) */
  int ipi;                   /* the vCPU an emulated ICR write sends an IPI to, or -1 */
  bool host_timer;           /* the exit was the host's timer interrupt for the vCPU's deadline (a host hrtimer) */
};

/* Programs the VMCS controls, masks, shadows and bitmaps from the policy and
** picks the mechanisms.  Returns the number of CR4 bits forced host-owned. */
uint64_t vcpu_setup(struct vcpu *v, unsigned id, const struct policy *pol);
/* @init: the guest's initial register value (before any exit; costs nothing). */
void vcpu_init_reg(struct vcpu *v, unsigned cr, uint64_t value);
/* Sets the guest-visible CR0/CR4 (read shadow) and the real register (the
** value plus the bits the hypervisor forces); counted = by VMWRITEs. */
void vcpu_set_cr(struct vcpu *v, unsigned cr, uint64_t value, bool counted);

/* The instruction the guest executes for trace event ev: a paravirtual
** CR3-cache guest writes a cached shadow root instead of its own CR3. */
struct trace_event vcpu_guest_op(const struct vcpu *v, const struct trace_event *ev);
/* The processor decided d for the guest's op (counts CR3-cache hits). */
void vcpu_decided(const struct vcpu *v, const struct trace_event *op, const struct exit_decision *d,
                  uint64_t counters[]);
/* The instruction op ran without an exit; guest_value is the operand as the
** guest meant it (its own CR3 when op loaded a cached root).  r says what the
** MMU must do. */
void vcpu_no_exit(struct vcpu *v, const struct trace_event *op, uint64_t guest_value, struct vmx_native *r);

/* An exit, in three steps so the MMU can act between emulation and entry:
**   begin:   the processor's exit actions, the hypervisor's dispatch and its
**            debug-register work after the exit;
**   handle:  the handler for the exit reason, from one table for every reason
**            (emulate.h), faults the MMU handled included (r says what the MMU
**            must do next and which breakdown row to charge);
**   end:     debug-register work before entry, then the processor's VM entry.
** Work items go to w; counters are indexed by enum counter. */
void vcpu_exit_begin(struct vcpu *v, unsigned reason, uint64_t qual, struct work *w, uint64_t counters[]);
/* The same for an exit with more information than a reason and a
** qualification (an exception, an EPT violation). */
void vcpu_exit_begin_info(struct vcpu *v, const struct vmx_exit_info *x, struct work *w, uint64_t counters[]);
/* ev: the instruction to emulate (the one that exited, or the MMIO access
** that faulted), or NULL for a fault the MMU handled.  r is filled from scratch. */
void vcpu_handle_exit(struct vcpu *v, const struct trace_event *ev, const struct vmx_exit_info *x,
                      struct vcpu_result *r);
void vcpu_exit_end(struct vcpu *v, struct work *w, uint64_t counters[]);

/* An interrupt (EV_VIRQ) or NMI (EV_VNMI) for the vCPU reaches the
** hypervisor: it becomes pending and the hypervisor acts on it at once, as at
** a VM entry (vcpu_deliver_pending).  The exit that may have brought the vCPU
** out to take it (a kick) is its own record. */
void vcpu_event_arrives(struct vcpu *v, const struct trace_event *ev);
/* The same, when its arrival was a VM exit: the hypervisor injects it (or
** asks for a window) as it leaves the exit's handler (vcpu_exit_end). */
void vcpu_event_pending(struct vcpu *v, const struct trace_event *ev);
/* KVM's inject_pending_event, enable_nmi_window and enable_irq_window: a
** pending NMI is injected if the guest does not block NMIs, else the NMI window
** is requested; a pending interrupt is injected if the guest is interruptible
** and nothing else is injected at this entry, else the interrupt window is
** requested.  counted: by VMWRITEs (on the way to a VM entry) or not (an
** arrival, no exit).  The processor delivers what is injected (vmx_cpu_deliver). */
void vcpu_deliver_pending(struct vcpu *v, bool counted);

/* Before the processor decides op: a guest that accesses an x2APIC MSR has
** its local APIC in x2APIC mode, which it entered (a WRMSR of IA32_APIC_BASE
** that KVM intercepts) before the trace began; KVM then switched the
** controls and the MSR bitmap (vmx_set_virtual_apic_mode,
** vmx_update_msr_bitmap_x2apic), and so does this, at no cost. */
void vcpu_apic_mode(struct vcpu *v, const struct trace_event *op);

/* Why the controls a policy sets leave no exit of this reason that a
** recording made without them may hold (APIC virtualization, posted
** interrupts, virtual-interrupt delivery), or why the policy replays them
** as another reason, for the measured-beside-simulated table when the
** replay simulated none; NULL when the policy says nothing about it. */
const char *policy_removed_by(const struct policy *p, unsigned reason);
/* The same for a recording's timer and PLE exits (timer.c): with PLE off its
** PLE exits are gone (ple_removed_by); with PLE on they are not re-decided,
** the spin's length not being recorded: why, with the lower bound of the
** measured count, in buf (ple_not_redecided); under lapic_timer=preemption
** the EXTERNAL_INTERRUPT exits that were the guest's timer are fewer,
** replayed as PREEMPTION_TIMER exits (timer_fewer_by).  NULL: nothing to say. */
const char *ple_removed_by(const struct policy *p);
const char *ple_not_redecided(const struct policy *p, uint64_t measured, char *buf, size_t n);
const char *timer_fewer_by(const struct policy *p, unsigned reason);

/* The hypervisor's emulation of a local-APIC register access (in-kernel APIC:
** KVM since 2.6.23): an ICR write sends an IPI to the vCPU whose APIC ID is
** the destination field (the vCPU number); r says what happened. */
void vcpu_apic_access(struct vcpu *v, const struct trace_event *op, struct vcpu_result *r);

/* The guest's local-APIC timer and spin loops (timer.c): how KVM emulates
** the TSC-deadline timer (lapic_timer: a host hrtimer or the VMX-preemption
** timer) and sizes the PAUSE-loop window. */
/* VMCS set-up for both (pin and secondary controls, PLE_Gap, PLE_Window). */
uint64_t vcpu_timer_pin_controls(const struct policy *p);
uint64_t vcpu_ple_secondary(const struct policy *p);
void vcpu_timer_setup(struct vcpu *v, const struct policy *p);
/* A write to IA32_TSC_DEADLINE (MSR 0x6e0) the hypervisor emulates: arms
** the deadline (0 disarms it). */
void vcpu_tsc_deadline_write(struct vcpu *v, uint64_t deadline);
/* The deadline expired: the timer is disarmed until the guest writes it again. */
void vcpu_timer_expired(struct vcpu *v);
/* A PLE exit: KVM's grow_ple_window. */
void vcpu_ple_exit(struct vcpu *v);
/* The vCPU's thread runs again after blocking (KVM's sched_in: shrink_ple_window). */
void vcpu_wake(struct vcpu *v);
/* Before VM entry: the PLE window and the VMX-preemption timer's value as
** KVM writes them (vmx_vcpu_run: a changed window; vmx_update_hv_timer). */
void vcpu_timer_entry(struct vcpu *v);

/* The MMU loaded the shadow roots of guest_cr3 at root_hpa: the hypervisor
** puts them in GUEST_CR3 (a VMWRITE when a handler does it, exited) and, after
** a CR3 exit, lets the CR3 cache remember them. */
void vcpu_roots_loaded(struct vcpu *v, uint64_t guest_cr3, uint64_t root_hpa, bool exited);

#endif
