/* Human-readable explanations of exit decisions, for the REPL and the tests. */
#include "exit.h"
#include "controls.h"
#include "exit_reason.h"

#include <stdio.h>
#include <string.h>

const char *cr0_bit_name(unsigned bit) {
  static const char *const n[32] = { [0] = "PE", [1] = "MP", [2] = "EM", [3] = "TS", [4] = "ET",
    [5] = "NE", [16] = "WP", [18] = "AM", [29] = "NW", [30] = "CD", [31] = "PG" };
  return bit < 32 ? n[bit] : NULL;
}

const char *cr4_bit_name(unsigned bit) {
  static const char *const n[32] = { [0] = "VME", [1] = "PVI", [2] = "TSD", [3] = "DE",
    [4] = "PSE", [5] = "PAE", [6] = "MCE", [7] = "PGE", [8] = "PCE", [9] = "OSFXSR",
    [10] = "OSXMMEXCPT", [11] = "UMIP", [12] = "LA57", [13] = "VMXE", [14] = "SMXE",
    [16] = "FSGSBASE", [17] = "PCIDE", [18] = "OSXSAVE", [20] = "SMEP", [21] = "SMAP",
    [22] = "PKE", [23] = "CET", [24] = "PKS" };
  return bit < 32 ? n[bit] : NULL;
}

/* The control a decision names (exit.c's by_control calls): pin-based for
** interrupts and NMIs, secondary for WBINVD, primary otherwise. */
static const char *control_of(uint64_t bit, unsigned type, char *buf, size_t n) {
  bool enable = (type == EV_RDTSCP && bit == SEC_ENABLE_RDTSCP) || (type == EV_INVPCID && bit == SEC_ENABLE_INVPCID);
  enum control_field f = type == EV_WBINVD || enable ? CTL_SEC : type == EV_INTR || type == EV_EXC || type == EV_VIRQ ? CTL_PIN : CTL_CPU;
  const char *name = control_name(f, (uint32_t)bit);
  if (!name) return "the control";
  snprintf(buf, n, "%s%s", name, f == CTL_SEC ? " (secondary)" : f == CTL_PIN ? " (pin-based)" : "");
  return buf;
}

/* "PGE" or "PGE, PSE" for the set bits of a CR0/CR4 mask. */
static void bit_list(uint64_t bits, unsigned cr, char *buf, size_t n) {
  size_t used = 0;
  buf[0] = 0;
  for (unsigned b = 0; b < 64 && used < n; b++) {
    if (!(bits >> b & 1)) continue;
    const char *name = b < 32 ? (cr == 0 ? cr0_bit_name(b) : cr4_bit_name(b)) : NULL;
    const char *sep = used ? ", " : "";
    if (name) used += (size_t)snprintf(buf + used, n - used, "%s%s", sep, name);
    else used += (size_t)snprintf(buf + used, n - used, "%sbit %u", sep, b);
  }
}

static unsigned cr_of(const struct trace_event *ev) {
  return ev->type == EV_CR_WRITE || ev->type == EV_CR_READ ? ev->aux : 0;
}

