/* A hypervisor policy as the models see it: one struct of knobs.  Policies
** are data (the JSON files of models/policies); sim/config/policy.c loads, composes and
** prints them from this one list. */
#ifndef VMXSIM_KNOBS_H
#define VMXSIM_KNOBS_H

#include <stdbool.h>
#include <stdint.h>

/* The values of the enum knob shadow_eviction, each with the name policies
** and --set spell it (sim/config/policy.c's choices are these names, in enum
** order).  X(constant, name) */
#define SHADOW_EVICT_VALUES(X) X(EVICT_FIFO, "fifo") X(EVICT_LRU, "lru")
/* lapic_timer: how the hypervisor emulates the guest's TSC-deadline timer
** (KVM's hv_timer, models/hv/timer.c). */
#define LAPIC_TIMER_VALUES(X) X(LAPIC_TIMER_HRTIMER, "hrtimer") X(LAPIC_TIMER_PREEMPTION, "preemption")
#define KNOB_VALUE_ENUM(constant, name) constant,
#define KNOB_VALUE_NAME(constant, name) [constant] = name,

/* paging indexes the paging-mode table of models/mmu/mmu.c; its names are the knob's values. */
enum mmu_paging   { PAGING_SHADOW, PAGING_EPT };
/* dr_switch indexes the scheme table of models/hv/dr.c; its names are the knob's values. */
enum dr_switching { DR_EAGER, DR_LAZY };
enum shadow_evict { SHADOW_EVICT_VALUES(KNOB_VALUE_ENUM) };
enum lapic_timer  { LAPIC_TIMER_VALUES(KNOB_VALUE_ENUM) };

/*
** The range of every numeric knob, and why (policy.c refuses a value outside
** it, naming the value, the range and where it came from; nothing is clamped).
*/
/* 2^20 pages (4 GiB of shadow tables, 143 MB of model state) per VM: KVM's
** pool was 256 pages in 2007 and is 2% of guest memory since 2.6.27
** (KVM_PERMILLE_MMU_PAGES), so 2^20 covers a 200 GiB guest.  0 is for EPT,
** which has no pool; shadow paging needs the pinned roots' minimum, which
** depends on the trace's vCPUs and paging and is checked when a replay starts. */
#define KNOB_POOL_MAX        (1u << 20)
/* refill_low and refill_high count pages of that pool: the same range.
** flood_threshold counts writes in a 32-bit counter per shadow page: any
** unsigned 32-bit value (0 turns flood detection off). */
/* The model keeps at most 8 previous roots (models/mmu/mmu_int.h); KVM keeps
** 3 (KVM_MMU_NUM_PREV_ROOTS). */
#define KNOB_PREV_ROOTS_MAX  8u
/* CR3_TARGET_COUNT as a hypervisor may write it: IA32_VMX_MISC[24:16] is 9
** bits wide, so no CPU reports more than 511 (SDM A.6).  Above the CPU
** profile's own count (4 on every Intel CPU) VM entry fails (SDM 26.2.1.1),
** which the model reproduces with exit code 4. */
#define KNOB_CR3_TARGETS_MAX 511u
/* The TLB model is 4-way set-associative with a power-of-two number of sets
** (indexed by a mask: models/mmu/tlb.c), so its size is a power of two from
** one set (4) up; 2^14 entries is well above any x86 second-level TLB
** (1536 on Skylake) and keeps 256 vCPUs' TLBs under 200 MB. */
#define KNOB_TLB_MIN         4u
#define KNOB_TLB_MAX         (1u << 14)
/* PLE_Gap and PLE_Window are 32-bit VMCS fields (SDM 24.6.13), and KVM's
** module parameters ple_gap, ple_window, ple_window_grow, ple_window_shrink
** and ple_window_max are unsigned ints: any 32-bit value. */

