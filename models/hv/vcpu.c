/* The hypervisor's virtual CPU: VMCS set-up from a policy, and the
** hypervisor's side of each guest action (see vcpu.h). */
#include "vcpu.h"
#include "cr3cache.h"
#include "dr.h"
#include "emulate.h"
#include "models/counters.h"
#include "models/mmu/mmu.h"
#include "models/vmx/controls.h"
#include "models/vmx/exit_reason.h"

#include <string.h>

/* Bits the host keeps set in the real CR0/CR4 regardless of the guest:
** CR4.VMXE (IA32_VMX_CR4_FIXED0), and those the paging mode forces
** (struct paging_vmx: under shadow paging CR0.PG/WP/PE/NE and CR4.PAE). */
#define CR4_HOST_FORCED (1ull << 13)

/* KVM's MSR-bitmap pass-through set: the MSRs a guest may access directly. */
static const uint32_t passthrough_msrs[] = {
  0x48 /* SPEC_CTRL */, 0x174, 0x175, 0x176 /* SYSENTER_CS/ESP/EIP */,
  0xc0000100 /* FS_BASE */, 0xc0000101 /* GS_BASE */, 0xc0000102 /* KERNEL_GS_BASE */,
};

static void msr_pass_for(struct vmx_cpu *s, uint32_t msr, bool read, bool write) {
  unsigned base = msr >= 0xc0000000u ? 1024 : 0, bit = msr & 0x1fff;
  if (read) s->msr_bitmap[base + bit / 8] &= (uint8_t)~(1u << (bit % 8));
  if (write) s->msr_bitmap[2048 + base + bit / 8] &= (uint8_t)~(1u << (bit % 8));
}

static void msr_pass(struct vmx_cpu *s, uint32_t msr) { msr_pass_for(s, msr, true, true); }

/* The x2APIC registers a guest may read directly under APIC-register
** virtualization: KVM's kvm_lapic_readable_reg_mask (Linux 6.x) -- ID,
** version, TPR, PPR, LDR, SVR, ISR, TMR, IRR, ESR, LVT CMCI, ICR, the LVTs,
** the initial count and the divide configuration -- less the current count
** (839H), which KVM computes on each read. */
static bool x2apic_readable(uint32_t msr) {
  unsigned r = msr - X2APIC_MSR_FIRST;
  return r == 0x2 || r == 0x3 || r == 0x8 || r == 0xa || r == 0xd || r == 0xf || (r >= 0x10 && r <= 0x28) ||
         (r >= 0x2f && r <= 0x30) || (r >= 0x32 && r <= 0x38) || r == 0x3e;
}

/* KVM's vmx_update_msr_bitmap_x2apic for a guest in x2APIC mode: every
** x2APIC MSR intercepted but the TPR; with APIC-register virtualization the
** readable registers' reads pass; with virtual-interrupt delivery the EOI
** and self-IPI writes pass; with IPI virtualization the ICR passes. */
static void x2apic_msr_bitmap(struct vcpu *v) {
  struct vmx_cpu *s = &v->vmx;
  msr_pass(s, X2APIC_TPR);
  if (sec_ctl(&s->vmcs, SEC_APIC_REGISTER_VIRT))
    for (uint32_t m = X2APIC_MSR_FIRST; m <= X2APIC_MSR_LAST; m++)
      if (x2apic_readable(m)) msr_pass_for(s, m, true, false);
  if (sec_ctl(&s->vmcs, SEC_VIRTUAL_INTR_DELIVERY)) {
    msr_pass_for(s, X2APIC_EOI, false, true);
    msr_pass_for(s, X2APIC_SELF_IPI, false, true);
  }
  if (ter_ctl(&s->vmcs, TER_IPI_VIRT)) msr_pass(s, X2APIC_ICR);
}

