/* The hypervisor's exit handlers (see emulate.h). */
#include "emulate.h"
#include "dr.h"
#include "models/counters.h"
#include "models/vmx/controls.h"
#include "models/vmx/exit_reason.h"

/* ev: the instruction to emulate, or NULL for a fault the MMU handled (see emulate.h). */
typedef void (*exit_handler)(struct vcpu *v, const struct trace_event *ev, const struct vmx_exit_info *x,
                             struct vcpu_result *r);

/* Advance the guest RIP past the emulated instruction (KVM skip_emulated_instruction). */
static void skip_instruction(struct vmcs *c) {
  uint64_t len = vmcs_read(c, VMCS_VM_EXIT_INSTRUCTION_LEN);
  vmcs_write(c, VMCS_GUEST_RIP, vmcs_read(c, VMCS_GUEST_RIP) + len);
}

/* The guest's current CR0/CR4 as KVM computes it (kvm_read_cr0/cr4): guest-owned
** bits from the register (one VMREAD), host-owned ones from the read shadow
** (KVM's copy, no VMREAD).  The shadow alone is stale in guest-owned bits the
** guest changed without exits. */
static uint64_t guest_cr(struct vmcs *c, unsigned cr) {
  uint64_t real = vmcs_read(c, cr == 0 ? VMCS_GUEST_CR0 : VMCS_GUEST_CR4);
  return cr_read_value(real, vmcs_peek(c, cr == 0 ? VMCS_CR0_GUEST_HOST_MASK : VMCS_CR4_GUEST_HOST_MASK),
                       vmcs_peek(c, cr == 0 ? VMCS_CR0_READ_SHADOW : VMCS_CR4_READ_SHADOW));
}

static unsigned cr_subkey(const struct trace_event *ev) {
  if (ev->type == EV_CLTS) return STAT_CR_BASE + CRSUB_CLTS;
  if (ev->type == EV_LMSW) return STAT_CR_BASE + CRSUB_LMSW;
  bool w = ev->type == EV_CR_WRITE;
  switch (ev->aux) {
  case 0: return STAT_CR_BASE + CRSUB_CR0W;
  case 3: return STAT_CR_BASE + (w ? CRSUB_CR3W : CRSUB_CR3R);
  case 4: return STAT_CR_BASE + CRSUB_CR4W;
  default: return STAT_CR_BASE + (w ? CRSUB_CR8W : CRSUB_CR8R);
  }
}

/* MOV to CR exits: the value becomes guest-visible (shadow = value). */
static void mov_to_cr(struct vcpu *v, const struct trace_event *ev, struct vcpu_result *r) {
  switch (ev->aux) {
  case 0: case 4: {
    uint64_t old = guest_cr(&v->vmx.vmcs, ev->aux);
    vcpu_set_cr(v, ev->aux, ev->a, true);
    /* Paging-relevant CR4 bits changed: the shadow MMU resets its context and
    ** the TLB loses global entries (KVM kvm_post_set_cr4). */
    if (ev->aux == 4 && ((old ^ ev->a) & CR4_SHADOW_PAGING_OWNED)) r->mmu = MMU_FLUSH_ALL;
    break;
  }
  case 3:
    v->guest_cr3 = ev->a;
    r->mmu = MMU_CR3_SWITCH;          /* the MMU finds or builds the root (vcpu_roots_loaded) */
    r->mmu_arg = ev->a;
    break;
  default: v->vmx.cr8 = ev->a; break;
  }
}

static void handle_cr(struct vcpu *v, const struct trace_event *ev, const struct vmx_exit_info *x,
                  struct vcpu_result *r) {
  (void)x;
  struct vmcs *c = &v->vmx.vmcs;
  vmcs_read(c, VMCS_EXIT_QUALIFICATION);
  r->stat_key = cr_subkey(ev);
  if (ev->type == EV_CR_WRITE) mov_to_cr(v, ev, r);
  else if (ev->type == EV_CLTS || ev->type == EV_LMSW) {
    /* CLTS and LMSW change some bits of the guest's current CR0 (KVM kvm_clts, kvm_lmsw). */
    uint64_t cr0 = guest_cr(c, 0);
    if (ev->type == EV_CLTS) vcpu_set_cr(v, 0, cr0 & ~CR0_TS, true);
    /* LMSW emulated as the instruction would run with no bits owned: PE can be set, never cleared. */
    else vcpu_set_cr(v, 0, lmsw_no_exit(cr0, 0, (uint16_t)ev->a), true);
  }
  skip_instruction(c);
}

