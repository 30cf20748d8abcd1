/* One logical processor in VMX non-root operation: the VMCS it runs, the
** bitmaps the VMCS points to, and the registers that VM exits and entries
** change by themselves (DR7, IA32_DEBUGCTL).  This file is what the processor
** does on its own -- at VM exit (SDM 27.2, 27.3.1, 27.5.1), at VM entry (SDM
** 26.2.1.1 checks, 26.3.2.1 loads), and when a guest instruction runs without
** an exit (SDM 25.3) -- never what a hypervisor does (models/hv/).
**
** SDM section numbers follow the edition named in docs/sources.md.
*/
#ifndef VMXSIM_VMX_CPU_H
#define VMXSIM_VMX_CPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "vmcs.h"
#include "models/x86.h"
#include "models/event.h"

struct vmx_cpu {
  struct vmcs vmcs;
  uint8_t io_bitmap[8192];   /* bitmaps A (ports 0-7FFF) and B (8000-FFFF); 1 = exit */
  uint8_t msr_bitmap[4096];  /* read low, read high, write low, write high; 1 = exit */
  uint64_t dr[8];            /* the physical debug registers (DR4/5 unused: aliases) */
  uint64_t debugctl;         /* the physical IA32_DEBUGCTL */
  uint64_t cr8;              /* the TPR as the guest's last MOV to CR8 left it */
  bool rflags_if;            /* the guest's RFLAGS.IF: maskable interrupts enabled */
  uint8_t interruptibility;  /* INTR_BLOCK_* bits: the guest's interruptibility state */
  /* The virtual-APIC page's interrupt request and in-service registers (VIRR,
  ** VISR: SDM 29.1.1), one bit per vector; with virtual-interrupt delivery
  ** the processor delivers from them (RVI and SVI: GUEST_INTR_STATUS). */
  uint64_t virr[4], visr[4];
};

/* Guest interrupt status (SDM 24.4.2): RVI in bits 7:0, SVI in bits 15:8. */
static inline unsigned vapic_rvi(const struct vmx_cpu *c) { return (unsigned)vmcs_peek(&c->vmcs, VMCS_GUEST_INTR_STATUS) & 0xff; }
static inline unsigned vapic_svi(const struct vmx_cpu *c) { return (unsigned)(vmcs_peek(&c->vmcs, VMCS_GUEST_INTR_STATUS) >> 8) & 0xff; }
/* The virtual TPR (SDM 29.1.2): the guest's last MOV to CR8, in bits 7:4. */
static inline unsigned vapic_vtpr(const struct vmx_cpu *c) { return (unsigned)(c->cr8 & 0xf) << 4; }
/* PPR virtualization (SDM 29.1.3): VPPR is VTPR when VTPR[7:4] >= SVI[7:4],
** else SVI & F0H. */
static inline unsigned vapic_vppr(const struct vmx_cpu *c) {
  unsigned tpr = vapic_vtpr(c), svi = vapic_svi(c);
  return (tpr >> 4) >= (svi >> 4) ? tpr : svi & 0xf0;
}
/* The highest vector set in a 256-bit register, 0 when none is. */
static inline unsigned vapic_highest(const uint64_t r[4]) {
  for (int i = 3; i >= 0; i--)
    if (r[i]) return (unsigned)i * 64 + 63 - (unsigned)__builtin_clzll(r[i]);
  return 0;
}

/* Interruptibility state (SDM 24.4.2, table 24-3): what blocks the delivery
** of an interrupt or NMI at the current instruction boundary. */
#define INTR_BLOCK_STI   (1u << 0)   /* the instruction after an STI that set IF */
#define INTR_BLOCK_MOVSS (1u << 1)   /* the instruction after MOV SS or POP SS */
#define INTR_BLOCK_NMI   (1u << 3)   /* from an NMI's delivery to the next IRET */

/* VM-entry interruption types (SDM 24.8.3, table 24-14, bits 10:8). */
#define INTR_TYPE_EXTERNAL  0u
#define INTR_TYPE_NMI       2u
#define INTR_TYPE_HW_EXC    3u
#define INTR_INFO_VALID     (1u << 31)

