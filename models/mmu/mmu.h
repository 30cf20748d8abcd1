/* The VM's memory-management model: guest address spaces, shadow page tables
** and their pool, shadow roots, EPT and the TLBs.  It decides which guest
** memory actions fault into the hypervisor and what the hypervisor's MMU work
** is; the engine charges the cycles.  It knows nothing of the vCPU beyond what
** an operation passes in (struct mmu_ctx) and reports everything that concerns
** the rest of the hypervisor through struct mmu_sink.
**
** Files: mmu.c (this interface, the touch path, the paging-mode table),
** one file per paging mode (mmu_shadow.c: shadow faults, guest page-table
** writes, zaps; mmu_ept.c: EPT), mmu_roots*.c (shadow roots, one file per
** root-management scheme), mmu_seg_use.c (the segment memo in use), plus
** gpt/spt/tlb/pageset/hset/seg_memo (models/mmu/README.md).
*/
#ifndef VMXSIM_MMU_H
#define VMXSIM_MMU_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "models/event.h"
#include "models/knobs.h"
#include "models/vmx/cpu.h"
#include "models/work.h"

/* Host addresses of shadow roots live in their own range, so a guest CR3
** value can never equal one by accident in the CR3-target comparison. */
#define SHADOW_ROOT_HPA_BASE 0x7f0000000000ull
/* PAE-format shadows (a 32-bit or PAE guest's: four roots) are entered
** through a 32-byte page-directory-pointer table, and outside IA-32e mode CR3
** holds a 32-bit address (SDM 4.4.1), so KVM keeps that table below 4 GiB
** (Linux 2.6.20 drivers/kvm/mmu.c, alloc_mmu_pages(): pae_root from
** __GFP_DMA32, "cr3 is only 32 bits even on x86_64").  Each root set has its
** own, as the paravirtual CR3 cache needs
** one per cached address space (I. Molnar, "[announce] [patch] KVM
** paravirtualization for Linux", LKML, 5 January 2007; A. Kivity's reply of 7
** January: "a pae root uses just 32 bytes").  The range is in a PC guest's
** MMIO hole below 4 GiB, where no guest page table can be, so the rule above
** still holds. */
#define SHADOW_PDPT_HPA_BASE 0xfc000000ull
#define SHADOW_PDPT_BYTES    32
_Static_assert(SHADOW_PDPT_HPA_BASE + (uint64_t)KNOB_POOL_MAX * SHADOW_PDPT_BYTES <= 0xfec00000ull,
               "every root set's PDPT lies below the I/O APIC, under 4 GiB");

/* Under EPT a guest page gets its guest-physical frame when it is first
** touched, the first at 16 MiB, where a PC Linux kernel is loaded
** (CONFIG_PHYSICAL_START, 0x1000000 by default, Linux arch/x86/Kconfig), the
** next ones above it in the order they are touched (mmu_ept.c). */
#define EPT_FIRST_GFN 0x1000ull

/* CR4 bits KVM must keep host-owned without EPT, because they change how
** shadow page tables are built or which TLB entries survive (KVM's
** KVM_MMU_CR4_ROLE_BITS and the PGE/PCIDE flush rules); a write that changes
** one flushes the TLB (models/hv/emulate.c).  Its bits are models/vmx/exit.h's,
** which a user includes (this header does not, so that it stays clear of
** those names where it is included beside a generator's). */
#define CR4_SHADOW_PAGING_OWNED (CR4_PGE | CR4_PCIDE | CR4_PAE | CR4_PSE | CR4_SMEP)

struct mmu;

/* What a paging mode needs of the processor: the VMCS set-up
** (models/hv/vcpu.c) adds these to what the policy asks for. */
struct paging_vmx {
  uint32_t cpu_controls;     /* primary processor-based controls (CPU_*, models/vmx/controls.h) */
  uint32_t secondary;        /* secondary controls (SEC_*) */
  uint32_t exceptions;       /* exceptions intercepted (bit = vector) */
  uint64_t cr0_forced;       /* bits kept set in the real CR0 whatever the guest writes */
  uint64_t cr4_forced;       /* the same for CR4 */
  uint64_t cr4_owned;        /* CR4 bits host-owned whatever the policy's mask */
  bool guest_cr3_direct;     /* GUEST_CR3 holds the guest's own CR3, not roots the hypervisor builds */
};
/* The paging mode the policy's paging knob selects (the table in mmu.c). */
const struct paging_vmx *mmu_paging_vmx(const struct policy *p);
/* The paging knob's values, NULL-terminated, in the order of enum mmu_paging. */
const char *const *mmu_paging_names(void);

/* The vCPU state one MMU operation depends on. */
struct mmu_ctx {
  unsigned vcpu;
  uint64_t cr3;              /* the guest's CR3 (its address space) */
  bool pge;                  /* CR4.PGE: kernel pages are global in the TLB */
};

/* A fault the guest's memory access raised in hardware, described as the
** processor sees it (a walker returns a fault description, as KVM's
** paging_tmpl.h does).  Whether it exits is the processor's decision. */
enum mmu_fault_kind {
  MMU_FAULT_PF,              /* a #PF: not present in the shadow tables, or a write-protected guest table */
  MMU_FAULT_EPT_VIOLATION,   /* a guest-physical page not mapped in EPT */
};
struct mmu_fault {
  enum mmu_fault_kind kind;
  uint64_t gla;              /* the linear address accessed */
  uint64_t gpa;              /* EPT: the guest-physical address accessed */
  uint32_t pfec;             /* #PF: error code (PFEC_* in models/vmx/exit.h) */
  uint32_t ept_qual;         /* EPT violation: qualification bits (EPT_QUAL_* in models/vmx/cpu.h) */
};

