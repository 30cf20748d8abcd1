/* CPU cost profiles: cycle costs as JSON data, every value with its source and kind. */
#ifndef VMXSIM_PROFILE_H
#define VMXSIM_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "sim/base/format.h"
#include "models/counters.h"
#include "models/vmx/cpu.h"
#include "models/work.h"

struct profile {
  char name[64];
  double clock_ghz;
  uint64_t p[PP_COUNT];           /* cycles (PP_CLOCK_GHZ unused here) */
  /* Handler base cost per stat key (exit reason or CR/DR breakdown), resolved
  ** from "handler.<REASON>" and "handler.<REASON>.<sub>" with fallbacks. */
  uint64_t handler[STAT_KEYS];
  char *json;                     /* the profile as loaded, for the results DB */
};

/* Loads a profile by name (models/cpus/NAME.json) or path.  Returns 0,
** EXIT_USAGE for an unknown name or EXIT_BADINPUT for a malformed file (the
** message names the file and key).  Call profile_free whatever the result. */
int profile_load(struct profile *pr, const char *name, char *err, size_t errlen);
/* profile_load, a file read as flags say (enum input_flags, util.h; with
** INPUT_HIDE_CONTENT no message shows an unknown key or a value of it). */
int profile_load_flags(struct profile *pr, const char *name, unsigned flags, char *err, size_t errlen);
void profile_free(struct profile *pr);
/* The VMX capabilities the profile states (its vmx.* parameters). */
struct vmx_caps profile_vmx_caps(const struct profile *pr);
/* Lists the built-in profiles (name, clock, description) as a table, CSV or JSON. */
void profile_list(FILE *f, enum report_format fmt);
/* Lists which of the VMX controls of a modern hypervisor (EPT, VPID, APIC
** virtualization, posted interrupts, the preemption timer, PLE, IPI
** virtualization...) each profile's CPU has, as VM entry decides it: the
** profiles names gives (NULL-terminated; NULL or empty: the built-in ones).
** Returns 0, or profile_load's code with the message in err (nothing printed). */
int profile_list_controls(FILE *f, enum report_format fmt, const char *const *names, char *err, size_t errlen);
const char *const *profile_names(void);
#define PROFILE_DEFAULT "core2-2007"

#endif
