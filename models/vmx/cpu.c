/* What the processor does by itself at VM exit, at VM entry and for guest
** instructions that do not exit (see cpu.h). */
#include "cpu.h"
#include "controls.h"
#include "exit.h"
#include "exit_reason.h"

#include <stdio.h>

void vmx_cpu_exit(struct vmx_cpu *c, const struct vmx_exit_info *x) {
  struct vmcs *v = &c->vmcs;
  vmcs_poke(v, VMCS_VM_EXIT_REASON, x->reason);      /* SDM 27.2.1 */
  vmcs_poke(v, VMCS_EXIT_QUALIFICATION, x->qual);
  vmcs_poke(v, VMCS_VM_EXIT_INTR_INFO, x->intr_info); /* SDM 27.2.2: bit 31 clear when not valid */
  if (x->intr_info & 1u << 11) vmcs_poke(v, VMCS_VM_EXIT_INTR_ERROR_CODE, x->intr_error);
  if (x->reason == EXIT_REASON_EPT_VIOLATION || x->reason == EXIT_REASON_EPT_MISCONFIG) vmcs_poke(v, VMCS_GUEST_PHYSICAL_ADDRESS, x->gpa);
  if (x->reason == EXIT_REASON_EPT_VIOLATION && (x->qual & EPT_QUAL_GLA_VALID)) vmcs_poke(v, VMCS_GUEST_LINEAR_ADDRESS, x->gla);
  if (save_debug_controls(v)) {                      /* SDM 27.3.1: DR7 and DEBUGCTL first */
    vmcs_poke(v, VMCS_GUEST_DR7, c->dr[7]);
    vmcs_poke(v, VMCS_GUEST_IA32_DEBUGCTL, c->debugctl);
  }
  c->dr[7] = DR7_RESET;                              /* SDM 27.5.1: every VM exit loads DR7 = 0x400 */
  c->debugctl = 0;                                   /* ... and IA32_DEBUGCTL = 0 */
}

void vmx_cpu_entry(struct vmx_cpu *c) {
  if (load_debug_controls(&c->vmcs)) {               /* SDM 26.3.2.1: DR7 and DEBUGCTL from the VMCS */
    c->dr[7] = vmcs_peek(&c->vmcs, VMCS_GUEST_DR7);
    c->debugctl = vmcs_peek(&c->vmcs, VMCS_GUEST_IA32_DEBUGCTL);
  }
  vmx_cpu_deliver(c);
  vmx_cpu_deliver_virtual(c);                        /* SDM 29.2.1: evaluated at every VM entry */
}

static void set_intr_status(struct vmx_cpu *c, unsigned rvi, unsigned svi) {
  vmcs_poke(&c->vmcs, VMCS_GUEST_INTR_STATUS, (rvi & 0xff) | (svi & 0xff) << 8);
}

void vmx_cpu_request_virtual(struct vmx_cpu *c, unsigned vector) {
  vector &= 0xff;
  c->virr[vector / 64] |= 1ull << (vector % 64);
  if (vector > vapic_rvi(c)) set_intr_status(c, vector, vapic_svi(c));
}

void vmx_cpu_post(struct vmx_cpu *c, unsigned vector) {
  vmx_cpu_request_virtual(c, vector);
  vmx_cpu_deliver_virtual(c);
}

void vmx_cpu_deliver_virtual(struct vmx_cpu *c) {
  if (!vmx_virtual_intr_deliverable(c)) return;
  unsigned vec = vapic_rvi(c);
  c->virr[vec / 64] &= ~(1ull << (vec % 64));
  c->visr[vec / 64] |= 1ull << (vec % 64);
  set_intr_status(c, vapic_highest(c->virr), vec);
  c->rflags_if = false;                              /* through the guest's interrupt gate */
  c->interruptibility &= (uint8_t)~(INTR_BLOCK_STI | INTR_BLOCK_MOVSS);
}

unsigned vmx_cpu_eoi_virtual(struct vmx_cpu *c) {
  unsigned vec = vapic_svi(c);
  c->visr[vec / 64] &= ~(1ull << (vec % 64));
  set_intr_status(c, vapic_rvi(c), vapic_highest(c->visr));
  return vec;
}

