/* One virtual CPU: VMCS set-up from a policy, and the processor's and the
** hypervisor's actions for each guest action (see vcpu.h). */
#include "vcpu.h"
#include "controls.h"
#include "drswitch.h"
#include "exit_reason.h"
#include "models/counters.h"

#include <stdio.h>
#include <string.h>

/* CR4 bits KVM must keep host-owned without EPT, because they change how
** shadow page tables are built or which TLB entries survive (vmx.md). */
#define CR4_SHADOW_PAGING_OWNED (CR4_PGE | CR4_PCIDE | CR4_PAE | CR4_PSE | CR4_SMEP)
/* Bits the host keeps set in the real CR0/CR4 regardless of the guest:
** CR4.VMXE (IA32_VMX_CR4_FIXED0), and under shadow paging CR0.PG/WP/PE/NE. */
#define CR4_HOST_FORCED (1ull << 13)
#define CR0_SHADOW_FORCED (CR0_PG | CR0_WP | CR0_PE | (1ull << 5))

/* KVM's MSR-bitmap pass-through set: the MSRs a guest may access directly. */
static const uint32_t passthrough_msrs[] = {
  0x48 /* SPEC_CTRL */, 0x174, 0x175, 0x176 /* SYSENTER_CS/ESP/EIP */,
  0xc0000100 /* FS_BASE */, 0xc0000101 /* GS_BASE */, 0xc0000102 /* KERNEL_GS_BASE */,
};

static void msr_pass(struct vmx_state *s, uint32_t msr) {
  unsigned base = msr >= 0xc0000000u ? 1024 : 0, bit = msr & 0x1fff;
  s->msr_bitmap[base + bit / 8] &= (uint8_t)~(1u << (bit % 8));          /* reads */
  s->msr_bitmap[2048 + base + bit / 8] &= (uint8_t)~(1u << (bit % 8));   /* writes */
}

static uint64_t setup_controls(const struct policy *p) {
  uint64_t cpu = CPU_CR8_LOAD_EXITING | CPU_CR8_STORE_EXITING | CPU_ACTIVATE_SECONDARY;
  if (p->tpr_shadow) cpu = CPU_TPR_SHADOW | CPU_ACTIVATE_SECONDARY;
  if (p->paging == PAGING_SHADOW) cpu |= CPU_CR3_LOAD_EXITING | CPU_CR3_STORE_EXITING | CPU_INVLPG_EXITING;
  if (p->hlt_exiting) cpu |= CPU_HLT_EXITING;
  if (p->rdtsc_exiting) cpu |= CPU_RDTSC_EXITING;
  if (p->pause_exiting) cpu |= CPU_PAUSE_EXITING;
  if (p->mov_dr_exiting) cpu |= CPU_MOV_DR_EXITING;
  if (p->msr_bitmaps) cpu |= CPU_USE_MSR_BITMAPS;
  cpu |= p->io_bitmaps ? CPU_USE_IO_BITMAPS : CPU_UNCOND_IO_EXITING;
  return cpu;
}

