/* The VM's memory-management model: guest address spaces, shadow page tables
** and their pool, shadow roots, the CR3 cache's MMU side, EPT and the TLBs.
** It decides which guest memory actions fault into the hypervisor and what
** the hypervisor's MMU work is; the engine charges the cycles. */
#ifndef VMXSIM_MMU_H
#define VMXSIM_MMU_H

#include <stdint.h>
#include <stdio.h>
#include "models/vmx/vcpu.h"
#include "models/work.h"

struct mmu;

/* Where the MMU reports what it caused: the engine implements these. */
struct mmu_sink {
  /* An exit the MMU raised (shadow #PF, EPT violation, write-protect fault),
  ** with the MMU work the hypervisor did to handle it. */
  void (*exit)(struct mmu_sink *s, struct vcpu *v, unsigned reason, uint64_t qual, const struct work *w);
  /* Work the guest does without an exit (TLB-miss walks). */
  void (*guest)(struct mmu_sink *s, struct vcpu *v, const struct work *w);
  uint64_t *counters;            /* enum counter */
};

/* paging: enum paging_mode of the trace (32, PAE, 64); vcpus: the VM's
** vCPUs (for VM-wide CR3-cache clears); counters: the engine's, by enum counter. */
struct mmu *mmu_create(const struct policy *p, unsigned paging, unsigned nvcpu, struct vcpu *vcpus,
                       uint64_t *counters);
void mmu_destroy(struct mmu *m);
/* Fewest shadow pages the policy can run with on this VM: every vCPU pins the
** roots of its address space (and of its previous roots), and a switch must be
** able to build one more set of roots.  (A pool with no room left for faults
** still runs: every access through an unshadowed table then faults again.)
** 0 for EPT. */
unsigned mmu_min_pool(const struct policy *p, unsigned paging, unsigned nvcpu);

/* Guest memory actions (EV_TOUCH, EV_PTWRITE, guest #PF). */
void mmu_guest_event(struct mmu *m, struct vcpu *v, const struct trace_event *ev, struct mmu_sink *s);
/* Follow-up of a VMX event (CR3 switch, INVLPG, flush).  exited: the request
** comes from a hypervisor handler (its work goes to w) rather than from the
** guest executing natively (a CR3-target hit). */
void mmu_request(struct mmu *m, struct vcpu *v, enum mmu_request req, uint64_t arg, bool exited,
                 struct work *w, struct mmu_sink *s);
/* A VM exit/entry happened on v (TLB flush unless VPID). */
void mmu_on_vm_transition(struct mmu *m, struct vcpu *v, struct mmu_sink *s);

/* For the REPL: pool usage, roots and oldest pages; the vCPU's TLB. */
void mmu_print_shadow(const struct mmu *m, FILE *f);
void mmu_print_tlb(const struct mmu *m, const struct vcpu *v, FILE *f);

#endif