static void inject(struct vmcs *c, unsigned vector, bool error_code) {
  /* VM-entry interruption information (SDM 24.8.3): vector, type 3 (hardware
  ** exception), deliver-error-code, valid. */
  vmcs_write(c, VMCS_VM_ENTRY_INTR_INFO_FIELD, vector | (3u << 8) | (error_code ? 1u << 11 : 0) | (1u << 31));
}

static void handle_dr(struct vcpu *v, const struct trace_event *ev, const struct vmx_exit_info *x,
                  struct vcpu_result *r) {
  (void)x;
  struct vmcs *c = &v->vmx.vmcs;
  vmcs_read(c, VMCS_EXIT_QUALIFICATION);
  r->stat_key = stat_key_dr(ev->aux, ev->type == EV_DR_READ);
  /* The MOV-DR exit has priority over #UD/#GP (SDM 25.1.3, an exception to
  ** the order of 25.1.1), so the handler
  ** applies them, with the guest's CR4 (KVM keeps a copy: no VMREAD). */
  unsigned fault = 0;
  uint64_t cr4 = cr_read_value(vmcs_peek(c, VMCS_GUEST_CR4), vmcs_peek(c, VMCS_CR4_GUEST_HOST_MASK),
                               vmcs_peek(c, VMCS_CR4_READ_SHADOW));
  int n = dr_resolve(cr4, ev->aux, ev->type == EV_DR_WRITE, ev->a, &fault);
  if (n < 0 && fault == DR_FAULT_UD) {
    inject(c, DR_FAULT_UD, false);    /* KVM kvm_require_dr: DR4/DR5 with CR4.DE = 1, before anything else */
    return;
  }
  if (v->dr->mov_dr_exit && v->dr->mov_dr_exit(v)) {
    r->reexecute = true;              /* the scheme stopped intercepting: the guest runs it natively */
    return;
  }
  if (ev->type == EV_DR_WRITE) {
    if (n < 0) {
      /* SDM Vol. 2B "MOV -- Move to/from Debug Registers": MOV to DR6/DR7 with
      ** bits 63:32 set is #GP; KVM injects it (and so GUEST_DR7 never holds high
      ** bits, which would fail the VM-entry check of SDM 26.3.1.1). */
      inject(c, DR_FAULT_GP, true);
      return;
    }
    v->guest_dr[n] = ev->a;
    if (n == 7) vmcs_write(c, VMCS_GUEST_DR7, ev->a);
  }
  skip_instruction(c);
}

static void handle_invlpg(struct vcpu *v, const struct trace_event *ev, const struct vmx_exit_info *x,
                  struct vcpu_result *r) {
  (void)x;
  struct vmcs *c = &v->vmx.vmcs;
  vmcs_read(c, VMCS_EXIT_QUALIFICATION);
  r->mmu = MMU_INVLPG;
  r->mmu_arg = ev->a;
  skip_instruction(c);
}

/* KVM handle_exception: a #PF that shadow paging intercepted is the MMU's
** (KVM's kvm_mmu_page_fault, whose work the MMU model reported): the handler
** reads the interruption information, the faulting address (CR2) and the
** error code; on the local APIC's page it is MMIO, emulated.  Any other
** exception is the guest's own: reflected into it. */
static void handle_exception(struct vcpu *v, const struct trace_event *ev, const struct vmx_exit_info *x,
                  struct vcpu_result *r) {
  (void)x;
  struct vmcs *c = &v->vmx.vmcs;
  vmcs_read(c, VMCS_VM_EXIT_INTR_INFO);
  if (!ev || ev->type != EV_EXC) {                    /* an MMU fault: ev is NULL, or the MMIO access */
    vmcs_read(c, VMCS_EXIT_QUALIFICATION);            /* the faulting address (CR2) */
    vmcs_read(c, VMCS_VM_EXIT_INTR_ERROR_CODE);       /* the error code */
    if (ev) vcpu_apic_access(v, ev, r);
    return;
  }
  vmcs_write(c, VMCS_VM_ENTRY_INTR_INFO_FIELD, (ev->a & 0xff) | (3u << 8) | (1u << 31));
}

/* KVM handle_ept_violation: the qualification and the guest-physical address;
** the MMU did the rest (tdp_page_fault), or the access is MMIO to the local
** APIC's page, which has no memory behind it: emulated. */
static void handle_ept_violation(struct vcpu *v, const struct trace_event *ev, const struct vmx_exit_info *x,
                  struct vcpu_result *r) {
  (void)x;
  struct vmcs *c = &v->vmx.vmcs;
  vmcs_read(c, VMCS_EXIT_QUALIFICATION);
  vmcs_read(c, VMCS_GUEST_PHYSICAL_ADDRESS);
  if (ev) vcpu_apic_access(v, ev, r);
}

