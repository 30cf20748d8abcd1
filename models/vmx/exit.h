/* Exit decisions: does a guest action exit to the hypervisor, with which reason
** and qualification?  Pure functions of the processor's VMX state and the
** operand (SDM chapter 25, "VMX Non-Root Operation"; docs/sources.md).  Nothing here
** charges cycles or changes state; the engine and the handlers do that.
*/
#ifndef VMXSIM_EXIT_H
#define VMXSIM_EXIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cpu.h"
#include "models/event.h"

/* Which rule decided: lets the REPL and tests say *why*. */
enum exit_why {
  WHY_NOT_AN_INSTRUCTION,  /* run, mark, syscall, touch...: only the MMU can exit */
  WHY_ALWAYS,              /* CPUID, VMCALL, INVD, XSETBV: unconditional (SDM 25.1.2) */
  WHY_CONTROL_SET,         /* detail = control bit that is set */
  WHY_CONTROL_CLEAR,       /* detail = control bit that is clear */
  WHY_CR_OWNED_DIFFERS,    /* detail = host-owned bits where operand != read shadow */
  WHY_CR_OWNED_SAME,       /* no owned bit differs from the shadow */
  WHY_CR_READ_NEVER,       /* MOV from CR0/CR4 never exits; shadowed read */
  WHY_CR3_TARGET_HIT,      /* detail = index of the matching target value */
  WHY_CR3_NO_TARGET,       /* detail = CR3_TARGET_COUNT searched */
  WHY_CLTS_TS_OWNED_SET,   /* mask.TS = 1 and shadow.TS = 1 */
  WHY_CLTS_TS_OWNED_CLEAR, /* mask.TS = 1, shadow.TS = 0: no exit, TS unchanged */
  WHY_CLTS_TS_GUEST,       /* mask.TS = 0: clears TS */
  WHY_LMSW_SETS_OWNED_PE,  /* LMSW sets an owned PE that the shadow has clear */
  WHY_BITMAP_SET,          /* I/O or MSR bitmap bit set */
  WHY_BITMAP_CLEAR,
  WHY_MSR_OUT_OF_RANGE,    /* MSR outside the bitmap ranges: always exits */
  WHY_EXC_BITMAP_SET,      /* detail = vector */
  WHY_EXC_BITMAP_CLEAR,
  WHY_PF_FILTERED,         /* #PF: PFEC mask/match inverted the bitmap bit */
  WHY_TPR_BELOW_THRESHOLD, /* MOV to CR8 with TPR shadow: trap after execution */
  WHY_APIC_ACCESS_PAGE,    /* an access to the APIC-access page with "virtualize APIC accesses" */
  WHY_APIC_MMIO,           /* an APIC access without it: an ordinary access the MMU decides */
  WHY_WINDOW_OPEN,         /* detail = the window-exiting control; the guest can take the event */
  WHY_WINDOW_BLOCKED,      /* detail = the window-exiting control; the guest still blocks the event */
  WHY_NO_WINDOW,           /* neither window-exiting control is set */
  WHY_BOTH_CONTROLS,       /* detail = the second control (RDTSCP, INVPCID): both set, exits */
  WHY_UD,                  /* detail = the secondary "enable" control that is clear: the instruction is #UD */
  WHY_HELD_BY_HOST,        /* an interrupt the hypervisor already holds: no arrival of its own */
  WHY_PREEMPTION_TIMER,    /* the vCPU's timer expired in the VMX-preemption timer (detail = PIN_PREEMPTION_TIMER) */
  WHY_PLE_WINDOW,          /* detail = index in the spin of the PAUSE that ran past PLE_Window */
  WHY_PLE_GAP,             /* detail = the spin's gap: above PLE_Gap, every PAUSE starts a new loop */
  WHY_PLE_WITHIN,          /* detail = the spin's length: not past PLE_Window */
  WHY_VCPU_BLOCKED,        /* the vCPU is blocked in the host (HLT exited), not in VMX non-root operation */
  /* APIC virtualization (SDM chapter 29) */
  WHY_APIC_VIRTUALIZED,    /* detail = offset: the access to the APIC-access page is virtualized (29.4.2, 29.4.3.1) */
  WHY_APIC_WRITE_TRAP,     /* detail = offset: a virtualized write APIC-write emulation does not complete (29.4.3.2) */
  WHY_TPR_VIRTUALIZED,     /* detail = new VTPR: TPR virtualization without a trap (29.1.2) */
  WHY_EOI_VIRTUALIZED,     /* detail = vector: EOI virtualization, its EOI-exit-bitmap bit clear (29.1.4) */
  WHY_EOI_EXIT_BITMAP,     /* detail = vector: its EOI-exit-bitmap bit is set (29.1.4) */
  WHY_SELF_IPI_VIRTUALIZED,/* detail = vector: self-IPI virtualization (29.1.5) */
  WHY_IPI_VIRTUALIZED,     /* detail = destination: IPI virtualization sends it without an exit */
  WHY_X2APIC_VIRTUALIZED,  /* detail = MSR: an x2APIC MSR read from the virtual-APIC page (29.5) */
  WHY_POSTED,              /* detail = vector: posted-interrupt processing, no exit (29.6) */
};

