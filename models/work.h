/* Work items: what a handler or the MMU did, as counts of priced operations.
** Models fill a work record; only the engine turns it into cycles, at the
** prices of a CPU profile (the JSON files of models/cpus; loaded by sim/config/profile.c). */
#ifndef VMXSIM_WORK_H
#define VMXSIM_WORK_H

#include <assert.h>
#include <stdint.h>
#include <string.h>

/*
** X(ENUM, "json name", description).  Every one is required in a profile.
** Cycle values are integers; clock_ghz is the only fractional value.
*/
#define PROFILE_PARAMS(X)                                                                  \
  X(CLOCK_GHZ,        "clock_ghz",          "core clock, GHz (turns cycles into seconds)")   \
  X(CR3_TARGETS,      "cr3_targets_supported", "CR3-target values supported, IA32_VMX_MISC[24:16]") \
  X(CAP_SECONDARY,    "vmx.secondary_controls", "1 if the CPU has secondary processor-based controls (IA32_VMX_PROCBASED_CTLS allowed-1 bit 31)") \
  X(CAP_TPR_SHADOW,   "vmx.tpr_shadow",     "1 if it supports \"use TPR shadow\" (IA32_VMX_PROCBASED_CTLS allowed-1 bit 21)") \
  X(CAP_APIC_ACCESS,  "vmx.virtualize_apic_accesses", "1 if it supports \"virtualize APIC accesses\" (IA32_VMX_PROCBASED_CTLS2 allowed-1 bit 0)") \
  X(CAP_EPT,          "vmx.ept",            "1 if it supports \"enable EPT\" (IA32_VMX_PROCBASED_CTLS2 allowed-1 bit 1)") \
  X(CAP_VPID,         "vmx.vpid",           "1 if it supports \"enable VPID\" (IA32_VMX_PROCBASED_CTLS2 allowed-1 bit 5)") \
  X(CAP_UNRESTRICTED, "vmx.unrestricted_guest", "1 if it supports \"unrestricted guest\" (IA32_VMX_PROCBASED_CTLS2 allowed-1 bit 7)") \
  X(CAP_VIRT_X2APIC,  "vmx.virtualize_x2apic_mode", "1 if it supports \"virtualize x2APIC mode\" (IA32_VMX_PROCBASED_CTLS2 allowed-1 bit 4)") \
  X(CAP_APIC_REG_VIRT, "vmx.apic_register_virtualization", "1 if it supports \"APIC-register virtualization\" (IA32_VMX_PROCBASED_CTLS2 allowed-1 bit 8)") \
  X(CAP_VIRT_INTR,    "vmx.virtual_interrupt_delivery", "1 if it supports \"virtual-interrupt delivery\" (IA32_VMX_PROCBASED_CTLS2 allowed-1 bit 9)") \
  X(CAP_PLE,          "vmx.pause_loop_exiting", "1 if it supports \"PAUSE-loop exiting\" (IA32_VMX_PROCBASED_CTLS2 allowed-1 bit 10)") \
  X(CAP_PREEMPT_TIMER, "vmx.preemption_timer", "1 if it supports \"activate VMX-preemption timer\" (IA32_VMX_PINBASED_CTLS allowed-1 bit 6)") \
  X(CAP_POSTED_INTR,  "vmx.posted_interrupts", "1 if it supports \"process posted interrupts\" (IA32_VMX_PINBASED_CTLS allowed-1 bit 7)") \
  X(CAP_IPI_VIRT,     "vmx.ipi_virtualization", "1 if it supports \"IPI virtualization\" (IA32_VMX_PROCBASED_CTLS3 bit 4, with IA32_VMX_PROCBASED_CTLS allowed-1 bit 17)") \
  X(VM_ROUNDTRIP,     "vm_roundtrip",       "hardware VM exit plus VM entry, no handler work") \
  X(VMREAD,           "vmread",             "one VMREAD by the handler")                     \
  X(VMWRITE,          "vmwrite",            "one VMWRITE by the handler")                    \
  X(DR_READ,          "dr_read",            "one MOV from a debug register in the host")     \
  X(DR_WRITE,         "dr_write",           "one MOV to a debug register in the host")       \
  X(HANDLER_DEFAULT,  "handler.default",    "handler base cost for reasons without their own") \
  X(GUEST_PTE_READ,   "guest_pte_read",     "shadow MMU: read one guest PTE (copy_from_user)") \
  X(GUEST_PTE_READ_FAST, "guest_pte_read_hinted", "shadow MMU: read one guest PTE with get_user()") \
  X(MEMSLOT_LOOKUP,   "memslot_lookup",     "shadow MMU: gfn to memory slot, per walk level")  \
  X(MEMSLOT_LOOKUP_FAST, "memslot_lookup_hinted", "the same with the memory-slot hint")       \
  X(SHADOW_ALLOC,     "shadow_alloc",       "allocate, zero and hash one shadow page")        \
  X(SHADOW_ZAP,       "shadow_zap",         "zap one shadow page (unlink parents, free)")     \
  X(SHADOW_INSTALL,   "shadow_install",     "install one shadow PTE after a fault")           \
  X(PTE_EMULATE,      "pte_emulate",        "emulate one trapped guest page-table write")     \
  X(APIC_EMULATE,     "apic_emulate",       "emulate one access to a local-APIC register (decode, virtual APIC, kick an IPI's target)") \
  X(ROOT_SWITCH,      "root_switch",        "find or build the shadow root on a CR3 exit")    \
  X(TLB_MISS_NATIVE,  "tlb_miss_native",    "native page walk on a TLB miss (4 references)")  \
  X(TLB_MISS_2D,      "tlb_miss_2d",        "two-dimensional EPT walk on a TLB miss (up to 24 references)") \
  X(MMU_CACHE_TOPUP,  "mmu_cache_topup",    "caching shadow MMU: top up the per-vCPU object caches at the start of a fault") \
  X(MMU_PAGE_LOOKUP,  "mmu_page_lookup",    "caching shadow MMU: one look-up in the shadow-page hash (by guest frame and role)") \
  X(RMAP_ADD,         "rmap_add",           "caching shadow MMU: record an installed shadow PTE in the reverse map") \
  X(RMAP_REMOVE,      "rmap_remove",        "caching shadow MMU: drop one back-reference (reverse map or parent PTE) of a present entry of a zapped page") \
  X(RMAP_WRITE_PROTECT, "rmap_write_protect", "caching shadow MMU: write-protect a guest page table when its shadow page is created (reverse-map walk, one writable mapping, TLB flush)") \
  X(HOST_TIMER_IRQ,   "host_timer_irq",     "the host's timer interrupt that expires a guest's deadline kept in a host hrtimer (hrtimer_interrupt, apic_timer_fn), beyond an EXTERNAL_INTERRUPT exit") \
  X(IPI_LATENCY,      "ipi_latency",        "a physical IPI from one core to another of the socket: from the ICR write that sends it to the target core taking it") \
  X(POSTED_INTR_DELIVERY, "posted_intr_delivery", "the target core in VMX non-root operation takes the posted-interrupt notification: posted-interrupt processing (PIR into VIRR, RVI) and the virtual interrupt's delivery through the guest IDT") \
  X(CACHELINE_TRANSFER, "cacheline_transfer", "one cache line another core of the socket holds modified brought to this core (or its ownership taken)")