static void handle_hlt(struct vcpu *v, const struct trace_event *ev, const struct vmx_exit_info *x,
                  struct vcpu_result *r) {
  (void)x; (void)ev;
  r->halted = true;
  v->blocked = true;                  /* KVM kvm_vcpu_halt: the thread sleeps until an interrupt */
  skip_instruction(&v->vmx.vmcs);
}

/* KVM handle_external_interrupt_irqoff: the host's handler of the vector
** runs; for the host's timer interrupt that is the hrtimer expiry that
** emulates the guest's deadline (apic_timer_fn), priced apart. */
static void handle_interrupt(struct vcpu *v, const struct trace_event *ev, const struct vmx_exit_info *x,
                  struct vcpu_result *r) {
  (void)x;
  vmcs_read(&v->vmx.vmcs, VMCS_VM_EXIT_INTR_INFO);
  if (ev && ev->type == EV_VIRQ && ev->aux == VIRQ_SRC_TIMER) r->host_timer = true;
}

/* KVM handle_preemption_timer: the deadline expired (kvm_lapic_expired_hv_timer,
** which the arrival already did: vcpu_event_pending); nothing to read, no
** instruction to skip. */
static void handle_preemption_timer(struct vcpu *v, const struct trace_event *ev, const struct vmx_exit_info *x,
                  struct vcpu_result *r) {
  (void)v; (void)ev; (void)x; (void)r;
}

/* KVM handle_pause: grow the vCPU's PLE window, yield, skip the PAUSE. */
static void handle_pause(struct vcpu *v, const struct trace_event *ev, const struct vmx_exit_info *x,
                  struct vcpu_result *r) {
  (void)ev; (void)x; (void)r;
  vcpu_ple_exit(v);
  skip_instruction(&v->vmx.vmcs);
}

/* Trap-like (SDM 29.1.2): the MOV to CR8, or the TPR write to the APIC-access
** page or MSR 808H, completed and wrote VTPR (SDM 29.3, 29.4.3.2, 29.5). */
static void handle_tpr_below_threshold(struct vcpu *v, const struct trace_event *ev, const struct vmx_exit_info *x,
                  struct vcpu_result *r) {
  (void)x;
  if (ev->type == EV_CR_WRITE) v->vmx.cr8 = ev->a;
  else if (ev->type == EV_APIC || ev->type == EV_WRMSR) v->vmx.cr8 = (ev->b & 0xff) >> 4;
  handle_interrupt(v, ev, x, r);
}

/* KVM handle_apic_write: trap-like (SDM 29.4.3.3), the write is in the
** virtual-APIC page and RIP past it; the in-kernel APIC emulates the
** register the qualification names (an ICR write sends its IPI). */
static void handle_apic_write(struct vcpu *v, const struct trace_event *ev, const struct vmx_exit_info *x,
                  struct vcpu_result *r) {
  (void)x;
  vmcs_read(&v->vmx.vmcs, VMCS_EXIT_QUALIFICATION);
  if (ev->type == EV_APIC) vcpu_apic_access(v, ev, r);
  else {                                /* the x2APIC ICR: destination in bits 63:32 */
    r->mmio = true;
    r->ipi = (int)(ev->b >> 32);
  }
}

/* KVM handle_apic_eoi_induced: trap-like (SDM 29.1.4), the processor's EOI
** virtualization is done (the vector left VISR: applied here, where the
** exit is taken); the in-kernel APIC passes the EOI of the qualification's
** vector on to the I/O APIC. */
static void handle_eoi_induced(struct vcpu *v, const struct trace_event *ev, const struct vmx_exit_info *x,
                  struct vcpu_result *r) {
  (void)ev; (void)x;
  vmcs_read(&v->vmx.vmcs, VMCS_EXIT_QUALIFICATION);
  vmx_cpu_eoi_virtual(&v->vmx);
  r->mmio = true;
}

static void handle_io(struct vcpu *v, const struct trace_event *ev, const struct vmx_exit_info *x,
                  struct vcpu_result *r) {
  (void)x; (void)ev; (void)r;
  vmcs_read(&v->vmx.vmcs, VMCS_EXIT_QUALIFICATION);
  skip_instruction(&v->vmx.vmcs);
}

static void handle_msr_write(struct vcpu *v, const struct trace_event *ev, const struct vmx_exit_info *x,
                  struct vcpu_result *r) {
  (void)x;
  /* KVM keeps the guest's IA32_DEBUGCTL in GUEST_IA32_DEBUGCTL, loaded at entry. */
  if (ev->a == 0x1d9) vmcs_write(&v->vmx.vmcs, VMCS_GUEST_IA32_DEBUGCTL, ev->b);
  if (ev->a == MSR_IA32_TSC_DEADLINE) vcpu_tsc_deadline_write(v, ev->b);
  /* The x2APIC ICR (kvm_x2apic_icr_write): the in-kernel APIC sends the IPI to
  ** the destination in bits 63:32, as an xAPIC ICR write does. */
  if (ev->a == X2APIC_ICR) r->ipi = (int)(ev->b >> 32);
  skip_instruction(&v->vmx.vmcs);
}

