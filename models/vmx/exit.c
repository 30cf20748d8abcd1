/* Exit decisions, one small function per instruction class, each citing its SDM rule. */
#include "exit.h"
#include "controls.h"
#include "exit_reason.h"

#include <stdio.h>
#include <string.h>

static struct exit_decision stay(unsigned why, uint64_t detail) {
  return (struct exit_decision){ .exits = false, .why = (uint8_t)why, .detail = detail };
}
static struct exit_decision leave(unsigned reason, unsigned why, uint64_t qual, uint64_t detail) {
  return (struct exit_decision){ .exits = true, .reason = (uint16_t)reason, .why = (uint8_t)why,
                                 .qual = qual, .detail = detail };
}
/* Exit iff a processor-based control is set (SDM 25.1.3). */
static struct exit_decision by_control(bool set, uint32_t bit, unsigned reason, uint64_t qual) {
  return set ? leave(reason, WHY_CONTROL_SET, qual, bit) : stay(WHY_CONTROL_CLEAR, bit);
}

/* SDM 25.1.3 "MOV to CR0 / CR4": exits iff some bit set in the guest/host mask
** has an operand value different from the read shadow. */
static struct exit_decision mov_to_cr0_cr4(const struct vmcs *v, unsigned cr, uint64_t val, unsigned gpr) {
  uint64_t mask = vmcs_peek(v, cr == 0 ? VMCS_CR0_GUEST_HOST_MASK : VMCS_CR4_GUEST_HOST_MASK);
  uint64_t shadow = vmcs_peek(v, cr == 0 ? VMCS_CR0_READ_SHADOW : VMCS_CR4_READ_SHADOW);
  uint64_t diff = mask & (val ^ shadow);
  if (diff) return leave(EXIT_REASON_CR_ACCESS, WHY_CR_OWNED_DIFFERS, qual_cr(cr, CR_MOV_TO, gpr), diff);
  return stay(WHY_CR_OWNED_SAME, 0);
}

/* SDM 25.1.3 "MOV to CR3": exits iff CR3-load exiting is 1 and the operand
** equals none of the first CR3_TARGET_COUNT target values (full 64-bit compare;
** count 0 means every MOV to CR3 exits). */
static struct exit_decision mov_to_cr3(const struct vmcs *v, uint64_t val, unsigned gpr) {
  if (!cpu_ctl(v, CPU_CR3_LOAD_EXITING)) return stay(WHY_CONTROL_CLEAR, CPU_CR3_LOAD_EXITING);
  uint64_t count = vmcs_peek(v, VMCS_CR3_TARGET_COUNT);
  for (uint64_t i = 0; i < count && i < VMCS_CR3_TARGET_FIELDS; i++)
    if (vmcs_peek(v, (enum vmcs_field)(VMCS_CR3_TARGET_VALUE0 + i)) == val)
      return stay(WHY_CR3_TARGET_HIT, i);
  return leave(EXIT_REASON_CR_ACCESS, WHY_CR3_NO_TARGET, qual_cr(3, CR_MOV_TO, gpr), count);
}

/* SDM 29.1.2 TPR virtualization, after a write of the virtual TPR (MOV to
** CR8, a TPR write to the APIC-access page or to MSR 808H): with
** "virtual-interrupt delivery" 0 a new VTPR[7:4] below TPR_THRESHOLD[3:0]
** causes a trap-like TPR_BELOW_THRESHOLD exit (qualification 0); with it,
** PPR virtualization and the evaluation of pending virtual interrupts
** follow instead, never an exit. */
static struct exit_decision tpr_virtualization(const struct vmcs *v, unsigned vtpr) {
  if (!sec_ctl(v, SEC_VIRTUAL_INTR_DELIVERY) && (vtpr >> 4 & 0xf) < (vmcs_peek(v, VMCS_TPR_THRESHOLD) & 0xf))
    return leave(EXIT_REASON_TPR_BELOW_THRESHOLD, WHY_TPR_BELOW_THRESHOLD, 0, vtpr >> 4 & 0xf);
  return stay(WHY_TPR_VIRTUALIZED, vtpr & 0xff);
}