uint64_t vcpu_setup(struct vcpu *v, unsigned id, const struct policy *p) {
  memset(v, 0, sizeof *v);
  v->id = id;
  v->pol = p;
  struct vmx_state *s = &v->vmx;
  struct vmcs *c = &s->vmcs;
  vmcs_poke(c, VMCS_PIN_BASED_VM_EXEC_CONTROL, PIN_EXT_INTR_EXITING | PIN_NMI_EXITING);
  vmcs_poke(c, VMCS_CPU_BASED_VM_EXEC_CONTROL, setup_controls(p));
  vmcs_poke(c, VMCS_SECONDARY_VM_EXEC_CONTROL,
            (p->paging == PAGING_EPT ? SEC_ENABLE_EPT | SEC_UNRESTRICTED_GUEST : 0) |
            (p->vpid ? SEC_ENABLE_VPID : 0));
  vmcs_poke(c, VMCS_VM_EXIT_CONTROLS, EXIT_SAVE_DEBUG_CONTROLS);
  vmcs_poke(c, VMCS_VM_ENTRY_CONTROLS, ENTRY_LOAD_DEBUG_CONTROLS);
  /* Shadow paging intercepts every guest #PF (vmx.md, "What KVM does"). */
  vmcs_poke(c, VMCS_EXCEPTION_BITMAP, p->paging == PAGING_SHADOW ? 1u << 14 : 0);
  vmcs_poke(c, VMCS_CR0_GUEST_HOST_MASK, p->cr0_mask);
  uint64_t cr4_mask = p->cr4_mask;
  if (p->paging == PAGING_SHADOW) {
    v->cr4_forced = CR4_SHADOW_PAGING_OWNED & ~cr4_mask;
    cr4_mask |= CR4_SHADOW_PAGING_OWNED;
  }
  vmcs_poke(c, VMCS_CR4_GUEST_HOST_MASK, cr4_mask);
  vmcs_poke(c, VMCS_CR3_TARGET_COUNT, p->cr3_target_count);
  vmcs_poke(c, VMCS_VIRTUAL_PROCESSOR_ID, p->vpid ? id + 1 : 0);
  memset(s->io_bitmap, 0xff, sizeof s->io_bitmap);
  s->io_bitmap[0x80 / 8] &= (uint8_t)~(1u << (0x80 % 8));   /* port 0x80 delay writes pass */
  memset(s->msr_bitmap, 0xff, sizeof s->msr_bitmap);
  for (size_t i = 0; i < sizeof passthrough_msrs / sizeof *passthrough_msrs; i++)
    msr_pass(s, passthrough_msrs[i]);
  v->guest_dr[6] = v->hw_dr[6] = v->host_dr[6] = 0xffff0ff0;
  v->guest_dr[7] = v->hw_dr[7] = v->host_dr[7] = DR7_RESET;
  vmcs_poke(c, VMCS_GUEST_DR7, DR7_RESET);
  if (p->host_debugged) {               /* a host debugger's hardware breakpoint */
    v->host_dr[0] = 0xffffffff81000000ull;
    v->host_dr[7] = DR7_RESET | 0x2;
  }
  vcpu_init_reg(v, 0, CR0_PG | CR0_PE | CR0_WP | (1ull << 5) | (1ull << 4));
  vcpu_init_reg(v, 4, CR4_PAE | CR4_PGE);
  return __builtin_popcountll(v->cr4_forced);
}

static uint64_t forced_bits(const struct vcpu *v, unsigned cr) {
  if (cr == 4) return CR4_HOST_FORCED;
  return v->pol->paging == PAGING_SHADOW ? CR0_SHADOW_FORCED : 0;
}

/* The hypervisor keeps the read shadow equal to the guest-visible value and
** the real register at that value plus the bits it forces. */
static void set_guest_cr(struct vcpu *v, unsigned cr, uint64_t value, bool counted) {
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
  case 0: case 4: set_guest_cr(v, cr, value, false); break;
  case 3:
    v->guest_cr3 = value;
    if (v->pol->paging == PAGING_EPT) vmcs_poke(&v->vmx.vmcs, VMCS_GUEST_CR3, value);
    break;
  case 8: v->cr8 = value; break;
  }
}

unsigned vcpu_entry_check(const struct vcpu *v, uint64_t supported, char *msg, size_t n) {
  uint64_t count = vmcs_peek(&v->vmx.vmcs, VMCS_CR3_TARGET_COUNT);
  /* SDM 26.2.1.1: CR3_TARGET_COUNT must not exceed IA32_VMX_MISC[24:16]; a
  ** violation fails VM entry with VM-instruction error 7 (invalid control field). */
  if (count > supported) {
    snprintf(msg, n, "VM entry failed with VM-instruction error 7 (entry with invalid control "
             "field(s)): CR3_TARGET_COUNT is %llu but this CPU supports %llu CR3-target values "
             "(IA32_VMX_MISC[24:16])", (unsigned long long)count, (unsigned long long)supported);
    return 7;
  }
  return 0;
}

uint64_t vcpu_cr3_operand(const struct vcpu *v, uint64_t guest_cr3) {
  if (!v->pol->cr3_cache) return guest_cr3;
  uint64_t count = vmcs_peek(&v->vmx.vmcs, VMCS_CR3_TARGET_COUNT);
  for (unsigned i = 0; i < count && i < 4; i++)
    if (v->cr3t_guest[i] == guest_cr3 && vmcs_peek(&v->vmx.vmcs, (enum vmcs_field)(VMCS_CR3_TARGET_VALUE0 + i)))
      return vmcs_peek(&v->vmx.vmcs, (enum vmcs_field)(VMCS_CR3_TARGET_VALUE0 + i));
  return guest_cr3;
}

