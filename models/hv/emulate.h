/* The hypervisor's exit handlers: one function per exit reason, chosen from a
** table indexed by the SDM's basic exit reason (as KVM's kvm_vmx_exit_handlers
** is).  A handler emulates the exiting instruction on the guest's state,
** makes the VMREADs and VMWRITEs KVM's handler makes (each is priced), and
** says what the MMU must do next.  Reasons without a handler of their own get
** the default: emulate, then skip the instruction. */
#ifndef VMXSIM_EMULATE_H
#define VMXSIM_EMULATE_H

#include "vcpu.h"
#include "models/mmu/mmu.h"    /* CR4_SHADOW_PAGING_OWNED */

/* Handles the exit x (the handler of x->reason).  ev is the instruction to
** emulate: the one that exited, or the MMIO access that faulted; NULL for a
** fault the MMU handled (a hidden #PF, an EPT violation), whose handler only
** reads what KVM's reads. */
void emulate_exit(struct vcpu *v, const struct trace_event *ev, const struct vmx_exit_info *x,
                  struct vcpu_result *r);

#endif