/* SDM 25.1.3 "MOV to CR8": exits iff CR8-load exiting is 1.  With "use TPR
** shadow" and no exit, the write goes to the virtual TPR (SDM 29.3), which
** TPR virtualization follows (SDM 29.1.2). */
static struct exit_decision mov_to_cr8(const struct vmcs *v, uint64_t val, unsigned gpr) {
  if (cpu_ctl(v, CPU_CR8_LOAD_EXITING))
    return leave(EXIT_REASON_CR_ACCESS, WHY_CONTROL_SET, qual_cr(8, CR_MOV_TO, gpr), CPU_CR8_LOAD_EXITING);
  if (cpu_ctl(v, CPU_TPR_SHADOW)) {
    struct exit_decision d = tpr_virtualization(v, (unsigned)(val & 0xf) << 4);
    if (d.exits) return d;
  }
  return stay(WHY_CONTROL_CLEAR, CPU_CR8_LOAD_EXITING);
}

static struct exit_decision mov_to_cr(const struct vmcs *v, const struct trace_event *ev) {
  unsigned gpr = (unsigned)ev->b;
  switch (ev->aux) {
  case 0: case 4: return mov_to_cr0_cr4(v, ev->aux, ev->a, gpr);
  case 3: return mov_to_cr3(v, ev->a, gpr);
  default: return mov_to_cr8(v, ev->a, gpr);
  }
}

/* SDM 25.1.3: MOV from CR0/CR4 never exits; MOV from CR3 exits iff CR3-store
** exiting; MOV from CR8 iff CR8-store exiting. */
static struct exit_decision mov_from_cr(const struct vmcs *v, const struct trace_event *ev) {
  unsigned gpr = (unsigned)ev->b;
  uint64_t q = qual_cr(ev->aux, CR_MOV_FROM, gpr);
  switch (ev->aux) {
  case 3: return by_control(cpu_ctl(v, CPU_CR3_STORE_EXITING), CPU_CR3_STORE_EXITING, EXIT_REASON_CR_ACCESS, q);
  case 8: return by_control(cpu_ctl(v, CPU_CR8_STORE_EXITING), CPU_CR8_STORE_EXITING, EXIT_REASON_CR_ACCESS, q);
  default: return stay(WHY_CR_READ_NEVER, 0);
  }
}

/* SDM 25.1.3 "CLTS": exits iff CR0 mask.TS = 1 and read shadow.TS = 1. */
static struct exit_decision clts(const struct vmcs *v) {
  bool owned = vmcs_peek(v, VMCS_CR0_GUEST_HOST_MASK) & CR0_TS;
  bool shadow = vmcs_peek(v, VMCS_CR0_READ_SHADOW) & CR0_TS;
  if (!owned) return stay(WHY_CLTS_TS_GUEST, 0);
  if (!shadow) return stay(WHY_CLTS_TS_OWNED_CLEAR, 0);
  return leave(EXIT_REASON_CR_ACCESS, WHY_CLTS_TS_OWNED_SET, qual_cr(0, CR_CLTS, 0), CR0_TS);
}

/* SDM 25.1.3 "LMSW": exits iff (mask.PE & src.PE & ~shadow.PE) or, for any of
** bits 3:1, the bit is owned and the source differs from the shadow. */
static struct exit_decision lmsw(const struct vmcs *v, uint16_t src, bool mem) {
  uint64_t mask = vmcs_peek(v, VMCS_CR0_GUEST_HOST_MASK);
  uint64_t shadow = vmcs_peek(v, VMCS_CR0_READ_SHADOW);
  uint64_t sets_pe = mask & src & ~shadow & CR0_PE;
  uint64_t diff = mask & (src ^ shadow) & 0xe;
  if (sets_pe) return leave(EXIT_REASON_CR_ACCESS, WHY_LMSW_SETS_OWNED_PE, qual_lmsw(src, mem), CR0_PE);
  if (diff) return leave(EXIT_REASON_CR_ACCESS, WHY_CR_OWNED_DIFFERS, qual_lmsw(src, mem), diff);
  return stay(WHY_CR_OWNED_SAME, 0);
}

/* SDM 25.1.3 "MOV DR": exits iff MOV-DR exiting is 1; unlike the general order
** of SDM 25.1.1, the exit has priority over the #UD (DR4/DR5 with CR4.DE = 1) and
** the privilege #GP the instruction could raise. */
static struct exit_decision mov_dr(const struct vmcs *v, const struct trace_event *ev, bool from) {
  return by_control(cpu_ctl(v, CPU_MOV_DR_EXITING), CPU_MOV_DR_EXITING, EXIT_REASON_DR_ACCESS,
                    qual_dr(ev->aux, from, (unsigned)ev->b));
}