/* Secondary controls the policy and its paging mode need (KVM sets "activate
** secondary controls" only when it uses one, so that it runs on CPUs without
** them). */
static uint64_t setup_secondary(const struct vcpu *v, const struct policy *p) {
  /* KVM enables RDTSCP and INVPCID for the guest where the CPU has them; the
  ** CPU profiles do not list them, and the processors with EPT are taken to
  ** have them (profile_vmx_caps). */
  uint64_t guest_insns = (v->paging->secondary & SEC_ENABLE_EPT) ? SEC_ENABLE_RDTSCP | SEC_ENABLE_INVPCID : 0;
  return v->paging->secondary | (p->vpid ? SEC_ENABLE_VPID : 0) | (p->apic_access_virt ? SEC_APIC_ACCESS : 0) | guest_insns |
         vcpu_ple_secondary(p) |

(p->apic_register_virt ? SEC_APIC_REGISTER_VIRT : 0) | (p->virtual_intr_delivery ? SEC_VIRTUAL_INTR_DELIVERY : 0);
}

/* KVM's POSTED_INTR_VECTOR (arch/x86/include/asm/irq_vectors.h): the host
** vector that notifies a running vCPU's processor of posted interrupts. */
#define POSTED_INTR_VECTOR 0xf2

/* The APIC-virtualization controls of the policy: posted interrupts
** (pin-based, with "acknowledge interrupt on exit", which KVM always sets)
** and IPI virtualization (tertiary). */
static void setup_apicv(struct vcpu *v, const struct policy *p) {
  struct vmcs *c = &v->vmx.vmcs;
  if (p->posted_interrupts) {
    vmcs_poke(c, VMCS_PIN_BASED_VM_EXEC_CONTROL, vmcs_peek(c, VMCS_PIN_BASED_VM_EXEC_CONTROL) | PIN_POSTED_INTR);
    vmcs_poke(c, VMCS_VM_EXIT_CONTROLS, vmcs_peek(c, VMCS_VM_EXIT_CONTROLS) | EXIT_ACK_INTR_ON_EXIT);
    vmcs_poke(c, VMCS_POSTED_INTR_NV, POSTED_INTR_VECTOR);
  }
  if (p->ipi_virt) {
    vmcs_poke(c, VMCS_CPU_BASED_VM_EXEC_CONTROL, vmcs_peek(c, VMCS_CPU_BASED_VM_EXEC_CONTROL) | CPU_ACTIVATE_TERTIARY);
    vmcs_poke(c, VMCS_TERTIARY_VM_EXEC_CONTROL, TER_IPI_VIRT);
  }
}

static uint64_t setup_controls(const struct vcpu *v, const struct policy *p) {
  uint64_t cpu = p->tpr_shadow ? CPU_TPR_SHADOW : CPU_CR8_LOAD_EXITING | CPU_CR8_STORE_EXITING;
  if (setup_secondary(v, p)) cpu |= CPU_ACTIVATE_SECONDARY;
  cpu |= v->paging->cpu_controls;
  if (p->hlt_exiting) cpu |= CPU_HLT_EXITING;
  if (p->rdtsc_exiting) cpu |= CPU_RDTSC_EXITING;
  if (p->pause_exiting) cpu |= CPU_PAUSE_EXITING;
  if (p->mov_dr_exiting) cpu |= CPU_MOV_DR_EXITING;
  cpu |= CPU_MWAIT_EXITING | CPU_MONITOR_EXITING;     /* KVM: MWAIT and MONITOR are emulated as NOPs */
  if (p->msr_bitmaps) cpu |= CPU_USE_MSR_BITMAPS;
  cpu |= p->io_bitmaps ? CPU_USE_IO_BITMAPS : CPU_UNCOND_IO_EXITING;
  return cpu;
}

/* The CR4 guest/host mask: the policy's, plus the bits the paging mode needs
** host-owned (shadow paging: CR4_SHADOW_PAGING_OWNED, models/mmu/mmu.h). */
static uint64_t setup_cr4_mask(struct vcpu *v, const struct policy *p) {
  v->cr4_forced = v->paging->cr4_owned & ~p->cr4_mask;
  return p->cr4_mask | v->paging->cr4_owned;
}

static void setup_bitmaps(struct vmx_cpu *s) {
  memset(s->io_bitmap, 0xff, sizeof s->io_bitmap);
  s->io_bitmap[0x80 / 8] &= (uint8_t)~(1u << (0x80 % 8));   /* port 0x80 delay writes pass */
  memset(s->msr_bitmap, 0xff, sizeof s->msr_bitmap);
  for (size_t i = 0; i < sizeof passthrough_msrs / sizeof *passthrough_msrs; i++)
    msr_pass(s, passthrough_msrs[i]);
}

