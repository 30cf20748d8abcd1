/* Debug-register switching between host and guest around VM exits.
**
** The processor itself only does this (SDM 27.3.1, 28.3.1): every VM exit
** saves DR7 to GUEST_DR7 if "save debug controls" is set, then loads DR7 with
** 0x400; VM entry loads DR7 from GUEST_DR7 if "load debug controls" is set.
** DR0-3 and DR6 are the hypervisor's business, and the policies differ:
**   eager (KVM 2007-2009): host DR0-3, DR6, DR7 saved on every entry and
**     restored on every exit; guest DR0-3, DR6 switched when its DR7 enables
**     a breakpoint.
**   lazy (KVM since 2009-09): host values come from the thread's saved copy,
**     restored only if the host thread is being debugged or the guest's values
**     were loaded.  With MOV-DR exiting on, the first guest MOV DR exits; KVM
**     then clears MOV-DR exiting and loads guest DRs until the next exit of any
**     kind, where it reads them back and sets MOV-DR exiting again.
*/
#ifndef VMXSIM_DRSWITCH_H
#define VMXSIM_DRSWITCH_H

#include "vcpu.h"

#define DR7_ENABLE_MASK 0xffull   /* L0-3/G0-3: a breakpoint is armed */

/* Processor actions at VM exit and VM entry. */
void dr_hw_exit(struct vcpu *v);
void dr_hw_entry(struct vcpu *v);
/* Hypervisor actions after the exit and before the entry; work in w. */
void dr_after_exit(struct vcpu *v, struct work *w, uint64_t counters[]);
void dr_before_entry(struct vcpu *v, struct work *w, uint64_t counters[]);
/* The guest's first MOV DR under lazy switching: stop intercepting. */
void dr_stop_intercepting(struct vcpu *v);
/* SDM MOV DR: with CR4.DE = 1 a reference to DR4 or DR5 is #UD; with CR4.DE = 0
** they are aliases of DR6 and DR7; a write of a 1 to bits 63:32 of DR6 or DR7
** is #GP(0).  Returns the register the access reaches, or -1 when it faults
** (vector in *fault; nothing is read or written). */
#define DR_FAULT_UD 6u
#define DR_FAULT_GP 13u
int dr_resolve(uint64_t cr4, unsigned dr, bool write, uint64_t value, unsigned *fault);
/* Guest MOV DR executed natively (no exit). */
void dr_guest_write(struct vcpu *v, unsigned dr, uint64_t value);
void dr_guest_read(struct vcpu *v, unsigned dr);

#endif
