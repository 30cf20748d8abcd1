/* One virtual CPU: its VMX state (VMCS and bitmaps), the guest registers the
** VMCS does not hold, and the hypervisor's per-vCPU state.  vcpu_setup programs
** the VMCS from a policy; vcpu_exit/vcpu_no_exit apply what the processor and
** the hypervisor do for one guest action.  Costs are returned as work items. */
#ifndef VMXSIM_VCPU_H
#define VMXSIM_VCPU_H

#include <stdbool.h>
#include <stdint.h>
#include "exit.h"
#include "models/knobs.h"
#include "models/work.h"

/* Hypervisor addresses of shadow roots live in their own range, so a guest CR3
** value can never equal one by accident in the CR3-target comparison. */
#define SHADOW_ROOT_HPA_BASE 0x7f0000000000ull

struct vcpu {
  unsigned id;
  struct vmx_state vmx;
  const struct policy *pol;
  uint64_t guest_cr3;        /* the guest's CR3 (GUEST_CR3 holds the shadow root under shadow paging) */
  uint64_t cr8;
  uint64_t guest_dr[8];      /* the guest's architectural debug registers */
  uint64_t host_dr[8];       /* the host thread's debug registers */
  uint64_t hw_dr[8];         /* what the physical debug registers hold now */
  uint64_t hw_debugctl;      /* the physical IA32_DEBUGCTL */
  bool guest_dr_live;        /* hw_dr[0..3,6] hold the guest's values */
  bool dr_wont_exit;         /* KVM: MOV-DR exiting cleared until the next exit */
  uint64_t cr4_forced;       /* CR4 bits shadow paging forces host-owned */
  /* paravirtual CR3 cache (cr3_cache): guest CR3 of each target slot */
  uint64_t cr3t_guest[4];
  unsigned cr3t_next;        /* round-robin slot to fill next */
  uint64_t dr_mismatches;    /* guest DR reads that saw a non-guest value: a switching bug */
};

/* What the MMU must do after the VMX side handled an event. */
enum mmu_request { MMU_NONE, MMU_CR3_SWITCH, MMU_INVLPG, MMU_FLUSH_ALL, MMU_FLUSH_NONGLOBAL };

struct vcpu_result {
  enum mmu_request mmu;      /* follow-up for the MMU model */
  uint64_t mmu_arg;          /* new guest CR3, or the INVLPG address */
  unsigned stat_key;         /* breakdown row of the exit (stat key), or the reason */
  bool reexecute;            /* the instruction runs again natively after entry */
  bool halted;               /* HLT: the guest waits for an interrupt */
};

/* Programs the VMCS controls, masks, shadows and bitmaps from the policy.
** Returns the counter of CR4 bits forced host-owned (0 if none). */
uint64_t vcpu_setup(struct vcpu *v, unsigned id, const struct policy *pol);
/* @init: the guest's initial register value (before any exit; costs nothing). */
void vcpu_init_reg(struct vcpu *v, unsigned cr, uint64_t value);
/* VM-entry checks (SDM 26.2.1.1): returns 0 or the VM-instruction error number
** (7 = invalid control field) and a message. */
unsigned vcpu_entry_check(const struct vcpu *v, uint64_t cr3_targets_supported, char *msg, size_t n);

/* The operand the guest actually writes for MOV to CR3: a paravirtual CR3-cache
** guest substitutes the cached shadow root for a guest CR3 it finds in its table. */
uint64_t vcpu_cr3_operand(const struct vcpu *v, uint64_t guest_cr3);

/* The instruction ran without an exit: apply its architectural effect. */
void vcpu_no_exit(struct vcpu *v, const struct trace_event *ev, struct vcpu_result *r);
/* An exit, in three steps so the MMU can act between emulation and entry:
**   begin:   the processor's exit actions and the hypervisor's dispatch and
**            debug-register work after the exit (reason/qual as recorded);
**   emulate: the hypervisor's emulation of the exiting instruction (r says
**            what the MMU must do next and which breakdown row to charge);
**   end:     debug-register work before entry and the processor's VM entry.
** Work items go to w; counters are indexed by enum counter. */
void vcpu_exit_begin(struct vcpu *v, unsigned reason, uint64_t qual, struct work *w, uint64_t counters[]);
void vcpu_emulate(struct vcpu *v, const struct trace_event *ev, const struct exit_decision *d,
                  struct vcpu_result *r);
void vcpu_exit_end(struct vcpu *v, struct work *w, uint64_t counters[]);

/* CR3-target cache (cr3_cache policies): fill the next slot round-robin with
** (guest CR3 -> shadow root), or clear every slot when a root is zapped. */
void vcpu_cr3t_fill(struct vcpu *v, uint64_t guest_cr3, uint64_t root_hpa);
void vcpu_cr3t_clear(struct vcpu *v);

#endif