static void setup_debug(struct vcpu *v, const struct policy *p) {
  v->guest_dr[6] = v->vmx.dr[6] = v->host_dr[6] = 0xffff0ff0;
  v->guest_dr[7] = v->vmx.dr[7] = v->host_dr[7] = DR7_RESET;
  vmcs_poke(&v->vmx.vmcs, VMCS_GUEST_DR7, DR7_RESET);
  if (p->host_debugged) {               /* a host debugger's hardware breakpoint */
    v->host_dr[0] = 0xffffffff81000000ull;
    v->host_dr[7] = DR7_RESET | 0x2;
  }
}

uint64_t vcpu_setup(struct vcpu *v, unsigned id, const struct policy *p) {
  memset(v, 0, sizeof *v);
  v->id = id;
  v->pol = p;
  v->dr = dr_scheme_for(p);
  v->cr3c = cr3c_scheme_for(p);
  v->paging = mmu_paging_vmx(p);
  struct vmcs *c = &v->vmx.vmcs;
  vmcs_poke(c, VMCS_PIN_BASED_VM_EXEC_CONTROL, PIN_EXT_INTR_EXITING | PIN_NMI_EXITING | PIN_VIRTUAL_NMIS |
                                               vcpu_timer_pin_controls(p));
  vmcs_poke(c, VMCS_CPU_BASED_VM_EXEC_CONTROL, setup_controls(v, p));
  vmcs_poke(c, VMCS_SECONDARY_VM_EXEC_CONTROL, setup_secondary(v, p));
  vmcs_poke(c, VMCS_VM_EXIT_CONTROLS, EXIT_SAVE_DEBUG_CONTROLS);
  vmcs_poke(c, VMCS_VM_ENTRY_CONTROLS, ENTRY_LOAD_DEBUG_CONTROLS);
  vmcs_poke(c, VMCS_EXCEPTION_BITMAP, v->paging->exceptions);
  vmcs_poke(c, VMCS_CR0_GUEST_HOST_MASK, p->cr0_mask);
  vmcs_poke(c, VMCS_CR4_GUEST_HOST_MASK, setup_cr4_mask(v, p));
  vmcs_poke(c, VMCS_CR3_TARGET_COUNT, p->cr3_target_count);
  vmcs_poke(c, VMCS_VIRTUAL_PROCESSOR_ID, p->vpid ? id + 1 : 0);
  setup_apicv(v, p);
  setup_bitmaps(&v->vmx);
  setup_debug(v, p);
  vcpu_timer_setup(v, p);
  v->vmx.rflags_if = true;             /* a running kernel takes interrupts */
  vcpu_init_reg(v, 0, CR0_PG | CR0_PE | CR0_WP | (1ull << 5) | (1ull << 4));
  vcpu_init_reg(v, 4, CR4_PAE | CR4_PGE);
  return __builtin_popcountll(v->cr4_forced);
}

static uint64_t forced_bits(const struct vcpu *v, unsigned cr) {
  return cr == 4 ? CR4_HOST_FORCED | v->paging->cr4_forced : v->paging->cr0_forced;
}

/* The hypervisor keeps the read shadow equal to the guest-visible value and
** the real register at that value plus the bits it forces. */
void vcpu_set_cr(struct vcpu *v, unsigned cr, uint64_t value, bool counted) {
  struct vmcs *c = &v->vmx.vmcs;
  enum vmcs_field shadow = cr == 0 ? VMCS_CR0_READ_SHADOW : VMCS_CR4_READ_SHADOW;
  enum vmcs_field real = cr == 0 ? VMCS_GUEST_CR0 : VMCS_GUEST_CR4;
  if (counted) {
    vmcs_write(c, shadow, value);
    vmcs_write(c, real, value | forced_bits(v, cr));
  } else {
    vmcs_poke(c, shadow, value);
    vmcs_poke(c, real, value | forced_bits(v, cr));
  }
}

