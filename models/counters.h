/* What the models count: the stat keys (exit reasons and their per-register
** breakdown rows) and the named counters a run reports.  The models index
** these; sim/replay/stats.c names and accumulates them. */
#ifndef VMXSIM_COUNTERS_H
#define VMXSIM_COUNTERS_H

#include <stdbool.h>
#include "models/vmx/exit_reason.h"

/* Breakdown rows shown indented under CR_ACCESS, as xenalyze does per CR. */
#define CR_SUBKEYS(X) \
  X(CR0W, "cr0 write") X(CR3W, "cr3 write") X(CR3R, "cr3 read") X(CR4W, "cr4 write") \
  X(CR8W, "cr8 write") X(CR8R, "cr8 read") X(CLTS, "clts") X(LMSW, "lmsw")
enum cr_subkey {
#define X(e, n) CRSUB_##e,
  CR_SUBKEYS(X)
#undef X
  CRSUB_COUNT
};

/* Stat keys: 0..64 exit reasons, then the CR breakdown, then DR0-7 x write/read. */
#define STAT_CR_BASE EXIT_REASON_MAX
#define STAT_DR_BASE (STAT_CR_BASE + CRSUB_COUNT)
/* A breakdown row (a register of CR_ACCESS or DR_ACCESS), not a reason. */
static inline bool stat_key_is_sub(unsigned key) { return key >= STAT_CR_BASE; }
#define STAT_KEYS    (STAT_DR_BASE + 16)
static inline unsigned stat_key_dr(unsigned dr, bool read) { return STAT_DR_BASE + (dr & 7) * 2 + read; }

/* Named counters (JSON "counters"), X(ENUM, "name", description). */
#define COUNTERS(X)                                                                     \
  X(MARKS,               "marks",                "mark events (workload operations)")      \
  X(VMREADS,             "vmreads",              "VMREADs executed by handlers")          \
  X(VMWRITES,            "vmwrites",             "VMWRITEs executed by handlers")         \
  X(DR_HOST_SAVES,       "dr_host_saves",        "host debug registers saved")            \
  X(DR_HOST_RESTORES,    "dr_host_restores",     "host debug registers restored")         \
  X(DR_GUEST_LOADS,      "dr_guest_loads",       "guest debug registers loaded before entry") \
  X(DR_GUEST_SAVES,      "dr_guest_saves",       "guest debug registers read back after exit") \
  X(CR4_FORCED_OWNED,    "cr4_forced_owned_bits","CR4 bits the policy left to the guest that shadow paging forces host-owned") \
  X(SHADOW_ALLOCATED,    "shadow_pages_allocated","shadow pages allocated")                \
  X(SHADOW_ZAPPED,       "shadow_pages_zapped",  "shadow pages zapped (any cause)")        \
  X(SHADOW_EVICTED,      "shadow_pages_evicted", "shadow pages evicted because the pool was full") \
  X(SHADOW_FAULTS,       "shadow_faults",        "hidden page faults that filled shadow entries") \
  X(GUEST_WALKS,         "guest_walks",          "guest page-table walks by the shadow MMU") \
  X(ROOT_HITS,           "root_hits",            "CR3 switches that found the shadow root cached") \
  X(ROOT_MISSES,         "root_misses",          "CR3 switches that built a new shadow root") \
  X(PREV_ROOT_HITS,      "prev_root_hits",       "CR3 switches served by the previous-roots cache") \
  X(CR3_TARGET_HITS,     "cr3_target_hits",      "guest CR3 writes that matched a CR3-target value (no exit)") \
  X(CR3_TARGET_MISSES,   "cr3_target_misses",    "guest CR3 writes that matched no target (exit)") \
  X(CR3_CACHE_CLEARS,    "cr3_cache_clears",     "CR3-cache invalidations") \
  X(PTE_WRITES_EMULATED, "pte_writes_emulated",  "trapped guest page-table writes emulated") \
  X(FLOOD_ZAPS,          "flood_zaps",           "shadow pages zapped for write flooding") \
  X(EPT_VIOLATIONS,      "ept_violations",       "EPT violations (first touch of a guest-physical page)") \
  X(TLB_FLUSHES,         "tlb_flushes",          "TLB flushes") \
  X(TLB_MISSES,          "tlb_misses",           "TLB misses (all)") \
  X(TLB_MISSES_VIRT,     "tlb_misses_virt",      "TLB misses caused by VM-transition flushes (no VPID)") \
  X(DR_MISMATCHES,       "dr_mismatches",        "guest DR reads that saw a value the guest did not write (must be 0)")

enum counter {
#define X(e, n, d) CTR_##e,
  COUNTERS(X)
#undef X
  CTR_COUNT
};

const char *stat_key_name(unsigned key);   /* "CR_ACCESS", "cr3 write", "dr7 read"...; NULL past STAT_KEYS */
int stat_key_by_name(const char *name);    /* -1 when unknown */
/* The reason a breakdown row belongs to, or key itself for a reason. */
unsigned stat_key_parent(unsigned key);
const char *counter_name(unsigned c);      /* NULL past CTR_COUNT */

#endif
