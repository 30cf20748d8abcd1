/* Debug-register switching: how the hypervisor moves DR0-3 and DR6 between
** the host and the guest around VM exits.  The processor itself only switches
** DR7 and IA32_DEBUGCTL (models/vmx/cpu.h); the rest is a hypervisor policy,
** one scheme per file, chosen by the dr_switch knob:
**   dr_eager.c  KVM 2007-2009: host DR0-3, DR6, DR7 saved on every entry and
**               restored on every exit; the guest's loaded when its DR7 arms
**               a breakpoint.
**   dr_lazy.c   KVM since 2009-09: host values come from the thread's saved
**               copy and are restored only when the host thread is debugged or
**               the guest's were loaded; the guest's first MOV DR makes KVM
**               stop intercepting MOV DR until the next exit of any kind.
** Adding a scheme: a new dr_NAME.c defining a struct dr_scheme, and one row in
** dr.c's table (its name is the knob's value).
*/
#ifndef VMXSIM_DR_H
#define VMXSIM_DR_H

#include "vcpu.h"

#define DR7_ENABLE_MASK 0xffull   /* L0-3/G0-3: a breakpoint is armed */

struct dr_scheme {
  const char *name;          /* the dr_switch knob's value */
  /* After every VM exit, before the handler runs; work in w. */
  void (*after_exit)(struct vcpu *v, struct work *w, uint64_t counters[]);
  /* Before every VM entry. */
  void (*before_entry)(struct vcpu *v, struct work *w, uint64_t counters[]);
  /* The handler of a MOV-DR exit; true when the scheme stopped intercepting
  ** MOV DR and the guest re-executes the instruction natively.  May be NULL. */
  bool (*mov_dr_exit)(struct vcpu *v);
};

/* The scheme the policy's dr_switch knob selects. */
const struct dr_scheme *dr_scheme_for(const struct policy *p);
/* The schemes' names, in table order (the knob's values), NULL-terminated. */
const char *const *dr_scheme_names(void);

/* Steps the schemes share. */
void dr_read_back_guest(struct vcpu *v, struct work *w, uint64_t counters[]);
void dr_restore_host(struct vcpu *v, struct work *w, uint64_t counters[]);
void dr_save_host(struct vcpu *v, struct work *w, uint64_t counters[]);
void dr_load_guest(struct vcpu *v, struct work *w, uint64_t counters[]);
/* Must the guest's DR0-3, DR6 be in the hardware while it runs? */
bool dr_guest_needs(const struct vcpu *v);

#endif