void vcpu_init_reg(struct vcpu *v, unsigned cr, uint64_t value) {
  switch (cr) {
  case 0: case 4: vcpu_set_cr(v, cr, value, false); break;
  case 3:
    v->guest_cr3 = value;
    if (v->paging->guest_cr3_direct) vmcs_poke(&v->vmx.vmcs, VMCS_GUEST_CR3, value);
    break;
  case 8: v->vmx.cr8 = value; break;
  }
}

struct trace_event vcpu_guest_op(const struct vcpu *v, const struct trace_event *ev) {
  struct trace_event op = *ev;
  if (ev->type == EV_CR_WRITE && ev->aux == 3) op.a = v->cr3c->operand(v, ev->a);
  return op;
}

void vcpu_decided(const struct vcpu *v, const struct trace_event *op, const struct exit_decision *d,
                  uint64_t counters[]) {
  if (op->type == EV_CR_WRITE && op->aux == 3) v->cr3c->decided(v, d, counters);
}

void vcpu_no_exit(struct vcpu *v, const struct trace_event *op, uint64_t guest_value, struct vmx_native *r) {
  vmx_execute(&v->vmx, op, r);
  switch (op->type) {
  case EV_CR_WRITE:
    /* A CR3 load the hardware did by itself (a CR3-target hit): the guest's
    ** own CR3 is what it meant, whatever root the target value held. */
    if (r->mmu == MMU_CR3_SWITCH) v->guest_cr3 = r->mmu_arg = guest_value;
    break;
  case EV_DR_WRITE:
    if (r->dr >= 0) v->guest_dr[r->dr] = op->a;
    break;
  case EV_DR_READ:
    if (r->dr >= 0 && v->vmx.dr[r->dr] != v->guest_dr[r->dr]) v->dr_mismatches++;
    break;
  default: break;
  }
}

void vcpu_exit_begin(struct vcpu *v, unsigned reason, uint64_t qual, struct work *w, uint64_t counters[]) {
  struct vmx_exit_info x = { .reason = reason, .qual = qual };
  vcpu_exit_begin_info(v, &x, w, counters);
}

void vcpu_exit_begin_info(struct vcpu *v, const struct vmx_exit_info *x, struct work *w, uint64_t counters[]) {
  vmx_cpu_exit(&v->vmx, x);
  /* What the processor saved is the guest's DR7 from now on. */
  if (save_debug_controls(&v->vmx.vmcs)) v->guest_dr[7] = vmcs_peek(&v->vmx.vmcs, VMCS_GUEST_DR7);
  /* The hypervisor: dispatch on the reason, then put host debug state back. */
  vmcs_read(&v->vmx.vmcs, VMCS_VM_EXIT_REASON);
  v->dr->after_exit(v, w, counters);
}

void vcpu_handle_exit(struct vcpu *v, const struct trace_event *ev, const struct vmx_exit_info *x,
                      struct vcpu_result *r) {
  *r = (struct vcpu_result){ .stat_key = x->reason, .ipi = -1 };
  emulate_exit(v, ev, x, r);
}

void vcpu_exit_end(struct vcpu *v, struct work *w, uint64_t counters[]) {
  v->dr->before_entry(v, w, counters);
  if (v->irq_pending || v->nmi_pending) vcpu_deliver_pending(v, true);
  vcpu_timer_entry(v);
  vmx_cpu_entry(&v->vmx);
}

static void set_field(struct vmcs *c, enum vmcs_field f, uint64_t value, bool counted) {
  if (counted) vmcs_write(c, f, value);
  else vmcs_poke(c, f, value);
}

/* KVM's exec_controls_setbit: written only when it changes. */
static void request_window(struct vcpu *v, uint32_t control, bool counted) {
  struct vmcs *c = &v->vmx.vmcs;
  uint64_t ctl = vmcs_peek(c, VMCS_CPU_BASED_VM_EXEC_CONTROL);
  if (!(ctl & control)) set_field(c, VMCS_CPU_BASED_VM_EXEC_CONTROL, ctl | control, counted);
}

static void inject_event(struct vcpu *v, unsigned vector, unsigned type, bool counted) {
  set_field(&v->vmx.vmcs, VMCS_VM_ENTRY_INTR_INFO_FIELD, (vector & 0xffu) | type << 8 | INTR_INFO_VALID, counted);
}