/* What a virtualized APIC access did to the virtual-APIC state (the
** decision says which virtualization it was: exit.c), then the evaluation
** of pending virtual interrupts that TPR, EOI and self-IPI virtualization
** end with (SDM 29.1.2, 29.1.4, 29.1.5). */
static void apic_virtualized(struct vmx_cpu *c, const struct trace_event *ev, struct vmx_native *r) {
  struct exit_decision d = vmx_decide(c, ev);
  switch (d.why) {
  case WHY_TPR_VIRTUALIZED: c->cr8 = d.detail >> 4; break;
  case WHY_EOI_VIRTUALIZED: vmx_cpu_eoi_virtual(c); break;
  case WHY_SELF_IPI_VIRTUALIZED: vmx_cpu_request_virtual(c, (unsigned)d.detail); break;
  case WHY_IPI_VIRTUALIZED: r->ipi = true; r->ipi_dest = (unsigned)d.detail; return;
  default: return;
  }
  vmx_cpu_deliver_virtual(c);
}

void vmx_cpu_deliver(struct vmx_cpu *c) {
  uint64_t info = vmcs_peek(&c->vmcs, VMCS_VM_ENTRY_INTR_INFO_FIELD);
  unsigned type = (unsigned)(info >> 8) & 7;
  if (!(info & INTR_INFO_VALID) || (type != INTR_TYPE_EXTERNAL && type != INTR_TYPE_NMI)) return;
  c->rflags_if = false;                              /* through an interrupt gate */
  /* SDM 26.6.1: after a vectoring VM entry there is no blocking by STI or MOV SS. */
  c->interruptibility &= (uint8_t)~(INTR_BLOCK_STI | INTR_BLOCK_MOVSS);
  if (type == INTR_TYPE_NMI) c->interruptibility |= INTR_BLOCK_NMI;
  vmcs_poke(&c->vmcs, VMCS_VM_ENTRY_INTR_INFO_FIELD, info & ~(uint64_t)INTR_INFO_VALID);
}

#define ENTRY_ERROR "VM entry failed with VM-instruction error 7 (entry with invalid control field(s)): "

/* A control set to 1 whose allowed-1 setting is 0 (SDM 26.2.1.1: reserved bits
** must be set properly, as the capability MSRs report). */
static bool unsupported(const struct vmcs *v, enum vmcs_field f, uint32_t allowed1, enum control_field cf,
                        const char *msr, char *msg, size_t n) {
  uint32_t bad = (uint32_t)vmcs_peek(v, f) & ~allowed1;
  if (!bad) return false;
  uint32_t bit = bad & -bad;
  const char *name = control_name(cf, bit);
  snprintf(msg, n, ENTRY_ERROR "the \"%s\" VM-execution control is set but this CPU does not support it "
           "(%s allowed-1 bit %d is 0)", name ? name : "reserved", msr, __builtin_ctz(bit));
  return true;
}

/* The names of the controls set in want, quoted and joined by ", " (at most
** n bytes); the name of activate when want has none with a name. */
static void control_names(uint32_t want, enum control_field cf, uint32_t activate, char *out, size_t n) {
  size_t len = 0;
  out[0] = 0;
  for (uint32_t rest = want; rest && len < n; rest &= rest - 1) {
    const char *name = control_name(cf, rest & -rest);
    if (name) len += (size_t)snprintf(out + len, n - len, "%s\"%s\"", len ? ", " : "", name);
  }
  if (!out[0]) snprintf(out, n, "\"%s\"", control_name(CTL_CPU, activate));
}