struct exit_decision {
  bool     exits;
  uint16_t reason;    /* enum exit_reason, valid when exits */
  uint8_t  why;       /* enum exit_why */
  uint64_t qual;      /* exit qualification (SDM 27.2.1) */
  uint32_t intr_info; /* VM-exit interruption information of an exception exit (SDM 27.2.2), else 0 */
  uint32_t intr_error;/* its error code, when intr_info has bit 11 */
  uint64_t detail;    /* see enum exit_why */
};

/* The information the processor records for an exit it decided (SDM 27.2). */
static inline struct vmx_exit_info vmx_exit_info_of(const struct exit_decision *d) {
  return (struct vmx_exit_info){ .reason = d->reason, .qual = d->qual, .intr_info = d->intr_info,
                                 .intr_error = d->intr_error };
}

/* The decision for one trace event on a vCPU whose VMX state is s. */
struct exit_decision vmx_decide(const struct vmx_cpu *s, const struct trace_event *ev);
/* A page fault the processor raises at linear with error code pfec (SDM 25.2:
** the exception bitmap and the PFEC mask/match rule decide). */
struct exit_decision vmx_decide_page_fault(const struct vmx_cpu *s, uint64_t linear, uint32_t pfec);

/* Interrupt and NMI windows (SDM 26.6.5 "Interrupt-Window Exiting and
** Virtual-Interrupt Delivery", 26.6.6 "NMI-Window Exiting"; the controls:
** SDM 24.6.2 table 24-6).  At an instruction boundary, NMI-window exiting
** (which needs "virtual NMIs") exits when no NMI and no MOV SS blocks NMIs;
** interrupt-window exiting exits when RFLAGS.IF = 1 and no STI or MOV SS
** blocks interrupts.  The NMI window comes first, as an NMI has priority
** over a maskable interrupt (SDM 6.9 of Vol. 3A). */
struct exit_decision vmx_decide_window(const struct vmx_cpu *s);
/* An interrupt from outside the vCPU arriving while it runs (EV_VIRQ with a
** source): whether the host interrupt that carries it exits. */
struct exit_decision vmx_decide_arrival(const struct vmx_cpu *s, const struct trace_event *ev);
/* A spin of count PAUSEs at CPL 0, gap TSC cycles from one to the next
** (EV_PAUSE, models/event.h), run from the start: "PAUSE exiting" exits at
** the first; "PAUSE-loop exiting" (SDM 25.1.3) at the first PAUSE more than
** PLE_Window cycles after the first of its loop, a loop's PAUSEs being at
** most PLE_Gap cycles apart.  A PLE exit (WHY_PLE_WINDOW) has in detail the
** index of the PAUSE that exits (the spin's rest runs again after the exit's
** VM entry); with "PAUSE exiting" the first PAUSE exits. */
struct exit_decision vmx_decide_pause(const struct vmx_cpu *s, uint64_t count, uint64_t gap);
/* Evaluation and delivery of pending virtual interrupts (SDM 29.2.1,
** 29.2.2): with "virtual-interrupt delivery", a virtual interrupt is
** recognized when RVI[7:4] > VPPR[7:4] and delivered at an instruction
** boundary where RFLAGS.IF = 1, nothing blocks by STI or MOV SS and
** "interrupt-window exiting" is 0 -- without any VM exit. */
bool vmx_virtual_intr_deliverable(const struct vmx_cpu *s);
/* Could the guest take a maskable interrupt, an NMI, at this boundary? */
bool vmx_interruptible(const struct vmx_cpu *s);
bool vmx_nmi_unblocked(const struct vmx_cpu *s);