/* What the MMU reports to the rest of the hypervisor; the engine implements it. */
struct mmu_sink {
  /* A fault the MMU raised, with the MMU work the hypervisor did to handle it
  ** (the hidden-fault fill, the emulated page-table write, the EPT entry). */
  void (*fault)(struct mmu_sink *s, unsigned vcpu, const struct mmu_fault *f, const struct work *w);
  /* Work the guest does without an exit (e.g. a CR3-target hit's TLB flush). */
  void (*guest)(struct mmu_sink *s, unsigned vcpu, const struct work *w);
  /* The same for n operations of one kind (the TLB-miss walks of a touch). */
  void (*guest_ops)(struct mmu_sink *s, unsigned vcpu, enum profile_param op, uint32_t n);
  /* The shadow roots of guest_cr3 are at root_hpa and must be loaded into
  ** GUEST_CR3; exited: by a handler (a VMWRITE), else at entry or by hardware. */
  void (*roots_loaded)(struct mmu_sink *s, unsigned vcpu, uint64_t guest_cr3, uint64_t root_hpa, bool exited);
  /* The top-level shadow page of guest_cr3 was zapped; true if the CR3 cache
  ** was cleared because of it. */
  bool (*root_zapped)(struct mmu_sink *s, uint64_t guest_cr3);
  /* Write flooding zapped shadow pages and no root zap cleared the CR3 cache. */
  void (*pt_zapped)(struct mmu_sink *s);
};

/* paging: enum paging_mode of the trace (32, PAE, 64); counters: the
** engine's, by enum counter (models/counters.h). */
struct mmu *mmu_create(const struct policy *p, unsigned paging, unsigned nvcpu, struct mmu_sink *sink,
                       uint64_t *counters);
void mmu_destroy(struct mmu *m);
/* Fewest shadow pages the policy can run with on this VM: every vCPU pins the
** roots of its address space (and of its previous roots), and a switch must be
** able to build one more set of roots.  (A pool with no room left for faults
** still runs: every access through an unshadowed table then faults again.)
** 0 for EPT. */
unsigned mmu_min_pool(const struct policy *p, unsigned paging, unsigned nvcpu);

/* Guest memory actions (EV_TOUCH, EV_PTWRITE). */
void mmu_guest_event(struct mmu *m, const struct mmu_ctx *c, const struct trace_event *ev);
/* Follow-up of an instruction (CR3 switch, INVLPG, flush).  exited: the
** request comes from a hypervisor handler (its work goes to w) rather than
** from the guest executing natively (a CR3-target hit). */
void mmu_request(struct mmu *m, const struct mmu_ctx *c, enum mmu_request req, uint64_t arg, bool exited,
                 struct work *w);
/* The fault of an access to guest-physical MMIO page gpa (through linear
** address gla): the hypervisor never maps such a page, so every access
** faults -- a not-present #PF under shadow paging, an EPT violation under EPT. */
struct mmu_fault mmu_mmio_fault(const struct mmu *m, uint64_t gla, uint64_t gpa, bool write);
/* A VM exit/entry happened on the vCPU (TLB flush unless VPID). */
void mmu_on_vm_transition(struct mmu *m, unsigned vcpu);
/* Brings every count, cycle and the TLB up to date with the touches so far:
** the segment memo (seg_memo.h) may hold back a segment's misses until it ends.
** The engine calls it before an event that may change what touches do and
** before anyone reads the counts; mmu_stepwise also turns the memo off, for
** a replay one event at a time (the REPL shows each touch's own cost). */
void mmu_settle(struct mmu *m);
void mmu_stepwise(struct mmu *m);
/* How much the segment memo did: segments taken whole from a record, and
** segments compared with one and then replayed; false when it is off. */
bool mmu_seg_stats(const struct mmu *m, uint64_t *applied, uint64_t *replayed);

/* Why the replay so far cannot stand for a real guest, or NULL: under EPT, a
** trace that touched more distinct pages than the guest has frames. */
const char *mmu_failure(const struct mmu *m);
/* The guest event (a touch) whose first touch made mmu_failure true, or NULL
** when none did or an exit's own work did: a pointer into the block being
** replayed, for the engine to turn into a record number before the next. */
const struct trace_event *mmu_failure_event(const struct mmu *m);

/* For the REPL: the paging mode's state (shadow paging: pool usage, roots and
** oldest pages; EPT: the frames and tables mapped); a vCPU's TLB. */
void mmu_print_shadow(const struct mmu *m, FILE *f);
/* For the REPL: what the paging mode says about itself, in words. */
enum mmu_topic {
  MMU_WHY_NO_TOUCH_EXIT,     /* why a touch took no exit */
  MMU_WHY_NO_PTWRITE_EXIT,   /* why a guest page-table write took no exit */
  MMU_GUEST_CR3_IS,          /* what GUEST_CR3 (arg: its value) holds: ": the shadow root", or "" */
};
const char *mmu_describe(const struct mmu *m, enum mmu_topic t, uint64_t arg);
void mmu_print_tlb(const struct mmu *m, unsigned vcpu, FILE *f);

#endif