/* With virtual-interrupt delivery KVM injects nothing: it sets the vector in
** the virtual-APIC page's IRR and raises RVI (vmx_hwapic_irr_update, a
** VMWRITE only when RVI changes); the processor delivers it at VM entry or
** when the guest can take it, with no window (SDM 29.2). */
static void request_virtual(struct vcpu *v, unsigned vector, bool counted) {
  struct vmcs *c = &v->vmx.vmcs;
  uint64_t before = vmcs_peek(c, VMCS_GUEST_INTR_STATUS);
  vmx_cpu_request_virtual(&v->vmx, vector);
  uint64_t after = vmcs_peek(c, VMCS_GUEST_INTR_STATUS);
  if (counted && after != before) vmcs_write(c, VMCS_GUEST_INTR_STATUS, after);
}

void vcpu_deliver_pending(struct vcpu *v, bool counted) {
  bool injected = (vmcs_peek(&v->vmx.vmcs, VMCS_VM_ENTRY_INTR_INFO_FIELD) & INTR_INFO_VALID) != 0;
  if (v->nmi_pending) {
    if (!injected && vmx_nmi_unblocked(&v->vmx)) {
      inject_event(v, 2, INTR_TYPE_NMI, counted);
      v->nmi_pending = false;
      injected = true;
    } else if (pin_ctl(&v->vmx.vmcs, PIN_VIRTUAL_NMIS)) {
      request_window(v, CPU_NMI_WINDOW_EXITING, counted);
    }
  }
  if (v->irq_pending && sec_ctl(&v->vmx.vmcs, SEC_VIRTUAL_INTR_DELIVERY)) {
    request_virtual(v, v->irq_vector, counted);
    v->irq_pending = false;
  }
  if (v->irq_pending) {
    if (!injected && vmx_interruptible(&v->vmx)) {
      inject_event(v, v->irq_vector, INTR_TYPE_EXTERNAL, counted);
      v->irq_pending = false;
    } else {
      request_window(v, CPU_INTR_WINDOW_EXITING, counted);
    }
  }
}

/* KVM's EOI-exit bitmap (vcpu_load_eoi_exitmap, from the I/O APIC's
** routing): the vectors of level-triggered interrupts, whose EOI the
** emulated I/O APIC must see; edge-triggered and MSI vectors are EOIed
** without an exit.  The guest programmed the routing before the trace, so
** the bit costs nothing here. */
static void eoi_exit_for(struct vcpu *v, const struct trace_event *ev) {
  if (ev->aux != VIRQ_SRC_DEVICE || !(ev->b & VIRQ_DEVICE_LEVEL)) return;
  unsigned vec = (unsigned)ev->a & 0xff;
  enum vmcs_field f = (enum vmcs_field)(VMCS_EOI_EXIT_BITMAP0 + vec / 64);
  vmcs_poke(&v->vmx.vmcs, f, vmcs_peek(&v->vmx.vmcs, f) | 1ull << (vec % 64));
}

void vcpu_event_pending(struct vcpu *v, const struct trace_event *ev) {
  if (ev->type == EV_VIRQ && ev->aux == VIRQ_SRC_TIMER) vcpu_timer_expired(v);
  if (ev->type == EV_VNMI) v->nmi_pending = true;
  else {
    v->irq_pending = true;
    v->irq_vector = (uint8_t)ev->a;
    if (sec_ctl(&v->vmx.vmcs, SEC_VIRTUAL_INTR_DELIVERY)) eoi_exit_for(v, ev);
  }
}

void vcpu_event_arrives(struct vcpu *v, const struct trace_event *ev) {
  vcpu_event_pending(v, ev);
  vcpu_deliver_pending(v, false);
  vmx_cpu_deliver(&v->vmx);            /* the guest takes what was injected without an exit */
  vmx_cpu_deliver_virtual(&v->vmx);    /* or what it can take of the virtual requests (SDM 29.2) */
}

