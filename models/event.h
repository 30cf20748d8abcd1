/* Trace events: the guest actions a trace records, one fixed-size record each. */
#ifndef VMXSIM_EVENT_H
#define VMXSIM_EVENT_H

#include <stdint.h>
#include <assert.h>

/*
** Every event type, with its text mnemonic.  The numeric value is part of the
** binary format (traces/FORMAT.md): append new types, never renumber.
**
**   X(ENUM, mnemonic, operand summary for help/docs)
*/
#define EVENT_TYPES(X)                                                        \
  X(RUN,     "run",     "CYCLES: guest runs natively")                        \
  X(INIT,    "@init",   "aux=CR number, a=value: initial guest register")     \
  X(CR_WRITE,"crw",     "aux=CR (0,3,4,8), a=value: MOV to CR")               \
  X(CR_READ, "crr",     "aux=CR: MOV from CR")                                \
  X(CLTS,    "clts",    "clear CR0.TS")                                       \
  X(LMSW,    "lmsw",    "a=source operand (low 16 bits)")                     \
  X(DR_WRITE,"drw",     "aux=DR number, a=value: MOV to DR")                  \
  X(DR_READ, "drr",     "aux=DR number: MOV from DR")                         \
  X(CPUID,   "cpuid",   "a=leaf, b=subleaf")                                  \
  X(RDMSR,   "rdmsr",   "a=MSR index")                                        \
  X(WRMSR,   "wrmsr",   "a=MSR index, b=value")                               \
  X(HLT,     "hlt",     "halt until the next interrupt")                      \
  X(INVLPG,  "invlpg",  "a=linear address")                                   \
  X(IO,      "io",      "aux=bit0 out, bits 3:1 size; a=port")                \
  X(VMCALL,  "vmcall",  "a=hypercall number")                                 \
  X(TOUCH,   "touch",   "aux=bit0 write; a=address, b=pages")                 \
  X(PTWRITE, "ptwrite", "aux=level; a=address the entry maps")                \
  X(SYSCALL, "syscall", "a=system call number")                               \
  X(SYSRET,  "sysret",  "return to user mode")                                \
  X(MARK,    "mark",    "a,b=label (16 bytes, NUL padded)")                   \
  X(RDTSC,   "rdtsc",   "read the time-stamp counter")                        \
  X(RDPMC,   "rdpmc",   "a=counter")                                          \
  X(PAUSE,   "pause",   "a=PAUSEs in the spin (0: one), b=TSC cycles from one to the next") \
  X(WBINVD,  "wbinvd",  "write back and invalidate caches")                   \
  X(INTR,    "intr",    "a=vector: external interrupt arrives")               \
  X(EXC,     "exc",     "a=vector, b=error code: guest exception")            \
  X(XSETBV,  "xsetbv",  "a=XCR index, b=value")                              \
  X(APIC,    "apic",    "aux bit0 write; a=local-APIC register offset, b=value (the ICR as 64 bits)") \
  X(MEASURED,"measured","aux bit0 alone; a=cycles; b=reason|info<<32: an exit the host measured") \
  X(STI,     "sti",     "aux=0 STI (blocks interrupts for the next instruction), 1 POPF: RFLAGS.IF = 1") \
  X(CLI,     "cli",     "CLI or POPF: RFLAGS.IF = 0")                        \
  X(IRET,    "iret",    "aux bit0: RFLAGS.IF restored as 0; ends blocking by NMI") \
  X(VIRQ,    "virq",    "aux=source (VIRQ_SRC_*), a=vector, b=sending vCPU of an IPI, or 1 for a level-triggered device interrupt: an interrupt for this vCPU") \
  X(VNMI,    "vnmi",    "an NMI for this vCPU reaches the hypervisor")      \
  X(RDTSCP,  "rdtscp",  "read the time-stamp counter and TSC_AUX")          \
  X(MWAIT,   "mwait",   "monitor wait")                                      \
  X(MONITOR, "monitor", "arm address monitoring")                            \
  X(INVPCID, "invpcid", "aux=type 0..3, a=linear address, b=PCID")          \
  X(TASK_SWITCH,"taskswitch","aux=source 0 CALL, 1 IRET, 2 JMP, 3 IDT gate; a=TSS selector") \
  X(TRIPLE_FAULT,"triplefault","an exception while delivering a double fault") \
  X(VMX,     "vmx",     "a=exit reason of a VMX instruction a nested guest executes") \
  X(WAIT,    "wait",    "a=vCPU whose interrupt handler ends the spin, b=cache lines it takes from this vCPU before its store")

enum event_type {
#define X(e, m, d) EV_##e,
  EVENT_TYPES(X)
#undef X
  EV_COUNT
};

/*
** One trace record, 24 bytes, little-endian on disk.  On little-endian hosts
** the in-memory struct is the on-disk layout, so records are copied between
** file and memory without conversion.
*/
struct trace_event {
  uint8_t  type;     /* enum event_type */
  uint8_t  aux;      /* small operand: CR/DR number, level, I/O flags, ...  */
  uint16_t vcpu;     /* vCPU the event runs on */
  uint32_t cycles;   /* native guest cycles since this vCPU's previous event,
                     ** including this event's own native execution */
  uint64_t a;        /* first operand (see EVENT_TYPES) */
  uint64_t b;        /* second operand */
};
static_assert(sizeof(struct trace_event) == 24, "trace record size is part of the format");