/* SDM 25.1.3 I/O (bitmaps: SDM 24.6.4): with "use I/O bitmaps" = 1 the
** bitmaps decide (any bit of the accessed range set, or a range wrapping past
** FFFF, exits) and unconditional I/O exiting is ignored; otherwise exits iff
** unconditional I/O exiting.  Qualification (table 27-5): 2:0 size-1,
** 3 direction (1 = IN), 31:16 port. */
static struct exit_decision io(const struct vmx_cpu *s, const struct trace_event *ev) {
  unsigned size = IO_AUX_SIZE(ev->aux), port = (unsigned)ev->a & 0xffff;
  bool in = !(ev->aux & IO_AUX_OUT);
  uint64_t q = (uint64_t)((size ? size : 1) - 1) | (uint64_t)in << 3 | (uint64_t)port << 16;
  if (!cpu_ctl(&s->vmcs, CPU_USE_IO_BITMAPS))
    return by_control(cpu_ctl(&s->vmcs, CPU_UNCOND_IO_EXITING), CPU_UNCOND_IO_EXITING,
                      EXIT_REASON_IO_INSTRUCTION, q);
  for (unsigned p = port; p < port + (size ? size : 1); p++)
    if (p > 0xffff || (s->io_bitmap[p >> 3] >> (p & 7) & 1))
      return leave(EXIT_REASON_IO_INSTRUCTION, WHY_BITMAP_SET, q, p);
  return stay(WHY_BITMAP_CLEAR, port);
}

/* ---- APIC virtualization (SDM chapter 29) ---- */

/* SDM 29.1.4 EOI virtualization: the vector is SVI; the EOI-exit bitmap
** (SDM 24.6.8) bit of that vector set makes it a trap-like EOI-induced exit
** with the vector as qualification (SDM 27.2.1), else the processor
** evaluates pending virtual interrupts, no exit. */
static struct exit_decision eoi_virtualization(const struct vmx_cpu *s) {
  unsigned vec = vapic_svi(s);
  uint64_t bits = vmcs_peek(&s->vmcs, (enum vmcs_field)(VMCS_EOI_EXIT_BITMAP0 + vec / 64));
  if (bits >> (vec % 64) & 1) return leave(EXIT_REASON_EOI_INDUCED, WHY_EOI_EXIT_BITMAP, vec, vec);
  return stay(WHY_EOI_VIRTUALIZED, vec);
}

/* SDM 29.4.3.2: an ICR value self-IPI virtualization takes (with
** "virtual-interrupt delivery"): the must-be-zero bits clear, shorthand
** self, edge, fixed, a vector of 16 or more. */
static bool icr_self_ipi(uint64_t icr) {
  return !(icr & ICR_MUST_BE_ZERO) && ICR_SHORTHAND(icr) == ICR_SHORTHAND_SELF && !(icr & ICR_LEVEL) &&
         ICR_DELIVERY_MODE(icr) == 0 && ICR_VECTOR(icr) >= 16;
}

/* IPI virtualization (SDM "IPI Virtualization", in the editions since 2021
** that document the tertiary controls; docs/sources.md): a fixed, edge,
** physical IPI without shorthand to one destination is sent without an exit.
** KVM sizes the PID-pointer table to the VM's largest APIC ID, so every
** destination of the trace is in it. */
static bool icr_ipi_virtualizable(uint64_t icr) {
  return !(icr & ICR_MUST_BE_ZERO) && ICR_SHORTHAND(icr) == 0 && !(icr & (ICR_LEVEL | ICR_DEST_LOGICAL)) &&
         ICR_DELIVERY_MODE(icr) == 0 && ICR_VECTOR(icr) >= 16;
}

/* A write of the ICR's low doubleword that was virtualized (xAPIC offset
** 300H, or the x2APIC MSR 830H under IPI virtualization): self-IPI
** virtualization, IPI virtualization, or else a trap-like APIC-write exit
** with offset 300H (SDM 29.4.3.2, 29.4.3.3). */
static struct exit_decision icr_write(const struct vmcs *v, uint64_t icr, unsigned dest) {
  if (sec_ctl(v, SEC_VIRTUAL_INTR_DELIVERY) && icr_self_ipi(icr))
    return stay(WHY_SELF_IPI_VIRTUALIZED, ICR_VECTOR(icr));
  if (ter_ctl(v, TER_IPI_VIRT) && icr_ipi_virtualizable(icr)) return stay(WHY_IPI_VIRTUALIZED, dest);
  return leave(EXIT_REASON_APIC_WRITE, WHY_APIC_WRITE_TRAP, APIC_ICR, APIC_ICR);
}