/* Secondary or tertiary controls on a CPU that has none: name every control
** the hypervisor wanted (a modern policy wants several: EPT, VPID, APIC-access
** virtualization) rather than "activate secondary controls" alone. */
static bool no_field(const struct vmcs *v, const struct vmx_caps *caps, uint32_t activate, enum vmcs_field f,
                     enum control_field cf, const char *what, char *msg, size_t n) {
  if (!cpu_ctl(v, activate) || (caps->cpu_allowed1 & activate)) return false;
  uint32_t want = (uint32_t)vmcs_peek(v, f);
  char names[256];
  control_names(want, cf, activate, names, sizeof names);
  snprintf(msg, n, ENTRY_ERROR "the %s VM-execution control%s set but this CPU has no %s "
           "processor-based controls (IA32_VMX_PROCBASED_CTLS allowed-1 bit %d is 0)",
           names, want & (want - 1) ? "s are" : " is", what, __builtin_ctz(activate));
  return true;
}

static bool no_secondary(const struct vmcs *v, const struct vmx_caps *caps, char *msg, size_t n) {
  return no_field(v, caps, CPU_ACTIVATE_SECONDARY, VMCS_SECONDARY_VM_EXEC_CONTROL, CTL_SEC, "secondary", msg, n) ||
         no_field(v, caps, CPU_ACTIVATE_TERTIARY, VMCS_TERTIARY_VM_EXEC_CONTROL, CTL_TER, "tertiary", msg, n);
}

static bool needs(bool set, bool other, const char *control, const char *requirement, char *msg, size_t n) {
  if (!set || other) return false;
  snprintf(msg, n, ENTRY_ERROR "the \"%s\" VM-execution control is set but %s", control, requirement);
  return true;
}

/* SDM 26.2.1.1, the checks on the APIC-virtualization controls: "use TPR
** shadow" for virtualize x2APIC mode, APIC-register virtualization and
** virtual-interrupt delivery; virtualize x2APIC mode without virtualize APIC
** accesses; virtual-interrupt delivery with external-interrupt exiting;
** posted interrupts with virtual-interrupt delivery, "acknowledge interrupt
** on exit" and a notification vector below 256. */
static bool apic_controls_inconsistent(const struct vmcs *v, char *msg, size_t n) {
  bool tpr = cpu_ctl(v, CPU_TPR_SHADOW), vid = sec_ctl(v, SEC_VIRTUAL_INTR_DELIVERY);
  bool pi = pin_ctl(v, PIN_POSTED_INTR);
  const char *no_tpr = "\"use TPR shadow\" is clear";
  return needs(sec_ctl(v, SEC_VIRT_X2APIC), tpr, "virtualize x2APIC mode", no_tpr, msg, n) ||
         needs(sec_ctl(v, SEC_APIC_REGISTER_VIRT), tpr, "APIC-register virtualization", no_tpr, msg, n) ||
         needs(vid, tpr, "virtual-interrupt delivery", no_tpr, msg, n) ||
         needs(sec_ctl(v, SEC_VIRT_X2APIC), !sec_ctl(v, SEC_APIC_ACCESS), "virtualize x2APIC mode",
               "so is \"virtualize APIC accesses\"", msg, n) ||
         needs(vid, pin_ctl(v, PIN_EXT_INTR_EXITING), "virtual-interrupt delivery", "\"external-interrupt exiting\" is clear", msg, n) ||
         needs(pi, vid, "process posted interrupts", "\"virtual-interrupt delivery\" is clear", msg, n) ||
         needs(pi, vmcs_peek(v, VMCS_VM_EXIT_CONTROLS) & EXIT_ACK_INTR_ON_EXIT, "process posted interrupts",
               "the \"acknowledge interrupt on exit\" VM-exit control is clear", msg, n) ||
         needs(pi, vmcs_peek(v, VMCS_POSTED_INTR_NV) <= 0xff, "process posted interrupts",
               "the posted-interrupt notification vector is above 255", msg, n);
}