void vcpu_apic_mode(struct vcpu *v, const struct trace_event *op) {
  if (v->x2apic || (op->type != EV_RDMSR && op->type != EV_WRMSR) || op->a < X2APIC_MSR_FIRST ||
      op->a > X2APIC_MSR_LAST)
    return;
  v->x2apic = true;
  if (!v->pol->x2apic_virt) return;
  struct vmcs *c = &v->vmx.vmcs;
  uint64_t sec = vmcs_peek(c, VMCS_SECONDARY_VM_EXEC_CONTROL);
  vmcs_poke(c, VMCS_SECONDARY_VM_EXEC_CONTROL, (sec & ~(uint64_t)SEC_APIC_ACCESS) | SEC_VIRT_X2APIC);
  vmcs_poke(c, VMCS_CPU_BASED_VM_EXEC_CONTROL, vmcs_peek(c, VMCS_CPU_BASED_VM_EXEC_CONTROL) | CPU_ACTIVATE_SECONDARY);
  x2apic_msr_bitmap(v);
}

const char *policy_removed_by(const struct policy *p, unsigned reason) {
  bool apicv_page = p->apic_access_virt && p->tpr_shadow;
  bool vid = p->virtual_intr_delivery && p->tpr_shadow;
  switch (reason) {
  case EXIT_REASON_EXTERNAL_INTERRUPT:
    return p->posted_interrupts ? "removed by posted interrupts: a device's interrupt or an IPI for a running vCPU "
                                  "arrives without an exit (SDM 29.6)" : NULL;
  case EXIT_REASON_INTERRUPT_WINDOW:
    return vid ? "removed by virtual-interrupt delivery: the processor delivers a pending interrupt when the guest "
                 "enables interrupts, with no window (SDM 29.2)" : NULL;
  case EXIT_REASON_APIC_ACCESS:
    if (apicv_page && p->apic_register_virt) return "virtualized by APIC-register virtualization (SDM 29.4)";
    return apicv_page && vid ? "virtualized by virtual-interrupt delivery: TPR, EOI and ICR accesses (SDM 29.4)" : NULL;
  case EXIT_REASON_EOI_INDUCED:
    return vid ? "EOIs virtualized: no EOI-exit-bitmap bit is set for the vectors the trace EOIs (a recording holds "
                 "no trigger modes; SDM 29.1.4)"
               : "the policy has no virtual-interrupt delivery: the EOIs are replayed as APIC accesses";
  case EXIT_REASON_APIC_WRITE:
    return apicv_page && p->apic_register_virt ? NULL : "the policy has no APIC-register virtualization: the writes "
                                                        "are replayed as APIC accesses";
  case EXIT_REASON_TPR_BELOW_THRESHOLD:
    return vid ? "removed by virtual-interrupt delivery: TPR virtualization evaluates pending interrupts instead "
                 "(SDM 29.1.2)" : NULL;
  case EXIT_REASON_PREEMPTION_TIMER:
    return p->lapic_timer == LAPIC_TIMER_HRTIMER ? "the deadline is kept in a host timer (lapic_timer=hrtimer): its "
                                                   "expiry is an EXTERNAL_INTERRUPT exit (SDM 25.2)" : NULL;
  case EXIT_REASON_PAUSE_INSTRUCTION: return ple_removed_by(p);
  case EXIT_REASON_MSR_READ: case EXIT_REASON_MSR_WRITE:
    return p->x2apic_virt && p->tpr_shadow ? "x2APIC accesses virtualized by virtualize x2APIC mode (SDM 29.5)" : NULL;
  }
  return NULL;
}

void vcpu_apic_access(struct vcpu *v, const struct trace_event *op, struct vcpu_result *r) {
  (void)v;
  r->mmio = true;
  r->ipi = (op->aux & APIC_AUX_WRITE) && op->a == APIC_ICR ? (int)(op->b >> 56) : -1;
}

void vcpu_roots_loaded(struct vcpu *v, uint64_t guest_cr3, uint64_t root_hpa, bool exited) {
  if (!exited) {                       /* loaded at VM entry, or by a CR3-target hit */
    vmcs_poke(&v->vmx.vmcs, VMCS_GUEST_CR3, root_hpa);
    return;
  }
  vmcs_write(&v->vmx.vmcs, VMCS_GUEST_CR3, root_hpa);
  v->cr3c->cr3_exit(v, guest_cr3, root_hpa);
}