/* SDM 29.4.3.2 APIC-write emulation, after a virtualized write: TPR
** virtualization for 080H; EOI virtualization for 0B0H and self-IPI (or IPI)
** virtualization for 300H with "virtual-interrupt delivery"; for 310H (ICR
** high) the processor only clears bytes 2:0 of VICR_HI, no exit; any other
** offset, or those without it, a trap-like APIC-write exit whose
** qualification is the page offset (SDM 29.4.3.3, 27.2.1). */
static struct exit_decision apic_write_emulation(const struct vmx_cpu *s, unsigned off, uint64_t value) {
  const struct vmcs *v = &s->vmcs;
  bool vid = sec_ctl(v, SEC_VIRTUAL_INTR_DELIVERY);
  if (off == APIC_TPR) return tpr_virtualization(v, (unsigned)value & 0xff);
  if (off == APIC_EOI && vid) return eoi_virtualization(s);
  if (off == APIC_ICR) return icr_write(v, value, (unsigned)(value >> 56));
  if (off == APIC_ICR_HIGH) return stay(WHY_APIC_VIRTUALIZED, off);
  return leave(EXIT_REASON_APIC_WRITE, WHY_APIC_WRITE_TRAP, off, off);
}

/* SDM 29.4.2 (reads) and 29.4.3.1 (writes), with "APIC-register
** virtualization": the offsets whose accesses are virtualized. */
static bool arv_offset(unsigned off, bool write) {
  switch (off) {
  case 0x080: case 0x0b0: case 0x0d0: case 0x0e0: case 0x0f0: case 0x280: case 0x3e0:
    return true;                    /* TPR, EOI, LDR, DFR, SVR, ESR, divide configuration */
  case 0x020: case 0x030:
    return !write;                  /* APIC ID, version: read only */
  }
  if (off >= 0x2f0 && off <= 0x380) return true;     /* LVT CMCI, ICR, the LVTs, initial count */
  return !write && off >= 0x100 && off <= 0x270;     /* ISR, TMR, IRR: read only */
}

/* SDM 29.4.2, 29.4.3.1: without "use TPR shadow" no access is virtualized;
** without "APIC-register virtualization" only the TPR is, and with
** "virtual-interrupt delivery" the EOI and the ICR's low half too. */
static bool apic_virtualized(const struct vmcs *v, unsigned off, bool write) {
  if (!cpu_ctl(v, CPU_TPR_SHADOW)) return false;
  if (sec_ctl(v, SEC_APIC_REGISTER_VIRT)) return arv_offset(off, write);
  return off == APIC_TPR || (sec_ctl(v, SEC_VIRTUAL_INTR_DELIVERY) && (off == APIC_EOI || off == APIC_ICR));
}

/* SDM 29.5 with "virtualize x2APIC mode", for an access the MSR bitmap let
** through: RDMSR reads the virtual-APIC page at offset (MSR & FFH) << 4 with
** "APIC-register virtualization" (only 808H, the TPR, without it); WRMSR to
** 808H is TPR virtualization, to 80BH EOI virtualization and to 83FH
** self-IPI virtualization (these two with "virtual-interrupt delivery"),
** to 830H (the ICR) IPI virtualization or an APIC-write exit.  Any other
** access reaches the x2APIC as it would outside VMX: no exit. */
static struct exit_decision x2apic_msr(const struct vmx_cpu *s, uint32_t idx, bool write, uint64_t value) {
  const struct vmcs *v = &s->vmcs;
  bool vid = sec_ctl(v, SEC_VIRTUAL_INTR_DELIVERY);
  if (!write)
    return sec_ctl(v, SEC_APIC_REGISTER_VIRT) || idx == X2APIC_TPR ? stay(WHY_X2APIC_VIRTUALIZED, idx)
                                                                     : stay(WHY_BITMAP_CLEAR, idx);
  if (idx == X2APIC_TPR) return tpr_virtualization(v, (unsigned)value & 0xff);
  if (idx == X2APIC_EOI && vid) return eoi_virtualization(s);
  if (idx == X2APIC_SELF_IPI && vid) return stay(WHY_SELF_IPI_VIRTUALIZED, ICR_VECTOR(value));
  if (idx == X2APIC_ICR && ter_ctl(v, TER_IPI_VIRT)) return icr_write(v, value & 0xffffffffu, (unsigned)(value >> 32));
  return stay(WHY_BITMAP_CLEAR, idx);
}

