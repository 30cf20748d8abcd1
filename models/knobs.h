/* A hypervisor policy as the models see it: one struct of knobs.  Policies
** are data (the JSON files of models/policies); sim/core/policy.c loads, composes and
** prints them from this one list. */
#ifndef VMXSIM_KNOBS_H
#define VMXSIM_KNOBS_H

#include <stdbool.h>
#include <stdint.h>

enum mmu_paging   { PAGING_SHADOW, PAGING_EPT };
/* dr_switch indexes the scheme table of models/hv/dr.c; its names are the knob's values. */
enum dr_switching { DR_EAGER, DR_LAZY };
enum shadow_evict { EVICT_FIFO, EVICT_LRU };

/*
** X(name, type, default, field, description)
** type: B bool, U unsigned, X 64-bit (hex welcome), E enum (choices in policy.c).
** The knob names are part of the interface: `--set KEY=VALUE`, policy files,
** regression cases and the results database use them (docs/vmxsim.1,
** docs/schema.md).
*/
#define POLICY_KNOBS(X)                                                                       \
  X(paging,              E, "shadow", paging,             "guest paging: shadow (write-protected guest tables) or ept") \
  X(shadow_cache,        B, "true",   shadow_cache,       "keep shadow pages across guest CR3 switches (false: discard all on every switch)") \
  X(shadow_pages_max,    U, "256",    shadow_pages_max,   "shadow page pool size, in pages, per VM") \
  X(shadow_eviction,     E, "fifo",   shadow_eviction,    "pool replacement: fifo (by allocation, 2007 KVM) or lru (approximation)") \
  X(shadow_refill,       B, "true",   shadow_refill,      "2007 KVM refill: when fewer than refill_low pages are free, zap oldest until refill_high are free") \
  X(refill_low,          U, "5",      refill_low,         "free-page low-water mark for shadow_refill") \
  X(refill_high,         U, "25",     refill_high,        "free pages to reach when refilling") \
  X(flood_threshold,     U, "3",      flood_threshold,    "guest PTE writes to one shadowed page without a fault on it before it is zapped") \
  X(memslot_hint,        B, "false",  memslot_hint,       "2011 guest-walk optimisation: memory-slot hint and get_user() per PTE read") \
  X(cr3_cache,           B, "false",  cr3_cache,          "paravirtual CR3 cache: guest loads cached shadow roots held in CR3-target values") \
  X(cr3_target_count,    U, "0",      cr3_target_count,   "CR3_TARGET_COUNT written to the VMCS (the CPU supports 4)") \
  X(prev_roots,          U, "0",      prev_roots,         "previous shadow roots kept for a fast CR3 switch (modern KVM: 3)") \
  X(cr0_guest_host_mask, X, "0xffffffffffffffff", cr0_mask, "CR0 bits owned by the host (1 = guest writes that change it exit)") \
  X(cr4_guest_host_mask, X, "0xffffffffffffffff", cr4_mask, "CR4 bits owned by the host") \
  X(mov_dr_exiting,      B, "true",   mov_dr_exiting,     "MOV-DR exiting; with dr_switch=lazy it follows KVM's scheme (cleared after the first exit until the next one)") \
  X(dr_switch,           E, "eager",  dr_switch,          "host debug registers: eager (saved/restored every round trip) or lazy (only when used)") \
  X(host_debugged,       B, "false",  host_debugged,      "a host debugger has breakpoints on the vCPU thread (lazy switching must then restore)") \
  X(hlt_exiting,         B, "true",   hlt_exiting,        "HLT exiting") \
  X(rdtsc_exiting,       B, "false",  rdtsc_exiting,      "RDTSC exiting") \
  X(pause_exiting,       B, "false",  pause_exiting,      "PAUSE exiting") \
  X(msr_bitmaps,         B, "true",   msr_bitmaps,        "use MSR bitmaps (KVM's pass-through set: FS/GS bases, SYSENTER, SPEC_CTRL); false: every RDMSR/WRMSR exits") \
  X(io_bitmaps,          B, "false",  io_bitmaps,         "use I/O bitmaps (all ports intercepted but 0x80); false: unconditional I/O exiting") \
  X(vpid,                B, "false",  vpid,               "VPID: VM exits and entries keep TLB entries") \
  X(tlb_entries,         U, "512",    tlb_entries,        "entries of each vCPU's TLB model (4-way set-associative)") \
  X(tpr_shadow,          B, "false",  tpr_shadow,         "use TPR shadow (CR8 accesses without exits)") \
  X(apic_access_virt,    B, "false",  apic_access_virt,   "virtualize APIC accesses: local-APIC accesses exit as APIC_ACCESS instead of faulting as MMIO (FlexPriority)")

struct policy {
  char name[256];            /* e.g. "shadowcache+lazydr" plus ",key=value" overrides */
#define X(n, t, d, field, desc) POLICY_FIELD_##t(field);
#define POLICY_FIELD_B(f) bool f
#define POLICY_FIELD_U(f) unsigned f
#define POLICY_FIELD_X(f) uint64_t f
#define POLICY_FIELD_E(f) int f
  POLICY_KNOBS(X)
#undef X
};

#endif