/* What the processor supports: the allowed-1 settings of its VMX capability
** MSRs (SDM appendix A.3) and the number of CR3-target values (A.6).  A CPU
** profile says which of the controls vmxsim uses its CPU has. */
struct vmx_caps {
  uint32_t pin_allowed1;     /* IA32_VMX_PINBASED_CTLS[63:32] */
  uint32_t cpu_allowed1;     /* IA32_VMX_PROCBASED_CTLS[63:32] */
  uint32_t sec_allowed1;     /* IA32_VMX_PROCBASED_CTLS2[63:32]; 0 without secondary controls */
  uint64_t ter_allowed1;     /* IA32_VMX_PROCBASED_CTLS3 (every bit an allowed-1 setting, SDM A.3.4); 0 without tertiary controls */
  uint64_t cr3_targets;      /* IA32_VMX_MISC[24:16] */
};

/* What an instruction asks of the paging structures and TLBs once it has run
** (natively, or emulated by the hypervisor): the MMU model carries it out. */
enum mmu_request {
  MMU_NONE,
  MMU_CR3_SWITCH,            /* MOV to CR3: new address space, non-global TLB flush */
  MMU_INVLPG,                /* INVLPG: one linear address */
  MMU_FLUSH_ALL,             /* CR4.PGE/PCIDE toggled: every TLB entry, global ones too */
};

/* The architectural effect of a guest instruction that did not exit. */
struct vmx_native {
  enum mmu_request mmu;      /* follow-up for the MMU model */
  uint64_t mmu_arg;          /* the CR3 value loaded, or the INVLPG address */
  int dr;                    /* MOV DR: the register reached, -1 when it faulted */
  bool halted;               /* HLT: the processor waits for an interrupt */
  bool ipi;                  /* IPI virtualization sent an IPI to ipi_dest without an exit */
  unsigned ipi_dest;         /* its destination APIC ID (the vCPU number) */
};

/* The information a VM exit records in the VMCS (SDM 27.2.1, 27.2.2). */
struct vmx_exit_info {
  uint32_t reason;           /* basic exit reason */
  uint64_t qual;             /* exit qualification: e.g. the faulting linear address of a #PF */
  uint32_t intr_info;        /* VM-exit interruption information (0: not valid) */
  uint32_t intr_error;       /* VM-exit interruption error code, when intr_info says so */
  uint64_t gla;              /* guest linear address (EPT violations with a valid linear address) */
  uint64_t gpa;              /* guest-physical address (EPT violations and misconfigurations) */
};

/* Interruption information of a hardware exception (SDM 24.9.2, table 24-15):
** vector 7:0, type 10:8 = 3, error code valid 11, valid 31. */
static inline uint32_t vmx_exception_info(unsigned vector, bool has_error) {
  return (vector & 0xffu) | 3u << 8 | (has_error ? 1u << 11 : 0) | 1u << 31;
}

/* EPT-violation exit qualification bits (SDM 27.2.1, table 27-7). */
#define EPT_QUAL_READ        (1u << 0)   /* the access was a data read */
#define EPT_QUAL_WRITE       (1u << 1)   /* a data write */
#define EPT_QUAL_FETCH       (1u << 2)   /* an instruction fetch */
#define EPT_QUAL_GLA_VALID   (1u << 7)   /* the guest linear-address field is valid */
#define EPT_QUAL_GLA_FINAL   (1u << 8)   /* the access was to the translation of the linear address,
                                         ** not to a guest paging-structure entry */

/* VM exit (SDM 27.2, 27.3.1, 27.5.1): records the exit information, saves
** DR7 and IA32_DEBUGCTL to the guest-state area when "save debug controls" is
** 1, then loads DR7 = 0x400 and IA32_DEBUGCTL = 0. */
void vmx_cpu_exit(struct vmx_cpu *c, const struct vmx_exit_info *x);
/* VM entry (SDM 26.3.2.1): loads DR7 and IA32_DEBUGCTL from the guest-state
** area when "load debug controls" is 1; then delivers an injected interrupt
** or NMI (vmx_cpu_deliver). */
void vmx_cpu_entry(struct vmx_cpu *c);
/* Event delivery (SDM 26.5.1, 6.8.1 and 6.7.1 of Vol. 3A): an external
** interrupt or NMI the VM-entry interruption-information field holds is
** delivered through the guest's IDT, whose interrupt gate clears RFLAGS.IF;
** an NMI also blocks further NMIs until the next IRET, and no blocking by STI
** or MOV SS is left (SDM 26.6.1).  The valid bit is then
** cleared.  Other types (a hardware exception the hypervisor reflects) are
** left as they are. */
void vmx_cpu_deliver(struct vmx_cpu *c);