void vcpu_cr3t_fill(struct vcpu *v, uint64_t guest_cr3, uint64_t root_hpa) {
  unsigned count = (unsigned)vmcs_peek(&v->vmx.vmcs, VMCS_CR3_TARGET_COUNT);
  if (count == 0) return;
  unsigned slot = v->cr3t_next % (count < 4 ? count : 4);
  v->cr3t_next = slot + 1;
  v->cr3t_guest[slot] = guest_cr3;
  vmcs_write(&v->vmx.vmcs, (enum vmcs_field)(VMCS_CR3_TARGET_VALUE0 + slot), root_hpa);
}

void vcpu_cr3t_clear(struct vcpu *v) {
  for (unsigned i = 0; i < 4; i++) {
    /* a slot is empty when its target value is 0: guest CR3 0 can be cached too */
    if (!v->cr3t_guest[i] && !vmcs_peek(&v->vmx.vmcs, (enum vmcs_field)(VMCS_CR3_TARGET_VALUE0 + i))) continue;
    v->cr3t_guest[i] = 0;
    vmcs_write(&v->vmx.vmcs, (enum vmcs_field)(VMCS_CR3_TARGET_VALUE0 + i), 0);
  }
  v->cr3t_next = 0;
}

/* ---- guest actions that did not exit (SDM 26.3 semantics) ---- */

static void cr_no_exit(struct vcpu *v, const struct trace_event *ev, struct vcpu_result *r) {
  struct vmcs *c = &v->vmx.vmcs;
  switch (ev->aux) {
  case 0: case 4: {
    enum vmcs_field real = ev->aux == 0 ? VMCS_GUEST_CR0 : VMCS_GUEST_CR4;
    uint64_t mask = vmcs_peek(c, ev->aux == 0 ? VMCS_CR0_GUEST_HOST_MASK : VMCS_CR4_GUEST_HOST_MASK);
    uint64_t old = vmcs_peek(c, real), now = cr_write_no_exit(old, mask, ev->a);
    vmcs_poke(c, real, now);
    /* CR4.PGE or PCIDE toggled by the guest (EPT only: they are host-owned
    ** under shadow paging) flushes the TLB including global entries. */
    if (ev->aux == 4 && ((old ^ now) & (CR4_PGE | CR4_PCIDE))) r->mmu = MMU_FLUSH_ALL;
    break;
  }
  case 3:
    /* Hardware loads the operand; a CR3-target hit under the paravirtual CR3
    ** cache loads a cached shadow root, i.e. a switch the MMU must follow. */
    vmcs_poke(c, VMCS_GUEST_CR3, ev->a);
    r->mmu = MMU_CR3_SWITCH;
    r->mmu_arg = ev->a;
    break;
  case 8: v->cr8 = ev->a; break;
  }
}

void vcpu_no_exit(struct vcpu *v, const struct trace_event *ev, struct vcpu_result *r) {
  struct vmcs *c = &v->vmx.vmcs;
  switch (ev->type) {
  case EV_CR_WRITE: cr_no_exit(v, ev, r); break;
  case EV_CLTS:
    vmcs_poke(c, VMCS_GUEST_CR0, clts_no_exit(vmcs_peek(c, VMCS_GUEST_CR0), vmcs_peek(c, VMCS_CR0_GUEST_HOST_MASK)));
    break;
  case EV_LMSW:
    vmcs_poke(c, VMCS_GUEST_CR0, lmsw_no_exit(vmcs_peek(c, VMCS_GUEST_CR0),
                                              vmcs_peek(c, VMCS_CR0_GUEST_HOST_MASK), (uint16_t)ev->a));
    break;
  case EV_DR_WRITE: dr_guest_write(v, ev->aux, ev->a); break;
  case EV_DR_READ: dr_guest_read(v, ev->aux); break;
  case EV_WRMSR: if (ev->a == 0x1d9) v->hw_debugctl = ev->b; break;   /* IA32_DEBUGCTL */
  case EV_INVLPG: r->mmu = MMU_INVLPG; r->mmu_arg = ev->a; break;
  case EV_HLT: r->halted = true; break;
  default: break;
  }
}

/* ---- exits: processor actions, emulation, entry ---- */

