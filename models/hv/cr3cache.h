/* The CR3 cache: whether and how the hypervisor uses the CR3-target values
** (SDM 25.1.3: a MOV to CR3 whose operand equals one of the first
** CR3_TARGET_COUNT target values does not exit) to let the guest switch
** address spaces without an exit.  One scheme per file, chosen by knob:
**   cr3cache.c     "off": no target values (modern KVM: count 0, never used);
**   cr3cache_pv.c  the paravirtual CR3 cache of the 2008 RFC ("[RFC] VMX CR3
**                  cache", kvm-devel, January 2008): 4 (guest CR3 -> shadow
**                  root) pairs in the target values and in a table the guest
**                  reads; the guest loads a cached root directly.
** The MMU tells the scheme when shadow roots are zapped (it may have to forget
** them); the engine relays these calls.  Adding a scheme: a new file defining
** a struct cr3c_scheme, and one row in cr3cache.c's table.
*/
#ifndef VMXSIM_CR3CACHE_H
#define VMXSIM_CR3CACHE_H

#include "vcpu.h"

struct cr3c_scheme {
  const char *name;
  /* The operand the guest writes to CR3 when it wants address space guest_cr3. */
  uint64_t (*operand)(const struct vcpu *v, uint64_t guest_cr3);
  /* The processor decided a MOV to CR3 (counts hits and misses). */
  void (*decided)(const struct vcpu *v, const struct exit_decision *d, uint64_t counters[]);
  /* A CR3 exit loaded the roots of guest_cr3 at root_hpa. */
  void (*cr3_exit)(struct vcpu *v, uint64_t guest_cr3, uint64_t root_hpa);
  /* The MMU zapped the top-level shadow page of guest_cr3 (any vCPU of the VM):
  ** returns true if the scheme cleared its cache because of it. */
  bool (*root_zapped)(struct vcpu *vcpus, unsigned nvcpu, uint64_t guest_cr3, uint64_t counters[]);
  /* The MMU zapped shadow pages for write flooding without a root among them. */
  void (*pt_zapped)(struct vcpu *vcpus, unsigned nvcpu, uint64_t counters[]);
};

/* The scheme the policy's cr3_cache knob selects. */
const struct cr3c_scheme *cr3c_scheme_for(const struct policy *p);

#endif