unsigned vmx_entry_check(const struct vmx_cpu *c, const struct vmx_caps *caps, char *msg, size_t n) {
  const struct vmcs *v = &c->vmcs;
  if (no_secondary(v, caps, msg, n) ||
      unsupported(v, VMCS_PIN_BASED_VM_EXEC_CONTROL, caps->pin_allowed1, CTL_PIN, "IA32_VMX_PINBASED_CTLS", msg, n) ||
      unsupported(v, VMCS_CPU_BASED_VM_EXEC_CONTROL, caps->cpu_allowed1, CTL_CPU, "IA32_VMX_PROCBASED_CTLS", msg, n))
    return 7;
  /* SDM 26.2.1.1: secondary controls are checked only when "activate secondary
  ** controls" is 1; otherwise the processor acts as if they were all 0. */
  if (cpu_ctl(v, CPU_ACTIVATE_SECONDARY) &&
      unsupported(v, VMCS_SECONDARY_VM_EXEC_CONTROL, caps->sec_allowed1, CTL_SEC, "IA32_VMX_PROCBASED_CTLS2", msg, n))
    return 7;
  /* Likewise the tertiary controls with "activate tertiary controls"; every
  ** tertiary control vmxsim knows is in bits 31:0. */
  if (cpu_ctl(v, CPU_ACTIVATE_TERTIARY) &&
      ((vmcs_peek(v, VMCS_TERTIARY_VM_EXEC_CONTROL) >> 32) ||
       unsupported(v, VMCS_TERTIARY_VM_EXEC_CONTROL, (uint32_t)caps->ter_allowed1, CTL_TER, "IA32_VMX_PROCBASED_CTLS3", msg, n))) {
    if (vmcs_peek(v, VMCS_TERTIARY_VM_EXEC_CONTROL) >> 32)
      snprintf(msg, n, ENTRY_ERROR "a tertiary control above bit 31 is set (none is supported)");
    return 7;
  }
  if (apic_controls_inconsistent(v, msg, n)) return 7;
  uint64_t count = vmcs_peek(v, VMCS_CR3_TARGET_COUNT);
  /* SDM 26.2.1.1: CR3_TARGET_COUNT must not exceed IA32_VMX_MISC[24:16] (SDM A.6). */
  if (count > caps->cr3_targets) {
    snprintf(msg, n, ENTRY_ERROR "CR3_TARGET_COUNT is %llu but this CPU supports %llu CR3-target values "
             "(IA32_VMX_MISC[24:16])", (unsigned long long)count, (unsigned long long)caps->cr3_targets);
    return 7;
  }
  return 0;
}

int dr_resolve(uint64_t cr4, unsigned dr, bool write, uint64_t value, unsigned *fault) {
  dr &= 7;
  if (dr == 4 || dr == 5) {
    if (cr4 & CR4_DE) { *fault = DR_FAULT_UD; return -1; }
    dr += 2;                             /* aliases of DR6/DR7 when CR4.DE = 0 */
  }
  if (write && (dr == 6 || dr == 7) && (value >> 32)) { *fault = DR_FAULT_GP; return -1; }
  return (int)dr;
}

static void mov_to_cr(struct vmx_cpu *c, const struct trace_event *ev, struct vmx_native *r) {
  struct vmcs *v = &c->vmcs;
  switch (ev->aux) {
  case 0: case 4: {
    enum vmcs_field real = ev->aux == 0 ? VMCS_GUEST_CR0 : VMCS_GUEST_CR4;
    uint64_t mask = vmcs_peek(v, ev->aux == 0 ? VMCS_CR0_GUEST_HOST_MASK : VMCS_CR4_GUEST_HOST_MASK);
    uint64_t old = vmcs_peek(v, real), now = cr_write_no_exit(old, mask, ev->a);
    vmcs_poke(v, real, now);
    /* CR4.PGE or PCIDE toggled by the guest (possible only when the hypervisor
    ** lets the guest own them) flushes the TLB including global entries. */
    if (ev->aux == 4 && ((old ^ now) & (CR4_PGE | CR4_PCIDE))) r->mmu = MMU_FLUSH_ALL;
    break;
  }
  case 3:
    /* The operand is loaded as it is: a CR3-target hit may load a shadow root
    ** the hypervisor placed there, i.e. a switch the MMU must follow. */
    vmcs_poke(v, VMCS_GUEST_CR3, ev->a);
    r->mmu = MMU_CR3_SWITCH;
    r->mmu_arg = ev->a;
    break;
  case 8: c->cr8 = ev->a; vmx_cpu_deliver_virtual(c); break;   /* TPR virtualization evaluates (SDM 29.1.2) */
  }
}

