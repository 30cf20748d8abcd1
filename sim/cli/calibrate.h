/* Fitting a CPU profile to a recording's measured exit costs (`vmxsim calibrate`).
**
** The engine charges every exit vm_roundtrip + handler.<key> + the modelled
** work (VMCS accesses, debug-register switching, MMU work) at the profile's
** prices.  Replaying the recording under its own policy on a base profile gives
** each stat key's modelled work per exit; the fitted handler cost is what makes
** the simulated average equal the measured one: measured average - round trip
** - work.  Where the recording has enough CPUID exits (the lightest exit, as
** kvm-unit-tests' vmexit test uses it), the round trip is fitted first: the
** CPUID exit's measured cost less its work, split between round trip and
** handler in the base profile's proportion.  Other prices stay the base's.
*/
#ifndef VMXSIM_CALIBRATE_H
#define VMXSIM_CALIBRATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "sim/replay/stats.h"

#define CALIBRATE_MIN_SAMPLES 20

struct calibrate_opts {
  const char *recording;       /* a trace with measured exits */
  const char *source;          /* the recording it was imported from, named and hashed in the profile; NULL: recording */
  const char *base;            /* CPU profile name or path */
  const char *policy;          /* the recording host's policy */
  char *const *sets;
  int nsets;
  const char *name;            /* the new profile's name; NULL: from the output path */
  unsigned min_samples;        /* fewer measured exits keep the base value */
};

/* One fitted (or kept) parameter, for the command's table. */
struct calibrate_fit {
  char param[64];              /* "vm_roundtrip", "handler.CR_ACCESS.cr3 write" */
  uint64_t base, value;
  uint64_t samples;
  uint64_t measured_avg, simulated_avg_before;
  double stddev;
  bool fitted;                 /* false: too few samples, base kept */
  bool clamped;                /* the fit was negative: 0 */
};

struct calibrate_result {
  struct cJSON *profile;       /* the profile to write (caller deletes) */
  struct calibrate_fit fits[STAT_KEYS + 1];
  unsigned nfits;
  char hash[17], date[32];
  /* Measured exit reasons the replay under the policy did not take at all:
  ** their costs are not fitted (the policy is not the one the host ran, or
  ** the model cannot re-decide them). */
  struct { unsigned reason; uint64_t count; } unmatched[64];
  unsigned nunmatched;
};

/* Returns 0 or an enum exit_code with the message in err; r->profile is set on success. */
int calibrate(const struct calibrate_opts *o, struct calibrate_result *r, char *err, size_t errlen);

#endif