/* Exit qualification of a task switch (SDM 27.2.1, table 27-2): bits 15:0
** the new TSS selector, 31:30 the source (0 CALL, 1 IRET, 2 JMP, 3 task gate in the IDT). */
static inline uint64_t qual_task_switch(uint16_t selector, unsigned source) {
  return selector | (uint64_t)(source & 3u) << 30;
}

/* One sentence explaining d, e.g. "exits: CR4 bit PGE is host-owned and differs
** from the read shadow".  Writes into buf (n bytes) and returns it. */
const char *vmx_explain(const struct exit_decision *d, const struct trace_event *ev,
                        char *buf, size_t n);

/* Exit-qualification layouts (SDM 27.2.1 tables 27-3 and 27-4):
**   CR access: 3:0 CR number | 5:4 type (0 to CR, 1 from CR, 2 CLTS, 3 LMSW)
**              | 6 LMSW operand (0 reg, 1 mem) | 11:8 GPR | 31:16 LMSW source
**   MOV DR:    2:0 DR number | 4 direction (0 to DR, 1 from DR) | 11:8 GPR
*/
enum cr_access_type { CR_MOV_TO = 0, CR_MOV_FROM = 1, CR_CLTS = 2, CR_LMSW = 3 };
static inline uint64_t qual_cr(unsigned cr, unsigned type, unsigned gpr) {
  return (cr & 0xfu) | (type & 3u) << 4 | (gpr & 0xfu) << 8;
}
static inline uint64_t qual_lmsw(uint16_t src, bool mem) {
  return (uint64_t)CR_LMSW << 4 | (uint64_t)mem << 6 | (uint64_t)src << 16;
}
static inline uint64_t qual_dr(unsigned dr, bool from, unsigned gpr) {
  return (dr & 7u) | (uint64_t)from << 4 | (gpr & 0xfu) << 8;
}

/* ICR values (SDM 10.6.1 of Vol. 3A, figure 10-12): the low doubleword's
** fields the virtualizations test, and the reserved bits with delivery
** status (31:20, 17:16, 13, 12) that must be 0. */
#define ICR_VECTOR(icr)      ((unsigned)(icr) & 0xffu)
#define ICR_DELIVERY_MODE(icr) (((unsigned)(icr) >> 8) & 7u)
#define ICR_DEST_LOGICAL     (1u << 11)
#define ICR_LEVEL            (1u << 15)
#define ICR_SHORTHAND(icr)   (((unsigned)(icr) >> 18) & 3u)
#define ICR_SHORTHAND_SELF   1u
#define ICR_MUST_BE_ZERO     0xfff33000u

/* Names of architectural CR0/CR4 bits, for explanations ("PGE"); NULL if reserved. */
const char *cr0_bit_name(unsigned bit);
const char *cr4_bit_name(unsigned bit);


#endif