/* KVM handle_apic_access: the qualification says which register; the
** instruction is emulated against the in-kernel APIC. */
static void handle_apic_access(struct vcpu *v, const struct trace_event *ev, const struct vmx_exit_info *x,
                  struct vcpu_result *r) {
  (void)x;
  vmcs_read(&v->vmx.vmcs, VMCS_EXIT_QUALIFICATION);
  vcpu_apic_access(v, ev, r);
  skip_instruction(&v->vmx.vmcs);
}

/* KVM handle_interrupt_window / handle_nmi_window: the guest can take the
** pending event now, so stop asking; VM entry injects it (vcpu_deliver_pending).
** Nothing to skip: the exit came before an instruction. */
static void handle_window(struct vcpu *v, const struct trace_event *ev, const struct vmx_exit_info *x,
                  struct vcpu_result *r) {
  (void)ev; (void)r;
  struct vmcs *c = &v->vmx.vmcs;
  uint32_t control = x->reason == EXIT_REASON_NMI_WINDOW ? CPU_NMI_WINDOW_EXITING : CPU_INTR_WINDOW_EXITING;
  vmcs_write(c, VMCS_CPU_BASED_VM_EXEC_CONTROL, vmcs_peek(c, VMCS_CPU_BASED_VM_EXEC_CONTROL) & ~(uint64_t)control);
}

/* KVM handle_invpcid: type 0 invalidates one address, the others whole
** contexts (here: every TLB entry, global ones included). */
static void handle_invpcid(struct vcpu *v, const struct trace_event *ev, const struct vmx_exit_info *x,
                  struct vcpu_result *r) {
  (void)x;
  struct vmcs *c = &v->vmx.vmcs;
  vmcs_read(c, VMCS_EXIT_QUALIFICATION);
  vmcs_read(c, VMCS_VMX_INSTRUCTION_INFO);
  r->mmu = ev->aux == 0 ? MMU_INVLPG : MMU_FLUSH_ALL;
  r->mmu_arg = ev->a;
  skip_instruction(c);
}

/* CPUID, RDMSR, VMCALL, RDTSC...: emulate and skip. */
static void handle_default(struct vcpu *v, const struct trace_event *ev, const struct vmx_exit_info *x,
                  struct vcpu_result *r) {
  (void)x; (void)ev; (void)r;
  skip_instruction(&v->vmx.vmcs);
}

static const exit_handler handlers[EXIT_REASON_MAX] = {
  [EXIT_REASON_EXCEPTION_NMI]        = handle_exception,
  [EXIT_REASON_EXTERNAL_INTERRUPT]   = handle_interrupt,
  [EXIT_REASON_HLT]                  = handle_hlt,
  [EXIT_REASON_INVLPG]               = handle_invlpg,
  [EXIT_REASON_CR_ACCESS]            = handle_cr,
  [EXIT_REASON_DR_ACCESS]            = handle_dr,
  [EXIT_REASON_IO_INSTRUCTION]       = handle_io,
  [EXIT_REASON_MSR_WRITE]            = handle_msr_write,
  [EXIT_REASON_TPR_BELOW_THRESHOLD]  = handle_tpr_below_threshold,
  [EXIT_REASON_APIC_ACCESS]          = handle_apic_access,
  [EXIT_REASON_APIC_WRITE]           = handle_apic_write,
  [EXIT_REASON_EOI_INDUCED]          = handle_eoi_induced,
  [EXIT_REASON_EPT_VIOLATION]        = handle_ept_violation,
  [EXIT_REASON_INTERRUPT_WINDOW]     = handle_window,
  [EXIT_REASON_NMI_WINDOW]           = handle_window,
  [EXIT_REASON_INVPCID]              = handle_invpcid,
  [EXIT_REASON_PREEMPTION_TIMER]     = handle_preemption_timer,
  [EXIT_REASON_PAUSE_INSTRUCTION]    = handle_pause,
};

void emulate_exit(struct vcpu *v, const struct trace_event *ev, const struct vmx_exit_info *x,
                  struct vcpu_result *r) {
  exit_handler h = x->reason < EXIT_REASON_MAX ? handlers[x->reason] : NULL;
  (h ? h : handle_default)(v, ev, x, r);
}