const char *vmx_explain(const struct exit_decision *d, const struct trace_event *ev, char *buf, size_t n) {
  const char *verdict = d->exits ? "exits" : "no exit";
  const char *reason = d->exits ? exit_reason_name(d->reason) : NULL;
  char bits[160], ctl[64];
  unsigned cr = cr_of(ev);
  switch (d->why) {
  case WHY_NOT_AN_INSTRUCTION:
    snprintf(buf, n, "no exit: not an intercepted instruction (the MMU model decides faults)"); break;
  case WHY_ALWAYS:
    snprintf(buf, n, "exits (%s): this instruction always exits in VMX non-root operation", reason); break;
  case WHY_CONTROL_SET:
    snprintf(buf, n, "exits (%s): %s is set", reason, control_of(d->detail, ev->type, ctl, sizeof ctl)); break;
  case WHY_CONTROL_CLEAR:
    if (d->exits) snprintf(buf, n, "exits (%s): %s is clear, so every access exits", reason, control_of(d->detail, ev->type, ctl, sizeof ctl));
    else snprintf(buf, n, "no exit: %s is clear", control_of(d->detail, ev->type, ctl, sizeof ctl));
    break;
  case WHY_CR_OWNED_DIFFERS:
    bit_list(d->detail, cr, bits, sizeof bits);
    snprintf(buf, n, "exits (CR_ACCESS): CR%u bit%s %s %s host-owned and differ%s from the read shadow",
             cr, (d->detail & (d->detail - 1)) ? "s" : "", bits,
             (d->detail & (d->detail - 1)) ? "are" : "is", (d->detail & (d->detail - 1)) ? "" : "s");
    break;
  case WHY_CR_OWNED_SAME:
    snprintf(buf, n, "no exit: every host-owned CR%u bit of the operand equals the read shadow", cr); break;
  case WHY_CR_READ_NEVER:
    snprintf(buf, n, "no exit: MOV from CR%u never exits; owned bits read from the shadow", cr); break;
  case WHY_CR3_TARGET_HIT:
    snprintf(buf, n, "no exit: operand matches CR3_TARGET_VALUE%llu", (unsigned long long)d->detail); break;
  case WHY_CR3_NO_TARGET:
    snprintf(buf, n, "exits (CR_ACCESS): CR3-load exiting is set and the operand matches none of "
             "the %llu CR3-target values", (unsigned long long)d->detail); break;
  case WHY_CLTS_TS_OWNED_SET:
    snprintf(buf, n, "exits (CR_ACCESS): CR0.TS is host-owned and set in the read shadow"); break;
  case WHY_CLTS_TS_OWNED_CLEAR:
    snprintf(buf, n, "no exit: CR0.TS is host-owned but clear in the read shadow; TS unchanged"); break;
  case WHY_CLTS_TS_GUEST:
    snprintf(buf, n, "no exit: CR0.TS is guest-owned; CLTS clears it"); break;
  case WHY_LMSW_SETS_OWNED_PE:
    snprintf(buf, n, "exits (CR_ACCESS): LMSW sets CR0.PE, which is host-owned and clear in the read shadow"); break;
  case WHY_BITMAP_SET:
    snprintf(buf, n, "exits (%s): the %s bitmap bit for 0x%llx is set", reason,
             ev->type == EV_IO ? "I/O" : "MSR", (unsigned long long)d->detail); break;
  case WHY_BITMAP_CLEAR:
    snprintf(buf, n, "no exit: the %s bitmap bit for 0x%llx is clear", ev->type == EV_IO ? "I/O" : "MSR",
             (unsigned long long)d->detail); break;
  case WHY_MSR_OUT_OF_RANGE:
    snprintf(buf, n, "exits (%s): MSR 0x%llx lies outside the MSR-bitmap ranges", reason,
             (unsigned long long)d->detail); break;
  case WHY_EXC_BITMAP_SET:
    snprintf(buf, n, "exits (EXCEPTION_NMI): exception-bitmap bit %llu is set", (unsigned long long)d->detail); break;
  case WHY_EXC_BITMAP_CLEAR:
    snprintf(buf, n, "no exit: exception-bitmap bit %llu is clear", (unsigned long long)d->detail); break;
  case WHY_PF_FILTERED:
    snprintf(buf, n, "%s: #PF error code fails the PFEC mask/match test, inverting bitmap bit 14", verdict); break;
  case WHY_APIC_ACCESS_PAGE:
    snprintf(buf, n, "exits (APIC_ACCESS): \"virtualize APIC accesses\" is set and the access is to the APIC-access page "
             "(offset 0x%llx)", (unsigned long long)d->detail); break;
  case WHY_APIC_MMIO:
    snprintf(buf, n, "no instruction exit: without \"virtualize APIC accesses\" the APIC page is ordinary memory; "
             "the hypervisor leaves it unmapped, so the MMU faults (MMIO emulation)"); break;
  case WHY_TPR_BELOW_THRESHOLD:
    snprintf(buf, n, "exits (TPR_BELOW_THRESHOLD): new TPR %llu is below TPR_THRESHOLD", (unsigned long long)d->detail); break;
  case WHY_WINDOW_OPEN:
    snprintf(buf, n, "exits (%s): %s is set and the guest can take %s now (%s)", reason,
             control_name(CTL_CPU, (uint32_t)d->detail), d->reason == EXIT_REASON_NMI_WINDOW ? "an NMI" : "an interrupt",
             d->reason == EXIT_REASON_NMI_WINDOW ? "no blocking by NMI or MOV SS"
                                                 : "RFLAGS.IF = 1, no blocking by STI or MOV SS");
    break;
  case WHY_WINDOW_BLOCKED:
    snprintf(buf, n, "no exit: %s is set but the guest still blocks %s", control_name(CTL_CPU, (uint32_t)d->detail),
             d->detail == CPU_NMI_WINDOW_EXITING ? "NMIs" : "interrupts (RFLAGS.IF = 0, or blocking by STI or MOV SS)");
    break;
  case WHY_NO_WINDOW:
    snprintf(buf, n, "no exit: the hypervisor asked for no interrupt or NMI window"); break;
  case WHY_BOTH_CONTROLS:
    snprintf(buf, n, "exits (%s): %s and its \"enable\" secondary control are both set", reason,
             control_of(d->detail, ev->type, ctl, sizeof ctl)); break;
  case WHY_UD:
    snprintf(buf, n, "no exit: %s is clear, so the instruction raises #UD in the guest",
             control_of(d->detail, ev->type, ctl, sizeof ctl)); break;
  case WHY_HELD_BY_HOST:
    snprintf(buf, n, "no exit of its own: the hypervisor already holds this interrupt (no source recorded)"); break;
  case WHY_PREEMPTION_TIMER:
    snprintf(buf, n, "exits (PREEMPTION_TIMER): \"activate VMX-preemption timer\" is set and the timer holding "
             "the vCPU's deadline counted down to 0"); break;
  case WHY_PLE_WINDOW:
    snprintf(buf, n, "exits (PAUSE_INSTRUCTION): PAUSE-loop exiting is set and PAUSE %llu of the spin runs more than "
             "PLE_Window cycles after the first of its loop", (unsigned long long)d->detail); break;
  case WHY_PLE_GAP:
    snprintf(buf, n, "no exit: the spin's PAUSEs are %llu cycles apart, more than PLE_Gap, so each starts a new loop",
             (unsigned long long)d->detail); break;
  case WHY_PLE_WITHIN:
    snprintf(buf, n, "no exit: the spin's loop lasts %llu cycles, not more than PLE_Window",
             (unsigned long long)d->detail); break;
  case WHY_VCPU_BLOCKED:
    snprintf(buf, n, "no exit: the vCPU is blocked in the host after an HLT exit, not in VMX non-root operation; "
             "the interrupt wakes it"); break;
  case WHY_APIC_VIRTUALIZED:
    snprintf(buf, n, "no exit: the access to APIC register 0x%llx is virtualized (the virtual-APIC page)",
             (unsigned long long)d->detail); break;
  case WHY_APIC_WRITE_TRAP:
    snprintf(buf, n, "exits (APIC_WRITE): the write of APIC register 0x%llx is virtualized, then traps for the "
             "hypervisor to emulate", (unsigned long long)d->detail); break;
  case WHY_TPR_VIRTUALIZED:
    snprintf(buf, n, "no exit: TPR virtualization (new VTPR 0x%llx)", (unsigned long long)d->detail); break;
  case WHY_EOI_VIRTUALIZED:
    snprintf(buf, n, "no exit: EOI virtualization of vector 0x%llx, whose EOI-exit-bitmap bit is clear",
             (unsigned long long)d->detail); break;
  case WHY_EOI_EXIT_BITMAP:
    snprintf(buf, n, "exits (EOI_INDUCED): the EOI-exit-bitmap bit of vector 0x%llx is set", (unsigned long long)d->detail); break;
  case WHY_SELF_IPI_VIRTUALIZED:
    snprintf(buf, n, "no exit: self-IPI virtualization of vector 0x%llx", (unsigned long long)d->detail); break;
  case WHY_IPI_VIRTUALIZED:
    snprintf(buf, n, "no exit: IPI virtualization sends the IPI to APIC ID %llu as a posted interrupt",
             (unsigned long long)d->detail); break;
  case WHY_X2APIC_VIRTUALIZED:
    snprintf(buf, n, "no exit: \"virtualize x2APIC mode\" reads MSR 0x%llx from the virtual-APIC page",
             (unsigned long long)d->detail); break;
  case WHY_POSTED:
    snprintf(buf, n, "no exit: \"process posted interrupts\" is set: vector %llu is posted and delivered without an exit",
             (unsigned long long)d->detail); break;
  default:
    snprintf(buf, n, "%s", verdict);
  }
  return buf;
}
