/* CPU cost profiles: cycle costs as JSON data, every value with its source and kind. */
#ifndef VMXSIM_PROFILE_H
#define VMXSIM_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "stats.h"

/*
** X(ENUM, "json name", description).  Every one is required in a profile.
** Cycle values are integers; clock_ghz is the only fractional value.
*/
#define PROFILE_PARAMS(X)                                                                  \
  X(CLOCK_GHZ,        "clock_ghz",          "core clock, GHz (turns cycles into seconds)")   \
  X(CR3_TARGETS,      "cr3_targets_supported", "CR3-target values supported, IA32_VMX_MISC[24:16]") \
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
  X(ROOT_SWITCH,      "root_switch",        "find or build the shadow root on a CR3 exit")    \
  X(TLB_MISS_NATIVE,  "tlb_miss_native",    "native page walk on a TLB miss (4 references)")  \
  X(TLB_MISS_2D,      "tlb_miss_2d",        "two-dimensional EPT walk on a TLB miss (up to 24 references)")

enum profile_param {
#define X(e, n, d) PP_##e,
  PROFILE_PARAMS(X)
#undef X
  PP_JSON_COUNT,
  /* Derived at load time, not in the JSON: */
  PP_TLB_MISS_2D_EXTRA = PP_JSON_COUNT,   /* tlb_miss_2d - tlb_miss_native */
  PP_COUNT
};

struct profile {
  char name[64];
  double clock_ghz;
  uint64_t p[PP_COUNT];           /* cycles (PP_CLOCK_GHZ unused here) */
  /* Handler base cost per stat key (exit reason or CR/DR breakdown), resolved
  ** from "handler.<REASON>" and "handler.<REASON>.<sub>" with fallbacks. */
  uint64_t handler[STAT_KEYS];
  char *json;                     /* the profile as loaded, for the results DB */
};

/* Loads a profile by name (models/cpus/NAME.json) or path; false with a message
** naming the file and key on error. */
bool profile_load(struct profile *pr, const char *name, char *err, size_t errlen);
void profile_free(struct profile *pr);
void profile_list(FILE *f);
const char *const *profile_names(void);
#define PROFILE_DEFAULT "core2-2007"

#endif