/* SDM 25.1.3 RDMSR/WRMSR: without MSR bitmaps every access exits; with them,
** MSRs 0-1FFF and C0000000-C0001FFF exit per their bit, all others exit
** (bitmap layout: SDM 24.6.9). */
static struct exit_decision msr(const struct vmx_cpu *s, uint32_t idx, bool write, uint64_t value) {
  unsigned reason = write ? EXIT_REASON_MSR_WRITE : EXIT_REASON_MSR_READ;
  if (!cpu_ctl(&s->vmcs, CPU_USE_MSR_BITMAPS))
    return leave(reason, WHY_CONTROL_CLEAR, 0, CPU_USE_MSR_BITMAPS);
  unsigned base = write ? 2048 : 0, bit;
  if (idx <= 0x1fff) bit = idx;
  else if (idx >= 0xc0000000u && idx <= 0xc0001fffu) { bit = idx - 0xc0000000u; base += 1024; }
  else return leave(reason, WHY_MSR_OUT_OF_RANGE, 0, idx);
  if (s->msr_bitmap[base + (bit >> 3)] >> (bit & 7) & 1) return leave(reason, WHY_BITMAP_SET, 0, idx);
  if (idx >= X2APIC_MSR_FIRST && idx <= X2APIC_MSR_LAST && sec_ctl(&s->vmcs, SEC_VIRT_X2APIC))
    return x2apic_msr(s, idx, write, value);
  return stay(WHY_BITMAP_CLEAR, idx);
}

/* SDM 25.2 exceptions (bitmap: SDM 24.6.3): exit iff the vector's
** exception-bitmap bit is 1, except #PF (vector 14): when
** (PFEC & PFEC_MASK) == PFEC_MATCH it exits iff bit 14 is 1, otherwise iff
** bit 14 is 0.  Only vectors 0-31 index the bitmap (above
** 31 it is not an exception); an NMI (vector 2) exits iff "NMI exiting" is 1. */
static struct exit_decision exception(const struct vmcs *v, unsigned vec, uint32_t pfec) {
  if (vec > 31) return stay(WHY_EXC_BITMAP_CLEAR, vec);
  if (vec == 2) return by_control(pin_ctl(v, PIN_NMI_EXITING), PIN_NMI_EXITING, EXIT_REASON_EXCEPTION_NMI, 0);
  bool bit = vmcs_peek(v, VMCS_EXCEPTION_BITMAP) >> vec & 1;
  struct exit_decision d;
  if (vec == 14 && (pfec & vmcs_peek(v, VMCS_PAGE_FAULT_ERROR_CODE_MASK)) != vmcs_peek(v, VMCS_PAGE_FAULT_ERROR_CODE_MATCH))
    d = bit ? stay(WHY_PF_FILTERED, vec) : leave(EXIT_REASON_EXCEPTION_NMI, WHY_PF_FILTERED, 0, vec);
  else
    d = bit ? leave(EXIT_REASON_EXCEPTION_NMI, WHY_EXC_BITMAP_SET, 0, vec) : stay(WHY_EXC_BITMAP_CLEAR, vec);
  if (d.exits) {
    /* SDM 27.2.2: the exit records the exception's vector, type and error
    ** code (#DF, #TS, #NP, #SS, #GP, #PF, #AC deliver one). */
    bool has_error = vec == 8 || (vec >= 10 && vec <= 14) || vec == 17;
    d.intr_info = vmx_exception_info(vec, has_error);
    d.intr_error = has_error ? pfec : 0;
  }
  return d;
}

struct exit_decision vmx_decide_page_fault(const struct vmx_cpu *s, uint64_t linear, uint32_t pfec) {
  struct exit_decision d = exception(&s->vmcs, 14, pfec);
  if (d.exits) d.qual = linear;   /* SDM 27.2.1: a #PF's qualification is the faulting linear address */
  return d;
}

