/* `vmxsim gen`: dispatch to the workload trace generators. */
#include <stdio.h>
#include <string.h>

#include "sim/cli/commands.h"
#include "sim/core/util.h"
#include "gen_cpuid.h"
#include "gen_cr4toggle.h"
#include "gen_debug.h"
#include "gen_hackbench.h"
#include "gen_latctx.h"
#include "gen_syscalls.h"

struct generator {
  const char *name;
  int (*cmd)(int argc, char **argv);
  const char *summary;
};

static const struct generator generators[] = {
  { "lat_ctx", gen_cmd_latctx, "lmbench lat_ctx: a ring of N processes passing a token through pipes" },
  { "hackbench", gen_cmd_hackbench, "hackbench: groups of 20 senders and 20 receivers, 100-byte messages" },
  { "syscalls", gen_cmd_syscalls, "a null system-call loop: hvm, 64-bit Xen PV (pv64), or PTI without PCID" },
  { "cr4toggle", gen_cmd_cr4toggle, "global TLB flushes by toggling CR4.PGE, or CR4.TSD toggles" },
  { "debug", gen_cmd_debug, "processes under a debugger: DR0-3 and DR7 loaded on switches" },
  { "cpuid", gen_cmd_cpuid, "a CPUID loop: the lightweight exit of kvm-unit-tests' vmexit benchmark" },
};
#define N_GENERATORS (sizeof generators / sizeof generators[0])

static void usage(FILE *f) {
  fputs("usage: vmxsim gen WORKLOAD [options] -o TRACE\n"
        "\n"
        "Writes a binary trace of a modelled workload; its metadata records every\n"
        "parameter and the model version. 'vmxsim gen WORKLOAD --help' for each;\n"
        "workloads/README.md describes the models and their sources.\n"
        "\n"
        "workloads:\n", f);
  for (size_t i = 0; i < N_GENERATORS; i++) fprintf(f, "  %-10s  %s\n", generators[i].name, generators[i].summary);
  fputs("\n"
        "example:\n"
        "  vmxsim gen lat_ctx --procs 2 --size 0 --iters 1000 -o lat_ctx.bin\n"
        "  vmxsim trace info lat_ctx.bin\n", f);
}

int cmd_gen(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return EXIT_USAGE;
  }
  const char *name = argv[1];
  if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
    usage(stdout);
    return EXIT_OK;
  }
  for (size_t i = 0; i < N_GENERATORS; i++)
    if (!strcmp(name, generators[i].name)) return generators[i].cmd(argc - 1, argv + 1);
  errorf("gen: unknown workload '%s' (expected lat_ctx, hackbench, syscalls, cr4toggle, debug or cpuid); "
         "see 'vmxsim gen --help'", name);
  return EXIT_USAGE;
}
