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

/* SDM 25.1.3 "MOV to CR8": exits iff CR8-load exiting is 1.  With "use TPR
** shadow" and no exit, the write goes to the virtual TPR (SDM 29.3) and a new
** TPR below TPR_THRESHOLD[3:0] traps afterwards with TPR_BELOW_THRESHOLD
** (SDM 29.1.2). */
static struct exit_decision mov_to_cr8(const struct vmcs *v, uint64_t val, unsigned gpr) {
  if (cpu_ctl(v, CPU_CR8_LOAD_EXITING))
    return leave(EXIT_REASON_CR_ACCESS, WHY_CONTROL_SET, qual_cr(8, CR_MOV_TO, gpr), CPU_CR8_LOAD_EXITING);
  if (cpu_ctl(v, CPU_TPR_SHADOW) && (val & 0xf) < (vmcs_peek(v, VMCS_TPR_THRESHOLD) & 0xf))
    return leave(EXIT_REASON_TPR_BELOW_THRESHOLD, WHY_TPR_BELOW_THRESHOLD, 0, val & 0xf);
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

/* SDM 25.1.3 RDMSR/WRMSR: without MSR bitmaps every access exits; with them,
** MSRs 0-1FFF and C0000000-C0001FFF exit per their bit, all others exit
** (bitmap layout: SDM 24.6.9). */
static struct exit_decision msr(const struct vmx_cpu *s, uint32_t idx, bool write) {
  unsigned reason = write ? EXIT_REASON_MSR_WRITE : EXIT_REASON_MSR_READ;
  if (!cpu_ctl(&s->vmcs, CPU_USE_MSR_BITMAPS))
    return leave(reason, WHY_CONTROL_CLEAR, 0, CPU_USE_MSR_BITMAPS);
  unsigned base = write ? 2048 : 0, bit;
  if (idx <= 0x1fff) bit = idx;
  else if (idx >= 0xc0000000u && idx <= 0xc0001fffu) { bit = idx - 0xc0000000u; base += 1024; }
  else return leave(reason, WHY_MSR_OUT_OF_RANGE, 0, idx);
  if (s->msr_bitmap[base + (bit >> 3)] >> (bit & 7) & 1) return leave(reason, WHY_BITMAP_SET, 0, idx);
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
** page causes an APIC-access VM exit (with "use TPR shadow", reads and writes
** of the TPR at 0x80 are virtualized instead); the qualification (SDM 27.2.1,
** table 27-6) holds the page offset in 11:0 and the access type in 15:12 (0
** linear read, 1 linear write).  Without the control the access is an
** ordinary memory access: it exits only if the MMU faults on the page. */
static struct exit_decision apic(const struct vmcs *v, const struct trace_event *ev) {
  bool write = ev->aux & APIC_AUX_WRITE;
  if (!sec_ctl(v, SEC_APIC_ACCESS)) return stay(WHY_APIC_MMIO, ev->a);
  if (ev->a == 0x80 && cpu_ctl(v, CPU_TPR_SHADOW)) return stay(WHY_APIC_MMIO, ev->a);
  return leave(EXIT_REASON_APIC_ACCESS, WHY_APIC_ACCESS_PAGE, (ev->a & 0xfff) | (uint64_t)write << 12, ev->a);
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
** arrival of its own.  Posted interrupts (SDM 29.6) and IPI virtualization
** refine this per source. */
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
  case EV_RDMSR:  return msr(s, (uint32_t)ev->a, false);
  case EV_WRMSR:  return msr(s, (uint32_t)ev->a, true);
  case EV_EXC:    return exception(v, (unsigned)ev->a, (uint32_t)ev->b);
  case EV_APIC:   return apic(v, ev);
  /* SDM 25.2: an external interrupt exits iff "external-interrupt exiting" is 1. */
  case EV_INTR:   return by_control(pin_ctl(v, PIN_EXT_INTR_EXITING), PIN_EXT_INTR_EXITING, EXIT_REASON_EXTERNAL_INTERRUPT, 0);
  default:        return stay(WHY_NOT_AN_INSTRUCTION, 0);
  }
}