/* SDM 29.4: with "virtualize APIC accesses" a linear access to the APIC-access
** page is virtualized (29.4.2 reads, 29.4.3 writes, then APIC-write
** emulation) or causes an APIC-access VM exit, whose qualification (SDM
** 27.2.1, table 27-6) holds the page offset in 11:0 and the access type in
** 15:12 (0 linear read, 1 linear write).  Without the control the access is
** an ordinary memory access: it exits only if the MMU faults on the page. */
static struct exit_decision apic(const struct vmx_cpu *s, const struct trace_event *ev) {
  const struct vmcs *v = &s->vmcs;
  bool write = ev->aux & APIC_AUX_WRITE;
  unsigned off = (unsigned)ev->a & 0xfff;
  if (!sec_ctl(v, SEC_APIC_ACCESS)) return stay(WHY_APIC_MMIO, ev->a);
  if (!apic_virtualized(v, off, write))
    return leave(EXIT_REASON_APIC_ACCESS, WHY_APIC_ACCESS_PAGE, off | (uint64_t)write << 12, ev->a);
  return write ? apic_write_emulation(s, off, ev->b) : stay(WHY_APIC_VIRTUALIZED, off);
}

/* SDM 25.1.3 "RDTSCP": exits iff "RDTSC exiting" and "enable RDTSCP" are
** both 1; with "enable RDTSCP" = 0 RDTSCP is #UD and does not exit.  SDM
** 25.1.3 "INVPCID": likewise with "INVLPG exiting" and "enable INVPCID". */
static struct exit_decision both(const struct vmcs *v, uint32_t cpu_bit, uint32_t sec_bit, unsigned reason) {
  if (!sec_ctl(v, sec_bit)) return stay(WHY_UD, sec_bit);
  if (!cpu_ctl(v, cpu_bit)) return stay(WHY_CONTROL_CLEAR, cpu_bit);
  return leave(reason, WHY_BOTH_CONTROLS, 0, cpu_bit);
}

bool vmx_interruptible(const struct vmx_cpu *s) {
  return s->rflags_if && !(s->interruptibility & (INTR_BLOCK_STI | INTR_BLOCK_MOVSS));
}

bool vmx_nmi_unblocked(const struct vmx_cpu *s) {
  return !(s->interruptibility & (INTR_BLOCK_NMI | INTR_BLOCK_MOVSS));
}

/* SDM 26.6.6: NMI-window exiting has effect only with "virtual NMIs" (SDM
** 26.2.1.1 refuses the one without the other); SDM 26.6.5 for interrupts. */
struct exit_decision vmx_decide_window(const struct vmx_cpu *s) {
  const struct vmcs *v = &s->vmcs;
  bool nmi = cpu_ctl(v, CPU_NMI_WINDOW_EXITING) && pin_ctl(v, PIN_VIRTUAL_NMIS);
  if (nmi && vmx_nmi_unblocked(s)) return leave(EXIT_REASON_NMI_WINDOW, WHY_WINDOW_OPEN, 0, CPU_NMI_WINDOW_EXITING);
  if (cpu_ctl(v, CPU_INTR_WINDOW_EXITING)) {
    if (vmx_interruptible(s)) return leave(EXIT_REASON_INTERRUPT_WINDOW, WHY_WINDOW_OPEN, 0, CPU_INTR_WINDOW_EXITING);
    return stay(WHY_WINDOW_BLOCKED, CPU_INTR_WINDOW_EXITING);
  }
  return nmi ? stay(WHY_WINDOW_BLOCKED, CPU_NMI_WINDOW_EXITING) : stay(WHY_NO_WINDOW, 0);
}

/* An interrupt for the vCPU arrives while it runs in VMX non-root operation
** (EV_VIRQ with a source, models/event.h): it reaches the processor as a
** host interrupt, which exits iff "external-interrupt exiting" is 1 (SDM
** 25.2).  One interrupt the hypervisor already holds (VIRQ_SRC_HOST) has no
** arrival of its own.  With "process posted interrupts" a device's
** interrupt or an IPI is posted: the hypervisor (or the sender's IPI
** virtualization) records it in the posted-interrupt descriptor and the
** notification vector makes the processor move it into VIRR without an
** exit (SDM 29.6); a halted vCPU is woken by the host (KVM's wakeup vector),
** and its next VM entry delivers it, no exit of the guest either.  The
** VMX-preemption timer (SDM 25.5.1) refines the timer's arm. */
static struct exit_decision host_interrupt(const struct vmx_cpu *s) {
  return by_control(pin_ctl(&s->vmcs, PIN_EXT_INTR_EXITING), PIN_EXT_INTR_EXITING, EXIT_REASON_EXTERNAL_INTERRUPT, 0);
}

