/* `vmxsim gen`: dispatch to the workload trace generators. */
#include "sim/commands.h"
#include "sim/util.h"

int cmd_gen(int argc, char **argv) {
  (void)argc; (void)argv;
  errorf("gen: no generators yet");
  return EXIT_USAGE;
}