/*
** X(name, type, default, field, min, max, description)
** type: B bool, U unsigned integer in min..max, P power of two in min..max
** (both in decimal), X 64-bit mask (decimal or 0x hex, any value), E enum
** (its names: SHADOW_EVICT_VALUES above, mmu_paging_names() of models/mmu/mmu.c,
** dr_scheme_names() of models/hv/dr.c; sim/config/policy.c choices_for).  A run's name spells each
** value one way (policy_name in sim/config/policy.h).
** min and max matter for U and P only.
** The knob names are part of the interface: `--set KEY=VALUE`, policy files,
** regression cases and the results database use them (docs/vmxsim.1,
** docs/schema.md).
*/
#define POLICY_KNOBS(X)                                                                       \
  X(paging,              E, "shadow", paging, 0, 0,             "guest paging: shadow (write-protected guest tables) or ept") \
  X(shadow_cache,        B, "true",   shadow_cache, 0, 0,       "keep shadow pages across guest CR3 switches (false: discard all on every switch)") \
  X(shadow_pages_max,    U, "256",    shadow_pages_max, 0, KNOB_POOL_MAX,   "shadow page pool size, in pages, per VM") \
  X(shadow_eviction,     E, "fifo",   shadow_eviction, 0, 0,    "pool replacement: fifo (by allocation, 2007 KVM) or lru (approximation)") \
  X(shadow_refill,       B, "true",   shadow_refill, 0, 0,      "2007 KVM refill: when fewer than refill_low pages are free, zap oldest until refill_high are free") \
  X(refill_low,          U, "5",      refill_low, 0, KNOB_POOL_MAX,         "free-page low-water mark for shadow_refill") \
  X(refill_high,         U, "25",     refill_high, 0, KNOB_POOL_MAX,        "free pages to reach when refilling (a pool smaller than this is refilled until all of it is free)") \
  X(flood_threshold,     U, "3",      flood_threshold, 0, UINT32_MAX,    "guest PTE writes to one shadowed page without a fault on it before it is zapped (0: never)") \
  X(memslot_hint,        B, "false",  memslot_hint, 0, 0,       "2011 guest-walk optimisation: memory-slot hint and get_user() per PTE read") \
  X(cr3_cache,           B, "false",  cr3_cache, 0, 0,          "paravirtual CR3 cache: guest loads cached shadow roots held in CR3-target values") \
  X(cr3_target_count,    U, "0",      cr3_target_count, 0, KNOB_CR3_TARGETS_MAX,   "CR3_TARGET_COUNT written to the VMCS; above the CPU profile's cr3_targets_supported (4) VM entry fails") \
  X(prev_roots,          U, "0",      prev_roots, 0, KNOB_PREV_ROOTS_MAX,         "previous shadow roots kept for a fast CR3 switch (modern KVM: 3)") \
  X(cr0_guest_host_mask, X, "0xffffffffffffffff", cr0_mask, 0, 0, "CR0 bits owned by the host (1 = guest writes that change it exit)") \
  X(cr4_guest_host_mask, X, "0xffffffffffffffff", cr4_mask, 0, 0, "CR4 bits owned by the host") \
  X(mov_dr_exiting,      B, "true",   mov_dr_exiting, 0, 0,     "MOV-DR exiting; with dr_switch=lazy it follows KVM's scheme (cleared after the first exit until the next one)") \
  X(dr_switch,           E, "eager",  dr_switch, 0, 0,          "how the host switches debug registers: a scheme of models/hv/dr.c (eager: every round trip; lazy: only when the guest uses them)") \
  X(host_debugged,       B, "false",  host_debugged, 0, 0,      "a host debugger has breakpoints on the vCPU thread (lazy switching must then restore)") \
  X(hlt_exiting,         B, "true",   hlt_exiting, 0, 0,        "HLT exiting") \
  X(rdtsc_exiting,       B, "false",  rdtsc_exiting, 0, 0,      "RDTSC exiting") \
  X(pause_exiting,       B, "false",  pause_exiting, 0, 0,      "PAUSE exiting") \
  X(msr_bitmaps,         B, "true",   msr_bitmaps, 0, 0,        "use MSR bitmaps (KVM's pass-through set: FS/GS bases, SYSENTER, SPEC_CTRL); false: every RDMSR/WRMSR exits") \
  X(io_bitmaps,          B, "false",  io_bitmaps, 0, 0,         "use I/O bitmaps (all ports intercepted but 0x80); false: unconditional I/O exiting") \
  X(vpid,                B, "false",  vpid, 0, 0,               "VPID: VM exits and entries keep TLB entries") \
  X(tlb_entries,         P, "512",    tlb_entries, KNOB_TLB_MIN, KNOB_TLB_MAX,        "entries of each vCPU's TLB model (4-way set-associative)") \
  X(tpr_shadow,          B, "false",  tpr_shadow, 0, 0,         "use TPR shadow (CR8 accesses without exits)") \
  X(apic_access_virt,    B, "false",  apic_access_virt, 0, 0,   "virtualize APIC accesses: local-APIC accesses exit as APIC_ACCESS instead of faulting as MMIO (FlexPriority)") \
  X(lapic_timer,         E, "hrtimer", lapic_timer, 0, 0,       "the guest's TSC-deadline timer: hrtimer (a host timer; expiry = the host's timer interrupt, an EXTERNAL_INTERRUPT exit) or preemption (the VMX-preemption timer, KVM's choice since 2016 where the CPU has it; expiry = a PREEMPTION_TIMER exit)") \
  X(ple_gap,             U, "0",      ple_gap, 0, UINT32_MAX,   "PAUSE-loop exiting: PLE_Gap, the most TSC cycles between two PAUSEs of one spin loop (KVM: 128; 0 turns PLE off)") \
  X(ple_window,          U, "4096",   ple_window, 0, UINT32_MAX, "PAUSE-loop exiting: a vCPU's first PLE_Window, the TSC cycles a spin loop runs before it exits") \
  X(ple_window_grow,     U, "2",      ple_window_grow, 0, UINT32_MAX, "on each PLE exit the vCPU's window is multiplied by this (added when it is not below ple_window; 0: reset to ple_window)") \
  X(ple_window_shrink,   U, "0",      ple_window_shrink, 0, UINT32_MAX, "when the vCPU is scheduled in again after blocking in HLT its window is divided by this (subtracted when not below ple_window; 0: reset to ple_window)") \
  X(ple_window_max,      U, "4294967295", ple_window_max, 0, UINT32_MAX, "the largest window growing reaches") \
  X(apic_register_virt,  B, "false",  apic_register_virt, 0, 0, "APIC-register virtualization: xAPIC reads of most registers without exits, writes virtualized then trapped as APIC_WRITE (needs tpr_shadow)") \
  X(virtual_intr_delivery, B, "false", virtual_intr_delivery, 0, 0, "virtual-interrupt delivery: pending interrupts delivered by the processor without an interrupt window, EOIs virtualized (EOI_INDUCED only for level-triggered vectors; needs tpr_shadow)") \
  X(x2apic_virt,         B, "false",  x2apic_virt, 0, 0,        "virtualize x2APIC mode for a guest whose APIC is in x2APIC mode, with KVM's MSR bitmap for MSRs 0x800-0x8ff (needs tpr_shadow)") \
  X(posted_interrupts,   B, "false",  posted_interrupts, 0, 0,  "process posted interrupts: a device interrupt or IPI for a running vCPU arrives without an exit (needs virtual_intr_delivery)") \
  X(ipi_virt,            B, "false",  ipi_virt, 0, 0,           "IPI virtualization: a fixed physical IPI the guest writes to the ICR is sent without an exit (needs posted_interrupts)")

struct policy {
  char name[256];            /* e.g. "shadowcache+lazydr" plus ",key=value" overrides */
#define X(n, t, d, field, lo, hi, desc) POLICY_FIELD_##t(field);
#define POLICY_FIELD_B(f) bool f
#define POLICY_FIELD_U(f) unsigned f
#define POLICY_FIELD_P(f) unsigned f
#define POLICY_FIELD_X(f) uint64_t f
#define POLICY_FIELD_E(f) int f
  POLICY_KNOBS(X)
#undef X
};

#endif