/* The vCPU's own timer expires.  With "activate VMX-preemption timer" = 1
** the hypervisor keeps the guest's deadline in the VMX-preemption timer,
** which counts down in VMX non-root operation at the TSC's rate divided by
** 2^IA32_VMX_MISC[4:0] and exits with reason 52 when it reaches 0 (SDM
** 25.5.1; qualification 0, SDM 27.2.1).  Otherwise the deadline is a host
** timer, whose expiry is a host interrupt on the vCPU's CPU. */
static struct exit_decision timer_expiry(const struct vmx_cpu *s) {
  if (pin_ctl(&s->vmcs, PIN_PREEMPTION_TIMER))
    return leave(EXIT_REASON_PREEMPTION_TIMER, WHY_PREEMPTION_TIMER, 0, PIN_PREEMPTION_TIMER);
  return host_interrupt(s);
}

struct exit_decision vmx_decide_arrival(const struct vmx_cpu *s, const struct trace_event *ev) {
  if (ev->type != EV_VIRQ || ev->aux == VIRQ_SRC_HOST) return stay(WHY_HELD_BY_HOST, 0);
  if (ev->aux == VIRQ_SRC_TIMER) return timer_expiry(s);
  if (pin_ctl(&s->vmcs, PIN_POSTED_INTR)) return stay(WHY_POSTED, ev->a);
  return host_interrupt(s);
}

/* SDM 25.1.3 "PAUSE", at CPL 0 (a guest's spin loops run in its kernel;
** above CPL 0 PAUSE-loop exiting is ignored): "PAUSE exiting" = 1 exits at
** every PAUSE and PAUSE-loop exiting is then ignored.  Otherwise, with
** "PAUSE-loop exiting" = 1, a PAUSE more than PLE_Gap TSC cycles after the
** previous one (or the first after VM entry) is the first of a loop, and a
** PAUSE more than PLE_Window cycles after the first of its loop exits. */
struct exit_decision vmx_decide_pause(const struct vmx_cpu *s, uint64_t count, uint64_t gap) {
  const struct vmcs *v = &s->vmcs;
  if (cpu_ctl(v, CPU_PAUSE_EXITING)) return leave(EXIT_REASON_PAUSE_INSTRUCTION, WHY_CONTROL_SET, 0, CPU_PAUSE_EXITING);
  if (!sec_ctl(v, SEC_PAUSE_LOOP_EXITING)) return stay(WHY_CONTROL_CLEAR, CPU_PAUSE_EXITING);
  if (gap > vmcs_peek(v, VMCS_PLE_GAP)) return stay(WHY_PLE_GAP, gap);
  uint64_t window = vmcs_peek(v, VMCS_PLE_WINDOW);
  /* PAUSE i runs i * gap cycles after the first: the first past the window
  ** is i = window / gap + 1 (a spin with no time between its PAUSEs never gets there). */
  if (gap == 0 || window / gap + 1 >= count)
    return stay(WHY_PLE_WITHIN, count > 1 && count - 1 <= UINT64_MAX / (gap ? gap : 1) ? (count - 1) * gap : 0);
  return leave(EXIT_REASON_PAUSE_INSTRUCTION, WHY_PLE_WINDOW, 0, window / gap + 1);
}

bool vmx_virtual_intr_deliverable(const struct vmx_cpu *s) {
  const struct vmcs *v = &s->vmcs;
  if (!sec_ctl(v, SEC_VIRTUAL_INTR_DELIVERY) || (vapic_rvi(s) >> 4) <= (vapic_vppr(s) >> 4)) return false;
  return vmx_interruptible(s) && !cpu_ctl(v, CPU_INTR_WINDOW_EXITING);
}