/* Advance the guest RIP past the emulated instruction (KVM skip_emulated_instruction). */
static void skip_instruction(struct vmcs *c) {
  uint64_t len = vmcs_read(c, VMCS_VM_EXIT_INSTRUCTION_LEN);
  vmcs_write(c, VMCS_GUEST_RIP, vmcs_read(c, VMCS_GUEST_RIP) + len);
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
static void emulate_cr_write(struct vcpu *v, const struct trace_event *ev, struct vcpu_result *r) {
  struct vmcs *c = &v->vmx.vmcs;
  switch (ev->aux) {
  case 0: case 4: {
    /* The guest's current value (KVM kvm_read_cr4): guest-owned bits from the
    ** register (one VMREAD), host-owned ones from the shadow (KVM's copy).  The
    ** shadow alone is stale in guest-owned bits the guest changed without exits. */
    uint64_t real = vmcs_read(c, ev->aux == 0 ? VMCS_GUEST_CR0 : VMCS_GUEST_CR4);
    uint64_t old = cr_read_value(real, vmcs_peek(c, ev->aux == 0 ? VMCS_CR0_GUEST_HOST_MASK : VMCS_CR4_GUEST_HOST_MASK),
                                 vmcs_peek(c, ev->aux == 0 ? VMCS_CR0_READ_SHADOW : VMCS_CR4_READ_SHADOW));
    set_guest_cr(v, ev->aux, ev->a, true);
    /* Paging-relevant CR4 bits changed: the shadow MMU resets its context and
    ** the TLB loses global entries (KVM kvm_post_set_cr4). */
    if (ev->aux == 4 && ((old ^ ev->a) & CR4_SHADOW_PAGING_OWNED)) r->mmu = MMU_FLUSH_ALL;
    break;
  }
  case 3:
    v->guest_cr3 = ev->a;
    r->mmu = MMU_CR3_SWITCH;          /* the MMU finds or builds the root, writes GUEST_CR3 */
    r->mmu_arg = ev->a;
    break;
  default: v->cr8 = ev->a; break;
  }
}

static void emulate_cr(struct vcpu *v, const struct trace_event *ev, struct vcpu_result *r) {
  struct vmcs *c = &v->vmx.vmcs;
  vmcs_read(c, VMCS_EXIT_QUALIFICATION);
  r->stat_key = cr_subkey(ev);
  if (ev->type == EV_CR_WRITE) emulate_cr_write(v, ev, r);
  else if (ev->type == EV_CLTS || ev->type == EV_LMSW) {
    /* CLTS and LMSW change some bits of the guest's current CR0 (KVM kvm_clts,
    ** kvm_lmsw use kvm_read_cr0): guest-owned bits come from the register (one
    ** VMREAD), host-owned ones from the shadow.  The shadow alone is stale in
    ** guest-owned bits the guest changed without exits. */
    uint64_t cr0 = cr_read_value(vmcs_read(c, VMCS_GUEST_CR0), vmcs_peek(c, VMCS_CR0_GUEST_HOST_MASK),
                                 vmcs_peek(c, VMCS_CR0_READ_SHADOW));
    if (ev->type == EV_CLTS) set_guest_cr(v, 0, cr0 & ~CR0_TS, true);
    /* LMSW emulated as the instruction would run with no bits owned: PE can be set, never cleared. */
    else set_guest_cr(v, 0, lmsw_no_exit(cr0, 0, (uint16_t)ev->a), true);
  }
  skip_instruction(c);
}

static void emulate_dr(struct vcpu *v, const struct trace_event *ev, struct vcpu_result *r) {
  struct vmcs *c = &v->vmx.vmcs;
  vmcs_read(c, VMCS_EXIT_QUALIFICATION);
  r->stat_key = stat_key_dr(ev->aux, ev->type == EV_DR_READ);
  /* The MOV-DR exit has priority over #UD/#GP (SDM 26.1.3), so the handler
  ** applies them, with the guest's CR4 (KVM keeps a copy: no VMREAD). */
  unsigned fault = 0;
  uint64_t cr4 = cr_read_value(vmcs_peek(c, VMCS_GUEST_CR4), vmcs_peek(c, VMCS_CR4_GUEST_HOST_MASK),
                               vmcs_peek(c, VMCS_CR4_READ_SHADOW));
  int n = dr_resolve(cr4, ev->aux, ev->type == EV_DR_WRITE, ev->a, &fault);
  if (n < 0 && fault == DR_FAULT_UD) {
    /* KVM kvm_require_dr: DR4/DR5 with CR4.DE = 1 is #UD, before anything else. */
    vmcs_write(c, VMCS_VM_ENTRY_INTR_INFO_FIELD, DR_FAULT_UD | (3u << 8) | (1u << 31));
    return;
  }
  if (v->pol->dr_switch == DR_LAZY) {
    /* KVM: stop intercepting, load guest DRs, re-execute the instruction natively. */
    dr_stop_intercepting(v);
    r->reexecute = true;
    return;
  }
  if (ev->type == EV_DR_WRITE) {
    if (n < 0) {
      /* SDM: MOV to DR6/DR7 with bits 63:32 set is #GP; KVM injects it (and so
      ** GUEST_DR7 never holds high bits, which would fail VM entry). */
      vmcs_write(c, VMCS_VM_ENTRY_INTR_INFO_FIELD, DR_FAULT_GP | (3u << 8) | (1u << 11) | (1u << 31));
      return;
    }
    v->guest_dr[n] = ev->a;
    if (n == 7) vmcs_write(c, VMCS_GUEST_DR7, ev->a);
  }
  skip_instruction(c);
}

static void emulate(struct vcpu *v, const struct trace_event *ev, const struct exit_decision *d,
                    struct vcpu_result *r) {
  struct vmcs *c = &v->vmx.vmcs;
  switch (d->reason) {
  case EXIT_REASON_CR_ACCESS: emulate_cr(v, ev, r); break;
  case EXIT_REASON_DR_ACCESS: emulate_dr(v, ev, r); break;
  case EXIT_REASON_INVLPG:
    vmcs_read(c, VMCS_EXIT_QUALIFICATION);
    r->mmu = MMU_INVLPG;
    r->mmu_arg = ev->a;
    skip_instruction(c);
    break;
  case EXIT_REASON_EXCEPTION_NMI:
    /* A guest-visible fault: reflect it into the guest. */
    vmcs_read(c, VMCS_VM_EXIT_INTR_INFO);
    vmcs_write(c, VMCS_VM_ENTRY_INTR_INFO_FIELD, (ev->a & 0xff) | (3u << 8) | (1u << 31));
    break;
  case EXIT_REASON_HLT:
    r->halted = true;
    skip_instruction(c);
    break;
  case EXIT_REASON_TPR_BELOW_THRESHOLD:
    /* Trap-like (SDM 29.1.2): the MOV to CR8 completed and wrote VTPR. */
    if (ev->type == EV_CR_WRITE) v->cr8 = ev->a;
    /* fall through */
  case EXIT_REASON_EXTERNAL_INTERRUPT:
    vmcs_read(c, VMCS_VM_EXIT_INTR_INFO);
    break;
  case EXIT_REASON_IO_INSTRUCTION:
    vmcs_read(c, VMCS_EXIT_QUALIFICATION);
    skip_instruction(c);
    break;
  case EXIT_REASON_MSR_WRITE:
    /* KVM keeps the guest's IA32_DEBUGCTL in GUEST_IA32_DEBUGCTL, loaded at entry. */
    if (ev->a == 0x1d9) vmcs_write(c, VMCS_GUEST_IA32_DEBUGCTL, ev->b);
    skip_instruction(c);
    break;
  default:                          /* CPUID, MSRs, VMCALL, RDTSC...: emulate and skip */
    skip_instruction(c);
    break;
  }
}

void vcpu_exit_begin(struct vcpu *v, unsigned reason, uint64_t qual, struct work *w, uint64_t counters[]) {
  struct vmcs *c = &v->vmx.vmcs;
  /* Processor: record the exit (SDM 28.2) and load host debug state (28.3). */
  vmcs_poke(c, VMCS_VM_EXIT_REASON, reason);
  vmcs_poke(c, VMCS_EXIT_QUALIFICATION, qual);
  dr_hw_exit(v);
  /* Hypervisor: dispatch on the reason, then put host debug state back. */
  vmcs_read(c, VMCS_VM_EXIT_REASON);
  dr_after_exit(v, w, counters);
}

void vcpu_emulate(struct vcpu *v, const struct trace_event *ev, const struct exit_decision *d,
                  struct vcpu_result *r) {
  r->stat_key = d->reason;
  emulate(v, ev, d, r);
}

void vcpu_exit_end(struct vcpu *v, struct work *w, uint64_t counters[]) {
  dr_before_entry(v, w, counters);
  dr_hw_entry(v);
}
