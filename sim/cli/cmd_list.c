/* `vmxsim policies` and `vmxsim cpus`: list the presets and profiles compiled in. */
#include "commands.h"
#include "sim/core/policy.h"
#include "sim/core/profile.h"
#include "sim/core/util.h"

#include <string.h>

static int no_args(int argc, char **argv, const char *usage) {
  if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
    fputs(usage, stdout);
    return -1;
  }
  if (argc > 1) {
    errorf("%s: unexpected argument '%s'", argv[0], argv[1]);
    return EXIT_USAGE;
  }
  return EXIT_OK;
}

int cmd_policies(int argc, char **argv) {
  int rc = no_args(argc, argv, "usage: vmxsim policies\n\nLists the policy presets and every knob "
                   "with its default and meaning.\n");
  if (rc) return rc < 0 ? EXIT_OK : rc;
  policy_list(stdout, true);
  return EXIT_OK;
}

int cmd_cpus(int argc, char **argv) {
  int rc = no_args(argc, argv, "usage: vmxsim cpus\n\nLists the CPU cost profiles. Each value in "
                   "models/cpus/NAME.json carries its source and kind.\n");
  if (rc) return rc < 0 ? EXIT_OK : rc;
  profile_list(stdout);
  return EXIT_OK;
}
