/* The generators by name (see generators.h). */
#include "generators.h"

#include <stdio.h>
#include <string.h>
#include "sim/base/util.h"
#include "gen_cpuid.h"
#include "gen_cr4toggle.h"
#include "gen_debug.h"
#include "gen_hackbench.h"
#include "gen_interrupts.h"
#include "gen_ipi.h"
#include "gen_latctx.h"
#include "gen_syscalls.h"

const struct generator generators[] = {
  { "lat_ctx", "lmbench lat_ctx: a ring of N processes passing a token through pipes", latctx_usage,
    LATCTX_MODEL_VERSION, gen_latctx_args },
  { "hackbench", "hackbench: groups of 20 senders and 20 receivers, 100-byte messages", hackbench_usage,
    HACKBENCH_MODEL_VERSION, gen_hackbench_args },
  { "syscalls", "a null system-call loop: hvm, 64-bit Xen PV (pv64), or PTI without PCID", syscalls_usage,
    SYSCALLS_MODEL_VERSION, gen_syscalls_args },
  { "cr4toggle", "global TLB flushes by toggling CR4.PGE, or CR4.TSD toggles", cr4toggle_usage,
    CR4TOGGLE_MODEL_VERSION, gen_cr4toggle_args },
  { "debug", "processes under a debugger: DR0-3 and DR7 loaded on switches", debug_usage,
    DEBUG_MODEL_VERSION, gen_debug_args },
  { "cpuid", "a CPUID loop: the lightweight exit of kvm-unit-tests' vmexit benchmark", cpuid_usage,
    CPUID_MODEL_VERSION, gen_cpuid_args },
  { "interrupts", "an interrupt-driven guest: timer ticks, IPIs, device interrupts, idle vCPUs in HLT",
    interrupts_usage, INTERRUPTS_MODEL_VERSION, gen_interrupts_args },
  { "ipi", "IPI round trips between two vCPUs: kvm-unit-tests' vmexit 'ipi' test", ipi_usage,
    IPI_MODEL_VERSION, gen_ipi_args },
};
const size_t ngenerators = sizeof generators / sizeof generators[0];

const struct generator *generator_find(const char *name) {
  for (size_t i = 0; i < ngenerators; i++)
    if (strcmp(name, generators[i].name) == 0) return &generators[i];
  return NULL;
}

int gen_generate(int argc, char **argv, const char *out, char *err, size_t errlen) {
  const struct generator *g = argc > 0 ? generator_find(argv[0]) : NULL;
  if (!g) {
    snprintf(err, errlen, "gen: unknown workload '%s' (expected lat_ctx, hackbench, syscalls, cr4toggle, debug, "
             "cpuid, interrupts or ipi); see 'vmxsim gen --help'", argc > 0 ? argv[0] : "");
    return EXIT_USAGE;
  }
  char why[512] = "";
  int rc = g->run(argc, argv, out, why, sizeof why);
  if (rc == EXIT_USAGE) snprintf(err, errlen, "gen %s: %s; see 'vmxsim gen %s --help'", g->name, why, g->name);
  else if (rc) snprintf(err, errlen, "gen %s: %s", g->name, why);
  return rc;
}