/* A MOV DR that does not exit runs against the processor's real CR4; a
** faulting one (#UD, #GP: not intercepted) changes no register. */
static void mov_dr(struct vmx_cpu *c, const struct trace_event *ev, struct vmx_native *r) {
  unsigned fault;
  bool write = ev->type == EV_DR_WRITE;
  r->dr = dr_resolve(vmcs_peek(&c->vmcs, VMCS_GUEST_CR4), ev->aux, write, write ? ev->a : 0, &fault);
  if (write && r->dr >= 0) c->dr[r->dr] = ev->a;
}

void vmx_execute(struct vmx_cpu *c, const struct trace_event *ev, struct vmx_native *r) {
  struct vmcs *v = &c->vmcs;
  r->dr = -1;
  switch (ev->type) {
  case EV_CR_WRITE: mov_to_cr(c, ev, r); break;
  case EV_CLTS:
    vmcs_poke(v, VMCS_GUEST_CR0, clts_no_exit(vmcs_peek(v, VMCS_GUEST_CR0), vmcs_peek(v, VMCS_CR0_GUEST_HOST_MASK)));
    break;
  case EV_LMSW:
    vmcs_poke(v, VMCS_GUEST_CR0, lmsw_no_exit(vmcs_peek(v, VMCS_GUEST_CR0),
                                              vmcs_peek(v, VMCS_CR0_GUEST_HOST_MASK), (uint16_t)ev->a));
    break;
  case EV_DR_WRITE: case EV_DR_READ: mov_dr(c, ev, r); break;
  case EV_WRMSR:
    if (ev->a == 0x1d9) c->debugctl = ev->b;                        /* IA32_DEBUGCTL */
    else if (ev->a >= X2APIC_MSR_FIRST && ev->a <= X2APIC_MSR_LAST) apic_virtualized(c, ev, r);
    break;
  case EV_APIC: if (ev->aux & APIC_AUX_WRITE) apic_virtualized(c, ev, r); break;
  case EV_INVLPG: r->mmu = MMU_INVLPG; r->mmu_arg = ev->a; break;
  case EV_HLT: r->halted = true; break;
  /* STI sets IF and, if IF was 0, blocks interrupts until the next
  ** instruction completes (SDM 24.4.2 table 24-3; Vol. 2B "STI"); a `sti`
  ** record stands for STI and that instruction, so the blocking is over when
  ** it ends.  POPF sets IF without blocking.  IRET restores IF and ends the
  ** blocking by NMI (SDM 6.7.1 of Vol. 3A). */
  case EV_STI: c->rflags_if = true; c->interruptibility &= (uint8_t)~INTR_BLOCK_STI; vmx_cpu_deliver_virtual(c); break;
  case EV_CLI: c->rflags_if = false; break;
  case EV_IRET:
    c->rflags_if = !(ev->aux & IRET_AUX_IF0);
    c->interruptibility &= (uint8_t)~INTR_BLOCK_NMI;
    vmx_cpu_deliver_virtual(c);                     /* SDM 29.2.2: at the boundary IF = 1 again */
    break;
  case EV_INVPCID: r->mmu = ev->aux == 0 ? MMU_INVLPG : MMU_FLUSH_ALL; r->mmu_arg = ev->a; break;
  default: break;
  }
}

uint64_t clts_no_exit(uint64_t cr0, uint64_t mask) {
  /* SDM 25.3: mask.TS = 0 clears TS; mask.TS = 1 (shadow.TS = 0) leaves it. */
  return (mask & CR0_TS) ? cr0 : cr0 & ~CR0_TS;
}

uint64_t lmsw_no_exit(uint64_t cr0, uint64_t mask, uint16_t src) {
  /* SDM 25.3: unowned bits 3:1 take the source; unowned PE can be set, never cleared. */
  uint64_t lo = (cr0 & mask & 0xf) | ((uint64_t)src & ~mask & 0xe) | (cr0 & CR0_PE) |
                ((uint64_t)src & ~mask & CR0_PE);
  return (cr0 & ~0xfull) | lo;
}
