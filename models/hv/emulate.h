/* The hypervisor's exit handlers: one function per exit reason, chosen from a
** table indexed by the SDM's basic exit reason (as KVM's kvm_vmx_exit_handlers
** is).  A handler emulates the exiting instruction on the guest's state,
** makes the VMREADs and VMWRITEs KVM's handler makes (each is priced), and
** says what the MMU must do next.  Reasons without a handler of their own get
** the default: emulate, then skip the instruction. */
#ifndef VMXSIM_EMULATE_H
#define VMXSIM_EMULATE_H

#include "vcpu.h"

/* CR4 bits KVM must keep host-owned without EPT, because they change how
** shadow page tables are built or which TLB entries survive (KVM's
** KVM_MMU_CR4_ROLE_BITS and the PGE/PCIDE flush rules). */
#define CR4_SHADOW_PAGING_OWNED (CR4_PGE | CR4_PCIDE | CR4_PAE | CR4_PSE | CR4_SMEP)

void emulate_exit(struct vcpu *v, const struct trace_event *ev, const struct exit_decision *d,
                  struct vcpu_result *r);
/* The VMREADs of a fault handler before the MMU's work (see vcpu.h). */
void emulate_mmu_fault(struct vcpu *v, const struct vmx_exit_info *x);

#endif