enum profile_param {
#define X(e, n, d) PP_##e,
  PROFILE_PARAMS(X)
#undef X
  PP_JSON_COUNT,
  /* Derived at load time, not in the JSON: */
  PP_TLB_MISS_2D_EXTRA = PP_JSON_COUNT,   /* tlb_miss_2d - tlb_miss_native */
  PP_COUNT
};

struct work {
  uint32_t n[PP_COUNT];     /* how many of each priced operation (index = enum profile_param) */
  uint64_t used;            /* bit p: n[p] was written since work_clear (an exit adds to a few);
                               a clear bit's n[p] is stale: read counts with work_count */
};
static_assert(PP_COUNT <= 64, "struct work's used is a 64-bit set");

/* Only the set of items is cleared: an item's count is written when it is
** first added (work_add), so nothing reads a stale one.  Clearing the whole
** record (a copy of zeros) took about 20 instructions an exit. */
static inline void work_clear(struct work *w) { w->used = 0; }
static inline void work_add(struct work *w, enum profile_param p, uint32_t count) {
  uint64_t bit = 1ull << p;
  w->n[p] = (w->used & bit ? w->n[p] : 0) + count;
  w->used |= bit;
}
static inline uint32_t work_count(const struct work *w, enum profile_param p) {
  return w->used >> p & 1 ? w->n[p] : 0;
}

#endif