#define IO_AUX_OUT       0x1u
#define IO_AUX_SIZE(aux) (((aux) >> 1) & 0x7u)
#define TOUCH_AUX_WRITE  0x1u
#define APIC_AUX_WRITE   0x1u
#define STI_AUX_POPF     0x1u      /* IF set by POPF (or IRET): no blocking by STI */
#define IRET_AUX_IF0     0x1u      /* IRET restores RFLAGS.IF = 0 */
/* Where an interrupt for a vCPU (EV_VIRQ) comes from: the models decide from
** it whether its arrival costs an exit of its own (a host interrupt, a
** posted-interrupt notification, a timer's expiry) or none.
** VIRQ_SRC_HOST: the hypervisor already has it (format version 2 traces,
** whose virq records have aux 0): its arrival costs nothing of its own; an
** exit that brought it, if any, is a record of its own (intr). */
#define VIRQ_SRC_HOST    0u
#define VIRQ_SRC_DEVICE  1u        /* a device's interrupt, routed to this vCPU */
#define VIRQ_SRC_IPI     2u        /* an IPI from another vCPU: b = the sender's vCPU number */
#define VIRQ_SRC_TIMER   3u        /* this vCPU's own local-APIC timer expired */
#define VIRQ_SRC_MAX     VIRQ_SRC_TIMER
/* The vector Linux guests give their local-APIC timer (LOCAL_TIMER_VECTOR,
** arch/x86/include/asm/irq_vectors.h): what an imported timer expiry carries. */
#define LOCAL_TIMER_VECTOR 0xecu
/* b of a device's interrupt: it is level-triggered, routed through the I/O
** APIC, whose EOI the hypervisor must see (the EOI-exit bitmap, SDM 24.6.8). */
#define VIRQ_DEVICE_LEVEL 0x1u
/* Local-APIC registers (offsets in the 4 KB APIC page at 0xfee00000). */
#define APIC_TPR         0x080u
#define APIC_EOI         0x0b0u
#define APIC_ICR         0x300u    /* written as one 64-bit value: destination APIC ID in bits 63:56 */
#define APIC_ICR_HIGH    0x310u
#define APIC_TMICT       0x380u
#define APIC_BASE_GPA    0xfee00000ull
#define MSR_IA32_TSC_DEADLINE 0x6e0u  /* the local APIC's TSC-deadline timer (SDM Vol. 3A 10.5.4.1) */
/* x2APIC mode: the registers as MSRs 0x800 + offset / 16 (the ICR as one
** 64-bit MSR, destination in bits 63:32). */
#define X2APIC_MSR_FIRST 0x800u
#define X2APIC_MSR_LAST  0x8ffu
#define X2APIC_TPR       0x808u
#define X2APIC_EOI       0x80bu
#define X2APIC_ICR       0x830u
#define X2APIC_SELF_IPI  0x83fu
#define MARK_LABEL_MAX   16
/* EV_WAIT: the cache lines a handler may take from the waiting vCPU before
** its store (its reads of what the waiter wrote, its store's ownership). */
#define WAIT_LINES_MAX   16u

/* One touch covers at most 2^20 pages (4 GiB), so that one 24-byte record
** costs at most about 0.15 s of replay under shadow paging and 1.3 s under
** EPT (which maps each page on its first touch): replay time is linear in
** the pages touched.  The generators touch at most 262145 pages at once
** (lat_ctx --size 1048576 after malloc's header), the importers one. */
#define TOUCH_PAGES_MAX  (1u << 20)
#define TOUCH_PAGES_MAX_TEXT "2^20"
/* One pause record is a spin of at most 2^20 PAUSEs (about 0.15 s of PAUSEs
** at 140 cycles each on Skylake): under PAUSE-loop exiting with a small
** window a spin can exit every few PAUSEs, each exit replayed, so the
** bound keeps one record's replay short as TOUCH_PAGES_MAX does.  Its gap
** is a 32-bit count of cycles, as PLE_Gap is. */
#define PAUSE_SPIN_MAX   (1u << 20)
#define PAUSE_SPIN_MAX_TEXT "2^20"

/*
** EV_MEASURED (format version 2): an exit the recording host took, with its
** measured cost: a = cycles from the VM exit to the next VM entry (host TSC),
** b bits 15:0 the basic exit reason as recorded, bits 63:32 a recorded detail
** (the error code of a page fault or exception; 0 when none).  Without
** MEASURED_ALONE it measures the exit caused by the preceding record of its
** vCPU; with it, an exit no event of the trace stands for (vmxsim cannot
** express it).  It costs nothing and changes nothing in a replay.
*/
#define MEASURED_ALONE        0x1u
#define MEASURED_REASON(b)    ((unsigned)((b) & 0xffffu))
#define MEASURED_INFO(b)      ((uint32_t)((b) >> 32))
#define MEASURED_B(reason, info) ((uint64_t)((reason) & 0xffffu) | (uint64_t)(info) << 32)

/* Guest paging modes (the trace header's paging byte). */
enum paging_mode { PAGING_32 = 32, PAGING_PAE = 36, PAGING_64 = 64 };

#endif
