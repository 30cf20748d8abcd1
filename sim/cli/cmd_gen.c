/* `vmxsim gen`: help texts and messages; the generators (workloads/generators.h) do the work. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "sim/base/util.h"
#include "workloads/generators.h"

static void usage(FILE *f) {
  fputs("usage: vmxsim gen WORKLOAD [options] -o TRACE\n"
        "\n"
        "Writes a binary trace of a modelled workload; its metadata records every\n"
        "parameter and the model version. 'vmxsim gen WORKLOAD --help' for each;\n"
        "workloads/README.md describes the models and their sources.  -o - writes the\n"
        "trace to standard output, a pipe or a file (the header goes first with its\n"
        "record count unknown: format version 2; finished in place when it is a file).\n"
        "\n"
        "workloads:\n", f);
  for (size_t i = 0; i < ngenerators; i++) fprintf(f, "  %-10s  %s\n", generators[i].name, generators[i].summary);
  fputs("\n"
        "example:\n"
        "  vmxsim gen lat_ctx --procs 2 --size 0 --iters 1000 -o lat_ctx.bin\n"
        "  vmxsim trace info lat_ctx.bin\n"
        "  vmxsim gen lat_ctx --procs 2 --iters 1000 -o - | vmxsim --policy ept -\n", f);
}

static bool is_help(const char *arg) { return !strcmp(arg, "--help") || !strcmp(arg, "-h"); }

int cmd_gen(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return EXIT_USAGE;
  }
  if (is_help(argv[1]) || !strcmp(argv[1], "help")) {
    usage(stdout);
    return EXIT_OK;
  }
  const struct generator *g = generator_find(argv[1]);
  for (int i = 2; g && i < argc; i++)
    if (is_help(argv[i])) {
      fputs(g->usage, stdout);
      return EXIT_OK;
    }
  char err[1024];
  int rc = gen_generate(argc - 1, argv + 1, NULL, err, sizeof err);
  if (rc) errorf("%s", err);
  return rc;
}