/* Posted-interrupt processing (SDM 29.6): the notification of an interrupt
** for vector reaches the logical processor in VMX non-root operation; the
** posted-interrupt requests move into VIRR, RVI rises to the highest, and
** pending virtual interrupts are evaluated and delivered (29.2).  The same
** when the hypervisor records an interrupt in VIRR and RVI before a VM entry
** (vmx_cpu_request_virtual: no delivery until the entry). */
void vmx_cpu_post(struct vmx_cpu *c, unsigned vector);
void vmx_cpu_request_virtual(struct vmx_cpu *c, unsigned vector);
/* Virtual-interrupt delivery (SDM 29.2.2): when vmx_virtual_intr_deliverable
** says so, the vector RVI names moves from VIRR to VISR, SVI takes it, RVI the
** next highest request, and the guest takes it through its IDT (IF = 0). */
void vmx_cpu_deliver_virtual(struct vmx_cpu *c);
/* EOI virtualization's effect on the virtual-APIC state (SDM 29.1.4): SVI's
** vector leaves VISR, SVI takes the next highest.  Returns the vector; the
** EOI-exit bitmap decides whether an exit follows (exit.c). */
unsigned vmx_cpu_eoi_virtual(struct vmx_cpu *c);

/* VM-entry checks on the control fields (SDM 26.2.1.1): every control set to 1
** must be allowed to be 1 by the capability MSRs (secondary controls only
** when "activate secondary controls" is 1), and CR3_TARGET_COUNT must not
** exceed the number of CR3-target values.  Returns 0, or the VM-instruction
** error number (SDM 30.4; 7: invalid control field) with a message naming the control. */
unsigned vmx_entry_check(const struct vmx_cpu *c, const struct vmx_caps *caps, char *msg, size_t n);

/* Runs a guest instruction that did not exit (SDM 25.3): masked CR0/CR4 bits
** keep their value, MOV to CR3 loads the operand, MOV DR reaches the physical
** register, WRMSR IA32_DEBUGCTL loads it.  The MMU follow-up goes to r. */
void vmx_execute(struct vmx_cpu *c, const struct trace_event *ev, struct vmx_native *r);

/* --- What the guest sees when the instruction does not exit (SDM 25.3) --- */

/* MOV to CR0/CR4 without exit: owned bits keep their value, the rest take the operand. */
static inline uint64_t cr_write_no_exit(uint64_t cr, uint64_t mask, uint64_t val) {
  return (cr & mask) | (val & ~mask);
}
/* MOV from CR0/CR4 (and SMSW): owned bits come from the read shadow. */
static inline uint64_t cr_read_value(uint64_t cr, uint64_t mask, uint64_t shadow) {
  return (cr & ~mask) | (shadow & mask);
}
uint64_t clts_no_exit(uint64_t cr0, uint64_t mask);
uint64_t lmsw_no_exit(uint64_t cr0, uint64_t mask, uint16_t src);

/* SDM Vol. 2B "MOV -- Move to/from Debug Registers" and Vol. 3B 17.2.2: with
** CR4.DE = 1 a reference to DR4 or DR5 is #UD; with CR4.DE = 0 they are aliases
** of DR6 and DR7; a write of a 1 to bits 63:32 of DR6 or DR7 is #GP(0).
** Returns the register the access reaches, or -1 when it faults (vector in
** *fault; nothing is read or written). */
#define DR_FAULT_UD 6u
#define DR_FAULT_GP 13u
int dr_resolve(uint64_t cr4, unsigned dr, bool write, uint64_t value, unsigned *fault);

#endif
