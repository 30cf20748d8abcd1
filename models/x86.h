/* The x86 architecture the VMX rules act on, apart from VMX itself: the bits of
** CR0, CR4 and DR7 and the page-fault error code that the processor model, the
** hypervisor's mechanisms and the MMU test (SDM Vol. 3A 2.5 "Control
** Registers", 4.7 "Page-Fault Exceptions", 17.2.4 "Debug Control Register";
** the edition docs/sources.md names). */
#ifndef VMXSIM_X86_H
#define VMXSIM_X86_H

#define CR0_PE (1ull << 0)
#define CR0_MP (1ull << 1)
#define CR0_EM (1ull << 2)
#define CR0_TS (1ull << 3)
#define CR0_WP (1ull << 16)
#define CR0_PG (1ull << 31)
#define CR4_TSD (1ull << 2)
#define CR4_DE  (1ull << 3)
#define CR4_PSE (1ull << 4)
#define CR4_PAE (1ull << 5)
#define CR4_PGE (1ull << 7)
#define CR4_PCE (1ull << 8)
#define CR4_PCIDE (1ull << 17)
#define CR4_SMEP (1ull << 20)

/* DR7's initial value: bit 10 is reserved and reads 1 (SDM 17.2.4).  It is
** also what DR7 becomes on every VM exit (SDM 27.5.1). */
#define DR7_RESET 0x400ull

/* Page-fault error code bits (SDM 4.7). */
#define PFEC_PRESENT 0x1u    /* 0: the page was not present */
#define PFEC_WRITE   0x2u
#define PFEC_USER    0x4u

#endif