struct exit_decision vmx_decide(const struct vmx_cpu *s, const struct trace_event *ev) {
  const struct vmcs *v = &s->vmcs;
  switch (ev->type) {
  case EV_CR_WRITE: return mov_to_cr(v, ev);
  case EV_CR_READ:  return mov_from_cr(v, ev);
  case EV_CLTS:     return clts(v);
  case EV_LMSW:     return lmsw(v, (uint16_t)ev->a, ev->aux & 1);
  case EV_DR_WRITE: return mov_dr(v, ev, false);
  case EV_DR_READ:  return mov_dr(v, ev, true);
  /* SDM 25.1.2: CPUID, INVD, GETSEC, XSETBV and VMCALL exit unconditionally. */
  case EV_CPUID:    return leave(EXIT_REASON_CPUID, WHY_ALWAYS, 0, 0);
  case EV_VMCALL:   return leave(EXIT_REASON_VMCALL, WHY_ALWAYS, 0, 0);
  case EV_XSETBV:   return leave(EXIT_REASON_XSETBV, WHY_ALWAYS, 0, 0);
  /* SDM 25.1.2: so do the VMX instructions a nested guest executes (VMCS
  ** shadowing, which lets VMREAD and VMWRITE run, is not modelled). */
  case EV_VMX:      return exit_reason_is_vmx_instruction(ev->a) ? leave((unsigned)ev->a, WHY_ALWAYS, 0, 0)
                                                         : stay(WHY_NOT_AN_INSTRUCTION, 0);
  /* SDM 25.4.2: a task switch in VMX non-root operation always exits. */
  case EV_TASK_SWITCH: return leave(EXIT_REASON_TASK_SWITCH, WHY_ALWAYS, qual_task_switch((uint16_t)ev->a, ev->aux), 0);
  /* SDM 25.2: a triple fault always exits. */
  case EV_TRIPLE_FAULT: return leave(EXIT_REASON_TRIPLE_FAULT, WHY_ALWAYS, 0, 0);
  case EV_RDTSCP:  return both(v, CPU_RDTSC_EXITING, SEC_ENABLE_RDTSCP, EXIT_REASON_RDTSCP);
  case EV_INVPCID: return both(v, CPU_INVLPG_EXITING, SEC_ENABLE_INVPCID, EXIT_REASON_INVPCID);
  case EV_MWAIT:   return by_control(cpu_ctl(v, CPU_MWAIT_EXITING), CPU_MWAIT_EXITING, EXIT_REASON_MWAIT_INSTRUCTION, 0);
  case EV_MONITOR: return by_control(cpu_ctl(v, CPU_MONITOR_EXITING), CPU_MONITOR_EXITING, EXIT_REASON_MONITOR_INSTRUCTION, 0);
  /* SDM 25.1.3: conditional on one processor-based control each. */
  case EV_HLT:    return by_control(cpu_ctl(v, CPU_HLT_EXITING), CPU_HLT_EXITING, EXIT_REASON_HLT, 0);
  case EV_INVLPG: return by_control(cpu_ctl(v, CPU_INVLPG_EXITING), CPU_INVLPG_EXITING, EXIT_REASON_INVLPG, ev->a);
  case EV_RDTSC:  return by_control(cpu_ctl(v, CPU_RDTSC_EXITING), CPU_RDTSC_EXITING, EXIT_REASON_RDTSC, 0);
  case EV_RDPMC:  return by_control(cpu_ctl(v, CPU_RDPMC_EXITING), CPU_RDPMC_EXITING, EXIT_REASON_RDPMC, 0);
  case EV_PAUSE:  return vmx_decide_pause(s, ev->a ? ev->a : 1, ev->b);
  case EV_WBINVD: return by_control(sec_ctl(v, SEC_WBINVD_EXITING), SEC_WBINVD_EXITING, EXIT_REASON_WBINVD, 0);
  case EV_IO:     return io(s, ev);
  case EV_RDMSR:  return msr(s, (uint32_t)ev->a, false, 0);
  case EV_WRMSR:  return msr(s, (uint32_t)ev->a, true, ev->b);
  case EV_EXC:    return exception(v, (unsigned)ev->a, (uint32_t)ev->b);
  case EV_APIC:   return apic(s, ev);
  /* SDM 25.2: an external interrupt exits iff "external-interrupt exiting" is 1. */
  case EV_INTR:   return by_control(pin_ctl(v, PIN_EXT_INTR_EXITING), PIN_EXT_INTR_EXITING, EXIT_REASON_EXTERNAL_INTERRUPT, 0);
  default:        return stay(WHY_NOT_AN_INSTRUCTION, 0);
  }
}
